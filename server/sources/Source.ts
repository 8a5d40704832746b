/**
 * A source feeds sessions into the studio and takes the studio's actions back to wherever the
 * agent really runs. The built-in demo agent and the Managed Agents and Leviath bridges all
 * implement this one interface; the engine owns the store, seq, validation and fencing.
 *
 * Flow of a human action: the engine validates it (epoch, pending approval, argument hash,
 * expiry, idempotency). A decision is recorded first, together with an outbox job; the job then
 * calls `deliverDecision` and `continueDecision` / `onDecisionRecorded` after the commit (again
 * after a crash). An answer to a question is delivered with `deliverAnswer` first and recorded
 * only when that resolves; a hook that throws a StudioError refuses the answer.
 */
import type { EventDraft, QuestionValue, StoredEvent } from '../engine/eventDrafts.ts';
import type { ToolCallRecord } from '../store/records.ts';
import type { AgentMode, ApprovalStatus } from '../../protocol/events.ts';
import type { Logger } from '../logger.ts';
import type { DiffTarget, ProposedFileChange } from '../engine/proposalDiff.ts';
import type { ProposalDiffValue } from '../engine/eventDrafts.ts';

export type SourceStatus = 'CONNECTING' | 'LIVE' | 'RECONNECTING' | 'FAILED' | 'STOPPED';

export interface SessionSpec {
  /** Stable id; a bridge derives it from the foreign id so a restart maps to the same session. */
  sessionId: string;
  title: string;
  mode: AgentMode;
  requestedModel: string;
  model?: string | null;
  projectId?: string | null;
}

export interface SessionInfo {
  sessionId: string;
  source: string;
  status: 'ACTIVE' | 'PAUSED' | 'CLOSED' | 'REVOKED';
  projectId: string | null;
  currentRunId: string | null;
  lastEventSeq: string;
}

export interface ToolDecision {
  sessionId: string;
  runId: string | null;
  toolCallId: string;
  toolName: string;
  approvalId: string;
  argumentHash: string;
  approved: boolean;
  reason: string | null;
}

export interface QuestionAnswer {
  sessionId: string;
  question: QuestionValue;
  text: string | null;
  choiceIndex: number | null;
  approved: boolean | null;
}

/** Options of `SourceHost.groupCommit`. */
export interface GroupCommitOptions {
  /**
   * Called once the group has committed but before it is known durable (the SQLite store syncs
   * its WAL after COMMIT), so an ingest that acknowledges nothing may apply its next slice
   * meanwhile. Not every host calls it: the promise alone means "on disk".
   */
  onCommitted?: () => void;
}

/** What the engine offers a source. */
export interface SourceHost {
  readonly logger: Logger;
  /** Milliseconds since the epoch (the engine's clock; tests may move it). */
  now(): number;
  /** Creates the session (SESSION_CREATED, MODE_SELECTED) if it does not exist; returns it either way. */
  ensureSession(spec: SessionSpec): Promise<SessionInfo>;
  findSession(sessionId: string): Promise<SessionInfo | null>;
  /** Appends atomically, in order; drafts whose foreignId is already stored for the session are skipped. */
  append(sessionId: string, drafts: EventDraft[]): Promise<StoredEvent[]>;
  hasForeignId(sessionId: string, foreignId: string): Promise<boolean>;
  /**
   * Group commit: runs `fn` inside one store transaction, so every append it makes commits
   * together with one fsync; subscribers wake after that commit. An append that fails inside
   * fails before it writes (unknown session, invalid draft), so the others still commit; `fn`
   * must not await anything but the host. Optional: a host without it commits each append alone.
   */
  groupCommit?<T>(fn: () => Promise<T>, options?: GroupCommitOptions): Promise<T>;
  /** The current state of a question (null if unknown). */
  findQuestion(sessionId: string, questionId: string): Promise<QuestionValue | null>;
  /**
   * The newest approval of a tool call (null if none). Optional: the bridges use it after a
   * restart to request again an approval that lapsed while the runtime still waits.
   */
  findApproval?(
    sessionId: string,
    toolCallId: string,
  ): Promise<{ approvalId: string; status: ApprovalStatus; expiresAt: string } | null>;
  setStatus(status: SourceStatus, detail?: string | null): void;
  /**
   * The bounded line diff of a write the call proposes against the session's project folder
   * (put it on TOOL_PROPOSED as `studioDiff`), and the targets (path + content hash now) to bind
   * into the argument hash; the engine refuses an approval whose target changed since. Null when
   * the session has no project. Optional: a host without it shows no diff.
   */
  proposalDiff?(
    sessionId: string,
    changes: ProposedFileChange[],
  ): { diff: ProposalDiffValue; targets: DiffTarget[] } | null;
}

