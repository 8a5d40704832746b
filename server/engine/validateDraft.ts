/**
 * Checks a draft against the contract's bounds before it is appended. A malformed draft (from a
 * bridge or a bug) is refused whole with AGENT_EVENT_CURSOR_INVALID, so nothing half-valid is
 * ever stored.
 */
import type { EventDraft } from './eventDrafts.ts';
import { StudioError } from './StudioError.ts';
import { isEventType } from '../../protocol/events.ts';
import {
  DIGEST_PATTERN,
  ErrorCode,
  MAX_CHECKPOINT_FILES,
  MAX_ID_LENGTH,
  MAX_MESSAGE_CONTENT_BYTES,
  MAX_SAFE_SUMMARY,
} from '../../protocol/contract.ts';
import { isDecimalString } from '../../protocol/seq.ts';

function fail(message: string): never {
  throw new StudioError(ErrorCode.EVENT_CURSOR_INVALID, `Malformed event: ${message}`);
}

function id(value: unknown, name: string): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ID_LENGTH)
    fail(`${name} must be 1 to ${MAX_ID_LENGTH} characters`);
}

function decimal(value: unknown, name: string): void {
  if (!isDecimalString(value)) fail(`${name} must be a decimal string`);
}

function iso(value: unknown, name: string): void {
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value)))
    fail(`${name} must be an ISO-8601 time`);
}

export function validateDraft(draft: EventDraft): void {
  if (!isEventType(draft.type)) fail(`unknown type ${String(draft.type)}`);
  if (draft.runId !== undefined && draft.runId !== null) id(draft.runId, 'runId');
  if (draft.foreignId !== undefined) id(draft.foreignId, 'foreignId');
  switch (draft.type) {
    case 'USER_MESSAGE':
    case 'ASSISTANT_CHUNK':
    case 'ASSISTANT_MESSAGE':
      id(draft.messageId, 'messageId');
      if (Buffer.byteLength(draft.content, 'utf8') > MAX_MESSAGE_CONTENT_BYTES)
        fail('content is over 64 KiB');
      return;
    case 'TOOL_PROPOSED':
    case 'TOOL_DISPATCHED':
    case 'TOOL_SUCCEEDED':
    case 'TOOL_FAILED':
    case 'TOOL_DENIED':
    case 'TOOL_TIMED_OUT':
    case 'TOOL_OUTCOME_UNKNOWN':
      id(draft.toolCallId, 'toolCallId');
      if (!draft.toolName || draft.toolName.length > 160)
        fail('toolName must be 1 to 160 characters');
      if (draft.argumentHash && !DIGEST_PATTERN.test(draft.argumentHash))
        fail('argumentHash must be sha256:<64 hex>');
      if (draft.safeSummary && draft.safeSummary.length > MAX_SAFE_SUMMARY)
        fail('safeSummary is over 2048 characters');
      return;
    case 'APPROVAL_REQUESTED':
    case 'APPROVAL_GRANTED':
    case 'APPROVAL_DENIED':
    case 'APPROVAL_CONSUMED':
    case 'APPROVAL_EXPIRED':
      id(draft.approvalId, 'approvalId');
      id(draft.toolCallId, 'toolCallId');
      if (!DIGEST_PATTERN.test(draft.argumentHash)) fail('argumentHash must be sha256:<64 hex>');
      if (draft.safeSummary.length > MAX_SAFE_SUMMARY) fail('safeSummary is over 2048 characters');
      iso(draft.expiresAt, 'expiresAt');
      return;
    case 'LEASE_GRANTED':
    case 'LEASE_REVOKED':
    case 'LEASE_EXPIRED':
      id(draft.leaseId, 'leaseId');
      decimal(draft.clientEpoch, 'clientEpoch');
      iso(draft.grantedAt, 'grantedAt');
      iso(draft.expiresAt, 'expiresAt');
      return;
    case 'CHECKPOINT_CREATED':
    case 'CHECKPOINT_RESTORED':
      id(draft.checkpointId, 'checkpointId');
      decimal(draft.projectRevision, 'projectRevision');
      if (!DIGEST_PATTERN.test(draft.contentHash)) fail('contentHash must be sha256:<64 hex>');
      if (draft.files.length > MAX_CHECKPOINT_FILES) fail('a checkpoint lists at most 128 files');
      return;
    case 'RUN_STARTED':
    case 'RUN_PAUSED':
    case 'RUN_SUCCEEDED':
    case 'RUN_FAILED':
    case 'RUN_CANCELLED':
    case 'RUN_PREEMPTED':
      id(draft.runId, 'runId');
      return;
    case 'CLIENT_ATTACHED':
    case 'CLIENT_DETACHED':
      if (draft.clientEpoch != null) decimal(draft.clientEpoch, 'clientEpoch');
      return;
    case 'BUDGET_UPDATED':
      for (const d of draft.budget.dimensions)
        for (const key of ['limit', 'reserved', 'consumed', 'remaining'] as const)
          decimal(d[key], `budget ${d.name}.${key}`);
      return;
    case 'STUDIO_QUESTION_ASKED':
    case 'STUDIO_QUESTION_ANSWERED':
      id(draft.question.questionId, 'questionId');
      return;
    case 'STUDIO_FOREIGN_EVENT':
      if (draft.payloadJson.length > 8192) fail('a foreign payload is at most 8 KiB');
      return;
    default:
      return;
  }
}
