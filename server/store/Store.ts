/**
 * The storage contract the engine's kernel is written against. Two implementations pass one
 * conformance suite (test/server/store/conformance.ts): SqliteStore (better-sqlite3, the embedded
 * default) and PgStore (server/store/postgres, PostgreSQL on `pg`).
 *
 * The one way to read and write is `transaction(async (tx) => …)`:
 * - atomic: every write of `fn` commits together, or none does (a throw rolls back);
 * - isolated: write transactions behave as if run one after another. SQLite runs them one at a
 *   time (BEGIN IMMEDIATE on its one writer connection); PostgreSQL runs them concurrently and
 *   the kernel serialises what must be serial with the database's own tools: `lockSession`
 *   (a row lock), unique constraints, conditional updates (`decideApproval`, `putSessionIf`).
 * - retried: a `StoreConflictError` (serialization failure, deadlock, unique violation on
 *   (session_id, seq)) makes `transaction` roll back and run `fn` again, at most
 *   `TRANSACTION_ATTEMPTS` times. `fn` must therefore do nothing outside `tx` that cannot run
 *   twice (no network, no files): effects go through `enqueueJob` and `notify`.
 * - `readOnly: true` transactions see one consistent committed snapshot and may not write.
 *
 * Ordering, uniqueness, single use and fencing are the database's, never process memory's:
 * events are unique on (sessionId, seq) and on eventId; order columns come from sequences
 * (never max(ord)+1); an approval is decided by `UPDATE … WHERE status = 'PENDING'`, so two
 * concurrent grants give one; a client epoch moves by a conditional update.
 *
 * Notifications: `tx.notify(channel, payload)` is delivered to every `listen` handler only after
 * the transaction commits (never on rollback, once per distinct (channel, payload) per commit).
 * SQLite delivers in-process once the COMMIT is on disk (after the WAL sync); PostgreSQL sends pg_notify inside the
 * transaction (PostgreSQL delivers it at commit, to every instance).
 *
 * Jobs (the outbox): `enqueueJob` in the same transaction as the decision that authorizes the
 * effect; a worker claims a job after commit (`claimJob`: SKIP LOCKED on PostgreSQL, a
 * conditional update on SQLite), runs it idempotently, and finishes it with `completeJob` or
 * `failJob` in the transaction that records its outcome. A claim is a lease: a job whose lease
 * ran out (its worker died) can be claimed again; PgStore also takes over, at once, a job whose
 * claiming instance lost its connection to the database (its liveness lock).
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

/** How many times `transaction` runs `fn` when it keeps meeting a StoreConflictError. */
export const TRANSACTION_ATTEMPTS = 8;

/**
 * A retryable conflict: the transaction lost a race the database detected (serialization
 * failure, deadlock, a concurrent insert of the same (session_id, seq)). `transaction` retries.
 */
export class StoreConflictError extends Error {
  readonly retryable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreConflictError';
  }
}

export interface TransactionOptions {
  /** A read-only transaction: one consistent snapshot, no writes (a write throws). */
  readOnly?: boolean;
  /**
   * Called when a write transaction has committed but is not yet known durable (SQLite: after
   * COMMIT, before the WAL sync that its promise waits for), so a caller that acknowledges
   * nothing may start its next transaction meanwhile. A store without that moment never calls
   * it: the caller also watches the promise, which alone means "on disk".
   */
  onCommitted?: () => void;
}

/** A notification delivered after commit (see `Tx.notify`). */
export interface StoreNotification {
  channel: string;
  payload: string;
}

export type JobStatus = 'PENDING' | 'CLAIMED' | 'DONE' | 'FAILED';

export interface JobDraft {
  /** What runs it (a worker claims by kind), e.g. 'restore', 'deliverDecision'. */
  kind: string;
  /** Unique over all jobs ever enqueued: a second enqueue of the same key is ignored. */
  key: string;
  /** JSON the worker reads. */
  payload: string;
}

export interface JobRecord extends JobDraft {
  jobId: string;
  status: JobStatus;
  /** The worker holding the claim (null unless CLAIMED). */
  workerId: string | null;
  /** Milliseconds since the epoch when the claim lapses (null unless CLAIMED). */
  leaseUntilMs: number | null;
  /** How many times the job was claimed. */
  attempts: number;
  createdAt: string;
  updatedAt: string;
  /** Why it failed (FAILED only). */
  lastError: string | null;
}

