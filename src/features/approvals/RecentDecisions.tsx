import { useId } from 'react';
import { useQuery } from 'urql';
import { LOCAL_APP_ID } from '../../../protocol/contract.ts';
import type { ApprovalStatus } from '../../../protocol/events.ts';
import { SafeText } from '../../ui/SafeText.tsx';
import { timeOfDay } from '../../ui/timeOfDay.ts';
import { DecidedApprovalsQuery } from './documents.ts';

const OUTCOME: Record<ApprovalStatus, { words: string; className: string; icon: string }> = {
  PENDING: { words: 'Pending', className: '', icon: '⏳' },
  GRANTED: { words: 'Approved', className: 'text-emerald-800 dark:text-emerald-300', icon: '✓' },
  CONSUMED: { words: 'Approved', className: 'text-emerald-800 dark:text-emerald-300', icon: '✓' },
  DENIED: { words: 'Denied', className: 'text-red-800 dark:text-red-300', icon: '⛔' },
  EXPIRED: { words: 'Expired', className: 'text-orange-800 dark:text-orange-300', icon: '⌛' },
  REVOKED: { words: 'Revoked', className: 'text-violet-800 dark:text-violet-300', icon: '⊘' },
};

/** Recently decided, expired and revoked calls, newest first, with the outcome and who decided. */
export function RecentDecisions() {
  const headingId = useId();
  const [{ data, error }] = useQuery({
    query: DecidedApprovalsQuery,
    variables: { appId: LOCAL_APP_ID, first: 20 },
  });
  const list = data?.studioDecidedApprovals ?? [];
  return (
    <section aria-labelledby={headingId} className="space-y-1">
      <h2 id={headingId} className="text-base font-semibold">
        Recently decided
      </h2>
      {error ? (
        <p role="alert" className="text-sm text-red-800 dark:text-red-300">
          <SafeText text={error.message} />
        </p>
      ) : null}
      {data && list.length === 0 ? (
        <p className="text-sm text-slate-600 dark:text-slate-400">Nothing decided yet.</p>
      ) : null}
      <ul aria-label="Recently decided approvals" className="space-y-0.5 text-sm">
        {list.map((item) => {
          const a = item.approval;
          const outcome = OUTCOME[a.status as ApprovalStatus];
          const by = a.studioRuleName
            ? `by rule “${a.studioRuleName}”`
            : a.studioDecidedBy
              ? `by ${a.studioDecidedBy}`
              : a.studioAutomatic && a.status !== 'REVOKED'
                ? 'by the source'
                : '';
          return (
            <li key={a.approvalId} className="flex flex-wrap gap-2">
              <span className={`font-medium ${outcome.className}`}>
                <span aria-hidden="true">{outcome.icon} </span>
                {outcome.words}
                {by ? ` ${by}` : ''}
              </span>
              <SafeText text={item.toolCall.toolName} className="font-mono" />
              <span className="text-slate-600 dark:text-slate-400">
                in <SafeText text={item.session.studioTitle ?? item.session.sessionId} />
              </span>
              {a.studioDecidedAt ? (
                <time
                  dateTime={a.studioDecidedAt}
                  className="text-xs text-slate-600 dark:text-slate-300"
                >
                  {timeOfDay(a.studioDecidedAt)}
                </time>
              ) : null}
              {a.status === 'REVOKED' && a.studioDecisionReason ? (
                <SafeText
                  text={a.studioDecisionReason}
                  className="text-xs text-slate-600 dark:text-slate-400"
                />
              ) : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
