/** The event vocabulary of crowdy.studio-agent/1 plus the studio's additive members. */

export const EVENT_TYPENAMES = [
  'AgentLifecycleEvent',
  'AgentMessageEvent',
  'AgentRunEvent',
  'AgentToolEvent',
  'AgentApprovalEvent',
  'AgentLeaseEvent',
  'AgentCheckpointEvent',
  'AgentBudgetEvent',
  'StudioStageEvent',
  'StudioLogEvent',
  'StudioQuestionEvent',
  'StudioThreadEvent',
  'StudioForeignEvent',
] as const;
export type EventTypename = (typeof EVENT_TYPENAMES)[number];

/** Every `type` value and the union member that carries it. */
export const EVENT_TYPE_MEMBER = {
  SESSION_CREATED: 'AgentLifecycleEvent',
  SESSION_PAUSED: 'AgentLifecycleEvent',
  SESSION_RESUMED: 'AgentLifecycleEvent',
  SESSION_CLOSED: 'AgentLifecycleEvent',
  CLIENT_ATTACHED: 'AgentLifecycleEvent',
  CLIENT_DETACHED: 'AgentLifecycleEvent',
  MODE_SELECTED: 'AgentLifecycleEvent',
  CONTEXT_CHANGED: 'AgentLifecycleEvent',
  USER_MESSAGE: 'AgentMessageEvent',
  ASSISTANT_CHUNK: 'AgentMessageEvent',
  ASSISTANT_MESSAGE: 'AgentMessageEvent',
  RUN_STARTED: 'AgentRunEvent',
  RUN_PAUSED: 'AgentRunEvent',
  RUN_SUCCEEDED: 'AgentRunEvent',
  RUN_FAILED: 'AgentRunEvent',
  RUN_CANCELLED: 'AgentRunEvent',
  RUN_PREEMPTED: 'AgentRunEvent',
  TOOL_PROPOSED: 'AgentToolEvent',
  TOOL_DISPATCHED: 'AgentToolEvent',
  TOOL_SUCCEEDED: 'AgentToolEvent',
  TOOL_FAILED: 'AgentToolEvent',
  TOOL_DENIED: 'AgentToolEvent',
  TOOL_TIMED_OUT: 'AgentToolEvent',
  TOOL_OUTCOME_UNKNOWN: 'AgentToolEvent',
  APPROVAL_REQUESTED: 'AgentApprovalEvent',
  APPROVAL_GRANTED: 'AgentApprovalEvent',
  APPROVAL_DENIED: 'AgentApprovalEvent',
  APPROVAL_CONSUMED: 'AgentApprovalEvent',
  APPROVAL_EXPIRED: 'AgentApprovalEvent',
  LEASE_GRANTED: 'AgentLeaseEvent',
  LEASE_REVOKED: 'AgentLeaseEvent',
  LEASE_EXPIRED: 'AgentLeaseEvent',
  CHECKPOINT_CREATED: 'AgentCheckpointEvent',
  CHECKPOINT_RESTORED: 'AgentCheckpointEvent',
  BUDGET_UPDATED: 'AgentBudgetEvent',
  STUDIO_STAGE_CHANGED: 'StudioStageEvent',
  STUDIO_LOG: 'StudioLogEvent',
  STUDIO_QUESTION_ASKED: 'StudioQuestionEvent',
  STUDIO_QUESTION_ANSWERED: 'StudioQuestionEvent',
  STUDIO_THREAD_CHANGED: 'StudioThreadEvent',
  STUDIO_FOREIGN_EVENT: 'StudioForeignEvent',
} as const satisfies Record<string, EventTypename>;

export type EventType = keyof typeof EVENT_TYPE_MEMBER;
export const EVENT_TYPES = Object.keys(EVENT_TYPE_MEMBER) as EventType[];

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && Object.hasOwn(EVENT_TYPE_MEMBER, value);
}

export type ToolCallStatus =
  | 'PROPOSED'
  | 'WAITING_FOR_APPROVAL'
  | 'DISPATCHED'
  | 'RUNNING'
  | 'SUCCEEDED'
  | 'FAILED'
  | 'DENIED'
  | 'TIMED_OUT'
  | 'CANCELLED'
  | 'STALE'
  | 'OUTCOME_UNKNOWN';
export type RunStatus =
  | 'QUEUED'
  | 'RUNNING'
  | 'WAITING_FOR_TOOL'
  | 'WAITING_FOR_APPROVAL'
  | 'PAUSED'
  | 'SUCCEEDED'
  | 'FAILED'
  | 'CANCELLED'
  | 'PREEMPTED';
export type ApprovalStatus = 'PENDING' | 'GRANTED' | 'DENIED' | 'CONSUMED' | 'REVOKED' | 'EXPIRED';
export type SessionStatus = 'ACTIVE' | 'PAUSED' | 'CLOSED' | 'REVOKED';
export type AgentMode = 'ASK' | 'BUILD' | 'PLAY';
export type ToolExecutor = 'SERVER' | 'BROWSER';
export type ToolRisk =
  | 'READ_ONLY'
  | 'ROUTINE_WRITE'
  | 'WORLD_CONTROL'
  | 'DESTRUCTIVE'
  | 'TRUST_CONSENT'
  | 'ECONOMIC'
  | 'IRREVERSIBLE';
export type LeaseKind = 'WORKSPACE' | 'PLAY';
export type LeaseStatus = 'ACTIVE' | 'REVOKED' | 'EXPIRED';
export type CheckpointReason = 'AGENT_WRITE' | 'RESTORE_PREIMAGE' | 'MANUAL';

export const TERMINAL_TOOL_STATUSES: ReadonlySet<ToolCallStatus> = new Set([
  'SUCCEEDED',
  'FAILED',
  'DENIED',
  'TIMED_OUT',
  'CANCELLED',
  'STALE',
  'OUTCOME_UNKNOWN',
]);
export const TERMINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set([
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'PREEMPTED',
]);

/** The run status each RUN_* event type records. */
export const RUN_EVENT_STATUS = {
  RUN_STARTED: 'RUNNING',
  RUN_PAUSED: 'PAUSED',
  RUN_SUCCEEDED: 'SUCCEEDED',
  RUN_FAILED: 'FAILED',
  RUN_CANCELLED: 'CANCELLED',
  RUN_PREEMPTED: 'PREEMPTED',
} as const satisfies Record<string, RunStatus>;

/** The approval status each APPROVAL_* event type records. */
export const APPROVAL_EVENT_STATUS = {
  APPROVAL_REQUESTED: 'PENDING',
  APPROVAL_GRANTED: 'GRANTED',
  APPROVAL_DENIED: 'DENIED',
  APPROVAL_CONSUMED: 'CONSUMED',
  APPROVAL_EXPIRED: 'EXPIRED',
} as const satisfies Record<string, ApprovalStatus>;
