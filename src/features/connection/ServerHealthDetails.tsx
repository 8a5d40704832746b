import { useRef, type KeyboardEvent } from 'react';
import { CONTRACT_VERSION } from '../../../protocol/contract.ts';
import { StudioHttpError, type StudioHealthSource } from '../../graphql/studioHttp.ts';
import { SafeText, toVisibleText } from '../../ui/SafeText.tsx';
import { useServerHealth } from './useServerHealth.ts';

// The server's SourceStatus words, shown as they are (the contract's vocabulary).
const STATUS_CLASS: Record<string, string> = {
  LIVE: 'bg-emerald-100 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-100',
  CONNECTING: 'bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-100',
  RECONNECTING: 'bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-100',
  FAILED: 'bg-red-100 text-red-900 dark:bg-red-950 dark:text-red-100',
  STOPPED: 'bg-slate-200 text-slate-800 dark:bg-slate-700 dark:text-slate-100',
};

const sourceLine = (source: StudioHealthSource) =>
  `${toVisibleText(source.sourceId)} ${source.status}${source.detail ? ` (${toVisibleText(source.detail)})` : ''}`;

/**
 * A disclosure beside the connection badge: the server's version and contract and the state of
 * each agent source, from GET /healthz (polled every 15 s). Its summary's title says the same
 * in one line for pointer users.
 */
export function ServerHealthDetails() {
  const { data, error } = useServerHealth();
  const detailsRef = useRef<HTMLDetailsElement>(null);
  const summaryRef = useRef<HTMLElement>(null);
  const sources = data?.sources ?? null;
  const troubled = (sources ?? []).filter((source) => source.status !== 'LIVE');
  const refused = error instanceof StudioHttpError && error.kind === 'unauthorized';

  const title = data
    ? [
        `Server ${data.version}, contract ${data.contract}`,
        sources ? `Sources: ${sources.map(sourceLine).join('; ') || 'none'}` : null,
      ]
        .filter(Boolean)
        .join('. ')
    : error
      ? 'The server’s health report could not be read'
      : 'Reading the server’s health report…';

  const onKeyDown = (event: KeyboardEvent<HTMLDetailsElement>) => {
    // Escape closes the popover and returns focus to its toggle, like a menu.
    if (event.key === 'Escape' && detailsRef.current?.open) {
      detailsRef.current.open = false;
      summaryRef.current?.focus();
    }
  };

  return (
    <details ref={detailsRef} className="relative text-xs" onKeyDown={onKeyDown}>
      <summary
        ref={summaryRef}
        title={title}
        className="flex cursor-pointer list-none items-center gap-1 rounded border border-slate-300 px-1.5 py-0.5 text-slate-700 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-600 dark:text-slate-200 dark:hover:bg-slate-800 [&::-webkit-details-marker]:hidden"
      >
        Server{data ? <span className="font-mono max-md:hidden">&nbsp;{data.version}</span> : null}
        {troubled.length > 0 || error ? (
          <span
            aria-hidden="true"
            className={`inline-block h-2 w-2 rounded-full ${error ? 'bg-red-500' : 'bg-amber-500'}`}
          />
        ) : null}
        <span className="sr-only">
          {error
            ? ': health report unavailable'
            : troubled.length > 0
              ? `: ${troubled.length} of ${sources?.length ?? 0} sources not live`
              : ' details'}
        </span>
      </summary>
      <div className="absolute right-0 z-30 mt-1 w-80 max-w-[90vw] space-y-2 rounded-md border border-slate-300 bg-white p-3 text-slate-800 shadow-lg dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100">
        {error ? (
          <p className="text-red-800 dark:text-red-300">
            {refused ? (
              'The server did not accept this tab’s token for its health report.'
            ) : (
              <>
                The server’s health report could not be read: <SafeText text={error.message} />
              </>
            )}
          </p>
        ) : null}
        {data ? (
          <>
            <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5">
              <dt className="text-slate-600 dark:text-slate-300">Server version</dt>
              <dd className="font-mono">
                <SafeText text={data.version} />
              </dd>
              <dt className="text-slate-600 dark:text-slate-300">Contract</dt>
              <dd className="font-mono break-all">
                <SafeText text={data.contract} />
              </dd>
            </dl>
            {data.contract !== CONTRACT_VERSION ? (
              <p className="text-amber-900 dark:text-amber-200">
                This app speaks {CONTRACT_VERSION}; some views may not work with this server.
              </p>
            ) : null}
            {sources === null ? (
              <p>The server did not list its sources.</p>
            ) : sources.length === 0 ? (
              <p>No agent sources are configured.</p>
            ) : (
              <ul aria-label="Agent sources" className="space-y-1">
                {sources.map((source) => (
                  <li key={source.sourceId} className="flex flex-wrap items-baseline gap-x-2">
                    <SafeText text={source.sourceId} className="font-medium" />
                    <span
                      className={`rounded px-1 font-mono text-[11px] ${STATUS_CLASS[source.status] ?? STATUS_CLASS.STOPPED}`}
                    >
                      <SafeText text={source.status} />
                    </span>
                    {source.detail ? (
                      <SafeText
                        text={source.detail}
                        className="w-full text-slate-600 dark:text-slate-300"
                      />
                    ) : null}
                  </li>
                ))}
              </ul>
            )}
          </>
        ) : !error ? (
          <p>Reading the server’s health report…</p>
        ) : null}
        <p className="text-[11px] text-slate-500 dark:text-slate-400">
          From /healthz, read again every 15 s.
        </p>
      </div>
    </details>
  );
}
