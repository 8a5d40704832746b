import { lazy, Suspense } from 'react';
import {
  useConnectionState,
  type ConnectionStatus,
  type ConnectionStore,
} from '../../graphql/connectionStore.ts';

// The health disclosure is not needed for the first paint (it waits for GET /healthz anyway).
const ServerHealthDetails = lazy(() =>
  import('./ServerHealthDetails.tsx').then((m) => ({ default: m.ServerHealthDetails })),
);

const COPY: Record<ConnectionStatus, { label: string; help: string; dot: string }> = {
  connecting: {
    label: 'Connecting',
    help: 'Opening the live connection to the server.',
    dot: 'bg-amber-500',
  },
  live: {
    label: 'Live',
    help: 'New events appear as they happen; approvals and other actions are sent at once.',
    dot: 'bg-emerald-500',
  },
  reconnecting: {
    label: 'Reconnecting',
    help: 'You can read everything already loaded. New events resume from the last one shown once the link is back; actions may fail until then.',
    dot: 'bg-amber-500',
  },
  offline: {
    label: 'Offline',
    help: 'You can read everything already loaded. Approvals and other actions need the connection and are never queued for later.',
    dot: 'bg-red-500',
  },
};

/**
 * The live link's state and what still works, always visible in the header, with the server's
 * version and source states (GET /healthz) in a disclosure beside it.
 */
export function ConnectionBadge({ store }: { store: ConnectionStore }) {
  const { status, detail } = useConnectionState(store);
  const copy = COPY[status];
  return (
    <div className="flex min-w-0 items-center gap-2">
      <div role="status" aria-live="polite" className="flex min-w-0 items-center gap-2 text-xs">
        <span
          aria-hidden="true"
          className={`inline-block h-2.5 w-2.5 shrink-0 rounded-full ${copy.dot}`}
        />
        <span className="font-semibold text-slate-800 max-sm:sr-only dark:text-slate-100">
          {copy.label}
        </span>
        <span
          className="hidden truncate text-slate-600 md:inline dark:text-slate-300"
          title={detail ?? undefined}
        >
          {copy.help}
        </span>
        <span className="sr-only md:hidden">{copy.help}</span>
      </div>
      <Suspense fallback={null}>
        <ServerHealthDetails />
      </Suspense>
    </div>
  );
}
