import { useEffect, useRef, useState, type Ref } from 'react';
import { useQuery } from 'urql';
import { SESSIONS_PAGE_MAX } from '../../../protocol/contract.ts';
import type { AgentMode, RunStatus, SessionStatus } from '../../../protocol/events.ts';
import { APP_ID } from '../../graphql/cache.ts';
import { useCacheSubscription } from '../../graphql/useCacheSubscription.ts';
import { Link } from '../../ui/router.tsx';
import { SafeText } from '../../ui/SafeText.tsx';
import { timeOfDay } from '../../ui/timeOfDay.ts';
import { SessionsQuery, SessionUpdatesSubscription, type SessionSummary } from './documents.ts';
import { isRunning, MODE_LABEL, RUN_STATUS_LABEL, SESSION_STATUS } from './labels.ts';

/**
 * Keeps every cached session current: the server pushes a session whenever its status, run,
 * pending approvals or lastEventSeq change, and the cache updater links new ones into the list.
 */
export function useSessionUpdates(): void {
  useCacheSubscription(SessionUpdatesSubscription, { appId: APP_ID });
}

export interface SessionsSidebarProps {
  /** The session being shown (marked as current). */
  activeSessionId: string | null;
  /** The path of a session's page. */
  sessionHref: (sessionId: string) => string;
}

const moreButton =
  'w-full rounded-md border border-slate-300 px-2 py-1 text-sm text-slate-800 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-600 dark:text-slate-100 dark:hover:bg-slate-800';

/**
 * The live list of sessions: title, mode, status, running, pending approvals, source. The
 * newest page comes first and takes new sessions live; "Load more sessions" appends older
 * pages (cursor `after`), each its own cached query, so live updates reach every loaded page.
 */
export function SessionsSidebar({ activeSessionId, sessionHref }: SessionsSidebarProps) {
  useSessionUpdates();
  // How many pages are shown; each older page asks with the endCursor of the one before it.
  const [pageCount, setPageCount] = useState(1);
  const [{ data, fetching, error }, refetch] = useQuery({
    query: SessionsQuery,
    variables: { appId: APP_ID, first: SESSIONS_PAGE_MAX },
  });
  const connection = data?.crowdyStudioAgentSessions;
  const sessions = connection?.nodes ?? [];
  const loadMore = () => setPageCount((count) => count + 1);
  const [filter, setFilter] = useState('');
  return (
    <nav aria-labelledby="sessions-heading" className="flex min-h-0 flex-col">
      <h2
        id="sessions-heading"
        className="px-3 pt-3 pb-2 text-xs font-semibold tracking-wide text-slate-600 uppercase dark:text-slate-300"
      >
        Sessions
      </h2>
      {error && !data ? (
        <LoadFailed
          className="px-3 text-sm"
          message={`Could not load sessions: ${error.message}`}
          onRetry={() => refetch({ requestPolicy: 'network-only' })}
        />
      ) : null}
      {fetching && !data ? (
        <p className="px-3 text-sm text-slate-600 dark:text-slate-300">Loading sessions…</p>
      ) : null}
      {data && sessions.length === 0 ? (
        <p className="px-3 text-sm text-slate-600 dark:text-slate-300">
          No sessions yet. Start the demo agent or a bridge and they appear here live.
        </p>
      ) : null}
      <label className="px-3 pb-2 text-xs text-slate-700 dark:text-slate-300">
        <span className="sr-only">Filter sessions</span>
        <input
          type="search"
          value={filter}
          placeholder="Filter sessions"
          onChange={(event) => setFilter(event.target.value)}
          className="block w-full rounded border border-slate-300 bg-white px-2 py-1 text-sm text-slate-900 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-50"
        />
      </label>
      <ul className="relative min-h-0 flex-1 space-y-1 overflow-y-auto px-2 pb-3">
        <SessionPage
          filter={filter}
          sessions={sessions}
          connection={connection}
          page={1}
          pageCount={pageCount}
          activeSessionId={activeSessionId}
          sessionHref={sessionHref}
          onLoadMore={loadMore}
        />
      </ul>
      {connection?.hasNextPage && pageCount === 1 ? (
        <p className="px-3 pb-3 text-xs text-slate-600 dark:text-slate-300">
          Showing the {SESSIONS_PAGE_MAX} most recent sessions.
        </p>
      ) : null}
    </nav>
  );
}

/** A page that could not be loaded, with a retry that goes to the network. */
function LoadFailed({
  message,
  onRetry,
  className = '',
}: {
  message: string;
  onRetry: () => void;
  className?: string;
}) {
  return (
    <div role="alert" className={`${className} text-red-800 dark:text-red-300`.trim()}>
      <p>{message}</p>
      <button type="button" onClick={onRetry} className="mt-1 underline">
        Try again
      </button>
    </div>
  );
}

interface PagingProps {
  /** Loaded sessions whose title, id, project or source contain this (any case) are shown. */
  filter: string;
  pageCount: number;
  activeSessionId: string | null;
  sessionHref: (sessionId: string) => string;
  onLoadMore: () => void;
}

/**
 * The sessions of page `page` and, when the server has more, what follows them: the next page
 * once it was asked for, else the "Load more sessions" button.
 */
