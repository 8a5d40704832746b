import type { EventType, ToolCallStatus } from '../../../protocol/events.ts';

/** A reader's name for every event type (a new type is a compile error here, not a blank row). */
export const EVENT_LABEL: Record<EventType, string> = {
  SESSION_CREATED: 'Session created',
  SESSION_PAUSED: 'Session paused',
  SESSION_RESUMED: 'Session resumed',
  SESSION_CLOSED: 'Session closed',
  CLIENT_ATTACHED: 'Client attached',
  CLIENT_DETACHED: 'Client detached',
  MODE_SELECTED: 'Mode selected',
  CONTEXT_CHANGED: 'Context changed',
  USER_MESSAGE: 'User message',
  ASSISTANT_CHUNK: 'Assistant (streaming)',
  ASSISTANT_MESSAGE: 'Assistant message',
  RUN_STARTED: 'Run started',
  RUN_PAUSED: 'Run paused',
  RUN_SUCCEEDED: 'Run succeeded',
  RUN_FAILED: 'Run failed',
  RUN_CANCELLED: 'Run cancelled',
  RUN_PREEMPTED: 'Run preempted',
  TOOL_PROPOSED: 'Tool proposed',
  TOOL_DISPATCHED: 'Tool dispatched',
  TOOL_SUCCEEDED: 'Tool succeeded',
  TOOL_FAILED: 'Tool failed',
  TOOL_DENIED: 'Tool denied',
  TOOL_TIMED_OUT: 'Tool timed out',
  TOOL_OUTCOME_UNKNOWN: 'Tool outcome unknown',
  APPROVAL_REQUESTED: 'Approval requested',
  APPROVAL_GRANTED: 'Approval granted',
  APPROVAL_DENIED: 'Approval denied',
  APPROVAL_CONSUMED: 'Approval consumed',
  APPROVAL_EXPIRED: 'Approval expired',
  LEASE_GRANTED: 'Lease granted',
  LEASE_REVOKED: 'Lease revoked',
  LEASE_EXPIRED: 'Lease expired',
  CHECKPOINT_CREATED: 'Checkpoint created',
  CHECKPOINT_RESTORED: 'Checkpoint restored',
  BUDGET_UPDATED: 'Budget updated',
  STUDIO_STAGE_CHANGED: 'Stage changed',
  STUDIO_LOG: 'Log',
  STUDIO_QUESTION_ASKED: 'Question asked',
  STUDIO_QUESTION_ANSWERED: 'Question answered',
  STUDIO_THREAD_CHANGED: 'Thread changed',
  STUDIO_FOREIGN_EVENT: 'Foreign event',
};

/** Thousands separators for a decimal string, without going through Number. */
export function groupDigits(value: string): string {
  return value.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function assertNever(value: never): never {
  throw new Error(`Unhandled value: ${JSON.stringify(value)}`);
}

/** A tool call's status in the compact timeline row (the full card has its own badges). */
export const TOOL_STATUS_WORDS: Record<ToolCallStatus, string> = {
  PROPOSED: 'proposed',
  WAITING_FOR_APPROVAL: 'waiting for approval',
  DISPATCHED: 'dispatched',
  RUNNING: 'running',
  SUCCEEDED: 'succeeded',
  FAILED: 'failed',
  DENIED: 'denied',
  TIMED_OUT: 'timed out',
  CANCELLED: 'cancelled',
  STALE: 'stale (fenced)',
  OUTCOME_UNKNOWN: 'outcome unknown',
};
