import type { ReactNode } from 'react';
import { useQuery } from 'urql';
import { SESSIONS_PAGE_MAX } from '../../../protocol/contract.ts';
import type { RunStatus } from '../../../protocol/events.ts';
import { APP_ID } from '../../graphql/cache.ts';
import { Link } from '../../ui/router.tsx';
import { SafeText } from '../../ui/SafeText.tsx';
import { timeOfDay } from '../../ui/timeOfDay.ts';
import { RecentRestoresQuery, SessionsQuery, type SessionSummary } from './documents.ts';
import { isRunning, RUN_STATUS_LABEL } from './labels.ts';

export interface SessionsOverviewProps {
  sessionHref: (sessionId: string) => string;
  inboxHref: string;
  /** A session's checkpoint browser (Recent restores link there). */
  checkpointsHref?: (sessionId: string) => string;
}

/** Recent restores shown on the home page. */
const RECENT_RESTORES = 5;

const titleOf = (session: SessionSummary) => session.studioTitle || session.sessionId;

/**
 * What waits, across the newest sessions (the sidebar's page, kept live by the same
 * subscription): pending approvals, running agents, sessions whose last run failed, and the
 * checkpoints restored most recently (studioRecentRestores, read again on every visit), each a
 * link.
 */
export function SessionsOverview({
  sessionHref,
  inboxHref,
  checkpointsHref = sessionHref,
}: SessionsOverviewProps) {
  const [{ data: restoresData, error: restoresError }] = useQuery({
    query: RecentRestoresQuery,
    variables: { first: RECENT_RESTORES },
    requestPolicy: 'cache-and-network',
  });
  const restores = restoresData?.studioRecentRestores ?? [];
  const [{ data, error }] = useQuery({
    query: SessionsQuery,
    variables: { appId: APP_ID, first: SESSIONS_PAGE_MAX },
  });
  const sessions = data?.crowdyStudioAgentSessions.nodes ?? [];
  const waiting = sessions.filter((s) => s.studioPendingApprovals.length > 0);
  const running = sessions.filter((s) => isRunning(s.activeRun?.status));
  const failed = sessions.filter((s) => !s.activeRun && s.currentRun?.status === 'FAILED');
  if (error && !data)
    return (
      <p role="alert" className="text-sm text-red-800 dark:text-red-300">
        Could not load sessions: <SafeText text={error.message} />
      </p>
    );
  if (!data) return <p role="status">Loading what waits…</p>;
  return (
    <div className="grid gap-4 md:grid-cols-2">
      <Panel title="Waiting for your approval" empty="No approval is waiting.">
        {waiting.flatMap((session) =>
          session.studioPendingApprovals.map((approval) => (
            <li key={approval.approvalId}>
              <Link to={sessionHref(session.sessionId)} className={item}>
                <span className="block font-medium">
                  <SafeText text={approval.safeSummary} />
                </span>
                <span className="text-xs text-slate-600 dark:text-slate-300">
                  <SafeText text={titleOf(session)} /> · expires {timeOfDay(approval.expiresAt)}
                </span>
              </Link>
            </li>
          )),
        )}
        {waiting.length > 0 ? (
          <li>
            <Link to={inboxHref} className="text-sm underline">
              Open the approval inbox
            </Link>
          </li>
        ) : null}
      </Panel>
      <Panel title="Running now" empty="No agent is running.">
        {running.map((session) => (
          <li key={session.sessionId}>
            <Link to={sessionHref(session.sessionId)} className={item}>
              <span className="block font-medium">
                <SafeText text={titleOf(session)} />
              </span>
              <span className="text-xs text-slate-600 dark:text-slate-300">
                {RUN_STATUS_LABEL[session.activeRun!.status as RunStatus]} · since{' '}
                {timeOfDay(session.updatedAt)}
              </span>
            </Link>
          </li>
        ))}
      </Panel>
      <Panel title="Last run failed" empty="No session's last run failed.">
        {failed.map((session) => (
          <li key={session.sessionId}>
            <Link to={sessionHref(session.sessionId)} className={item}>
              <span className="block font-medium">
                <SafeText text={titleOf(session)} />
              </span>
              <span className="text-xs text-slate-600 dark:text-slate-300">
                {session.currentRun?.errorCode ? (
                  <SafeText text={session.currentRun.errorCode} />
                ) : (
                  'Failed'
                )}{' '}
                · {timeOfDay(session.updatedAt)}
              </span>
            </Link>
          </li>
        ))}
      </Panel>
      <Panel
        title="Recent restores"
        empty={
          restoresError
            ? `Could not load recent restores: ${restoresError.message}`
            : restoresData
              ? 'No checkpoint has been restored yet.'
              : 'Loading recent restores…'
        }
      >
        {restores.map((restore) => (
          <li key={restore.checkpoint.checkpointId}>
            <Link to={checkpointsHref(restore.session.sessionId)} className={item}>
              <span className="block font-medium">
                Checkpoint <code className="font-mono">{restore.checkpoint.checkpointId}</code>{' '}
                (revision {restore.checkpoint.projectRevision}) restored
              </span>
              <span className="text-xs text-slate-600 dark:text-slate-300">
                <SafeText text={restore.session.studioTitle || restore.session.sessionId} /> ·{' '}
                {timeOfDay(restore.restoredAt)}
              </span>
            </Link>
          </li>
        ))}
      </Panel>
    </div>
  );
}

const item =
  'block rounded px-2 py-1.5 text-sm hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 dark:hover:bg-slate-800';

function Panel({
  title,
  empty,
  children,
}: {
  title: string;
  empty: string;
  children: ReactNode[];
}) {
  const items = children.flat().filter(Boolean);
  return (
    <section
      aria-label={title}
      className="rounded-md border border-slate-200 p-3 dark:border-slate-700"
    >
      <h2 className="mb-1 text-sm font-semibold">{title}</h2>
      {items.length === 0 ? (
        <p className="text-sm text-slate-600 dark:text-slate-300">{empty}</p>
      ) : (
        <ul className="space-y-1">{children}</ul>
      )}
    </section>
  );
}
