/**
 * Applies one appended event to the current-state tables. Runs inside the append transaction,
 * so the log and the state never disagree. The event log is the truth; this is its fold.
 */
import type { Db } from './kernel.ts';
import type { SessionRecord, ToolCallRecord } from '../store/records.ts';
import type { StoredEvent } from './eventDrafts.ts';
import { RUN_EVENT_STATUS, TERMINAL_RUN_STATUSES } from '../../protocol/events.ts';

export async function project(
  store: Db,
  session: SessionRecord,
  event: StoredEvent,
): Promise<void> {
  const at = event.createdAt;
  switch (event.type) {
    case 'SESSION_CREATED':
      return;
    case 'SESSION_PAUSED':
      session.status = 'PAUSED';
      return;
    case 'SESSION_RESUMED':
      session.status = 'ACTIVE';
      return;
    case 'SESSION_CLOSED':
      session.status = 'CLOSED';
      session.closedAt = at;
      return;
    case 'CLIENT_ATTACHED':
      if (event.clientEpoch) {
        session.currentClientEpoch = event.clientEpoch;
        session.attachedEpoch = event.clientEpoch;
        // Pending approvals move to the new epoch: only the newest attachment may decide them.
        for (const approval of await store.listPendingApprovals(session.sessionId)) {
          approval.clientEpoch = event.clientEpoch;
          await store.putApproval(approval);
        }
      }
      return;
    case 'CLIENT_DETACHED':
      if (event.clientEpoch && session.attachedEpoch === event.clientEpoch)
        session.attachedEpoch = null;
      return;
    case 'MODE_SELECTED':
      if (event.mode) session.mode = event.mode;
      return;
    case 'CONTEXT_CHANGED':
      if (event.contextVersion) session.contextVersion = event.contextVersion;
      return;
    case 'USER_MESSAGE':
      if (!session.title) session.title = event.content.trim().slice(0, 80) || null;
      return;
    case 'ASSISTANT_CHUNK':
    case 'ASSISTANT_MESSAGE':
      return;
    case 'RUN_STARTED':
    case 'RUN_PAUSED':
    case 'RUN_SUCCEEDED':
    case 'RUN_FAILED':
    case 'RUN_CANCELLED':
    case 'RUN_PREEMPTED': {
      const status = event.status ?? RUN_EVENT_STATUS[event.type];
      const run = (await store.getRun(event.runId)) ?? {
        runId: event.runId,
        sessionId: session.sessionId,
        status,
        providerRounds: 0,
        toolCalls: 0,
        errorCode: null,
        terminalReason: null,
        reason: null,
        startedAt: null,
        finishedAt: null,
        createdAt: at,
        cancelled: false,
      };
      run.status = status;
      session.lastRunId = run.runId;
      if (event.type === 'RUN_STARTED') {
        run.startedAt ??= at;
        run.providerRounds += 1;
      }
      if (event.reason !== undefined) run.reason = event.reason ?? null;
      if (event.code !== undefined) run.errorCode = event.code ?? null;
      if (event.error) run.errorCode = event.error.code;
      if (TERMINAL_RUN_STATUSES.has(status)) {
        run.finishedAt = at;
        run.terminalReason = event.reason ?? event.error?.message ?? status;
        run.cancelled = status === 'CANCELLED';
        if (session.currentRunId === run.runId) session.currentRunId = null;
      } else {
        session.currentRunId = run.runId;
      }
      await store.putRun(run);
      return;
    }
    case 'TOOL_PROPOSED':
    case 'TOOL_DISPATCHED':
    case 'TOOL_SUCCEEDED':
    case 'TOOL_FAILED':
    case 'TOOL_DENIED':
    case 'TOOL_TIMED_OUT':
    case 'TOOL_OUTCOME_UNKNOWN': {
      let call = await store.getToolCall(event.toolCallId);
      if (!call) {
        call = {
          toolCallId: event.toolCallId,
          sessionId: session.sessionId,
          runId: event.runId,
          toolName: event.toolName,
          toolVersion: event.toolVersion,
          executor: event.executor ?? null,
          status: event.status,
          safeSummary: null,
          argumentHash: null,
          argumentsJson: null,
          resultJson: null,
          error: null,
          approvalId: null,
          askedBy: null,
          proposedAt: at,
          updatedAt: at,
          steps: [],
        } satisfies ToolCallRecord;
        if (event.runId) {
          const run = await store.getRun(event.runId);
          if (run) {
            run.toolCalls += 1;
            await store.putRun(run);
          }
        }
      }
      call.status = event.status;
      call.updatedAt = at;
      if (event.executor) call.executor = event.executor;
      if (event.safeSummary) call.safeSummary = event.safeSummary;
      if (event.argumentHash) call.argumentHash = event.argumentHash;
      if (event.argumentsJson) call.argumentsJson = event.argumentsJson;
      if (event.resultJson) call.resultJson = event.resultJson;
      if (event.error) call.error = event.error;
      if (event.askedBy) call.askedBy = event.askedBy;
      if (event.studioDiff) call.diff = event.studioDiff;
      call.steps.push({ seq: event.seq, type: event.type, status: event.status, at });
      await store.putToolCall(call);
      return;
    }
    case 'APPROVAL_REQUESTED':
    case 'APPROVAL_GRANTED':
    case 'APPROVAL_DENIED':
    case 'APPROVAL_CONSUMED':
    case 'APPROVAL_EXPIRED': {
      const existing = await store.getApproval(event.approvalId);
      const approval = existing ?? {
        approvalId: event.approvalId,
        sessionId: session.sessionId,
        toolCallId: event.toolCallId,
        runId: event.runId,
        argumentHash: event.argumentHash,
        status: event.status,
        safeSummary: event.safeSummary,
        reasons: event.reasons,
        clientEpoch: session.attachedEpoch ?? session.currentClientEpoch,
        expiresAt: event.expiresAt,
        decidedAt: null,
        decisionReason: null,
        automatic: false,
      };
      approval.status = event.status;
      approval.expiresAt = event.expiresAt;
      if (event.status !== 'PENDING') delete approval.decidingClaim;
      if (event.type !== 'APPROVAL_REQUESTED' && event.type !== 'APPROVAL_CONSUMED')
        approval.decidedAt = at;
      if (event.decisionReason !== undefined)
        approval.decisionReason = event.decisionReason ?? null;
      if (event.automatic) approval.automatic = true;
      if (event.studioRuleId !== undefined) approval.ruleId = event.studioRuleId ?? null;
      if (event.studioRuleName !== undefined) approval.ruleName = event.studioRuleName ?? null;
      if (event.studioDecidedBy !== undefined) approval.decidedBy = event.studioDecidedBy ?? null;
      if (event.studioRuleSuggestions) approval.ruleSuggestions = event.studioRuleSuggestions;
      await store.putApproval(approval);
      const call = await store.getToolCall(event.toolCallId);
      if (call) {
        call.approvalId = event.approvalId;
        call.updatedAt = at;
        if (event.type === 'APPROVAL_REQUESTED') {
          call.status = 'WAITING_FOR_APPROVAL';
          call.argumentHash ??= event.argumentHash;
          call.safeSummary ??= event.safeSummary;
        }
        call.steps.push({ seq: event.seq, type: event.type, status: event.status, at });
        await store.putToolCall(call);
      }
      if (event.runId) {
        const run = await store.getRun(event.runId);
        if (run && !TERMINAL_RUN_STATUSES.has(run.status)) {
          if (event.type === 'APPROVAL_REQUESTED') run.status = 'WAITING_FOR_APPROVAL';
          else if (event.type === 'APPROVAL_GRANTED') run.status = 'RUNNING';
          await store.putRun(run);
        }
      }
      return;
    }
    case 'LEASE_GRANTED':
    case 'LEASE_REVOKED':
    case 'LEASE_EXPIRED':
      await store.putLease({
        leaseId: event.leaseId,
        sessionId: session.sessionId,
        kind: event.kind,
        status: event.status,
        clientEpoch: event.clientEpoch,
        scopes: event.scopes,
        holder: event.holder,
        contextVersion: event.contextVersion,
        controlledEntityId: event.controlledEntityId ?? null,
        hostCapabilityRevision: event.hostCapabilityRevision ?? null,
        expectedProjectRevision: event.expectedProjectRevision ?? null,
        grantedAt: event.grantedAt,
        expiresAt: event.expiresAt,
        revokedReason: event.type === 'LEASE_GRANTED' ? null : (event.reason ?? null),
      });
      return;
    case 'CHECKPOINT_CREATED':
    case 'CHECKPOINT_RESTORED': {
      const existing = await store.getCheckpoint(event.checkpointId);
      if (existing) {
        if (event.restoredAt) existing.restoredAt = event.restoredAt;
        await store.putCheckpoint(existing);
      } else {
        if (!session.projectId)
          throw new Error('a checkpoint event needs a session with a project');
        await store.putCheckpoint({
          checkpointId: event.checkpointId,
          sessionId: session.sessionId,
          projectId: session.projectId,
          projectRevision: event.projectRevision,
          contentHash: event.contentHash,
          reason: event.reason,
          files: event.files,
          fileCount: event.studioFileCount ?? event.files.length,
          totalBytes:
            event.studioTotalBytes ?? String(event.files.reduce((sum, f) => sum + f.byteLength, 0)),
          createdAt: at,
          restoredAt: event.restoredAt ?? null,
          exactPreImage: event.exactPreImage ?? false,
          createdSeq: event.seq,
        });
      }
      return;
    }
    case 'BUDGET_UPDATED':
      await store.putBudget({ sessionId: session.sessionId, budget: event.budget });
      return;
    case 'STUDIO_QUESTION_ASKED':
    case 'STUDIO_QUESTION_ANSWERED':
      await store.putQuestion({ ...event.question, runId: event.runId });
      return;
    case 'STUDIO_STAGE_CHANGED':
    case 'STUDIO_LOG':
    case 'STUDIO_THREAD_CHANGED':
    case 'STUDIO_FOREIGN_EVENT':
      return;
    default: {
      const never: never = event;
      throw new Error(`unhandled event ${(never as { type: string }).type}`);
    }
  }
}
