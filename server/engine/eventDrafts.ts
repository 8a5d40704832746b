/**
 * What a writer (the protocol layer, the demo agent, a bridge) hands to the engine to append.
 * The engine adds eventId, seq, createdAt and the base fields, stores the draft as the payload
 * and updates the current-state tables in the same transaction.
 *
 * BigInt fields are decimal strings here, exactly as on the wire.
 */
import type {
  AgentMode,
  ApprovalStatus,
  LeaseKind,
  LeaseStatus,
  RunStatus,
  ToolCallStatus,
  ToolExecutor,
} from '../../protocol/events.ts';

export interface AgentErrorValue {
  code: string;
  message: string;
  retryable: boolean;
  remediation?: string | null;
  field?: string | null;
  requiredScope?: string | null;
}

export interface CheckpointFileValue {
  target: 'SERVER' | 'CLIENT';
  path: string;
  contentHash: string;
  byteLength: number;
}

export interface BudgetDimensionValue {
  name: string;
  scope: string;
  limit: string;
  reserved: string;
  consumed: string;
  remaining: string;
  unit: string;
}

export interface BudgetValue {
  dimensions: BudgetDimensionValue[];
  resetAt: string | null;
  platformFunded: boolean;
  payer: string;
}

export interface ToolInvocationValue {
  protocolVersion: string;
  sessionId: string;
  runId: string;
  toolCallId: string;
  name: string;
  version: string;
  descriptorDigest: string;
  argumentsJson: string;
  argumentHash: string;
  contextVersion: string;
  clientEpoch: string | null;
  leaseId: string | null;
  approvalGrant: string | null;
  idempotencyKey: string | null;
  deadline: string;
}

export interface ToolResultEnvelopeValue {
  protocolVersion: string;
  toolCallId: string;
  status: 'SUCCEEDED' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT' | 'OUTCOME_UNKNOWN';
  outputJson: string | null;
  error: AgentErrorValue | null;
  observedContextVersion: string;
  startedAt: string;
  finishedAt: string;
}

/** One file of a proposal diff: the file on disk (`beforeHash`, null when absent) against the change. */
export interface ProposalDiffFileValue {
  path: string;
  beforeHash: string | null;
  afterHash: string | null;
  added: number;
  removed: number;
  /** Unified-diff hunks (no file header), bounded; rendered as text, never as HTML. */
  hunks: string;
  truncated: boolean;
  binary: boolean;
}

export interface ProposalDiffValue {
  files: ProposalDiffFileValue[];
  truncated: boolean;
}

export interface QuestionValue {
  questionId: string;
  sessionId: string;
  kind: string;
  prompt: string;
  choices: string[];
  initialText: string | null;
  status: 'OPEN' | 'ANSWERED' | 'ANSWERED_ELSEWHERE' | 'EXPIRED';
  answerText: string | null;
  answerChoiceIndex: number | null;
  answerApproved: boolean | null;
  askedBy: string | null;
  askedAt: string;
  answeredAt: string | null;
}

interface DraftBase {
  runId?: string | null;
  /** A foreign runtime's own id for this fact; the engine skips a draft whose foreignId it already stored for the session. */
  foreignId?: string;
}

export interface LifecycleDraft extends DraftBase {
  type:
    | 'SESSION_CREATED'
    | 'SESSION_PAUSED'
    | 'SESSION_RESUMED'
    | 'SESSION_CLOSED'
    | 'CLIENT_ATTACHED'
    | 'CLIENT_DETACHED'
    | 'MODE_SELECTED'
    | 'CONTEXT_CHANGED';
  mode?: AgentMode | null;
  clientEpoch?: string | null;
  replayAfterSeq?: string | null;
  reason?: string | null;
  contextVersion?: string | null;
  /** Studio: the reviewer whose token attached (CLIENT_ATTACHED). */
  studioReviewer?: string | null;
}

export interface MessageDraft extends DraftBase {
  type: 'USER_MESSAGE' | 'ASSISTANT_CHUNK' | 'ASSISTANT_MESSAGE';
  messageId: string;
  role: 'USER' | 'ASSISTANT';
  content: string;
  /** Studio: the reviewer who sent a USER_MESSAGE through the studio. */
  studioAuthor?: string | null;
}

export interface RunDraft extends DraftBase {
  type:
    | 'RUN_STARTED'
    | 'RUN_PAUSED'
    | 'RUN_SUCCEEDED'
    | 'RUN_FAILED'
    | 'RUN_CANCELLED'
    | 'RUN_PREEMPTED';
  runId: string;
  /** Defaults to the status the type implies; RUN_STARTED may say WAITING_FOR_APPROVAL etc. via a later RUN_* only. */
  status?: RunStatus;
  code?: string | null;
  reason?: string | null;
  error?: AgentErrorValue | null;
}

