/**
 * What every rule module gets from the engine: the kernel (transactions, `db`, after-commit
 * steps), the clock, the one append path, the session checks and the source registry. No module
 * holds the store; each reaches it through `kernel` / `db` (see kernel.ts), and the other modules
 * it needs through the narrow ports its host type names.
 */
import type { Db, Kernel } from './kernel.ts';
import type { EventDraft, StoredEvent } from './eventDrafts.ts';
import type { Logger } from '../logger.ts';
import type { ApprovalRecord, SessionRecord } from '../store/records.ts';
import type { SessionInfo, Source } from '../sources/Source.ts';
import type { AgentPolicyRecord } from './agentPolicy.ts';

/** The durable steps of a decision and the effects it authorizes, in order (crash tests). */
export const FAULT_STEPS = [
  'decision-committed',
  'job-claimed',
  'restore-started',
  'restore-written',
  'restore-committed',
  'delivery-sent',
  'demo-dispatched',
  'demo-written',
] as const;
export type FaultStep = (typeof FAULT_STEPS)[number];

/** Tools the engine itself executes after approval, whatever the session's source. */
export const ENGINE_TOOLS = new Set(['project.checkpoint.restore']);

/** Something to do once an append committed (a source is told, an engine tool runs). */
export type AfterCommit =
  | { kind: 'revoked'; approval: ApprovalRecord }
  | { kind: 'stopRun'; sessionId: string; runId: string };

export interface EngineCore {
  readonly kernel: Kernel;
  readonly db: Db;
  readonly logger: Logger;
  readonly approvalTtlMs: number;
  readonly workspaceLeaseMs: number;
  now(): number;
  iso(ms?: number): string;
  /** Test-only fault injection at a named durable step (a no-op in production). */
  fault(step: FaultStep): void;
  /** True once the engine's timers run (start() finished its recovery). */
  started(): boolean;
  append(sessionId: string, drafts: EventDraft[]): Promise<StoredEvent[]>;
  requireSession(sessionId: string): Promise<SessionRecord>;
  requireAttached(sessionId: string, clientEpoch: string): Promise<SessionRecord>;
  requireOpen(session: SessionRecord): void;
  requireApp(appId: string): void;
  requireAgentsRunning(appId: string): Promise<void>;
  policy(appId: string): Promise<AgentPolicyRecord>;
  sessionInfo(session: SessionRecord): SessionInfo;
  /** The source added under this id (undefined: none). */
  source(sourceId: string): Source | undefined;
  /** The source that owns a session. */
  sourceOf(sessionId: string): Promise<Source | undefined>;
  /** The source that starts new sessions in a project (a --claude-code folder), if assigned. */
  projectOwner(projectId: string): string | undefined;
}
