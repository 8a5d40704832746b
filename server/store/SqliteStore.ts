/**
 * The SQLite implementation of Store (the embedded default): one file in the data dir, WAL mode.
 * better-sqlite3 is synchronous, so the asynchronous contract is kept like this:
 * - write transactions run one at a time on the writer connection (a queue): BEGIN IMMEDIATE,
 *   await fn, COMMIT (or ROLLBACK on a throw). While one awaits, the next waits its turn;
 * - a COMMIT writes the WAL without an fsync (synchronous=NORMAL); the WAL is then fsynced on
 *   the thread pool (walSync.ts, one sync for every commit made while the last one ran), and
 *   only then does the transaction resolve and its notifications reach the listeners, in commit
 *   order. So nothing is acknowledged before it is on disk, as with synchronous=FULL, but the
 *   event loop never waits on the disk;
 * - read-only transactions run on a second, read-only connection, one at a time, each inside
 *   BEGIN … COMMIT: a WAL snapshot of what was committed and is on disk (a read waits for the
 *   sync of any commit before it), never a writer's uncommitted rows.
 */
import Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { StoreConflictError, TRANSACTION_ATTEMPTS } from './Store.ts';
import type {
  JobDraft,
  JobRecord,
  JobStatus,
  Store,
  StoreNotification,
  TransactionOptions,
  Tx,
} from './Store.ts';
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
import { eventText, ftsQuery, sessionToken, snippetParts } from './eventText.ts';
import { SQLITE_MIGRATIONS } from './sqliteMigrations.ts';
import { SqliteCheckpointer } from './sqliteCheckpointer.ts';
import { WalSync } from './walSync.ts';

/** SQLite's own default, for the writer when the checkpoint worker is gone. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

type Row = { state: string };
const parse = <T>(row: Row | undefined): T | null => (row ? (JSON.parse(row.state) as T) : null);
const parseAll = <T>(rows: unknown[]): T[] => (rows as Row[]).map((r) => JSON.parse(r.state) as T);

interface JobRow {
  job_id: number;
  kind: string;
  key: string;
  payload: string;
  status: JobStatus;
  worker_id: string | null;
  lease_until_ms: number | null;
  attempts: number;
  created_at: string;
  updated_at: string;
  last_error: string | null;
}
const jobOf = (r: JobRow): JobRecord => ({
  jobId: String(r.job_id),
  kind: r.kind,
  key: r.key,
  payload: r.payload,
  status: r.status,
  workerId: r.worker_id,
  leaseUntilMs: r.lease_until_ms,
  attempts: r.attempts,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  lastError: r.last_error,
});

/** Prepared statements of one connection, by SQL text. */
class Connection {
  private readonly cache = new Map<string, Statement>();
  constructor(readonly db: Database.Database) {}
  stmt(sql: string, safeIntegers = false): Statement {
    const key = safeIntegers ? `#${sql}` : sql;
    let found = this.cache.get(key);
    if (!found) {
      found = this.db.prepare(sql);
      if (safeIntegers) found.safeIntegers(true);
      this.cache.set(key, found);
    }
    return found;
  }
}

/** A one-at-a-time queue: `run` starts `fn` when every earlier `fn` has settled. */
class Queue {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn, fn);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

const isUniqueViolation = (error: unknown): boolean =>
  error instanceof Error &&
  'code' in error &&
  (error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || error.code === 'SQLITE_CONSTRAINT_UNIQUE');

/** A write transaction that committed, waiting for its sync. */
interface Committed<T> {
  result: T;
  notifications: Map<string, StoreNotification>;
  /** Its number in WalSync's count. */
  commit: number;
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite';
  readonly shared = false;
  /** The writer connection (tests reach it to simulate an older data dir). */
  private readonly db: Database.Database;
  private readonly writer: Connection;
  private readonly reader: Connection;
  private readonly writes = new Queue();
  private readonly reads = new Queue();
  private readonly listeners = new Set<(n: StoreNotification) => void>();
  private closed = false;
  private readonly checkpointer: SqliteCheckpointer;
  private readonly wal: WalSync;
  /** Set while a read waits for the syncs before its snapshot: no write begins meanwhile. */
  private readGate: Promise<void> | null = null;

