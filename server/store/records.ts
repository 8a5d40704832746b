/**
 * The current-state records the engine keeps beside the event log. Every record is updated in
 * the same transaction as the event that changes it. BigInt values are decimal strings.
 */
import type {
  AgentMode,
  ApprovalStatus,
  LeaseKind,
  LeaseStatus,
  RunStatus,
  SessionStatus,
  ToolCallStatus,
  ToolExecutor,
} from '../../protocol/events.ts';
import type {
  AgentErrorValue,
  BudgetValue,
  ProposalDiffValue,
  RuleSuggestionValue,
  CheckpointFileValue,
  QuestionValue,
} from '../engine/eventDrafts.ts';

export interface EventRow {
  sessionId: string;
  seq: bigint;
  eventId: string;
  type: string;
  runId: string | null;
  createdAt: string;
  /** The whole event as served: JSON of __typename, the AgentEventBase fields and the member fields. */
  payload: string;
  foreignId: string | null;
  /** The event's searchable text (eventTextOf the served value), when the appender has it. */
  text?: string;
}

/** One match of a whole-session search, newest first; `cursor` pages on (exclusive). */
export interface EventSearchHit {
  cursor: bigint;
  seq: bigint;
  type: string;
  /** A short excerpt around the matches, split into plain and matching parts. */
  snippet: { text: string; match: boolean }[];
}

export interface SessionRecord {
  sessionId: string;
  appId: string;
  source: string;
  title: string | null;
  projectId: string | null;
  mode: AgentMode;
  status: SessionStatus;
  requestedModel: string;
  model: string | null;
  contextVersion: string;
  currentClientEpoch: string;
  attachedEpoch: string | null;
  lastEventSeq: string;
  currentRunId: string | null;
  /** The newest run, active or ended (currentRun); absent in records written before it existed. */
  lastRunId?: string | null;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
}

export interface RunRecord {
  runId: string;
  sessionId: string;
  status: RunStatus;
  providerRounds: number;
  toolCalls: number;
  errorCode: string | null;
  terminalReason: string | null;
  reason: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  createdAt: string;
  cancelled: boolean;
}

export interface ToolCallStep {
  seq: string;
  type: string;
  status: string;
  at: string;
}

export interface ToolCallRecord {
  toolCallId: string;
  sessionId: string;
  runId: string | null;
  toolName: string;
  toolVersion: string;
  executor: ToolExecutor | null;
  status: ToolCallStatus;
  safeSummary: string | null;
  argumentHash: string | null;
  argumentsJson: string | null;
  resultJson: string | null;
  error: AgentErrorValue | null;
  approvalId: string | null;
  askedBy: string | null;
  /** The server-computed line diff of a proposed file change (bound into argumentHash). */
  diff?: ProposalDiffValue | null;
  proposedAt: string;
  updatedAt: string;
  steps: ToolCallStep[];
}

export interface ApprovalRecord {
  approvalId: string;
  sessionId: string;
  toolCallId: string;
  runId: string | null;
  argumentHash: string;
  status: ApprovalStatus;
  safeSummary: string;
  reasons: string[];
  clientEpoch: string;
  expiresAt: string;
  decidedAt: string | null;
  decisionReason: string | null;
  automatic: boolean;
  /** The approval rule that decided it (absent in records written before rules existed). */
  ruleId?: string | null;
  ruleName?: string | null;
  /** The reviewer whose token made the decision (null: a rule, the runtime or the engine). */
  decidedBy?: string | null;
  /** Rules the source suggested for this call (Claude Code's permission suggestions). */
  ruleSuggestions?: RuleSuggestionValue[];
  /**
   * Set while a decision is being delivered to the runtime (engine decideBatch): another
   * decision is refused until it ends or `untilMs` passes. Stored, so it holds across instances.
   */
  decidingClaim?: { claim: string; untilMs: number } | null;
}

/** A scoped "always allow / always deny" rule (server/engine/approvalRules.ts). */
export interface ApprovalRuleRecord {
  ruleId: string;
  appId: string;
  name: string;
  effect: 'ALLOW' | 'DENY';
  toolName: string;
  match:
    | { kind: 'ANY' }
    | { kind: 'EXACT_ARGUMENTS'; argumentsJson: string }
    | { kind: 'ARGUMENT_PREFIX'; argumentName: string; argumentPrefix: string };
  scope:
    | { kind: 'STUDIO' }
    | { kind: 'SESSION'; sessionId: string }
    | { kind: 'PROJECT'; projectId: string }
    | { kind: 'SOURCE'; sourceId: string };
  allowDestructive: boolean;
  expiresAt: string | null;
  status: 'ACTIVE' | 'REVOKED';
  createdAt: string;
  createdBy: string | null;
  updatedAt: string;
  revokedAt: string | null;
  revokedBy: string | null;
  matchCount: number;
  lastUsedAt: string | null;
  lastToolCallId: string | null;
}

export interface LeaseRecord {
  leaseId: string;
  sessionId: string;
  kind: LeaseKind;
  status: LeaseStatus;
  clientEpoch: string;
  scopes: string[];
  holder: string;
  contextVersion: string;
  controlledEntityId: string | null;
  hostCapabilityRevision: string | null;
  expectedProjectRevision: string | null;
  grantedAt: string;
  expiresAt: string;
  revokedReason: string | null;
}

export interface CheckpointRecord {
  checkpointId: string;
  sessionId: string;
  projectId: string;
  projectRevision: string;
  contentHash: string;
  reason: string;
  /** What the CHECKPOINT_CREATED event listed (at most 128 changed files); the manifest is in the workspace. */
  files: CheckpointFileValue[];
  /** Files in the whole manifest (absent on records written before manifests were stored apart). */
  fileCount?: number;
  totalBytes?: string;
  createdAt: string;
  restoredAt: string | null;
  exactPreImage: boolean;
  createdSeq: string;
}

export interface ProjectRecord {
  projectId: string;
  name: string;
  root: string;
  revision: string;
  contentHash: string;
  /** Files in the folder at `contentHash` (the manifest itself is served from the workspace). */
  fileCount: number;
  totalBytes: string;
  /**
   * The state the studio last recorded: its newest checkpoint or its own last write (patch,
   * restore). Files that differ from it on disk were changed outside the agent.
   */
  recordedContentHash: string | null;
  /** The newest checkpoint's contentHash (the event's changed-file list is against it). */
  lastCheckpointContentHash: string | null;
  /** Set while the workspace cannot read the folder; the studio shows it, nothing else stops. */
  unavailableReason: string | null;
  updatedAt: string;
}

export interface ClientRecord {
  sessionId: string;
  clientInstanceId: string;
  epoch: string;
  lastHeartbeatMs: number;
  ackedSeq: string;
  attached: boolean;
  /** Who attached (the reviewer name of the token), and when. Absent in older records. */
  reviewer?: string | null;
  attachedAt?: string | null;
}

export interface IdempotencyRecord {
  operation: string;
  key: string;
  inputHash: string;
  resultJson: string;
  createdAt: string;
}

/** A restore that was approved and started; kept until it is committed, so a restart finishes it. */
export interface RestoreJobRecord {
  toolCallId: string;
  sessionId: string;
  projectId: string;
  checkpointId: string;
  preImageCheckpointId: string;
  startedAt: string;
  /** A per-file restore's selection (normalized); absent for a whole restore. */
  paths?: string[];
}

export interface QuestionRecord extends QuestionValue {
  runId: string | null;
}

export interface BudgetRecord {
  sessionId: string;
  budget: BudgetValue;
}
