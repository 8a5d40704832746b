import type { ReactNode } from 'react';
import { useSessionControl, type SessionControlState } from '../../graphql/attachment.ts';
import { SafeText } from '../../ui/SafeText.tsx';
import { timeOfDay } from '../../ui/timeOfDay.ts';

const TONE: Record<SessionControlState, string> = {
  observer:
    'border-slate-300 bg-slate-50 text-slate-800 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-200',
  attaching:
    'border-blue-300 bg-blue-50 text-blue-900 dark:border-blue-700 dark:bg-blue-950 dark:text-blue-100',
  attached:
    'border-emerald-300 bg-emerald-50 text-emerald-900 dark:border-emerald-700 dark:bg-emerald-950 dark:text-emerald-100',
  fenced:
    'border-amber-400 bg-amber-50 text-amber-950 dark:border-amber-600 dark:bg-amber-950 dark:text-amber-100',
  error:
    'border-red-300 bg-red-50 text-red-900 dark:border-red-700 dark:bg-red-950 dark:text-red-100',
};

const button =
  'shrink-0 rounded border border-current px-2 py-0.5 text-xs font-medium hover:bg-white/60 focus-visible:outline-2 focus-visible:outline-blue-600 dark:hover:bg-black/30';

/** The full explanation, shown where there is room (see `roomy` in index.css). */
const LONG = 'hidden roomy:inline';

/** The one-line form on a phone or a zoomed window; the same facts in fewer words. */
function Short({ children }: { children: ReactNode }) {
  return <span className="min-w-0 flex-1 truncate roomy:hidden">{children}</span>;
}

/** "Controlled by alice since 10:31:02" (or nobody), for a tab that only watches. */
function Controller({ by, since }: { by: string | null; since: string | null }) {
  if (!by && !since) return <span>Nobody controls this session now.</span>;
  return (
    <span>
      Controlled by <SafeText text={by ?? 'a client'} className="font-semibold" />
      {since ? (
        <>
          {' '}
          since{' '}
          <time dateTime={since} title={since}>
            {timeOfDay(since)}
          </time>
        </>
      ) : null}
      .
    </span>
  );
}

/**
 * Says whether this tab is watching or in control of the session, who controls it and since
 * when, that acting fences every other tab and client, and, once another one took over, offers
 * to take control back. Every action attaches the same way; the one-time notice says so.
 */
export function SessionControlBanner({
  sessionId,
  controlledBy = null,
  controlledSince = null,
}: {
  sessionId: string;
  controlledBy?: string | null;
  controlledSince?: string | null;
}) {
  const control = useSessionControl(sessionId);
  const { state } = control;
  return (
    <>
      {control.notice ? (
        <div
          role="status"
          className="flex items-center gap-2 rounded border border-blue-300 bg-blue-50 px-2 py-1 text-xs text-blue-950 roomy:px-3 roomy:py-1.5 dark:border-blue-700 dark:bg-blue-950 dark:text-blue-100"
        >
          <span className="min-w-0 flex-1">{control.notice}</span>
          <button type="button" className={button} onClick={() => control.dismissNotice()}>
            Got it
          </button>
        </div>
      ) : null}
      <div
        role={state === 'fenced' || state === 'error' ? 'alert' : 'status'}
        className={`flex items-center gap-2 rounded border px-2 py-1 text-xs roomy:flex-wrap roomy:px-3 roomy:py-1.5 ${TONE[state]}`}
      >
        {state === 'observer' ? (
          <>
            <Short>
              Watching{controlledBy ? ` (${controlledBy} in control)` : ''}: acting takes control.
            </Short>
            <span className={LONG}>
              Watching. <Controller by={controlledBy} since={controlledSince} /> Any action here
              (approve, deny, restore, send, pause, resume, cancel) takes control and fences the
              other tabs and clients.
            </span>
            <button
              type="button"
              className={button}
              onClick={() => void control.ensureAttached().catch(() => undefined)}
            >
              Take control
            </button>
          </>
        ) : null}
        {state === 'attaching' ? <span>Taking control of the session…</span> : null}
        {state === 'attached' ? (
          <>
            <Short>
              In control (epoch {control.clientEpoch})
              {control.error ? (
                <>
                  {' '}
                  <SafeText text={control.error} />
                </>
              ) : null}
            </Short>
            <span className={LONG}>
              This tab controls the session (client epoch {control.clientEpoch}). Other tabs and
              clients can only watch.
              {control.error ? (
                <>
                  {' '}
                  <SafeText text={control.error} />
                </>
              ) : null}
            </span>
            <button type="button" className={button} onClick={() => control.release()}>
              Release control
            </button>
          </>
        ) : null}
        {state === 'fenced' ? (
          <>
            <Short>Fenced: another tab or client is in control.</Short>
            <span className={LONG}>
              Another tab or client took control of this session. This tab now only watches; its
              approvals would be refused. <Controller by={controlledBy} since={controlledSince} />
            </span>
            <button
              type="button"
              className={button}
              onClick={() => void control.takeControl().catch(() => undefined)}
            >
              Take control back
            </button>
          </>
        ) : null}
        {state === 'error' ? (
          <>
            <span>
              Could not take control: <SafeText text={control.error ?? 'unknown error'} />
            </span>
            <button
              type="button"
              className={button}
              onClick={() => void control.takeControl().catch(() => undefined)}
            >
              Try again
            </button>
          </>
        ) : null}
      </div>
    </>
  );
}