  constructor(private readonly file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // NORMAL: COMMIT does not fsync; WalSync does, off the event loop, before a transaction is
    // acknowledged, so a crash (even of the machine) still loses nothing that was acknowledged.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.writer = new Connection(this.db);
    this.migrateNow();
    this.wal = new WalSync(`${file}-wal`);
    const readDb = new Database(file, { readonly: true });
    readDb.pragma('busy_timeout = 5000');
    this.reader = new Connection(readDb);
    this.backfillSearch();
    this.wal.syncNow();
    // Checkpoints run on a worker thread (sqliteCheckpointer.ts), not inside a COMMIT on the
    // event loop; should the worker fail, the writer checkpoints by itself again.
    this.db.pragma('wal_autocheckpoint = 0');
    this.checkpointer = new SqliteCheckpointer(file, () => {
      if (this.closed) return;
      this.db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
    });
  }

  /** Copies the WAL back into the database file now (tests; the worker also does it on its own). */
  checkpointNow(): Promise<void> {
    return this.checkpointer.checkpointNow();
  }

  /** Applies every migration not yet recorded (synchronously: the writer is idle at start). */
  private migrateNow(): void {
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    const applied = new Set(
      this.db.prepare('SELECT version FROM schema_migrations').pluck().all() as number[],
    );
    for (const migration of SQLITE_MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      this.db.transaction(() => {
        this.db.exec(migration.sql);
        this.db
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(migration.version, migration.name, new Date().toISOString());
      })();
    }
  }

  migrate(): Promise<void> {
    return this.writes.run(() => {
      this.migrateNow();
      this.wal.syncNow();
      return Promise.resolve();
    });
  }

  appliedMigrations(): Promise<number[]> {
    return Promise.resolve(
      this.db
        .prepare('SELECT version FROM schema_migrations ORDER BY version')
        .pluck()
        .all() as number[],
    );
  }

  listen(handler: (n: StoreNotification) => void): () => void {
    this.listeners.add(handler);
    return () => this.listeners.delete(handler);
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    if (opts.readOnly) return this.reads.run(() => this.runReadOnly(fn));
    return this.writes
      .run(() => this.runWrite(fn))
      .then(async (done) => {
        try {
          opts.onCommitted?.();
        } catch {
          // The caller's hook; the commit stands either way.
        }
        // Outside the write queue: the next transaction runs while this one's sync does.
        await this.wal.durable(done.commit);
        this.deliver(done.notifications);
        return done.result;
      });
  }

