import { useEffect, useId, useState, type ReactNode } from 'react';
import { CompactInbox } from './CompactInbox.tsx';
import { RecentDecisions } from './RecentDecisions.tsx';
import { Countdown, useNow } from '../../ui/Countdown.tsx';
import { Link } from '../../ui/router.tsx';
import { SafeText } from '../../ui/SafeText.tsx';
import { NotificationControl } from './NotificationControl.tsx';
import { useApprovalNotifier } from './useApprovalNotifier.ts';
import { usePendingApprovals } from './usePendingApprovals.ts';

/** Renders the full tool-call card (with its approval prompt); src/app passes the tool-calls feature's card. */
export type RenderToolCall = (ids: { toolCallId: string; sessionId: string }) => ReactNode;

const BASE_TITLE = 'Approval inbox · Agent Studio';
const MODE_KEY = 'agent-studio:inbox-mode';

const button =
  'rounded border border-slate-300 px-2 py-1 text-sm hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 dark:border-slate-600 dark:hover:bg-slate-800';

/**
 * Every pending approval across sessions, soonest to expire first, each with the same card and
 * actions as in its session. The pending count is in the page title; browser notifications for
 * approvals arriving in the background are opt-in.
 */
export function ApprovalInboxPage({
  renderToolCall,
  sessionHref = (sessionId) => `/sessions/${encodeURIComponent(sessionId)}`,
}: {
  renderToolCall: RenderToolCall;
  sessionHref?: (sessionId: string) => string;
}) {
  const headingId = useId();
  const { items, loaded, error } = usePendingApprovals();
  const now = useNow(1000, items.length > 0);
  const open = items.filter((item) => Date.parse(item.approval.expiresAt) > now).length;
  const notifier = useApprovalNotifier(items, loaded);
  const [mode, setMode] = useState<'cards' | 'list'>(() => {
    try {
      return localStorage.getItem(MODE_KEY) === 'list' ? 'list' : 'cards';
    } catch {
      return 'cards';
    }
  });
  const choose = (next: 'cards' | 'list') => {
    setMode(next);
    try {
      localStorage.setItem(MODE_KEY, next);
    } catch {
      // A private window may refuse storage; the choice then lasts for this page only.
    }
  };

  useEffect(() => {
    const previous = document.title;
    return () => {
      document.title = previous;
    };
  }, []);
  useEffect(() => {
    // The count in front comes from useApprovalCountInTitle, on every page.
    document.title = BASE_TITLE;
  }, []);

  return (
    <section aria-labelledby={headingId} className="mx-auto max-w-4xl space-y-4 p-4">
      <header className="flex flex-wrap items-center justify-between gap-2">
        <div>
          <h1 id={headingId} className="text-xl font-semibold">
            Approval inbox
          </h1>
          <p className="text-sm text-slate-600 dark:text-slate-400" aria-live="polite">
            {open === 1 ? '1 approval waits' : `${open} approvals wait`} for a decision, soonest to
            expire first.
          </p>
        </div>
        <div className="flex flex-wrap items-center gap-2">
          <div role="group" aria-label="Inbox view" className="flex gap-1">
            <button
              type="button"
              aria-pressed={mode === 'cards'}
              className={`${button} aria-pressed:bg-slate-200 dark:aria-pressed:bg-slate-700`}
              onClick={() => choose('cards')}
            >
              Cards
            </button>
            <button
              type="button"
              aria-pressed={mode === 'list'}
              className={`${button} aria-pressed:bg-slate-200 dark:aria-pressed:bg-slate-700`}
              onClick={() => choose('list')}
            >
              Compact list
            </button>
          </div>
          <NotificationControl {...notifier} />
        </div>
      </header>

      {error ? (
        <p role="alert" className="text-sm text-red-800 dark:text-red-300">
          Could not load pending approvals: <SafeText text={error} />
        </p>
      ) : null}
      {!loaded && !error ? <p role="status">Loading pending approvals…</p> : null}
      {loaded && items.length === 0 ? (
        <p className="rounded border border-dashed border-slate-300 p-4 text-sm text-slate-600 dark:border-slate-700 dark:text-slate-400">
          No approvals are waiting. New ones appear here as agents ask.
        </p>
      ) : null}

      {mode === 'list' ? <CompactInbox items={items} sessionHref={sessionHref} /> : null}
      {mode === 'cards' ? (
        <>
          {/* The tool-call cards below are h3: this h2 keeps the outline unbroken. */}
          <h2 className="sr-only">Approvals waiting for a decision</h2>
          <ol aria-label="Pending approvals" className="space-y-4">
            {items.map((item) => (
              <li key={item.approval.approvalId} className="space-y-1">
                <p className="flex flex-wrap items-center gap-2 text-sm">
                  <Link
                    to={sessionHref(item.session.sessionId)}
                    className="font-medium text-blue-700 underline hover:text-blue-900 dark:text-blue-300"
                  >
                    <SafeText text={item.session.studioTitle ?? item.session.sessionId} />
                  </Link>
                  <span className="text-slate-600 dark:text-slate-400">{item.session.mode}</span>
                  <span>
                    expires in <Countdown to={item.approval.expiresAt} />
                  </span>
                </p>
                {renderToolCall({
                  toolCallId: item.approval.toolCallId,
                  sessionId: item.session.sessionId,
                })}
              </li>
            ))}
          </ol>
        </>
      ) : null}
      <RecentDecisions />
    </section>
  );
}
