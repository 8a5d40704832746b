import { useId, useState, type KeyboardEvent } from 'react';
import { useQuery } from 'urql';
import type { ApprovalStatus, ToolCallStatus, ToolRisk } from '../../../protocol/events.ts';
import { readFragment, type FragmentOf } from '../../graphql/graphql.ts';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { useDeadline } from '../../ui/Countdown.tsx';
import { JsonView } from '../../ui/JsonView.tsx';
import { Link } from '../../ui/router.tsx';
import { countHidden, SafeText } from '../../ui/SafeText.tsx';
import { ApprovalPrompt, RefusalNotice } from './ApprovalPrompt.tsx';
import { ToolCallCardQuery, ToolCallRowFragment, ToolDescriptorsQuery } from './documents.ts';
import { APPROVAL_STATUS, HIGH_RISK, TONE_CLASS, TOOL_CALL_STATUS, type Tone } from './labels.ts';
import { useApprovalDecision } from './useApprovalDecision.ts';
import { timeOfDay } from '../../ui/timeOfDay.ts';

type ToolCall = FragmentOf<typeof ToolCallRowFragment>;

/**
 * One tool call, read from its StudioToolCall entity by key (cache-first), so every TOOL_* and
 * APPROVAL_* event that updates the entity re-renders this card. While the call waits for a
 * PENDING approval the card carries the approval prompt (A approves, D denies when the card has
 * focus).
 */
export function ToolCallCard({ toolCallId, sessionId }: { toolCallId: string; sessionId: string }) {
  const [{ data, fetching, error }] = useQuery({
    query: ToolCallCardQuery,
    variables: { toolCallId },
  });
  if (data?.studioToolCall)
    return <ToolCallCardView data={data.studioToolCall} sessionId={sessionId} />;
  if (fetching) {
    return (
      <p role="status" className="text-sm text-slate-600 dark:text-slate-400">
        Loading tool call…
      </p>
    );
  }
  if (error) {
    return (
      <p role="alert" className="text-sm text-red-800 dark:text-red-300">
        Could not load tool call <SafeText text={toolCallId} />: <SafeText text={error.message} />
      </p>
    );
  }
  return (
    <p className="text-sm text-slate-600 dark:text-slate-400">
      Tool call <SafeText text={toolCallId} /> is not known to the server.
    </p>
  );
}

function useDescriptor(sessionId: string, toolName: string) {
  const [{ data }] = useQuery({ query: ToolDescriptorsQuery, variables: { sessionId } });
  return (
    data?.crowdyStudioAgentToolDescriptors.tools.find((tool) => tool.name === toolName) ?? null
  );
}

function Badge({ tone, children }: { tone: Tone; children: string }) {
  return (
    <span className={`rounded px-1.5 py-0.5 text-xs font-medium ring-1 ${TONE_CLASS[tone]}`}>
      {children}
    </span>
  );
}