function SessionPage({
  sessions,
  firstRef,
  connection,
  page,
  ...paging
}: PagingProps & {
  sessions: readonly SessionSummary[];
  /** Set on the first session's item (the page that takes the focus when it arrives). */
  firstRef?: Ref<HTMLLIElement>;
  connection: { hasNextPage: boolean; endCursor: string | null } | undefined;
  page: number;
}) {
  const after = connection?.hasNextPage ? connection.endCursor : null;
  return (
    <>
      {sessions
        .filter((session) => matches(session, paging.filter))
        .map((session, index) => (
          <li key={session.sessionId} ref={index === 0 ? firstRef : undefined}>
            <SessionItem
              session={session}
              href={paging.sessionHref(session.sessionId)}
              current={session.sessionId === paging.activeSessionId}
            />
          </li>
        ))}
      {!after ? null : page < paging.pageCount ? (
        <OlderSessions after={after} page={page + 1} {...paging} />
      ) : (
        <li className="pt-1">
          <button type="button" className={moreButton} onClick={paging.onLoadMore}>
            Load more sessions
          </button>
        </li>
      )}
    </>
  );
}

/**
 * Page `page` of the list (2 and up) and, while more pages are asked for, the next one after
 * it. Its first session takes the focus when it arrives as the newest page, so a keyboard user
 * who pressed "Load more sessions" lands on what was loaded.
 */
function OlderSessions({ after, page, ...paging }: PagingProps & { after: string; page: number }) {
  const [{ data, fetching, error }, refetch] = useQuery({
    query: SessionsQuery,
    variables: { appId: APP_ID, first: SESSIONS_PAGE_MAX, after },
  });
  const firstRef = useRef<HTMLLIElement>(null);
  const connection = data?.crowdyStudioAgentSessions;
  const newest = page === paging.pageCount;
  const loaded = Boolean(connection);
  useEffect(() => {
    if (newest && loaded) firstRef.current?.querySelector('a')?.focus();
  }, [newest, loaded]);

  if (!connection) {
    return (
      <li className="px-1 text-sm">
        {error ? (
          <LoadFailed
            message={`Could not load more sessions: ${error.message}`}
            onRetry={() => refetch({ requestPolicy: 'network-only' })}
          />
        ) : (
          <p role="status" className="text-slate-600 dark:text-slate-300">
            {fetching ? 'Loading more sessions…' : 'No more sessions.'}
          </p>
        )}
      </li>
    );
  }
  return (
    <SessionPage
      sessions={connection.nodes}
      firstRef={firstRef}
      connection={connection}
      page={page}
      {...paging}
    />
  );
}

function matches(session: SessionSummary, filter: string): boolean {
  const needle = filter.trim().toLowerCase();
  if (!needle) return true;
  return [session.studioTitle, session.sessionId, session.projectId, session.studioSource].some(
    (value) => value?.toLowerCase().includes(needle),
  );
}

function SessionItem({
  session,
  href,
  current,
}: {
  session: SessionSummary;
  href: string;
  current: boolean;
}) {
  const status = SESSION_STATUS[session.status as SessionStatus];
  const runStatus = session.activeRun?.status as RunStatus | undefined;
  const running = isRunning(runStatus);
  const pending = session.studioPendingApprovals.length;
  return (
    <Link
      to={href}
      title={session.studioTitle || session.sessionId}
      aria-current={current ? 'page' : undefined}
      className={`block rounded-md px-2 py-2 text-sm focus-visible:outline-2 focus-visible:outline-blue-600 ${
        current
          ? 'bg-blue-50 ring-1 ring-blue-300 dark:bg-slate-800 dark:ring-blue-500'
          : 'hover:bg-slate-100 dark:hover:bg-slate-800'
      }`}
    >
      <span className="flex items-start justify-between gap-2">
        <span className="min-w-0 flex-1 truncate font-medium text-slate-900 dark:text-slate-50">
          <SafeText text={session.studioTitle || session.sessionId} />
        </span>
        {pending > 0 ? (
          <span className="shrink-0 rounded-full bg-amber-100 px-2 text-xs font-semibold text-amber-900 dark:bg-amber-900 dark:text-amber-100">
            {pending} waiting
            <span className="sr-only"> for approval</span>
          </span>
        ) : null}
      </span>
      <span className="mt-1 flex flex-wrap items-center gap-x-2 gap-y-0.5 text-xs text-slate-700 dark:text-slate-300">
        <span className={status.className}>{status.label}</span>
        <span>{MODE_LABEL[session.mode as AgentMode]}</span>
        {running && runStatus ? (
          <span className="inline-flex items-center gap-1 text-blue-800 dark:text-blue-300">
            <span
              aria-hidden="true"
              className="h-2 w-2 rounded-full bg-blue-600 motion-safe:animate-pulse"
            />
            {RUN_STATUS_LABEL[runStatus]}
          </span>
        ) : null}
        <span className="truncate text-slate-600 dark:text-slate-400">
          <SafeText text={session.studioSource} />
        </span>
      </span>
      <span className="mt-0.5 flex items-center gap-x-2 text-xs text-slate-600 dark:text-slate-400">
        {session.projectId ? (
          <span className="min-w-0 truncate">
            <span className="sr-only">Project </span>
            <SafeText text={session.projectId} />
          </span>
        ) : null}
        <span className="ml-auto shrink-0">
          <span className="sr-only">Last activity </span>
          <time dateTime={session.updatedAt}>{timeOfDay(session.updatedAt)}</time>
        </span>
      </span>
    </Link>
  );
}