  private async runReadOnly<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    // Only what is on disk is read: wait out the sync of every commit so far, then take the
    // snapshot at once (BEGIN is deferred: a first read fixes it), with nothing in between, so
    // no commit can slip in after the last check (one thread). Meanwhile no new write begins
    // (the gate), so the wait is bounded: the write running now, if any, and one sync.
    if (!this.wal.idle) {
      let open!: () => void;
      this.readGate = new Promise<void>((resolve) => (open = resolve));
      try {
        while (!this.wal.idle) await this.wal.durable();
      } finally {
        this.readGate = null;
        open();
      }
    }
    const tx = new SqliteTx(this.reader, true);
    this.reader.db.exec('BEGIN');
    this.reader.stmt(TAKE_SNAPSHOT).get();
    try {
      return await fn(tx);
    } finally {
      tx.ended = true;
      this.reader.db.exec('COMMIT');
    }
  }

  private async runWrite<T>(fn: (tx: Tx) => Promise<T>): Promise<Committed<T>> {
    // A read waiting for the disk to catch up goes first (runReadOnly).
    while (this.readGate) await this.readGate;
    for (let attempt = 1; ; attempt++) {
      const tx = new SqliteTx(this.writer, false);
      this.db.exec('BEGIN IMMEDIATE');
      let result: T;
      try {
        result = await fn(tx);
      } catch (error) {
        tx.ended = true;
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        if (error instanceof StoreConflictError && attempt < TRANSACTION_ATTEMPTS) continue;
        throw error;
      }
      tx.ended = true;
      this.db.exec('COMMIT');
      return { result, notifications: tx.notifications, commit: this.wal.commit() };
    }
  }

  private deliver(notifications: Map<string, StoreNotification>): void {
    for (const notification of notifications.values())
      for (const listener of [...this.listeners]) {
        try {
          listener(notification);
        } catch {
          // A listener's failure is its own; the commit stands and the others still hear it.
        }
      }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Let the transactions already queued finish first.
    await this.writes.run(() => Promise.resolve());
    await this.reads.run(() => Promise.resolve());
    await this.wal.durable();
    this.wal.close();
    await this.checkpointer.close();
    this.reader.db.close();
    this.db.close();
  }

  /** Indexes the events of a data dir written before the search index existed (once). */
  private backfillSearch(): void {
    const marker = this.db
      .prepare('SELECT value FROM meta WHERE key = ?')
      .pluck()
      .get('eventSearch');
    if (marker === '1') return;
    const read = this.db
      .prepare(
        'SELECT session_id, seq, type, payload FROM events WHERE (session_id, seq) > (?, ?) ORDER BY session_id, seq LIMIT 5000',
      )
      .safeIntegers(true);
    const index = this.writer.stmt(INDEX_EVENT);
    this.db.transaction(() => {
      this.db.exec('DELETE FROM event_search');
      let after: [string, bigint] = ['', -1n];
      for (;;) {
        const rows = read.all(after[0], after[1]) as {
          session_id: string;
          seq: bigint;
          type: string;
          payload: string;
        }[];
        for (const r of rows)
          index.run(sessionToken(r.session_id), eventText(r.payload), r.session_id, r.seq, r.type);
        const last = rows.at(-1);
        if (!last) break;
        after = [last.session_id, last.seq];
      }
      this.db
        .prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)')
        .run('eventSearch', '1');
    })();
  }
}

/** Any read starts a read transaction's WAL snapshot; this one touches one page. */
const TAKE_SNAPSHOT = 'SELECT 1 FROM meta LIMIT 1';

const INDEX_EVENT =
  'INSERT INTO event_search (session_key, body, session_id, seq, type) VALUES (?, ?, ?, ?, ?)';

/** One transaction's view. Each call runs its statement synchronously and resolves at once. */
class SqliteTx implements Tx {
  ended = false;
  readonly notifications = new Map<string, StoreNotification>();

  constructor(
    private readonly conn: Connection,
    readonly readOnly: boolean,
  ) {}

  private s(sql: string): Statement {
    if (this.ended) throw new Error('the transaction has ended');
    return this.conn.stmt(sql);
  }
  private w(sql: string): Statement {
    if (this.readOnly) throw new Error('write in a read-only transaction');
    return this.s(sql);
  }
  private nextval(name: string): number {
    return this.w('UPDATE sequences SET value = value + 1 WHERE name = ? RETURNING value')
      .pluck()
      .get(name) as number;
  }

  lockSession(sessionId: string): Promise<void> {
    void sessionId;
    if (this.ended) return Promise.reject(new Error('the transaction has ended'));
    // BEGIN IMMEDIATE already holds the database's one write lock.
    return Promise.resolve();
  }

  notify(channel: string, payload: string): void {
    if (this.ended) throw new Error('the transaction has ended');
    this.notifications.set(`${channel}\u0000${payload}`, { channel, payload });
  }

  async insertEvent(row: EventRow): Promise<void> {
    try {
      this.w(
        'INSERT INTO events (session_id, seq, event_id, type, run_id, created_at, payload, foreign_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ).run(
        row.sessionId,
        row.seq,
        row.eventId,
        row.type,
        row.runId,
        row.createdAt,
        row.payload,
        row.foreignId,
      );
    } catch (error) {
      if (
        error instanceof Error &&
        'code' in error &&
        error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
      )
        throw new StoreConflictError(`seq ${row.seq} of ${row.sessionId} is taken`, {
          cause: error,
        });
      throw error;
    }
    // Same transaction as the event: the search index never lags the log.
    this.w(INDEX_EVENT).run(
      sessionToken(row.sessionId),
      row.text ?? eventText(row.payload),
      row.sessionId,
      row.seq,
      row.type,
    );
  }

