/**
 * The truthful end of a pending approval. Whatever ends the thing an approval waits on (its run
 * ends, the session is paused or closed, the source withdraws the call, the kill switch, a target
 * file that changed since its diff was shown) revokes it in the same commit: APPROVAL_DENIED with
 * status REVOKED, and the call (if it still waits) TOOL_FAILED with status CANCELLED. A later
 * decision is refused with AGENT_APPROVAL_REVOKED.
 *
 * `revocationsBefore` is called by the engine for every draft it is about to append, so every
 * path (the engine's own actions and every source's appends) obeys the same rule.
 */
import type { Db } from './kernel.ts';
import type { ApprovalRecord } from '../store/records.ts';
import type { EventDraft } from './eventDrafts.ts';
import { approvalFieldsOf } from './recordDrafts.ts';
import { ErrorCode } from '../../protocol/contract.ts';

const RUN_ENDS = new Set(['RUN_SUCCEEDED', 'RUN_FAILED', 'RUN_CANCELLED', 'RUN_PREEMPTED']);
const TOOL_ENDS = new Set([
  'TOOL_SUCCEEDED',
  'TOOL_FAILED',
  'TOOL_DENIED',
  'TOOL_TIMED_OUT',
  'TOOL_OUTCOME_UNKNOWN',
]);

/** Why an approval was revoked, in words a card can show after "Revoked: ". */
export function revokeReasonFor(draft: EventDraft): string | null {
  switch (draft.type) {
    case 'RUN_CANCELLED':
      return draft.reason ? `the run was cancelled (${draft.reason})` : 'the run was cancelled';
    case 'RUN_SUCCEEDED':
    case 'RUN_FAILED':
    case 'RUN_PREEMPTED':
      return 'the run ended before anyone decided';
    case 'SESSION_PAUSED':
      return 'the session was paused';
    case 'SESSION_CLOSED':
      return 'the session was closed';
    default:
      return TOOL_ENDS.has(draft.type) ? 'the source withdrew the call' : null;
  }
}

/** The PENDING approvals that `draft` ends (read inside the append transaction). */
async function endedBy(store: Db, sessionId: string, draft: EventDraft): Promise<ApprovalRecord[]> {
  const pending = await store.listPendingApprovals(sessionId);
  if (pending.length === 0) return [];
  if (RUN_ENDS.has(draft.type)) return pending.filter((a) => a.runId === draft.runId);
  if (draft.type === 'SESSION_PAUSED' || draft.type === 'SESSION_CLOSED') return pending;
  if (TOOL_ENDS.has(draft.type) && 'toolCallId' in draft)
    return pending.filter((a) => a.toolCallId === draft.toolCallId);
  return [];
}

/**
 * The drafts that revoke one approval: APPROVAL_DENIED (REVOKED, automatic) and, unless
 * `keepCall` (the source itself ends the call), TOOL_FAILED (CANCELLED) for a call that still waits.
 */
export async function revocationDrafts(
  store: Db,
  approval: ApprovalRecord,
  reason: string,
  options: { keepCall?: boolean; revokedBy?: string | null } = {},
): Promise<EventDraft[]> {
  const drafts: EventDraft[] = [
    {
      type: 'APPROVAL_DENIED',
      status: 'REVOKED',
      ...approvalFieldsOf(approval),
      automatic: true,
      decisionReason: `Revoked: ${reason}.`,
      studioDecidedBy: options.revokedBy ?? null,
    },
  ];
  const call = await store.getToolCall(approval.toolCallId);
  if (!options.keepCall && call && call.status === 'WAITING_FOR_APPROVAL')
    drafts.push({
      type: 'TOOL_FAILED',
      runId: call.runId,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      toolVersion: call.toolVersion,
      status: 'CANCELLED',
      error: {
        code: ErrorCode.CANCELLED,
        message: `The call did not run: ${reason}.`,
        retryable: false,
      },
    });
  return drafts;
}

/** Drafts to append right before `draft` so that no approval outlives what it waits on. */
export async function revocationsBefore(
  store: Db,
  sessionId: string,
  draft: EventDraft,
): Promise<{ drafts: EventDraft[]; revoked: ApprovalRecord[] }> {
  const reason = revokeReasonFor(draft);
  if (!reason) return { drafts: [], revoked: [] };
  const revoked = await endedBy(store, sessionId, draft);
  const keepCall = TOOL_ENDS.has(draft.type);
  return {
    drafts: (
      await Promise.all(revoked.map((a) => revocationDrafts(store, a, reason, { keepCall })))
    ).flat(),
    revoked,
  };
}
