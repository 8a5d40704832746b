import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
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
import {
  APPROVAL_BADGE,
  APPROVAL_STATUS,
  decidedByWords,
  HIGH_RISK,
  TONE_CLASS,
  TOOL_CALL_STATUS,
  type StatusLabel,
} from './labels.ts';
import { commandOf, ProposalDiffView } from './ProposalDiffView.tsx';
import { useApprovalDecision } from './useApprovalDecision.ts';
import { useAskAgain } from './useAskAgain.ts';
import { timeOfDay } from '../../ui/timeOfDay.ts';

type ToolCall = FragmentOf<typeof ToolCallRowFragment>;

/** What a rule editor needs to prefill "Always allow…" / "Always deny…" from this call. */
export interface RuleSeed {
  sessionId: string;
  toolCallId: string;
  toolName: string;
  argumentsJson: string | null;
  risk: ToolRisk | null;
  /** Rules the source suggests for this call (Claude Code's permission suggestions). */
  suggestions: readonly RuleSuggestion[];
}

/** A rule suggested by the source, in the studio's rule terms (AgentApproval.studioRuleSuggestions). */
export interface RuleSuggestion {
  effect: 'ALLOW' | 'DENY';
  toolName: string;
  match: 'EXACT_ARGUMENTS' | 'ARGUMENT_PREFIX' | 'ANY';
  argumentName: string | null;
  argumentPrefix: string | null;
  scope: 'SESSION' | 'PROJECT' | 'SOURCE' | 'STUDIO';
  label: string;
}

/** Renders the rule actions of a card (src/app passes the rules feature's editor). */
export type RenderRuleActions = (seed: RuleSeed) => ReactNode;

/** Risks whose approval from the keyboard needs a second A press. */
const TWO_KEY_RISKS: ReadonlySet<ToolRisk> = new Set([
  'DESTRUCTIVE',
  'IRREVERSIBLE',
  'ECONOMIC',
  'TRUST_CONSENT',
]);

/**
 * One tool call, read from its StudioToolCall entity by key (cache-first), so every TOOL_* and
 * APPROVAL_* event that updates the entity re-renders this card. While the call waits for a
 * PENDING approval the card carries the approval prompt (A approves, D denies when the card or
 * the timeline row j/k selected has focus; a high-risk call needs A twice).
 */
