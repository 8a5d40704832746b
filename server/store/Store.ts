/**
 * The narrow storage interface the engine is written against. SqliteStore implements it on
 * better-sqlite3; another implementation (PostgreSQL) only has to honour the same contract:
 * `transaction` is atomic and serialisable, `insertEvent` rejects a duplicate (sessionId, seq)
 * or eventId, and reads see every committed write.
 *
 * The interface is synchronous because the engine appends an event and updates the current
 * state in one critical section; an asynchronous driver would wrap this in a worker.
 */
import type {
  ApprovalRecord,
  ApprovalRuleRecord,
  BudgetRecord,
  CheckpointRecord,
  ClientRecord,
  EventRow,
  EventSearchHit,
  IdempotencyRecord,
  LeaseRecord,
  ProjectRecord,
  QuestionRecord,
  RestoreJobRecord,
  RunRecord,
  SessionRecord,
  ToolCallRecord,
} from './records.ts';

export interface Store {
  transaction<T>(fn: () => T): T;
  close(): void;

  insertEvent(row: EventRow): void;
  /** Events with seq > afterSeq, ascending, at most `limit`. */
  readEvents(sessionId: string, afterSeq: bigint, limit: number): EventRow[];
  /** The served JSON of events with seq > afterSeq, ascending, at most `limit` (the replay hot path). */
  readEventPayloads(sessionId: string, afterSeq: bigint, limit: number): string[];
  hasForeignId(sessionId: string, foreignId: string): boolean;
  countEvents(sessionId: string): number;
  /**
   * Full-text search over one session's events (every event's text, see eventText.ts), newest
   * first, `limit` hits with cursor < `beforeCursor`. The index is written by insertEvent in
   * the same transaction as the event; SQLite uses FTS5, another store brings its own index.
   */
  searchEvents(
    sessionId: string,
    query: string,
    beforeCursor: bigint | null,
    limit: number,
  ): EventSearchHit[];

  getSession(sessionId: string): SessionRecord | null;
  putSession(record: SessionRecord): void;
  /** Sessions of an app, newest first; `beforeOrder` is the cursor (exclusive). */
  listSessions(
    appId: string,
    beforeOrder: number | null,
    limit: number,
  ): { record: SessionRecord; order: number }[];
  listAllSessions(): SessionRecord[];

  getRun(runId: string): RunRecord | null;
  putRun(record: RunRecord): void;

  getToolCall(toolCallId: string): ToolCallRecord | null;
  putToolCall(record: ToolCallRecord): void;

  getApproval(approvalId: string): ApprovalRecord | null;
  putApproval(record: ApprovalRecord): void;
  /** PENDING approvals, soonest to expire first; of one session or of all. */
  listPendingApprovals(sessionId: string | null): ApprovalRecord[];
  /** Approvals that are no longer PENDING, most recently decided first, at most `limit`. */
  listDecidedApprovals(limit: number): ApprovalRecord[];

  getApprovalRule(ruleId: string): ApprovalRuleRecord | null;
  putApprovalRule(record: ApprovalRuleRecord): void;
  /** Every rule of an app (active and revoked), oldest first. */
  listApprovalRules(appId: string): ApprovalRuleRecord[];

  getLease(leaseId: string): LeaseRecord | null;
  putLease(record: LeaseRecord): void;
  listActiveLeases(sessionId: string | null): LeaseRecord[];

  getCheckpoint(checkpointId: string): CheckpointRecord | null;
  putCheckpoint(record: CheckpointRecord): void;
  /** Newest first; `beforeOrder` is the cursor (exclusive). */
  listCheckpoints(
    sessionId: string,
    beforeOrder: number | null,
    limit: number,
  ): { record: CheckpointRecord; order: number }[];
  listCheckpointsOfProject(projectId: string): CheckpointRecord[];

  getProject(projectId: string): ProjectRecord | null;
  putProject(record: ProjectRecord): void;

  getClient(sessionId: string, clientInstanceId: string): ClientRecord | null;
  putClient(record: ClientRecord): void;
  listAttachedClients(): ClientRecord[];

  getIdempotency(operation: string, key: string): IdempotencyRecord | null;
  putIdempotency(record: IdempotencyRecord): void;

  getRestoreJob(toolCallId: string): RestoreJobRecord | null;
  putRestoreJob(record: RestoreJobRecord): void;
  deleteRestoreJob(toolCallId: string): void;
  listRestoreJobs(): RestoreJobRecord[];

  getQuestion(sessionId: string, questionId: string): QuestionRecord | null;
  putQuestion(record: QuestionRecord): void;
  /** A question by id alone (ids are unique per bridge; the first match wins). */
  findQuestionById(questionId: string): QuestionRecord | null;

  getBudget(sessionId: string): BudgetRecord | null;
  putBudget(record: BudgetRecord): void;

  getMeta(key: string): string | null;
  putMeta(key: string, value: string): void;
}