/** Reads and writes inside one transaction. Every method is asynchronous. */
export interface Tx {
  readonly readOnly: boolean;

  /**
   * Serialises writers of one session until this transaction ends: SELECT … FOR UPDATE on
   * PostgreSQL; a no-op on SQLite (BEGIN IMMEDIATE already runs writers one at a time). The
   * kernel takes it before it reads a session to append to it or to move its epoch.
   */
  lockSession(sessionId: string): Promise<void>;
  /** Delivered to `Store.listen` handlers after commit; dropped on rollback. */
  notify(channel: string, payload: string): void;

  /** Rejects a duplicate (sessionId, seq) or eventId (StoreConflictError for the seq). */
  insertEvent(row: EventRow): Promise<void>;
  /** Events with seq > afterSeq, ascending, at most `limit`. */
  readEvents(sessionId: string, afterSeq: bigint, limit: number): Promise<EventRow[]>;
  /** The served JSON of events with seq > afterSeq, ascending, at most `limit` (the replay hot path). */
  readEventPayloads(sessionId: string, afterSeq: bigint, limit: number): Promise<string[]>;
  hasForeignId(sessionId: string, foreignId: string): Promise<boolean>;
  /**
   * Which of `foreignIds` the session has stored (one query for a whole append: a bridge's
   * append of 50 drafts asked hasForeignId 50 times, 50 round trips on PostgreSQL).
   */
  storedForeignIds(sessionId: string, foreignIds: readonly string[]): Promise<Set<string>>;
  countEvents(sessionId: string): Promise<number>;
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
  ): Promise<EventSearchHit[]>;

  getSession(sessionId: string): Promise<SessionRecord | null>;
  /** Inserts (its order from a sequence) or replaces the session's state. */
  putSession(record: SessionRecord): Promise<void>;
  /**
   * Replaces the session's state only if its stored currentClientEpoch is `expectedEpoch`
   * (the epoch fence); false when another writer moved it first.
   */
  putSessionIf(record: SessionRecord, expectedEpoch: string): Promise<boolean>;
  /** Sessions of an app, newest first; `beforeOrder` is the cursor (exclusive). */
  listSessions(
    appId: string,
    beforeOrder: number | null,
    limit: number,
  ): Promise<{ record: SessionRecord; order: number }[]>;
  listAllSessions(): Promise<SessionRecord[]>;

  getRun(runId: string): Promise<RunRecord | null>;
  putRun(record: RunRecord): Promise<void>;

  getToolCall(toolCallId: string): Promise<ToolCallRecord | null>;
  putToolCall(record: ToolCallRecord): Promise<void>;

  getApproval(approvalId: string): Promise<ApprovalRecord | null>;
  putApproval(record: ApprovalRecord): Promise<void>;
  /**
   * Writes a decided approval only if the stored one is still PENDING (UPDATE … WHERE
   * status = 'PENDING'); false when it was already decided: of two concurrent grants, one wins.
   * The engine also writes a decision's claim (a record still PENDING) through it, so a claim
   * can never put a decided approval back to PENDING.
   */
  decideApproval(record: ApprovalRecord): Promise<boolean>;
  /** PENDING approvals, soonest to expire first; of one session or of all. */
  listPendingApprovals(sessionId: string | null): Promise<ApprovalRecord[]>;
  /** Approvals that are no longer PENDING, most recently decided first, at most `limit`. */
  listDecidedApprovals(limit: number): Promise<ApprovalRecord[]>;

  getApprovalRule(ruleId: string): Promise<ApprovalRuleRecord | null>;
  putApprovalRule(record: ApprovalRuleRecord): Promise<void>;
  /** Every rule of an app (active and revoked), oldest first. */
  listApprovalRules(appId: string): Promise<ApprovalRuleRecord[]>;

  getLease(leaseId: string): Promise<LeaseRecord | null>;
  putLease(record: LeaseRecord): Promise<void>;
  listActiveLeases(sessionId: string | null): Promise<LeaseRecord[]>;

  getCheckpoint(checkpointId: string): Promise<CheckpointRecord | null>;
  putCheckpoint(record: CheckpointRecord): Promise<void>;
  /** Newest first; `beforeOrder` is the cursor (exclusive). */
  listCheckpoints(
    sessionId: string,
    beforeOrder: number | null,
    limit: number,
  ): Promise<{ record: CheckpointRecord; order: number }[]>;
  listCheckpointsOfProject(projectId: string): Promise<CheckpointRecord[]>;

  getProject(projectId: string): Promise<ProjectRecord | null>;
  putProject(record: ProjectRecord): Promise<void>;

  getClient(sessionId: string, clientInstanceId: string): Promise<ClientRecord | null>;
  putClient(record: ClientRecord): Promise<void>;
  listAttachedClients(): Promise<ClientRecord[]>;

  getIdempotency(operation: string, key: string): Promise<IdempotencyRecord | null>;
  /** Inserts; a second record with the same (operation, key) is a StoreConflictError. */
  putIdempotency(record: IdempotencyRecord): Promise<void>;
  /** Deletes one record (a claim whose mutation failed, or one replaced by its result). */
  deleteIdempotency(operation: string, key: string): Promise<void>;
  /** Deletes records created before `olderThan` (ISO time); returns how many. */
  pruneIdempotency(olderThan: string): Promise<number>;

  getRestoreJob(toolCallId: string): Promise<RestoreJobRecord | null>;
  putRestoreJob(record: RestoreJobRecord): Promise<void>;
  deleteRestoreJob(toolCallId: string): Promise<void>;
  listRestoreJobs(): Promise<RestoreJobRecord[]>;

  getQuestion(sessionId: string, questionId: string): Promise<QuestionRecord | null>;
  putQuestion(record: QuestionRecord): Promise<void>;
  /** A question by id alone (ids are unique per bridge; the first match wins). */
  findQuestionById(questionId: string): Promise<QuestionRecord | null>;

  getBudget(sessionId: string): Promise<BudgetRecord | null>;
  putBudget(record: BudgetRecord): Promise<void>;

  getMeta(key: string): Promise<string | null>;
  putMeta(key: string, value: string): Promise<void>;

  /** Adds a job (PENDING) unless one with its key exists; true if it was added. */
  enqueueJob(job: JobDraft): Promise<boolean>;
  /**
   * Claims the oldest claimable job of one of `kinds`: PENDING, or CLAIMED with its lease run
   * out. Sets it CLAIMED by `workerId` until nowMs + leaseMs. Null when none. Two concurrent
   * claims never get the same job.
   */
  claimJob(
    kinds: readonly string[],
    workerId: string,
    nowMs: number,
    leaseMs: number,
  ): Promise<JobRecord | null>;
  /** Marks a job DONE; false if `workerId` no longer holds its claim (it lapsed and moved). */
  completeJob(jobId: string, workerId: string): Promise<boolean>;
  /** Marks a job FAILED with a reason; false if `workerId` no longer holds its claim. */
  failJob(jobId: string, workerId: string, error: string): Promise<boolean>;
  getJob(jobId: string): Promise<JobRecord | null>;
  getJobByKey(key: string): Promise<JobRecord | null>;
  /** Jobs in one of `statuses`, oldest first (CLAIMED: those a dead worker may have left). */
  listJobs(statuses: readonly JobStatus[]): Promise<JobRecord[]>;
  /** Deletes DONE and FAILED jobs updated before `olderThan` (ISO); returns how many. */
  pruneJobs(olderThan: string): Promise<number>;
}

export interface Store {
  /** 'sqlite' or 'postgres'. */
  readonly kind: string;
  /**
   * True when several server processes may use this store at once (PostgreSQL). False: this
   * process is the only one (SQLite's data dir), so at start every CLAIMED job is a dead one's.
   */
  readonly shared: boolean;
  /** Applies the numbered migrations not yet in schema_migrations (idempotent). */
  migrate(): Promise<void>;
  /** The versions in schema_migrations, ascending. */
  appliedMigrations(): Promise<number[]>;
  transaction<T>(fn: (tx: Tx) => Promise<T>, opts?: TransactionOptions): Promise<T>;
  /** Receives every notification after its transaction committed; returns the unsubscribe. */
  listen(handler: (notification: StoreNotification) => void): () => void;
  close(): Promise<void>;
}
