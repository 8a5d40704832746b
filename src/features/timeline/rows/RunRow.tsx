import type { RunStatus } from '../../../../protocol/events.ts';
import type { EventOf } from '../../../graphql/eventFragments.ts';
import { SafeText } from '../../../ui/SafeText.tsx';
import { EventRowHeader } from './RowHeader.tsx';

const RUN_TONE: Record<RunStatus, string> = {
  QUEUED: 'text-slate-700 dark:text-slate-300',
  RUNNING: 'text-blue-800 dark:text-blue-300',
  WAITING_FOR_TOOL: 'text-blue-800 dark:text-blue-300',
  WAITING_FOR_APPROVAL: 'text-amber-800 dark:text-amber-300',
  PAUSED: 'text-amber-800 dark:text-amber-300',
  SUCCEEDED: 'text-emerald-800 dark:text-emerald-300',
  FAILED: 'text-red-800 dark:text-red-300',
  CANCELLED: 'text-slate-700 dark:text-slate-300',
  PREEMPTED: 'text-amber-800 dark:text-amber-300',
};

/** A run's lifecycle step with its status and, when it failed, the error. */
export function RunRow({ event, href }: { event: EventOf<'AgentRunEvent'>; href: string }) {
  const status = event.runStatus as RunStatus;
  const error = event.runError;
  return (
    <div>
      <EventRowHeader event={event} href={href}>
        <span className={`font-medium ${RUN_TONE[status]}`}>{status}</span>
        {event.runId ? (
          <span className="font-mono">
            <SafeText text={event.runId} />
          </span>
        ) : null}
      </EventRowHeader>
      {event.runCode || event.runReason ? (
        <p className="mt-1 text-sm text-slate-800 dark:text-slate-200">
          {event.runCode ? (
            <span className="font-mono">
              <SafeText text={event.runCode} />
            </span>
          ) : null}
          {event.runCode && event.runReason ? ': ' : null}
          {event.runReason ? <SafeText text={event.runReason} /> : null}
        </p>
      ) : null}
      {error ? (
        <div className="mt-1 rounded border border-red-300 bg-red-50 px-2 py-1 text-sm text-red-900 dark:border-red-700 dark:bg-red-950 dark:text-red-100">
          <p>
            <span className="font-mono">
              <SafeText text={error.code} />
            </span>
            : <SafeText text={error.message} />
            {error.retryable ? ' (retryable)' : null}
          </p>
          {error.remediation ? (
            <p className="mt-0.5">
              What to do: <SafeText text={error.remediation} />
            </p>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