export interface ToolDraft extends DraftBase {
  type:
    | 'TOOL_PROPOSED'
    | 'TOOL_DISPATCHED'
    | 'TOOL_SUCCEEDED'
    | 'TOOL_FAILED'
    | 'TOOL_DENIED'
    | 'TOOL_TIMED_OUT'
    | 'TOOL_OUTCOME_UNKNOWN';
  runId: string | null;
  toolCallId: string;
  toolName: string;
  toolVersion: string;
  status: ToolCallStatus;
  safeSummary?: string | null;
  descriptorDigest?: string | null;
  argumentHash?: string | null;
  executor?: ToolExecutor | null;
  contextVersion?: string | null;
  clientEpoch?: string | null;
  argumentsJson?: string | null;
  leaseId?: string | null;
  approvalGrant?: string | null;
  idempotencyKey?: string | null;
  resultJson?: string | null;
  invocation?: ToolInvocationValue | null;
  result?: ToolResultEnvelopeValue | null;
  error?: AgentErrorValue | null;
  deadline?: string | null;
  /** Studio: who asked (a foreign runtime's subagent), shown on the card. */
  askedBy?: string | null;
  /** Studio: the server-computed diff of a file-writing proposal (TOOL_PROPOSED). */
  studioDiff?: ProposalDiffValue | null;
}

export interface ApprovalDraft extends DraftBase {
  type:
    | 'APPROVAL_REQUESTED'
    | 'APPROVAL_GRANTED'
    | 'APPROVAL_DENIED'
    | 'APPROVAL_CONSUMED'
    | 'APPROVAL_EXPIRED';
  runId: string | null;
  approvalId: string;
  toolCallId: string;
  argumentHash: string;
  status: ApprovalStatus;
  safeSummary: string;
  reasons: string[];
  expiresAt: string;
  /** Studio: the decision was made by the source on its own (no human could decide). */
  automatic?: boolean;
  decisionReason?: string | null;
  /** Studio: the approval rule that made this decision. */
  studioRuleId?: string | null;
  studioRuleName?: string | null;
  /** Studio: the reviewer who decided (or revoked) it. */
  studioDecidedBy?: string | null;
  /** Studio: rules the source suggests for this call (APPROVAL_REQUESTED; prefill the rule editor). */
  studioRuleSuggestions?: RuleSuggestionValue[] | null;
}

/**
 * A rule a source suggests for the call it asks about (Claude Code's permission suggestions),
 * in the studio's own rule terms, with the source's words as `label`.
 */
export interface RuleSuggestionValue {
  effect: 'ALLOW' | 'DENY';
  toolName: string;
  match: 'EXACT_ARGUMENTS' | 'ARGUMENT_PREFIX' | 'ANY';
  argumentName: string | null;
  argumentPrefix: string | null;
  scope: 'SESSION' | 'PROJECT' | 'SOURCE' | 'STUDIO';
  label: string;
}

export interface LeaseDraft extends DraftBase {
  type: 'LEASE_GRANTED' | 'LEASE_REVOKED' | 'LEASE_EXPIRED';
  leaseId: string;
  kind: LeaseKind;
  status: LeaseStatus;
  clientEpoch: string;
  scopes: string[];
  holder: string;
  contextVersion: string;
  controlledEntityId?: string | null;
  hostCapabilityRevision?: string | null;
  expectedProjectRevision?: string | null;
  grantedAt: string;
  expiresAt: string;
  reason?: string | null;
}

export interface CheckpointDraft extends DraftBase {
  type: 'CHECKPOINT_CREATED' | 'CHECKPOINT_RESTORED';
  checkpointId: string;
  projectRevision: string;
  contentHash: string;
  reason: string;
  files: CheckpointFileValue[];
  restoredAt?: string | null;
  /** Studio: captured the exact state right before an approved action ran. */
  exactPreImage?: boolean;
  /** Studio: added or changed files left out of `files` (which lists at most 128). */
  studioFilesOmitted?: number;
  /** Studio: files removed against the previous state. */
  studioFilesRemoved?: number;
  /** Studio: files in the whole manifest. */
  studioFileCount?: number;
  /** Studio: bytes in the whole manifest (decimal string). */
  studioTotalBytes?: string;
}

export interface BudgetDraft extends DraftBase {
  type: 'BUDGET_UPDATED';
  budget: BudgetValue;
}

export interface StageDraft extends DraftBase {
  type: 'STUDIO_STAGE_CHANGED';
  fromStage?: string | null;
  toStage: string;
  detail?: string | null;
}

export interface LogDraft extends DraftBase {
  type: 'STUDIO_LOG';
  level: string;
  message: string;
  origin?: string | null;
}

export interface QuestionDraft extends DraftBase {
  type: 'STUDIO_QUESTION_ASKED' | 'STUDIO_QUESTION_ANSWERED';
  question: QuestionValue;
}

export interface ThreadDraft extends DraftBase {
  type: 'STUDIO_THREAD_CHANGED';
  threadId: string;
  agentName?: string | null;
  status: string;
}

export interface ForeignDraft extends DraftBase {
  type: 'STUDIO_FOREIGN_EVENT';
  source: string;
  foreignType: string;
  payloadJson: string;
  truncated: boolean;
}

export type EventDraft =
  | LifecycleDraft
  | MessageDraft
  | RunDraft
  | ToolDraft
  | ApprovalDraft
  | LeaseDraft
  | CheckpointDraft
  | BudgetDraft
  | StageDraft
  | LogDraft
  | QuestionDraft
  | ThreadDraft
  | ForeignDraft;

/** An appended event: the draft plus the base fields the engine assigned. */
export type StoredEvent = EventDraft & {
  eventId: string;
  sessionId: string;
  seq: string;
  createdAt: string;
  runId: string | null;
};