export function ToolCallCard({
  toolCallId,
  sessionId,
  renderRuleActions,
}: {
  toolCallId: string;
  sessionId: string;
  renderRuleActions?: RenderRuleActions;
}) {
  const [{ data, fetching, error }] = useQuery({
    query: ToolCallCardQuery,
    variables: { toolCallId },
  });
  if (data?.studioToolCall)
    return (
      <ToolCallCardView
        data={data.studioToolCall}
        sessionId={sessionId}
        {...(renderRuleActions ? { renderRuleActions } : {})}
      />
    );
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

function Badge({ label }: { label: StatusLabel }) {
  // The icon is drawn from data-icon (CSS), so the badge's text is exactly its words.
  return (
    <span
      data-icon={label.icon}
      className={`rounded px-1.5 py-0.5 text-xs font-medium ring-1 before:mr-1 before:content-[attr(data-icon)] ${TONE_CLASS[label.tone]}`}
    >
      {label.label}
    </span>
  );
}

/** The card body for one ToolCallRow fragment. */
export function ToolCallCardView({
  data,
  sessionId,
  renderRuleActions,
}: {
  data: ToolCall;
  sessionId: string;
  renderRuleActions?: RenderRuleActions;
}) {
  const call = readFragment(ToolCallRowFragment, data);
  const titleId = useId();
  const articleRef = useRef<HTMLElement>(null);
  const [armed, setArmed] = useState(false);
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
  const badge =
    (expired ? APPROVAL_BADGE.EXPIRED : approvalStatus ? APPROVAL_BADGE[approvalStatus] : null) ??
    TOOL_CALL_STATUS[status];
  const risk = descriptor?.risk as ToolRisk | undefined;
  const twoKeys = risk !== undefined && TWO_KEY_RISKS.has(risk);
  const hidden = countHidden(call.safeSummary ?? '') + countHidden(call.argumentsJson ?? '');
  const command = commandOf(call.argumentsJson);

  // A and D act on this card when it has focus, or when the timeline row holding it is the one
  // j/k selected. A high-risk call asks for A twice, so one stray key press never approves it.
  const keys = useRef({ decidable, twoKeys, armed, decision });
  keys.current = { decidable, twoKeys, armed, decision };
  useEffect(() => {
    if (!armed) return undefined;
    const timer = setTimeout(() => setArmed(false), 4000);
    return () => clearTimeout(timer);
  }, [armed]);
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      const article = articleRef.current;
      const active = document.activeElement;
      if (!article || !active || event.defaultPrevented) return;
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const ours =
        article.contains(active) ||
        (active instanceof HTMLElement &&
          active.matches('[data-row-key]') &&
          active.contains(article) &&
          active.querySelectorAll('article[data-tool-call-id]').length === 1);
      if (!ours) return;
      const target = event.target as HTMLElement;
      if (target.closest?.('input, textarea, select, [contenteditable="true"]')) return;
      const now = keys.current;
      if (!now.decidable) return;
      const key = event.key.toLowerCase();
      if (key === 'a') {
        event.preventDefault();
        if (now.twoKeys && !now.armed) {
          setArmed(true);
          return;
        }
        setArmed(false);
        now.decision.request('approve');
      } else if (key === 'd') {
        event.preventDefault();
        setArmed(false);
        setDenyOpen(true);
      } else if (now.armed && key !== 'shift') setArmed(false);
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, []);

  return (
    <article
      ref={articleRef}
      aria-labelledby={titleId}
      tabIndex={0}
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
        <Badge label={badge} />
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

      {command !== null ? (
        <div className="text-sm">
          <span className="font-medium">Command</span>
          <pre className="mt-1 max-h-60 overflow-auto whitespace-pre-wrap break-all rounded bg-slate-900 p-2 font-mono text-xs text-slate-50">
            <SafeText text={command} />
          </pre>
        </div>
      ) : null}

      {call.studioDiff ? (
        <ProposalDiffView
          files={call.studioDiff.files}
          truncated={call.studioDiff.truncated}
          open={decidable || call.status === 'WAITING_FOR_APPROVAL'}
        />
      ) : null}

      {decidable && approval ? (
        <ApprovalPrompt
          armed={armed && risk ? risk : null}
          armedNeeded={twoKeys}
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
          by={decidedByWords(approval)}
          reason={approval.studioDecisionReason}
          decidedAt={approval.studioDecidedAt}
          reasons={approval.studioReasons}
          waitingOnTool={status !== 'WAITING_FOR_APPROVAL'}
        />
      ) : null}
      {call.studioCanAskAgain && !decidable ? (
        <AskAgain sessionId={sessionId} toolCallId={call.toolCallId} />
      ) : null}
      {renderRuleActions && approval
        ? renderRuleActions({
            sessionId,
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            argumentsJson: call.argumentsJson,
            risk: risk ?? null,
            suggestions: approval.studioRuleSuggestions ?? [],
          })
        : null}
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

function AskAgain({ sessionId, toolCallId }: { sessionId: string; toolCallId: string }) {
  const { askAgain, sending, error } = useAskAgain(sessionId, toolCallId);
  return (
    <div className="flex flex-wrap items-center gap-2 text-sm">
      <button
        type="button"
        disabled={sending}
        onClick={() => void askAgain()}
        className="rounded border border-slate-400 px-3 py-1 font-medium hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 disabled:opacity-50 dark:hover:bg-slate-800"
      >
        {sending ? 'Asking again…' : 'Ask again'}
      </button>
      <span className="text-xs text-slate-600 dark:text-slate-400">
        The agent proposes the same call anew, with a fresh diff and hash.
      </span>
      {error ? (
        <p role="alert" className="w-full text-red-800 dark:text-red-300">
          <SafeText text={error} />
        </p>
      ) : null}
    </div>
  );
}

function ApprovalOutcome({
  status,
  expired,
  automatic,
  by,
  reason,
  decidedAt,
  reasons,
  waitingOnTool,
}: {
  status: ApprovalStatus;
  expired: boolean;
  automatic: boolean;
  /** "by rule …", "by alice", "automatically by the source" or empty. */
  by: string;
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
      <p className="rounded bg-orange-50 p-2 text-sm dark:bg-orange-950/40">
        <strong>Expired</strong> without a decision{when}. This is not a denial: the call did not
        run, and the agent may propose it again.
      </p>
    );
  }
  if (status === 'REVOKED') {
    return (
      <div className="rounded bg-violet-50 p-2 text-sm dark:bg-violet-950/40">
        <p>
          <strong>Revoked</strong>
          {when}
          {by && !automatic ? ` ${by}` : ''}. Nobody denied it: what it waited on ended, so the call
          did not run and can no longer be decided.
        </p>
        {reason ? <SafeText text={reason} className="whitespace-pre-wrap break-words" /> : null}
      </div>
    );
  }
  if (status === 'DENIED') {
    return (
      <div className="rounded bg-red-50 p-2 text-sm dark:bg-red-950/40">
        <p>
          <strong>{by ? `Denied ${by}` : 'Denied'}</strong>
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
  const allowed = by.startsWith('by rule')
    ? `Allowed ${by}`
    : by
      ? `${APPROVAL_STATUS[status]} ${by}`
      : APPROVAL_STATUS[status];
  return (
    <p className="text-sm">
      <strong>{allowed}</strong>
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