/** The card body for one ToolCallRow fragment. */
export function ToolCallCardView({ data, sessionId }: { data: ToolCall; sessionId: string }) {
  const call = readFragment(ToolCallRowFragment, data);
  const titleId = useId();
  const descriptor = useDescriptor(sessionId, call.toolName);
  const approval = call.approval;
  const { expired: pastDeadline } = useDeadline(
    approval?.status === 'PENDING' ? approval.expiresAt : null,
  );
  const decision = useApprovalDecision({
    sessionId,
    toolCallId: call.toolCallId,
    argumentHash: approval?.argumentHash ?? '',
  });
  const [denyOpen, setDenyOpen] = useState(false);
  const [denyReason, setDenyReason] = useState('');

  const status = call.status as ToolCallStatus;
  const approvalStatus = approval?.status as ApprovalStatus | undefined;
  const expired = approvalStatus === 'EXPIRED' || (approvalStatus === 'PENDING' && pastDeadline);
  const decidable =
    approval !== null &&
    approvalStatus === 'PENDING' &&
    !approval.studioAutomatic &&
    !pastDeadline &&
    status === 'WAITING_FOR_APPROVAL';
  const badge = expired
    ? { label: 'Approval expired', tone: 'muted' as const }
    : TOOL_CALL_STATUS[status];
  const risk = descriptor?.risk as ToolRisk | undefined;
  const hidden = countHidden(call.safeSummary ?? '') + countHidden(call.argumentsJson ?? '');

  const onKeyDown = (event: KeyboardEvent<HTMLElement>) => {
    if (!decidable || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target as HTMLElement;
    if (target.closest('input, textarea, select, [contenteditable="true"]')) return;
    const key = event.key.toLowerCase();
    if (key === 'a') {
      event.preventDefault();
      decision.request('approve');
    } else if (key === 'd') {
      event.preventDefault();
      setDenyOpen(true);
    }
  };

  return (
    <article
      aria-labelledby={titleId}
      tabIndex={0}
      onKeyDown={onKeyDown}
      data-tool-call-id={call.toolCallId}
      className="space-y-2 rounded-lg border border-slate-200 bg-white p-3 text-slate-900 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 dark:border-slate-700 dark:bg-slate-950 dark:text-slate-100"
    >
      <header className="flex flex-wrap items-center gap-2">
        <h3 id={titleId} className="font-mono text-sm font-semibold">
          <SafeText text={call.toolName} />
          <span className="ml-1 font-normal text-slate-500 dark:text-slate-400">
            {/^\d/.test(call.toolVersion) ? 'v' : ''}
            <SafeText text={call.toolVersion} />
          </span>
        </h3>
        <Badge tone={badge.tone}>{badge.label}</Badge>
        {(call.executor ?? descriptor?.executor) ? (
          <span className="text-xs text-slate-600 dark:text-slate-400">
            executor {call.executor ?? descriptor?.executor}
          </span>
        ) : null}
        {risk ? (
          <span
            className={`rounded px-1.5 py-0.5 text-xs ${HIGH_RISK.has(risk) ? 'bg-red-100 font-semibold text-red-900 dark:bg-red-950 dark:text-red-100' : 'bg-slate-100 dark:bg-slate-800'}`}
          >
            risk {risk}
            {descriptor?.riskReversible === false ? ', not reversible' : ''}
          </span>
        ) : null}
        {descriptor ? (
          <span className="text-xs text-slate-600 dark:text-slate-400">
            approval policy {descriptor.approvalPolicy}
          </span>
        ) : null}
        {descriptor && descriptor.version !== call.toolVersion ? (
          <span className="text-xs text-amber-800 dark:text-amber-300">
            registry has v{descriptor.version}
          </span>
        ) : null}
      </header>

      {call.askedBy ? (
        <p className="text-sm">
          Asked by <SafeText text={call.askedBy} className="font-medium" />
        </p>
      ) : null}

      {call.safeSummary ? (
        <p className="text-sm">
          <span className="sr-only">Summary: </span>
          <SafeText text={call.safeSummary} className="whitespace-pre-wrap break-words" />
        </p>
      ) : null}
      {hidden > 0 ? (
        <p role="note" className="text-xs font-medium text-amber-900 dark:text-amber-200">
          The summary or arguments contain {hidden} invisible or control{' '}
          {hidden === 1 ? 'character' : 'characters'}, shown as ⟨U+…⟩ and not applied.
        </p>
      ) : null}

      {call.argumentHash ? (
        <p className="flex flex-wrap items-center gap-1 text-xs">
          <span className="text-slate-600 dark:text-slate-400">Argument hash</span>
          <code className="break-all font-mono">
            <SafeText text={call.argumentHash} />
          </code>
          <CopyButton text={call.argumentHash} label="argument hash" />
        </p>
      ) : null}

      {decidable && approval ? (
        <ApprovalPrompt
          reasons={approval.studioReasons}
          argumentHash={approval.argumentHash}
          expiresAt={approval.expiresAt}
          decision={decision}
          denyOpen={denyOpen}
          denyReason={denyReason}
          onDenyOpen={() => setDenyOpen(true)}
          onDenyReason={setDenyReason}
          onDenyClose={() => setDenyOpen(false)}
        />
      ) : approval && approvalStatus ? (
        <ApprovalOutcome
          status={approvalStatus}
          expired={expired}
          automatic={approval.studioAutomatic}
          reason={approval.studioDecisionReason}
          decidedAt={approval.studioDecidedAt}
          reasons={approval.studioReasons}
          waitingOnTool={status !== 'WAITING_FOR_APPROVAL'}
        />
      ) : null}
      <RefusalNotice decision={decision} showControlError={status === 'WAITING_FOR_APPROVAL'} />

      {call.error ? (
        <div
          role="group"
          aria-label="Error"
          className="rounded border border-red-300 bg-red-50 p-2 text-sm dark:border-red-800 dark:bg-red-950/40"
        >
          <p>
            <code className="font-mono font-semibold">
              <SafeText text={call.error.code} />
            </code>{' '}
            <SafeText text={call.error.message} className="whitespace-pre-wrap break-words" />
          </p>
          {call.error.remediation ? (
            <p className="mt-1">
              <span className="font-medium">What to do: </span>
              <SafeText text={call.error.remediation} className="whitespace-pre-wrap break-words" />
            </p>
          ) : null}
          {call.error.retryable ? (
            <p className="mt-1 text-xs">The server marks this error as retryable.</p>
          ) : null}
        </div>
      ) : null}

      {call.argumentsJson !== null ? (
        <JsonView label="Arguments" json={call.argumentsJson} defaultOpen={decidable} />
      ) : null}
      {call.resultJson !== null ? (
        <JsonView label="Result" json={call.resultJson} defaultOpen={false} />
      ) : null}

      <details className="text-xs">
        <summary className="cursor-pointer text-slate-600 dark:text-slate-400">
          Steps ({call.steps.length})
        </summary>
        <ol className="mt-1 space-y-0.5">
          {call.steps.map((step) => (
            <li key={step.seq} className="flex gap-2 font-mono">
              <Link
                to={`/sessions/${encodeURIComponent(sessionId)}/events/${step.seq}`}
                className="text-blue-700 underline dark:text-blue-300"
                aria-label={`Event ${step.seq}`}
              >
                #{step.seq}
              </Link>
              <span>{step.type}</span>
              <span>{step.status}</span>
              <time dateTime={step.at} title={step.at}>
                {timeOfDay(step.at)}
              </time>
            </li>
          ))}
        </ol>
      </details>
    </article>
  );
}

function ApprovalOutcome({
  status,
  expired,
  automatic,
  reason,
  decidedAt,
  reasons,
  waitingOnTool,
}: {
  status: ApprovalStatus;
  expired: boolean;
  automatic: boolean;
  reason: string | null;
  decidedAt: string | null;
  reasons: readonly string[];
  waitingOnTool: boolean;
}) {
  const when = decidedAt ? (
    <>
      {' '}
      at{' '}
      <time dateTime={decidedAt} title={decidedAt}>
        {timeOfDay(decidedAt)}
      </time>
    </>
  ) : null;
  if (expired) {
    return (
      <p className="rounded bg-slate-100 p-2 text-sm dark:bg-slate-800">
        <strong>Expired</strong> without a decision{when}. This is not a denial: the call did not
        run, and the agent may propose it again.
      </p>
    );
  }
  if (status === 'DENIED') {
    return (
      <div className="rounded bg-red-50 p-2 text-sm dark:bg-red-950/40">
        <p>
          <strong>{automatic ? 'Denied automatically by the source' : 'Denied'}</strong>
          {when}.
        </p>
        {reason ? (
          <p>
            Reason: <SafeText text={reason} className="whitespace-pre-wrap break-words" />
          </p>
        ) : null}
        {automatic && reasons.length > 0 ? (
          <ul className="ml-5 list-disc">
            {reasons.map((r, i) => (
              <li key={i}>
                <SafeText text={r} />
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    );
  }
  if (status === 'PENDING') {
    return (
      <p className="text-sm">
        Approval pending{waitingOnTool ? ' (the call is not waiting for it now)' : ''}.
      </p>
    );
  }
  return (
    <p className="text-sm">
      <strong>{APPROVAL_STATUS[status]}</strong>
      {when}.
      {reason ? (
        <>
          {' '}
          <SafeText text={reason} />
        </>
      ) : null}
    </p>
  );
}