  async readEvents(sessionId: string, afterSeq: bigint, limit: number): Promise<EventRow[]> {
    const rows = this.conn
      .stmt(
        'SELECT session_id, seq, event_id, type, run_id, created_at, payload, foreign_id FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?',
        true,
      )
      .all(sessionId, afterSeq, BigInt(limit)) as {
      session_id: string;
      seq: bigint;
      event_id: string;
      type: string;
      run_id: string | null;
      created_at: string;
      payload: string;
      foreign_id: string | null;
    }[];
    return rows.map((r) => ({
      sessionId: r.session_id,
      seq: r.seq,
      eventId: r.event_id,
      type: r.type,
      runId: r.run_id,
      createdAt: r.created_at,
      payload: r.payload,
      foreignId: r.foreign_id,
    }));
  }

  async readEventPayloads(sessionId: string, afterSeq: bigint, limit: number): Promise<string[]> {
    return this.s(
      'SELECT payload FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    )
      .pluck()
      .all(sessionId, afterSeq, BigInt(limit)) as string[];
  }

  async hasForeignId(sessionId: string, foreignId: string): Promise<boolean> {
    return (
      this.s('SELECT 1 FROM events WHERE session_id = ? AND foreign_id = ?').get(
        sessionId,
        foreignId,
      ) !== undefined
    );
  }

  async storedForeignIds(sessionId: string, foreignIds: readonly string[]): Promise<Set<string>> {
    if (foreignIds.length === 0) return new Set();
    const rows = this.s(
      'SELECT foreign_id FROM events WHERE session_id = ? AND foreign_id IN (SELECT value FROM json_each(?))',
    )
      .pluck()
      .all(sessionId, JSON.stringify(foreignIds)) as string[];
    return new Set(rows);
  }

  async countEvents(sessionId: string): Promise<number> {
    return (
      this.s('SELECT count(*) AS n FROM events WHERE session_id = ?').get(sessionId) as {
        n: number;
      }
    ).n;
  }

  async searchEvents(
    sessionId: string,
    query: string,
    beforeCursor: bigint | null,
    limit: number,
  ): Promise<EventSearchHit[]> {
    const expression = ftsQuery(query);
    if (!expression) return [];
    const match = `session_key : ${sessionToken(sessionId)} AND body : (${expression})`;
    const rows = this.conn
      .stmt(
        `SELECT rowid, seq, type, snippet(event_search, 1, char(1), char(2), '…', 16) AS snippet
         FROM event_search WHERE event_search MATCH ? AND session_id = ? AND rowid < ?
         ORDER BY rowid DESC LIMIT ?`,
        true,
      )
      .all(match, sessionId, beforeCursor ?? 9223372036854775807n, BigInt(limit)) as {
      rowid: bigint;
      seq: bigint;
      type: string;
      snippet: string;
    }[];
    return rows.map((r) => ({
      cursor: r.rowid,
      seq: BigInt(r.seq),
      type: r.type,
      snippet: snippetParts(r.snippet),
    }));
  }

  async getSession(sessionId: string): Promise<SessionRecord | null> {
    return parse(
      this.s('SELECT state FROM sessions WHERE session_id = ?').get(sessionId) as Row | undefined,
    );
  }
  async putSession(r: SessionRecord): Promise<void> {
    const updated = this.w('UPDATE sessions SET state = ?, app_id = ? WHERE session_id = ?').run(
      JSON.stringify(r),
      r.appId,
      r.sessionId,
    );
    if (updated.changes > 0) return;
    this.w('INSERT INTO sessions (session_id, ord, app_id, state) VALUES (?, ?, ?, ?)').run(
      r.sessionId,
      this.nextval('sessions'),
      r.appId,
      JSON.stringify(r),
    );
  }
  async putSessionIf(r: SessionRecord, expectedEpoch: string): Promise<boolean> {
    const updated = this.w(
      "UPDATE sessions SET state = ?, app_id = ? WHERE session_id = ? AND json_extract(state, '$.currentClientEpoch') = ?",
    ).run(JSON.stringify(r), r.appId, r.sessionId, expectedEpoch);
    return updated.changes > 0;
  }
  async listSessions(appId: string, beforeOrder: number | null, limit: number) {
    const rows = this.s(
      'SELECT state, ord FROM sessions WHERE app_id = ? AND ord < ? ORDER BY ord DESC LIMIT ?',
    ).all(appId, beforeOrder ?? Number.MAX_SAFE_INTEGER, limit) as (Row & { ord: number })[];
    return rows.map((r) => ({ record: JSON.parse(r.state) as SessionRecord, order: r.ord }));
  }
  async listAllSessions(): Promise<SessionRecord[]> {
    return parseAll(this.s('SELECT state FROM sessions ORDER BY ord').all());
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    return parse(this.s('SELECT state FROM runs WHERE run_id = ?').get(runId) as Row | undefined);
  }
  async putRun(r: RunRecord): Promise<void> {
    this.w('INSERT OR REPLACE INTO runs (run_id, session_id, state) VALUES (?, ?, ?)').run(
      r.runId,
      r.sessionId,
      JSON.stringify(r),
    );
  }

  async getToolCall(id: string): Promise<ToolCallRecord | null> {
    return parse(
      this.s('SELECT state FROM tool_calls WHERE tool_call_id = ?').get(id) as Row | undefined,
    );
  }
  async getToolCalls(ids: readonly string[]): Promise<Map<string, ToolCallRecord>> {
    return this.many<ToolCallRecord>(
      'SELECT tool_call_id AS id, state FROM tool_calls WHERE tool_call_id IN (SELECT value FROM json_each(?))',
      ids,
    );
  }
  async putToolCall(r: ToolCallRecord): Promise<void> {
    this.w(
      'INSERT OR REPLACE INTO tool_calls (tool_call_id, session_id, state) VALUES (?, ?, ?)',
    ).run(r.toolCallId, r.sessionId, JSON.stringify(r));
  }

  async getApproval(id: string): Promise<ApprovalRecord | null> {
    return parse(
      this.s('SELECT state FROM approvals WHERE approval_id = ?').get(id) as Row | undefined,
    );
  }
  async getApprovals(ids: readonly string[]): Promise<Map<string, ApprovalRecord>> {
    return this.many<ApprovalRecord>(
      'SELECT approval_id AS id, state FROM approvals WHERE approval_id IN (SELECT value FROM json_each(?))',
      ids,
    );
  }

  /** Records by id in one query (`sql` selects `id` and `state` for the ids in a JSON array). */
  private many<T>(sql: string, ids: readonly string[]): Map<string, T> {
    const found = new Map<string, T>();
    if (ids.length === 0) return found;
    const rows = this.s(sql).all(JSON.stringify(ids)) as (Row & { id: string })[];
    for (const r of rows) found.set(r.id, JSON.parse(r.state) as T);
    return found;
  }
  async putApproval(r: ApprovalRecord): Promise<void> {
    this.w(
      'INSERT OR REPLACE INTO approvals (approval_id, session_id, status, expires_at, state) VALUES (?, ?, ?, ?, ?)',
    ).run(r.approvalId, r.sessionId, r.status, r.expiresAt, JSON.stringify(r));
  }
  async decideApproval(r: ApprovalRecord): Promise<boolean> {
    const updated = this.w(
      "UPDATE approvals SET status = ?, expires_at = ?, state = ? WHERE approval_id = ? AND status = 'PENDING'",
    ).run(r.status, r.expiresAt, JSON.stringify(r), r.approvalId);
    return updated.changes > 0;
  }
  async listPendingApprovals(sessionId: string | null): Promise<ApprovalRecord[]> {
    return parseAll(
      sessionId === null
        ? this.s(
            "SELECT state FROM approvals WHERE status = 'PENDING' ORDER BY expires_at, approval_id",
          ).all()
        : this.s(
            "SELECT state FROM approvals WHERE status = 'PENDING' AND session_id = ? ORDER BY expires_at, approval_id",
          ).all(sessionId),
    );
  }
  async listDecidedApprovals(limit: number): Promise<ApprovalRecord[]> {
    return parseAll(
      this.s(
        "SELECT state FROM approvals WHERE status <> 'PENDING' ORDER BY json_extract(state, '$.decidedAt') DESC, approval_id LIMIT ?",
      ).all(limit),
    );
  }

  async getApprovalRule(ruleId: string): Promise<ApprovalRuleRecord | null> {
    return parse(
      this.s('SELECT state FROM approval_rules WHERE rule_id = ?').get(ruleId) as Row | undefined,
    );
  }
  async putApprovalRule(r: ApprovalRuleRecord): Promise<void> {
    const updated = this.w('UPDATE approval_rules SET state = ? WHERE rule_id = ?').run(
      JSON.stringify(r),
      r.ruleId,
    );
    if (updated.changes > 0) return;
    this.w('INSERT INTO approval_rules (rule_id, ord, app_id, state) VALUES (?, ?, ?, ?)').run(
      r.ruleId,
      this.nextval('approval_rules'),
      r.appId,
      JSON.stringify(r),
    );
  }
  async listApprovalRules(appId: string): Promise<ApprovalRuleRecord[]> {
    return parseAll(
      this.s('SELECT state FROM approval_rules WHERE app_id = ? ORDER BY ord').all(appId),
    );
  }

  async getLease(id: string): Promise<LeaseRecord | null> {
    return parse(this.s('SELECT state FROM leases WHERE lease_id = ?').get(id) as Row | undefined);
  }
  async putLease(r: LeaseRecord): Promise<void> {
    this.w(
      'INSERT OR REPLACE INTO leases (lease_id, session_id, status, state) VALUES (?, ?, ?, ?)',
    ).run(r.leaseId, r.sessionId, r.status, JSON.stringify(r));
  }
  async listActiveLeases(sessionId: string | null): Promise<LeaseRecord[]> {
    return parseAll(
      sessionId === null
        ? this.s("SELECT state FROM leases WHERE status = 'ACTIVE'").all()
        : this.s("SELECT state FROM leases WHERE status = 'ACTIVE' AND session_id = ?").all(
            sessionId,
          ),
    );
  }

  async getCheckpoint(id: string): Promise<CheckpointRecord | null> {
    return parse(
      this.s('SELECT state FROM checkpoints WHERE checkpoint_id = ?').get(id) as Row | undefined,
    );
  }
  async putCheckpoint(r: CheckpointRecord): Promise<void> {
    const updated = this.w('UPDATE checkpoints SET state = ? WHERE checkpoint_id = ?').run(
      JSON.stringify(r),
      r.checkpointId,
    );
    if (updated.changes > 0) return;
    this.w(
      'INSERT INTO checkpoints (checkpoint_id, ord, session_id, project_id, state) VALUES (?, ?, ?, ?, ?)',
    ).run(r.checkpointId, this.nextval('checkpoints'), r.sessionId, r.projectId, JSON.stringify(r));
  }
  async listCheckpoints(sessionId: string, beforeOrder: number | null, limit: number) {
    const rows = this.s(
      'SELECT state, ord FROM checkpoints WHERE session_id = ? AND ord < ? ORDER BY ord DESC LIMIT ?',
    ).all(sessionId, beforeOrder ?? Number.MAX_SAFE_INTEGER, limit) as (Row & { ord: number })[];
    return rows.map((r) => ({ record: JSON.parse(r.state) as CheckpointRecord, order: r.ord }));
  }
  async listCheckpointsOfProject(projectId: string): Promise<CheckpointRecord[]> {
    return parseAll(
      this.s('SELECT state FROM checkpoints WHERE project_id = ? ORDER BY ord DESC').all(projectId),
    );
  }

  async getProject(id: string): Promise<ProjectRecord | null> {
    return parse(
      this.s('SELECT state FROM projects WHERE project_id = ?').get(id) as Row | undefined,
    );
  }
  async putProject(r: ProjectRecord): Promise<void> {
    this.w('INSERT OR REPLACE INTO projects (project_id, state) VALUES (?, ?)').run(
      r.projectId,
      JSON.stringify(r),
    );
  }

  async getClient(sessionId: string, clientInstanceId: string): Promise<ClientRecord | null> {
    return parse(
      this.s('SELECT state FROM clients WHERE session_id = ? AND client_instance_id = ?').get(
        sessionId,
        clientInstanceId,
      ) as Row | undefined,
    );
  }
  async putClient(r: ClientRecord): Promise<void> {
    this.w(
      'INSERT OR REPLACE INTO clients (session_id, client_instance_id, attached, state) VALUES (?, ?, ?, ?)',
    ).run(r.sessionId, r.clientInstanceId, r.attached ? 1 : 0, JSON.stringify(r));
  }
  async listAttachedClients(): Promise<ClientRecord[]> {
    return parseAll(this.s('SELECT state FROM clients WHERE attached = 1').all());
  }

  async getIdempotency(operation: string, key: string): Promise<IdempotencyRecord | null> {
    return parse(
      this.s('SELECT state FROM idempotency WHERE operation = ? AND key = ?').get(
        operation,
        key,
      ) as Row | undefined,
    );
  }
  async putIdempotency(r: IdempotencyRecord): Promise<void> {
    try {
      this.w('INSERT INTO idempotency (operation, key, state, created_at) VALUES (?, ?, ?, ?)').run(
        r.operation,
        r.key,
        JSON.stringify(r),
        r.createdAt,
      );
    } catch (error) {
      if (isUniqueViolation(error))
        throw new StoreConflictError(`idempotency record ${r.operation}/${r.key} exists`, {
          cause: error,
        });
      throw error;
    }
  }
  async deleteIdempotency(operation: string, key: string): Promise<void> {
    this.w('DELETE FROM idempotency WHERE operation = ? AND key = ?').run(operation, key);
  }
  async pruneIdempotency(olderThan: string): Promise<number> {
    return this.w('DELETE FROM idempotency WHERE created_at < ?').run(olderThan).changes;
  }

  async getRestoreJob(toolCallId: string): Promise<RestoreJobRecord | null> {
    return parse(
      this.s('SELECT state FROM restore_jobs WHERE tool_call_id = ?').get(toolCallId) as
        Row | undefined,
    );
  }
  async putRestoreJob(r: RestoreJobRecord): Promise<void> {
    this.w('INSERT OR REPLACE INTO restore_jobs (tool_call_id, state) VALUES (?, ?)').run(
      r.toolCallId,
      JSON.stringify(r),
    );
  }
  async deleteRestoreJob(toolCallId: string): Promise<void> {
    this.w('DELETE FROM restore_jobs WHERE tool_call_id = ?').run(toolCallId);
  }
  async listRestoreJobs(): Promise<RestoreJobRecord[]> {
    return parseAll(this.s('SELECT state FROM restore_jobs').all());
  }

  async getQuestion(sessionId: string, questionId: string): Promise<QuestionRecord | null> {
    return parse(
      this.s('SELECT state FROM questions WHERE session_id = ? AND question_id = ?').get(
        sessionId,
        questionId,
      ) as Row | undefined,
    );
  }
  async putQuestion(r: QuestionRecord): Promise<void> {
    this.w(
      'INSERT OR REPLACE INTO questions (session_id, question_id, state) VALUES (?, ?, ?)',
    ).run(r.sessionId, r.questionId, JSON.stringify(r));
  }
  async findQuestionById(questionId: string): Promise<QuestionRecord | null> {
    return parse(
      this.s('SELECT state FROM questions WHERE question_id = ? LIMIT 1').get(questionId) as
        Row | undefined,
    );
  }

  async getBudget(sessionId: string): Promise<BudgetRecord | null> {
    return parse(
      this.s('SELECT state FROM budgets WHERE session_id = ?').get(sessionId) as Row | undefined,
    );
  }
  async putBudget(r: BudgetRecord): Promise<void> {
    this.w('INSERT OR REPLACE INTO budgets (session_id, state) VALUES (?, ?)').run(
      r.sessionId,
      JSON.stringify(r),
    );
  }

  async getMeta(key: string): Promise<string | null> {
    const row = this.s('SELECT value FROM meta WHERE key = ?').get(key) as
      { value: string } | undefined;
    return row ? row.value : null;
  }
  async putMeta(key: string, value: string): Promise<void> {
    this.w('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(key, value);
  }

  async enqueueJob(job: JobDraft): Promise<boolean> {
    const at = new Date().toISOString();
    const inserted = this.w(
      "INSERT INTO jobs (kind, key, payload, status, created_at, updated_at) VALUES (?, ?, ?, 'PENDING', ?, ?) ON CONFLICT (key) DO NOTHING",
    ).run(job.kind, job.key, job.payload, at, at);
    return inserted.changes > 0;
  }

  async claimJob(
    kinds: readonly string[],
    workerId: string,
    nowMs: number,
    leaseMs: number,
  ): Promise<JobRecord | null> {
    if (kinds.length === 0) return null;
    const marks = kinds.map(() => '?').join(', ');
    const row = this.w(
      `UPDATE jobs SET status = 'CLAIMED', worker_id = ?, lease_until_ms = ?, attempts = attempts + 1, updated_at = ?
       WHERE job_id = (
         SELECT job_id FROM jobs
         WHERE kind IN (${marks}) AND (status = 'PENDING' OR (status = 'CLAIMED' AND lease_until_ms < ?))
         ORDER BY job_id LIMIT 1)
       RETURNING *`,
    ).get(workerId, nowMs + leaseMs, new Date().toISOString(), ...kinds, nowMs) as
      JobRow | undefined;
    return row ? jobOf(row) : null;
  }

  async completeJob(jobId: string, workerId: string): Promise<boolean> {
    return (
      this.w(
        "UPDATE jobs SET status = 'DONE', lease_until_ms = NULL, updated_at = ? WHERE job_id = ? AND status = 'CLAIMED' AND worker_id = ?",
      ).run(new Date().toISOString(), Number(jobId), workerId).changes > 0
    );
  }

  async failJob(jobId: string, workerId: string, error: string): Promise<boolean> {
    return (
      this.w(
        "UPDATE jobs SET status = 'FAILED', lease_until_ms = NULL, last_error = ?, updated_at = ? WHERE job_id = ? AND status = 'CLAIMED' AND worker_id = ?",
      ).run(error, new Date().toISOString(), Number(jobId), workerId).changes > 0
    );
  }

  async getJob(jobId: string): Promise<JobRecord | null> {
    const row = this.s('SELECT * FROM jobs WHERE job_id = ?').get(Number(jobId)) as
      JobRow | undefined;
    return row ? jobOf(row) : null;
  }

  async getJobByKey(key: string): Promise<JobRecord | null> {
    const row = this.s('SELECT * FROM jobs WHERE key = ?').get(key) as JobRow | undefined;
    return row ? jobOf(row) : null;
  }

  async listJobs(statuses: readonly JobStatus[]): Promise<JobRecord[]> {
    if (statuses.length === 0) return [];
    const marks = statuses.map(() => '?').join(', ');
    return (
      this.s(`SELECT * FROM jobs WHERE status IN (${marks}) ORDER BY job_id`).all(
        ...statuses,
      ) as JobRow[]
    ).map(jobOf);
  }

  async pruneJobs(olderThan: string): Promise<number> {
    return this.w("DELETE FROM jobs WHERE status IN ('DONE', 'FAILED') AND updated_at < ?").run(
      olderThan,
    ).changes;
  }
}