export interface Source {
  /** 'demo', 'managed-agents' or 'leviath' (one instance of each at most). */
  readonly sourceId: string;
  /** True when the source's sessions have a project folder the studio can checkpoint. */
  readonly checkpointsSupported: boolean;
  /** Shown by the checkpoint browser when checkpointsSupported is false. */
  readonly checkpointsUnsupportedReason?: string;
  /** True when a message may be sent while a run is active (it steers that run, as Leviath's do). */
  readonly steersActiveRun?: boolean;
  start(host: SourceHost): Promise<void>;
  stop(): Promise<void>;
  /**
   * A user message; returns the run it started (the source appends the events). `author` is the
   * reviewer who sent it (record it as `studioAuthor` on USER_MESSAGE).
   */
  sendMessage?(
    session: SessionInfo,
    content: string,
    options?: { author: string | null },
  ): Promise<{ runId: string }>;
  /**
   * Delivers a recorded approve/deny to the runtime (the outbox's 'decision' job, after the
   * commit). Called again when a job is retried after a crash, unless the runtime already moved a
   * granted call on; a call it no longer waits for must be refused (throw), never confirmed twice.
   * A throw ends a granted call with TOOL_FAILED (TOOL_OUTCOME_UNKNOWN on a retry).
   */
  deliverDecision?(decision: ToolDecision): Promise<void>;
  /**
   * Runs before `deliverDecision`, outside any transaction, so that what it records commits
   * before the runtime hears the decision: a bridge's pre-image checkpoint, which must be durable
   * before the call it guards can run. A throw refuses the decision as a `deliverDecision` throw
   * does, and nothing is delivered. Not called for a granted call the runtime already moved on;
   * called again when the job runs again after a crash (a second pre-image of an unchanged folder
   * is harmless).
   */
  prepareDecision?(decision: ToolDecision): Promise<void>;
  /**
   * Carries out a recorded decision inside the outbox job (the demo agent runs its granted call
   * here). Idempotent, and resolves only once the call ran or ended: a job run again after a
   * crash calls it again and it does only what is left. Replaces onDecisionRecorded.
   */
  continueDecision?(decision: ToolDecision): Promise<void>;
  /** Called by the outbox job after the engine committed a decision (a bridge records the dispatch). */
  onDecisionRecorded?(decision: ToolDecision): void;
  /** An approval lapsed (APPROVAL_EXPIRED committed). */
  onApprovalExpired?(decision: Omit<ToolDecision, 'approved' | 'reason'>): void;
  /**
   * An approval was revoked (APPROVAL_DENIED with status REVOKED committed): its run ended, the
   * session was paused or closed, the call was withdrawn, the kill switch, or a target changed.
   * A source waiting on it stops waiting; it must not report the call as denied by a human.
   */
  onApprovalRevoked?(decision: Omit<ToolDecision, 'approved' | 'reason'>): void;
  /**
   * Whether the source can propose this expired or revoked call again (between runs). With
   * `askAgain`, the card offers "Ask again".
   */
  canAskAgain?(session: SessionInfo, call: ToolCallRecord): boolean;
  /** Proposes the call again (a new run and tool call); returns the new approvalId. */
  askAgain?(
    session: SessionInfo,
    call: ToolCallRecord,
    options: { author: string | null },
  ): Promise<string>;
  cancelRun?(session: SessionInfo, runId: string): Promise<void>;
  /** Delivers an answer to a question card before the engine records it. */
  deliverAnswer?(answer: QuestionAnswer): Promise<void>;
}
