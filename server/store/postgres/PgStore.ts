/**
 * The PostgreSQL implementation of Store (`--database-url postgres://…`), on `pg` (node-postgres).
 * Several studio servers may share one database (`shared = true`); everything that must hold
 * across them is the database's:
 * - transactions run concurrently at READ COMMITTED on a pool; writers of one session serialise on
 *   its row (`lockSession`: SELECT … FOR UPDATE), seq is unique on (session_id, seq), an approval is
 *   decided by a conditional UPDATE, the client epoch moves by a conditional UPDATE, order columns
 *   come from sequences, jobs are claimed with FOR UPDATE SKIP LOCKED;
 * - a conflict the database detects (serialization failure, deadlock, a duplicate (session_id, seq)
 *   or idempotency key) rolls back and runs `fn` again (StoreConflictError), at most
 *   TRANSACTION_ATTEMPTS times. After any failed statement PostgreSQL refuses the rest of the
 *   transaction, so the first error is remembered and ends it even if `fn` caught it;
 * - `tx.notify` is sent with pg_notify inside the transaction, so PostgreSQL delivers it at commit
 *   to every instance (one channel, `studio_store`, carrying the channel, payload and sender). The
 *   sending instance hears its own right after COMMIT, in-process; a dedicated LISTEN connection
 *   (reconnected when it drops) delivers the others'. After a reconnect every handler gets a
 *   `store.resync` notification, since notifications sent while it was down are lost.
 * - read-only transactions are REPEATABLE READ READ ONLY: one consistent snapshot.
 *
 * The URL may carry a password: it is never logged or put in an error message.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { StoreConflictError, TRANSACTION_ATTEMPTS } from '../Store.ts';
import type {
  JobDraft,
  JobRecord,
  JobStatus,
  Store,
  StoreNotification,
  TransactionOptions,
  Tx,
} from '../Store.ts';
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
} from '../records.ts';
import { eventText, sessionToken, snippetParts } from '../eventText.ts';
import { PG_MIGRATIONS } from './pgMigrations.ts';
import { cutSnippet, pgSearchTerms, searchDocumentText } from './pgSearch.ts';

/** The one PostgreSQL channel every Store notification travels on. */
export const PG_CHANNEL = 'studio_store';
/**
 * Delivered to every listen handler after the LISTEN connection was re-established (the engine's
 * Notifier wakes every open stream on it: server/engine/Notifier.ts STORE_RESYNC_CHANNEL).
 */
export const RESYNC_CHANNEL = 'store.resync';
/** Advisory lock key (two int4) serialising migrations across instances: "stud" "migr". */
const MIGRATION_LOCK: [number, number] = [0x73747564, 0x6d696772];
/**
 * First key of each instance's liveness lock, "inst": a session-level advisory lock
 * (INSTANCE_LOCK, hashtext(instanceId)) held by the LISTEN connection while it is up. PostgreSQL
 * releases it when that connection ends (the process died, or the network dropped), which is how
 * another instance knows a job this one claimed will not be finished by it (`claimJob`).
 */
const INSTANCE_LOCK = 0x696e7374;
/** SQL: true while the instance named by `column` holds its liveness lock. */
const INSTANCE_ALIVE = (column: string) =>
  `EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
     AND classid = ${INSTANCE_LOCK}::bigint::oid
     AND objid = (hashtext(${column})::bigint & 4294967295)::oid
     AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))`;

export interface PgStoreOptions {
  /** postgres://user:password@host:port/database (never logged). */
  url: string;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** Where the store reports problems (a dropped LISTEN connection); never given the URL. */
  onProblem?: (message: string) => void;
}

/** host:port/database of a URL, without the user or password (for messages). */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || 'localhost'}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname}`;
  } catch {
    return '(an unparseable database URL)';
  }
}

type Row = { state: string };
const parse = <T>(rows: Row[]): T | null => (rows[0] ? (JSON.parse(rows[0].state) as T) : null);
const parseAll = <T>(rows: Row[]): T[] => rows.map((r) => JSON.parse(r.state) as T);

interface JobRow {
  job_id: string;
  kind: string;
  key: string;
  payload: string;
  status: JobStatus;
  worker_id: string | null;
  lease_until_ms: string | null;
  attempts: number;
  created_at: string;
  updated_at: string;
  last_error: string | null;
}
const jobOf = (r: JobRow): JobRecord => ({
  jobId: r.job_id,
  kind: r.kind,
  key: r.key,
  payload: r.payload,
  status: r.status,
  workerId: r.worker_id,
  leaseUntilMs: r.lease_until_ms === null ? null : Number(r.lease_until_ms),
  attempts: r.attempts,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  lastError: r.last_error,
});
const JOB_COLUMNS =
  'job_id, kind, key, payload, status, worker_id, lease_until_ms, attempts, created_at, updated_at, last_error';

/** SQLSTATEs that mean "lost a race; run the transaction again". */
const RETRYABLE = new Set(['40001', '40P01']);
/** Unique constraints whose violation is a retryable conflict (the contract's). */
const CONFLICT_CONSTRAINTS = new Set(['events_pkey', 'idempotency_pkey']);

function pgCode(error: unknown): { code?: string; constraint?: string } {
  return error && typeof error === 'object'
    ? (error as { code?: string; constraint?: string })
    : {};
}

function asConflict(error: unknown): StoreConflictError | null {
  if (error instanceof StoreConflictError) return error;
  const { code, constraint } = pgCode(error);
  if (code && RETRYABLE.has(code))
    return new StoreConflictError(`PostgreSQL reported a conflict (${code})`, { cause: error });
  if (code === '23505' && constraint && CONFLICT_CONSTRAINTS.has(constraint))
    return new StoreConflictError(`a concurrent write took ${constraint}`, { cause: error });
  return null;
}

/** Text PostgreSQL can hold: it refuses NUL in text values. */
const pgText = (text: string): string =>
  text.includes('\u0000') ? text.replaceAll('\u0000', ' ') : text;

export class PgStore implements Store {
  readonly kind = 'postgres';
  readonly shared = true;
  /** This process's id in notifications (so it skips its own, heard in-process already). */
  readonly instanceId = randomUUID();
  private readonly pool: pg.Pool;
  private readonly url: string;
  private readonly onProblem: (message: string) => void;
  private readonly handlers = new Set<(n: StoreNotification) => void>();
  private listener: pg.Client | null = null;
  /** This instance's id while its liveness lock is held (see INSTANCE_LOCK), else null. */
  private alive: string | null = null;
  private listening: Promise<void> | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reconnectDelayMs = 100;
  private closed = false;

  constructor(options: PgStoreOptions) {
    this.url = options.url;
    this.onProblem = options.onProblem ?? (() => undefined);
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      idleTimeoutMillis: 30_000,
      application_name: 'agent-studio',
    });
    // An idle client's error (the server restarted) must not crash the process; the pool drops it.
    this.pool.on('error', (error) =>
      this.onProblem(`PostgreSQL connection lost: ${error.message}`),
    );
  }

  /** Connects, then applies the migrations not yet applied. A clear error if it cannot connect. */
  async migrate(): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw new Error(
        `could not connect to PostgreSQL at ${describeDatabaseUrl(this.url)}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', MIGRATION_LOCK);
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const applied = new Set(
        (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map(
          (r) => r.version,
        ),
      );
      for (const migration of PG_MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
          migration.version,
          migration.name,
        ]);
      }
      const newest = Math.max(...applied, 0);
      const known = Math.max(...PG_MIGRATIONS.map((m) => m.version));
      if (newest > known)
        throw new Error(
          `the database has schema version ${newest}; this server knows up to ${known} (upgrade the server)`,
        );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async appliedMigrations(): Promise<number[]> {
    const { rows } = await this.pool.query<{ version: number }>(
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    return rows.map((r) => r.version);
  }

  listen(handler: (n: StoreNotification) => void): () => void {
    this.handlers.add(handler);
    if (!this.listening && !this.closed) this.listening = this.connectListener();
    return () => this.handlers.delete(handler);
  }

  /** Resolves once the LISTEN connection is up (tests and startup wait for it). */
  async ready(): Promise<void> {
    if (!this.listening && !this.closed) this.listening = this.connectListener();
    await this.listening;
  }

  private async connectListener(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: 'agent-studio-listen',
    });
    let dropped = false;
    const drop = (why: string) => {
      if (dropped) return;
      dropped = true;
      if (this.listener === client) {
        this.listener = null;
        this.alive = null;
      }
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.onProblem(`PostgreSQL LISTEN connection lost (${why}); reconnecting`);
      this.scheduleReconnect();
    };
    client.on('error', (error) => drop(error.message));
    client.on('end', () => drop('closed'));
    client.on('notification', (message) => {
      if (message.channel !== PG_CHANNEL || !message.payload) return;
      let parsed: { i: string; c: string; p: string };
      try {
        parsed = JSON.parse(message.payload) as { i: string; c: string; p: string };
      } catch {
        return;
      }
      if (parsed.i === this.instanceId) return;
      this.deliver([{ channel: parsed.c, payload: parsed.p }]);
    });
    let locked: boolean;
    try {
      await client.connect();
      await client.query(`LISTEN ${PG_CHANNEL}`);
      // False only if another live instance's id hashes alike: then this one claims by lease only.
      locked = (
        await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [
          INSTANCE_LOCK,
          this.instanceId,
        ])
      ).rows[0]!.ok;
    } catch (error) {
      drop(error instanceof Error ? error.message : String(error));
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    const wasReconnect = this.reconnectDelayMs > 100 || this.listener !== null;
    this.listener = client;
    this.alive = locked ? this.instanceId : null;
    this.reconnectDelayMs = 100;
    if (wasReconnect) this.deliver([{ channel: RESYNC_CHANNEL, payload: '' }]);
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer || this.closed) return;
    const delay = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, 5_000);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.listening = this.connectListener();
    }, delay);
  }

  /** Test hook: drops the LISTEN connection as a network failure would (it reconnects). */
  async dropListenConnection(): Promise<void> {
    const client = this.listener;
    if (!client) return;
    const pid = (client as unknown as { processID: number | null }).processID;
    if (pid) await this.pool.query('SELECT pg_terminate_backend($1)', [pid]);
  }

  private deliver(notifications: Iterable<StoreNotification>): void {
    for (const notification of notifications)
      for (const handler of [...this.handlers]) {
        try {
          handler(notification);
        } catch {
          // A handler's failure is its own; the others still hear it.
        }
      }
  }

  async transaction<T>(fn: (tx: Tx) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
    if (this.closed) throw new Error('the store is closed');
    const readOnly = opts.readOnly ?? false;
    // A read-only transaction first runs as one statement outside BEGIN (one statement sees one
    // snapshot by itself); if `fn` asks for a second, it runs again inside a real transaction.
    let single = readOnly;
    for (let attempt = 1; ; attempt++) {
      if (single) {
        const tx = new PgTx(null, true, null, this.oneShot);
        try {
          let result: T;
          try {
            result = await fn(tx);
          } catch (error) {
            throw tx.failure ?? error;
          }
          if (tx.failure) throw tx.failure;
          // A notification needs a transaction to commit with.
          if (tx.notifications.size > 0) throw NEEDS_TRANSACTION;
          tx.ended = true;
          return result;
        } catch (error) {
          tx.ended = true;
          if (error === NEEDS_TRANSACTION) {
            single = false;
            attempt -= 1;
            continue;
          }
          const conflict = asConflict(error);
          if (conflict && attempt < TRANSACTION_ATTEMPTS) continue;
          throw conflict ?? error;
        }
      }
      const client = await this.pool.connect();
      const tx = new PgTx(client, readOnly, this.alive);
      let result: T;
      let broken = false;
      try {
        try {
          result = await fn(tx);
        } catch (error) {
          throw tx.failure ?? error;
        }
        if (tx.failure) throw tx.failure;
        const notify =
          tx.notifications.size > 0
            ? inline('SELECT pg_notify($1, m) FROM unnest($2::text[]) AS m', [
                PG_CHANNEL,
                [...tx.notifications.values()].map((n) =>
                  JSON.stringify({ i: this.instanceId, c: n.channel, p: n.payload }),
                ),
              ])
            : null;
        // The deferred writes, the notifications and COMMIT: one round trip.
        await tx.finish(notify);
      } catch (error) {
        tx.ended = true;
        const conflict = asConflict(error);
        if (tx.began)
          try {
            await client.query('ROLLBACK');
          } catch {
            broken = true;
          }
        client.release(broken);
        if (error === NEEDS_TRANSACTION) {
          single = false;
          attempt -= 1;
          continue;
        }
        if (conflict && attempt < TRANSACTION_ATTEMPTS) continue;
        throw conflict ?? error;
      }
      client.release();
      this.deliver(tx.notifications.values());
      return result;
    }
  }

  /** Single-statement reads not sent yet, by statement name and parameters (see oneShot). */
  private readonly joinable = new Map<string, Promise<pg.QueryResult>>();

  /**
   * A single-statement read. Identical named reads asked for while one is still waiting for a
   * connection share it: it is sent after every one of them was asked, so its snapshot is one
   * each of them could have read (50 subscriptions woken by one commit read the session once).
   * Once sent, a new ask starts its own. Rows are shared: callers only read them.
   */
  private readonly oneShot: OneShot = <R extends pg.QueryResultRow>(
    sql: string,
    params: unknown[],
    name?: string,
  ): Promise<pg.QueryResult<R>> => {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    if (!name) return this.pool.query<R>(sql, params);
    const key = `${name}\u0000${JSON.stringify(params, paramKey)}`;
    const joined = this.joinable.get(key);
    if (joined) return joined as Promise<pg.QueryResult<R>>;
    const shared = (async () => {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } finally {
        this.joinable.delete(key);
      }
      try {
        const result = await client.query<R>({ name, text: sql, values: params });
        client.release();
        return result;
      } catch (error) {
        // An error with a SQLSTATE left the connection usable; any other may not have.
        client.release(pgCode(error).code ? undefined : (error as Error));
        throw error;
      }
    })();
    this.joinable.set(key, shared as Promise<pg.QueryResult>);
    return shared;
  };

  /** Runs one statement outside any transaction (for the source leases and content blobs). */
  query<R extends pg.QueryResultRow>(
    sql: string,
    params: unknown[] = [],
  ): Promise<pg.QueryResult<R>> {
    return this.pool.query<R>(sql, params);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    await this.listening?.catch(() => undefined);
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => undefined);
    await this.pool.end();
  }
}

/**
 * A statement's parameters written into its text as SQL literals, for the simple query protocol
 * (the one way `pg` sends several statements in one round trip). Only the types the store passes
 * are accepted; anything else is an error, never a guess.
 */
export function inline(sql: string, params: readonly unknown[]): string {
  return sql.replace(/\$(\d+)/g, (_match, digits: string) => {
    const index = Number(digits) - 1;
    if (index < 0 || index >= params.length)
      throw new Error(`statement refers to $${digits} but has ${params.length} parameters`);
    return literal(params[index]);
  });
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') {
    // PostgreSQL refuses NUL in text (as a parameter too); in a query text it would cut it short.
    if (value.includes('\u0000')) throw new Error('PostgreSQL text cannot hold a NUL character');
    // pg's own quoting: '' for a quote, and an E'' string with doubled backslashes when needed.
    return pg.escapeLiteral(value);
  }
  if (typeof value === 'bigint') return value < 0n ? `(${value})` : value.toString();
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`cannot write ${value} as a SQL literal`);
    return value < 0 ? `(${value})` : String(value);
  }
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(', ')}]`;
  throw new Error(`cannot write a ${typeof value} as a SQL literal`);
}

interface PendingApproval {
  approvalId: string;
  expiresAt: string;
  state: string;
}
/** listPendingApprovals' order: expiry, then id, compared as code units (ASCII in practice). */
const byExpiry = (a: PendingApproval, b: PendingApproval): number =>
  a.expiresAt < b.expiresAt
    ? -1
    : a.expiresAt > b.expiresAt
      ? 1
      : a.approvalId < b.approvalId
        ? -1
        : a.approvalId > b.approvalId
          ? 1
          : 0;

/** Runs one statement outside any transaction (a single-statement read, see PgStore.oneShot). */
type OneShot = <R extends pg.QueryResultRow>(
  sql: string,
  params: unknown[],
  name?: string,
) => Promise<pg.QueryResult<R>>;

const paramKey = (_key: string, value: unknown) =>
  typeof value === 'bigint' ? `${value}n` : value;

/** Thrown inside a single-statement read-only attempt that asked for a second statement. */
const NEEDS_TRANSACTION = new Error('a read-only transaction of one statement needed a second one');

/**
 * One transaction on one pooled connection, sent in as few round trips as it can be:
 * - a read-only transaction is first tried as a single statement with no BEGIN or COMMIT (one
 *   statement reads one snapshot by itself); at a second statement that attempt is abandoned and
 *   `fn` runs again inside BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY (`fn` may run more
 *   than once by the Store contract);
 * - BEGIN is not sent alone: it goes with the transaction's first statement (and a transaction
 *   that ran none sends nothing at all);
 * - the writes whose result nobody reads (insertEvent and the put* of session-scoped rows:
 *   sessions, runs, tool calls, approvals, leases, checkpoints, budgets, questions, clients) are
 *   deferred: they travel, in order, with the next statement whose answer is awaited, or with
 *   COMMIT. Every one of those rows is written only under its session's lock (`lockSession`: the
 *   append path, attachments, decisions), so deferring a write past other statements of the same
 *   transaction cannot reorder it against another transaction's write of that row. A deferred
 *   write that fails fails the transaction exactly as at once (PostgreSQL refuses the rest of it);
 *   the error surfaces at the statement it travelled with, or at commit;
 * - a row this transaction wrote (or locked with `lockSession`) is read back from the transaction
 *   itself: the row lock held until commit means the database would answer the same text. Meta
 *   values are read once per transaction (the kernel never waits inside a transaction for another
 *   one's meta write).
 * Several statements travel as one simple-protocol query with their parameters written as
 * literals (`inline`); a statement with nothing pending uses its named prepared statement.
 */
export class PgTx implements Tx {
  ended = false;
  /** The first statement error: PostgreSQL refuses the rest of the transaction after it. */
  failure: unknown = null;
  readonly notifications = new Map<string, StoreNotification>();
  /** BEGIN has been sent (ROLLBACK is needed to end the transaction on failure). */
  began = false;
  /** Statements not sent yet, as SQL text with literals (BEGIN first, until sent). */
  private pending: string[];
  /** `${table}\u0000${key}` -> the state text this transaction wrote or locked. */
  private readonly rows = new Map<string, string>();
  private readonly meta = new Map<string, string | null>();
  /** Sessions whose row this transaction locked (lockSession found it). */
  private readonly locked = new Set<string>();
  /** The pending approvals of locked sessions, kept up to date by this transaction's writes. */
  private readonly pendingApprovals = new Map<string, Map<string, PendingApproval>>();

  /** Statements sent in a single-statement attempt (see NEEDS_TRANSACTION). */
  private sent = 0;

  /** Run as one statement outside a transaction, through `oneShot` (read-only only). */
  private readonly single: boolean;

  constructor(
    /** The transaction's connection (null for a single-statement read). */
    private readonly client: pg.PoolClient | null,
    readonly readOnly: boolean,
    /** The instance id claims are recorded under while its liveness lock is held (INSTANCE_LOCK). */
    private readonly instance: string | null = null,
    private readonly oneShot: OneShot | null = null,
  ) {
    this.single = oneShot !== null;
    this.pending = this.single
      ? []
      : [readOnly ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN'];
  }

  private check(): void {
    if (this.ended) throw new Error('the transaction has ended');
    if (this.failure) throw this.failure;
  }

  /** Sends `sql` (after whatever is pending, in one round trip) and returns its result. */
  private async run<R extends pg.QueryResultRow>(
    sql: string,
    params: unknown[],
    name?: string,
  ): Promise<pg.QueryResult<R>> {
    this.check();
    if (this.single && this.sent++ > 0) {
      this.failure = NEEDS_TRANSACTION;
      throw this.failure;
    }
    try {
      if (this.oneShot) return await this.oneShot<R>(sql, params, name);
      const client = this.client!;
      if (this.pending.length === 0)
        return await client.query<R>(name ? { name, text: sql, values: params } : sql, params);
      const text = [...this.pending, inline(sql, params)].join(';\n');
      this.pending = [];
      this.began = true;
      const results = (await client.query<R>(text)) as pg.QueryResult<R> | pg.QueryResult<R>[];
      return Array.isArray(results) ? results[results.length - 1]! : results;
    } catch (error) {
      this.failure = asConflict(error) ?? error;
      throw this.failure;
    }
  }

  /** Sends what is pending and `statements` (SQL with literals) in one round trip: their results. */
  private async batch(statements: string[]): Promise<pg.QueryResult[]> {
    this.check();
    if (this.single) {
      this.failure = NEEDS_TRANSACTION;
      throw this.failure;
    }
    const all = [...this.pending, ...statements];
    this.pending = [];
    this.began = true;
    try {
      const results = (await this.client!.query(all.join(';\n'))) as
        pg.QueryResult | pg.QueryResult[];
      const list = Array.isArray(results) ? results : [results];
      return list.slice(list.length - statements.length);
    } catch (error) {
      this.failure = asConflict(error) ?? error;
      throw this.failure;
    }
  }

  private async q<R extends pg.QueryResultRow>(
    sql: string,
    params: unknown[],
    name?: string,
  ): Promise<R[]> {
    return (await this.run<R>(sql, params, name)).rows;
  }
  private async count(sql: string, params: unknown[], name?: string): Promise<number> {
    return (await this.run(sql, params, name)).rowCount ?? 0;
  }
  /** Queues a write whose result is not read; it is sent with the next statement or COMMIT. */
  private defer(sql: string, params: unknown[]): void {
    this.check();
    try {
      this.pending.push(inline(sql, params));
    } catch (error) {
      // As a refused statement would: the transaction cannot commit without this write.
      this.failure = error;
      throw error;
    }
  }
  /** Ends the transaction: what is pending, `notify` (SQL text or null), then COMMIT. */
  async finish(notify: string | null): Promise<void> {
    this.check();
    this.ended = true;
    if (!this.began && this.pending.length === 1 && notify === null) {
      this.pending = [];
      return;
    }
    const text = [...this.pending, ...(notify ? [notify] : []), 'COMMIT'].join(';\n');
    this.pending = [];
    this.began = true;
    await this.client!.query(text);
  }
  /** A statement on this transaction's connection, for PostgreSQL-only tables (server/multi). */
  sql<R extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<R[]> {
    return this.q<R>(text, params);
  }
  private w(): void {
    if (this.readOnly) throw new Error('write in a read-only transaction');
  }
  /** A row's state written (or locked) by this transaction, if any. */
  private own<T>(table: string, key: string): T | null | undefined {
    const text = this.rows.get(`${table}\u0000${key}`);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  }
  /** Rows of `table` by key in one query; this transaction's own writes answer for their keys. */
  private async many<T>(
    table: string,
    keys: readonly string[],
    sql: string,
    name: string,
  ): Promise<Map<string, T>> {
    const found = new Map<string, T>();
    const rest: string[] = [];
    for (const key of new Set(keys)) {
      const own = this.own<T>(table, key);
      if (own === undefined) rest.push(key);
      else if (own !== null) found.set(key, own);
    }
    if (rest.length > 0)
      for (const r of await this.q<{ id: string; state: string }>(sql, [rest], name))
        found.set(r.id, JSON.parse(r.state) as T);
    return found;
  }
  /** Defers an upsert of a session-scoped row and remembers its state text. */
  private put(table: string, key: string, state: string, sql: string, params: unknown[]): void {
    this.w();
    this.defer(sql, params);
    this.rows.set(`${table}\u0000${key}`, state);
  }

  async lockSession(sessionId: string): Promise<void> {
    // The session's current run comes along in the same round trip, read by a second statement
    // once the lock is held (a fresh snapshot: a join in the locking statement could show the run
    // as it was before the previous holder committed). A run is written only under its session's
    // lock, so it too reads the same until commit.
    const [locked, run] = await this.batch([
      inline('SELECT state FROM sessions WHERE session_id = $1 FOR UPDATE', [sessionId]),
      inline(
        `SELECT run_id, state FROM runs WHERE session_id = $1 AND run_id =
           (SELECT state::json ->> 'currentRunId' FROM sessions WHERE session_id = $1)`,
        [sessionId],
      ),
    ]);
    const rows = locked!.rows as Row[];
    // Locked until commit: getSession in this transaction reads it from here.
    if (rows[0]) {
      this.rows.set(`sessions\u0000${sessionId}`, rows[0].state);
      this.locked.add(sessionId);
      const current = run!.rows[0] as { run_id: string; state: string } | undefined;
      if (current && !this.rows.has(`runs\u0000${current.run_id}`))
        this.rows.set(`runs\u0000${current.run_id}`, current.state);
    }
    // A session being created has no row to lock yet: a transaction-level advisory lock on its id
    // serialises its creators (the primary key then rejects all but one).
    else await this.q('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [sessionId]);
  }

  notify(channel: string, payload: string): void {
    if (this.ended) throw new Error('the transaction has ended');
    this.notifications.set(`${channel}\u0000${payload}`, { channel, payload });
  }

  async insertEvent(row: EventRow): Promise<void> {
    this.w();
    const body = pgText(row.text ?? eventText(row.payload));
    // Same statement as the event: the search index never lags the log. Deferred (see PgTx).
    this.defer(
      `WITH e AS (
         INSERT INTO events (session_id, seq, event_id, type, run_id, created_at, payload, foreign_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8))
       INSERT INTO event_search (session_id, seq, type, body, document)
       VALUES ($1, $2, $4, $9, setweight(to_tsvector('simple', $10), 'D') || setweight($11::tsvector, 'A'))`,
      [
        row.sessionId,
        row.seq,
        row.eventId,
        row.type,
        row.runId,
        row.createdAt,
        row.payload,
        row.foreignId,
        body,
        searchDocumentText(body),
        sessionToken(row.sessionId),
      ],
    );
  }

  async readEvents(sessionId: string, afterSeq: bigint, limit: number): Promise<EventRow[]> {
    const rows = await this.q<{
      session_id: string;
      seq: string;
      event_id: string;
      type: string;
      run_id: string | null;
      created_at: string;
      payload: string;
      foreign_id: string | null;
    }>(
      'SELECT session_id, seq, event_id, type, run_id, created_at, payload, foreign_id FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
      [sessionId, afterSeq, limit],
      'readEvents',
    );
    return rows.map((r) => ({
      sessionId: r.session_id,
      seq: BigInt(r.seq),
      eventId: r.event_id,
      type: r.type,
      runId: r.run_id,
      createdAt: r.created_at,
      payload: r.payload,
      foreignId: r.foreign_id,
    }));
  }

  async readEventPayloads(sessionId: string, afterSeq: bigint, limit: number): Promise<string[]> {
    const rows = await this.q<{ payload: string }>(
      'SELECT payload FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
      [sessionId, afterSeq, limit],
      'readEventPayloads',
    );
    return rows.map((r) => r.payload);
  }

  async hasForeignId(sessionId: string, foreignId: string): Promise<boolean> {
    const rows = await this.q(
      'SELECT 1 FROM events WHERE session_id = $1 AND foreign_id = $2',
      [sessionId, foreignId],
      'hasForeignId',
    );
    return rows.length > 0;
  }

  async storedForeignIds(sessionId: string, foreignIds: readonly string[]): Promise<Set<string>> {
    if (foreignIds.length === 0) return new Set();
    const rows = await this.q<{ foreign_id: string }>(
      'SELECT foreign_id FROM events WHERE session_id = $1 AND foreign_id = ANY($2::text[])',
      [sessionId, [...foreignIds]],
      'storedForeignIds',
    );
    return new Set(rows.map((r) => r.foreign_id));
  }

  async countEvents(sessionId: string): Promise<number> {
    const rows = await this.q<{ n: string }>(
      'SELECT count(*) AS n FROM events WHERE session_id = $1',
      [sessionId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async searchEvents(
    sessionId: string,
    query: string,
    beforeCursor: bigint | null,
    limit: number,
  ): Promise<EventSearchHit[]> {
    const terms = pgSearchTerms(query);
    if (!terms) return [];
    // The session's token (weight A) and the words in one tsquery: one GIN lookup for both.
    const rows = await this.q<{ pos: string; seq: string; type: string; body: string }>(
      `SELECT pos, seq, type, body FROM event_search
       WHERE document @@ to_tsquery('simple', $1 || ':A & (' || $2 || ')')
         AND session_id = $3 AND pos < $4
       ORDER BY pos DESC LIMIT $5`,
      [
        sessionToken(sessionId),
        terms.tsquery,
        sessionId,
        beforeCursor ?? 9223372036854775807n,
        limit,
      ],
      'searchEvents',
    );
    return rows.map((r) => ({
      cursor: BigInt(r.pos),
      seq: BigInt(r.seq),
      type: r.type,
      snippet: snippetParts(cutSnippet(r.body, terms)),
    }));
  }

  async getSession(sessionId: string): Promise<SessionRecord | null> {
    const own = this.own<SessionRecord>('sessions', sessionId);
    if (own !== undefined) return own;
    return parse(
      await this.q<Row>(
        'SELECT state FROM sessions WHERE session_id = $1',
        [sessionId],
        'getSession',
      ),
    );
  }
  async putSession(r: SessionRecord): Promise<void> {
    const state = JSON.stringify(r);
    this.put(
      'sessions',
      r.sessionId,
      state,
      `INSERT INTO sessions (session_id, ord, app_id, client_epoch, state)
       VALUES ($1, nextval('sessions_ord'), $2, $3, $4)
       ON CONFLICT (session_id) DO UPDATE
         SET state = excluded.state, app_id = excluded.app_id, client_epoch = excluded.client_epoch`,
      [r.sessionId, r.appId, r.currentClientEpoch, state],
    );
  }
  async putSessionIf(r: SessionRecord, expectedEpoch: string): Promise<boolean> {
    this.w();
    const state = JSON.stringify(r);
    const won =
      (await this.count(
        `UPDATE sessions SET state = $2, app_id = $3, client_epoch = $4
         WHERE session_id = $1 AND client_epoch = $5`,
        [r.sessionId, state, r.appId, r.currentClientEpoch, expectedEpoch],
        'putSessionIf',
      )) === 1;
    if (won) this.rows.set(`sessions\u0000${r.sessionId}`, state);
    else this.rows.delete(`sessions\u0000${r.sessionId}`);
    return won;
  }
  async listSessions(appId: string, beforeOrder: number | null, limit: number) {
    const rows = await this.q<Row & { ord: string }>(
      'SELECT state, ord FROM sessions WHERE app_id = $1 AND ord < $2 ORDER BY ord DESC LIMIT $3',
      [appId, beforeOrder ?? Number.MAX_SAFE_INTEGER, limit],
      'listSessions',
    );
    return rows.map((r) => ({
      record: JSON.parse(r.state) as SessionRecord,
      order: Number(r.ord),
    }));
  }
  async listAllSessions(): Promise<SessionRecord[]> {
    return parseAll(await this.q<Row>('SELECT state FROM sessions ORDER BY ord', []));
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    const own = this.own<RunRecord>('runs', runId);
    if (own !== undefined) return own;
    return parse(await this.q<Row>('SELECT state FROM runs WHERE run_id = $1', [runId], 'getRun'));
  }
  async putRun(r: RunRecord): Promise<void> {
    const state = JSON.stringify(r);
    this.put(
      'runs',
      r.runId,
      state,
      `INSERT INTO runs (run_id, session_id, state) VALUES ($1, $2, $3)
       ON CONFLICT (run_id) DO UPDATE SET session_id = excluded.session_id, state = excluded.state`,
      [r.runId, r.sessionId, state],
    );
  }

  async getToolCall(id: string): Promise<ToolCallRecord | null> {
    const own = this.own<ToolCallRecord>('tool_calls', id);
    if (own !== undefined) return own;
    return parse(
      await this.q<Row>(
        'SELECT state FROM tool_calls WHERE tool_call_id = $1',
        [id],
        'getToolCall',
      ),
    );
  }
  async getToolCalls(ids: readonly string[]): Promise<Map<string, ToolCallRecord>> {
    return this.many<ToolCallRecord>(
      'tool_calls',
      ids,
      'SELECT tool_call_id AS id, state FROM tool_calls WHERE tool_call_id = ANY($1::text[])',
      'getToolCalls',
    );
  }
  async putToolCall(r: ToolCallRecord): Promise<void> {
    const state = JSON.stringify(r);
    this.put(
      'tool_calls',
      r.toolCallId,
      state,
      `INSERT INTO tool_calls (tool_call_id, session_id, state) VALUES ($1, $2, $3)
       ON CONFLICT (tool_call_id) DO UPDATE SET session_id = excluded.session_id, state = excluded.state`,
      [r.toolCallId, r.sessionId, state],
    );
  }

  async getApproval(id: string): Promise<ApprovalRecord | null> {
    const own = this.own<ApprovalRecord>('approvals', id);
    if (own !== undefined) return own;
    return parse(
      await this.q<Row>('SELECT state FROM approvals WHERE approval_id = $1', [id], 'getApproval'),
    );
  }
  async getApprovals(ids: readonly string[]): Promise<Map<string, ApprovalRecord>> {
    return this.many<ApprovalRecord>(
      'approvals',
      ids,
      'SELECT approval_id AS id, state FROM approvals WHERE approval_id = ANY($1::text[])',
      'getApprovals',
    );
  }
  async putApproval(r: ApprovalRecord): Promise<void> {
    const state = JSON.stringify(r);
    this.put(
      'approvals',
      r.approvalId,
      state,
      `INSERT INTO approvals (approval_id, session_id, status, expires_at, decided_at, state)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (approval_id) DO UPDATE SET session_id = excluded.session_id,
         status = excluded.status, expires_at = excluded.expires_at,
         decided_at = excluded.decided_at, state = excluded.state`,
      [r.approvalId, r.sessionId, r.status, r.expiresAt, r.decidedAt, state],
    );
    this.noteApproval(r, state);
  }
  async decideApproval(r: ApprovalRecord): Promise<boolean> {
    this.w();
    const state = JSON.stringify(r);
    const won =
      (await this.count(
        `UPDATE approvals SET status = $2, expires_at = $3, decided_at = $4, state = $5
         WHERE approval_id = $1 AND status = 'PENDING'`,
        [r.approvalId, r.status, r.expiresAt, r.decidedAt, state],
        'decideApproval',
      )) === 1;
    if (won) {
      this.rows.set(`approvals\u0000${r.approvalId}`, state);
      this.noteApproval(r, state);
    } else {
      this.rows.delete(`approvals\u0000${r.approvalId}`);
      this.pendingApprovals.delete(r.sessionId);
    }
    return won;
  }
  async listPendingApprovals(sessionId: string | null): Promise<ApprovalRecord[]> {
    // Byte order (COLLATE "C", as SQLite's BINARY), the order `byExpiry` keeps for a locked session.
    if (sessionId === null)
      return parseAll(
        await this.q<Row>(
          `SELECT state FROM approvals WHERE status = 'PENDING'
           ORDER BY expires_at COLLATE "C", approval_id COLLATE "C"`,
          [],
        ),
      );
    const known = this.pendingApprovals.get(sessionId);
    if (known) return [...known.values()].sort(byExpiry).map((p) => JSON.parse(p.state));
    const rows = await this.q<PendingApproval>(
      `SELECT approval_id AS "approvalId", expires_at AS "expiresAt", state FROM approvals
       WHERE status = 'PENDING' AND session_id = $1
       ORDER BY expires_at COLLATE "C", approval_id COLLATE "C"`,
      [sessionId],
      'pendingOf',
    );
    // A session this transaction locked: only its own writes can change the list until commit.
    if (this.locked.has(sessionId))
      this.pendingApprovals.set(sessionId, new Map(rows.map((p) => [p.approvalId, p])));
    return rows.map((p) => JSON.parse(p.state) as ApprovalRecord);
  }
  /** Keeps the pending lists of locked sessions true to an approval this transaction wrote. */
  private noteApproval(r: ApprovalRecord, state: string): void {
    for (const [sessionId, list] of this.pendingApprovals)
      if (sessionId !== r.sessionId) list.delete(r.approvalId);
    const list = this.pendingApprovals.get(r.sessionId);
    if (!list) return;
    if (r.status === 'PENDING')
      list.set(r.approvalId, { approvalId: r.approvalId, expiresAt: r.expiresAt, state });
    else list.delete(r.approvalId);
  }
  async listDecidedApprovals(limit: number): Promise<ApprovalRecord[]> {
    return parseAll(
      await this.q<Row>(
        "SELECT state FROM approvals WHERE status <> 'PENDING' ORDER BY decided_at DESC NULLS LAST, approval_id LIMIT $1",
        [limit],
      ),
    );
  }

  async getApprovalRule(ruleId: string): Promise<ApprovalRuleRecord | null> {
    return parse(
      await this.q<Row>('SELECT state FROM approval_rules WHERE rule_id = $1', [ruleId]),
    );
  }
  async putApprovalRule(r: ApprovalRuleRecord): Promise<void> {
    this.w();
    await this.q(
      `INSERT INTO approval_rules (rule_id, ord, app_id, state)
       VALUES ($1, nextval('approval_rules_ord'), $2, $3)
       ON CONFLICT (rule_id) DO UPDATE SET state = excluded.state`,
      [r.ruleId, r.appId, JSON.stringify(r)],
    );
  }
  async listApprovalRules(appId: string): Promise<ApprovalRuleRecord[]> {
    return parseAll(
      await this.q<Row>(
        'SELECT state FROM approval_rules WHERE app_id = $1 ORDER BY ord',
        [appId],
        'listRules',
      ),
    );
  }

  async getLease(id: string): Promise<LeaseRecord | null> {
    const own = this.own<LeaseRecord>('leases', id);
    if (own !== undefined) return own;
    return parse(
      await this.q<Row>('SELECT state FROM leases WHERE lease_id = $1', [id], 'getLease'),
    );
  }
  async putLease(r: LeaseRecord): Promise<void> {
    const state = JSON.stringify(r);
    this.put(
      'leases',
      r.leaseId,
      state,
      `INSERT INTO leases (lease_id, session_id, status, state) VALUES ($1, $2, $3, $4)
       ON CONFLICT (lease_id) DO UPDATE SET session_id = excluded.session_id,
         status = excluded.status, state = excluded.state`,
      [r.leaseId, r.sessionId, r.status, state],
    );
  }
  async listActiveLeases(sessionId: string | null): Promise<LeaseRecord[]> {
    return parseAll(
      sessionId === null
        ? await this.q<Row>(
            "SELECT state FROM leases WHERE status = 'ACTIVE' ORDER BY lease_id",
            [],
          )
        : await this.q<Row>(
            "SELECT state FROM leases WHERE status = 'ACTIVE' AND session_id = $1 ORDER BY lease_id",
            [sessionId],
            'activeLeasesOf',
          ),
    );
  }

  async getCheckpoint(id: string): Promise<CheckpointRecord | null> {
    const own = this.own<CheckpointRecord>('checkpoints', id);
    if (own !== undefined) return own;
    return parse(
      await this.q<Row>(
        'SELECT state FROM checkpoints WHERE checkpoint_id = $1',
        [id],
        'getCheckpoint',
      ),
    );
  }
  async putCheckpoint(r: CheckpointRecord): Promise<void> {
    const state = JSON.stringify(r);
    this.put(
      'checkpoints',
      r.checkpointId,
      state,
      `INSERT INTO checkpoints (checkpoint_id, ord, session_id, project_id, state)
       VALUES ($1, nextval('checkpoints_ord'), $2, $3, $4)
       ON CONFLICT (checkpoint_id) DO UPDATE SET state = excluded.state`,
      [r.checkpointId, r.sessionId, r.projectId, state],
    );
  }
  async listCheckpoints(sessionId: string, beforeOrder: number | null, limit: number) {
    const rows = await this.q<Row & { ord: string }>(
      'SELECT state, ord FROM checkpoints WHERE session_id = $1 AND ord < $2 ORDER BY ord DESC LIMIT $3',
      [sessionId, beforeOrder ?? Number.MAX_SAFE_INTEGER, limit],
      'listCheckpoints',
    );
    return rows.map((r) => ({
      record: JSON.parse(r.state) as CheckpointRecord,
      order: Number(r.ord),
    }));
  }
  async listCheckpointsOfProject(projectId: string): Promise<CheckpointRecord[]> {
    return parseAll(
      await this.q<Row>('SELECT state FROM checkpoints WHERE project_id = $1 ORDER BY ord DESC', [
        projectId,
      ]),
    );
  }

  async getProject(id: string): Promise<ProjectRecord | null> {
    return parse(
      await this.q<Row>('SELECT state FROM projects WHERE project_id = $1', [id], 'getProject'),
    );
  }
  async putProject(r: ProjectRecord): Promise<void> {
    this.w();
    await this.q(
      `INSERT INTO projects (project_id, state) VALUES ($1, $2)
       ON CONFLICT (project_id) DO UPDATE SET state = excluded.state`,
      [r.projectId, JSON.stringify(r)],
      'putProject',
    );
  }

  async getClient(sessionId: string, clientInstanceId: string): Promise<ClientRecord | null> {
    const own = this.own<ClientRecord>('clients', `${sessionId}\u0000${clientInstanceId}`);
    if (own !== undefined) return own;
    return parse(
      await this.q<Row>(
        'SELECT state FROM clients WHERE session_id = $1 AND client_instance_id = $2',
        [sessionId, clientInstanceId],
        'getClient',
      ),
    );
  }
  async putClient(r: ClientRecord): Promise<void> {
    const state = JSON.stringify(r);
    this.put(
      'clients',
      `${r.sessionId}\u0000${r.clientInstanceId}`,
      state,
      `INSERT INTO clients (session_id, client_instance_id, attached, state) VALUES ($1, $2, $3, $4)
       ON CONFLICT (session_id, client_instance_id) DO UPDATE
         SET attached = excluded.attached, state = excluded.state`,
      [r.sessionId, r.clientInstanceId, r.attached, state],
    );
  }
  async listAttachedClients(): Promise<ClientRecord[]> {
    return parseAll(
      await this.q<Row>(
        'SELECT state FROM clients WHERE attached ORDER BY session_id, client_instance_id',
        [],
      ),
    );
  }

  async getIdempotency(operation: string, key: string): Promise<IdempotencyRecord | null> {
    return parse(
      await this.q<Row>(
        'SELECT state FROM idempotency WHERE operation = $1 AND key = $2',
        [operation, key],
        'getIdem',
      ),
    );
  }
  async putIdempotency(r: IdempotencyRecord): Promise<void> {
    this.w();
    await this.q(
      'INSERT INTO idempotency (operation, key, created_at, state) VALUES ($1, $2, $3, $4)',
      [r.operation, r.key, r.createdAt, JSON.stringify(r)],
      'putIdem',
    );
  }
  async deleteIdempotency(operation: string, key: string): Promise<void> {
    this.w();
    await this.q('DELETE FROM idempotency WHERE operation = $1 AND key = $2', [operation, key]);
  }
  async pruneIdempotency(olderThan: string): Promise<number> {
    this.w();
    return this.count('DELETE FROM idempotency WHERE created_at < $1', [olderThan]);
  }

  async getRestoreJob(toolCallId: string): Promise<RestoreJobRecord | null> {
    return parse(
      await this.q<Row>('SELECT state FROM restore_jobs WHERE tool_call_id = $1', [toolCallId]),
    );
  }
  async putRestoreJob(r: RestoreJobRecord): Promise<void> {
    this.w();
    await this.q(
      `INSERT INTO restore_jobs (tool_call_id, state) VALUES ($1, $2)
       ON CONFLICT (tool_call_id) DO UPDATE SET state = excluded.state`,
      [r.toolCallId, JSON.stringify(r)],
    );
  }
  async deleteRestoreJob(toolCallId: string): Promise<void> {
    this.w();
    await this.q('DELETE FROM restore_jobs WHERE tool_call_id = $1', [toolCallId]);
  }
  async listRestoreJobs(): Promise<RestoreJobRecord[]> {
    return parseAll(await this.q<Row>('SELECT state FROM restore_jobs ORDER BY tool_call_id', []));
  }

  async getQuestion(sessionId: string, questionId: string): Promise<QuestionRecord | null> {
    const own = this.own<QuestionRecord>('questions', `${sessionId}\u0000${questionId}`);
    if (own !== undefined) return own;
    return parse(
      await this.q<Row>(
        'SELECT state FROM questions WHERE session_id = $1 AND question_id = $2',
        [sessionId, questionId],
        'getQuestion',
      ),
    );
  }
  async putQuestion(r: QuestionRecord): Promise<void> {
    const state = JSON.stringify(r);
    this.put(
      'questions',
      `${r.sessionId}\u0000${r.questionId}`,
      state,
      `INSERT INTO questions (session_id, question_id, state) VALUES ($1, $2, $3)
       ON CONFLICT (session_id, question_id) DO UPDATE SET state = excluded.state`,
      [r.sessionId, r.questionId, state],
    );
  }
  async findQuestionById(questionId: string): Promise<QuestionRecord | null> {
    return parse(
      await this.q<Row>(
        'SELECT state FROM questions WHERE question_id = $1 ORDER BY session_id LIMIT 1',
        [questionId],
        'findQuestion',
      ),
    );
  }

  async getBudget(sessionId: string): Promise<BudgetRecord | null> {
    const own = this.own<BudgetRecord>('budgets', sessionId);
    if (own !== undefined) return own;
    return parse(
      await this.q<Row>(
        'SELECT state FROM budgets WHERE session_id = $1',
        [sessionId],
        'getBudget',
      ),
    );
  }
  async putBudget(r: BudgetRecord): Promise<void> {
    const state = JSON.stringify(r);
    this.put(
      'budgets',
      r.sessionId,
      state,
      `INSERT INTO budgets (session_id, state) VALUES ($1, $2)
       ON CONFLICT (session_id) DO UPDATE SET state = excluded.state`,
      [r.sessionId, state],
    );
  }

  async getMeta(key: string): Promise<string | null> {
    const known = this.meta.get(key);
    if (known !== undefined) return known;
    const rows = await this.q<{ value: string }>(
      'SELECT value FROM meta WHERE key = $1',
      [key],
      'getMeta',
    );
    const value = rows[0]?.value ?? null;
    this.meta.set(key, value);
    return value;
  }
  async putMeta(key: string, value: string): Promise<void> {
    this.w();
    await this.q(
      `INSERT INTO meta (key, value) VALUES ($1, $2)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [key, value],
    );
    this.meta.set(key, value);
  }

  async enqueueJob(job: JobDraft): Promise<boolean> {
    this.w();
    const now = new Date().toISOString();
    return (
      (await this.count(
        `INSERT INTO jobs (kind, key, payload, status, created_at, updated_at)
         VALUES ($1, $2, $3, 'PENDING', $4, $4) ON CONFLICT (key) DO NOTHING`,
        [job.kind, job.key, job.payload, now],
        'enqueueJob',
      )) === 1
    );
  }
  async claimJob(
    kinds: readonly string[],
    workerId: string,
    nowMs: number,
    leaseMs: number,
  ): Promise<JobRecord | null> {
    this.w();
    const rows = await this.q<JobRow>(
      // A claim lapses when its lease runs out, or at once when the instance that made it lost
      // its liveness lock (its process died or its connection to the database dropped).
      `UPDATE jobs SET status = 'CLAIMED', worker_id = $2, lease_until_ms = $3::bigint + $4::bigint,
         attempts = attempts + 1, updated_at = $5, claimed_instance = $6
       WHERE job_id = (
         SELECT job_id FROM jobs
         WHERE kind = ANY($1::text[])
           AND (status = 'PENDING' OR (status = 'CLAIMED' AND (lease_until_ms <= $3::bigint
             OR (claimed_instance IS NOT NULL AND NOT ${INSTANCE_ALIVE('claimed_instance')}))))
         ORDER BY job_id LIMIT 1
         FOR UPDATE SKIP LOCKED)
       RETURNING ${JOB_COLUMNS}`,
      [kinds, workerId, nowMs, leaseMs, new Date(nowMs).toISOString(), this.instance],
      'claimJob',
    );
    return rows[0] ? jobOf(rows[0]) : null;
  }
  async completeJob(jobId: string, workerId: string): Promise<boolean> {
    this.w();
    return (
      (await this.count(
        `UPDATE jobs SET status = 'DONE', lease_until_ms = NULL, updated_at = $3
         WHERE job_id = $1 AND worker_id = $2 AND status = 'CLAIMED'`,
        [jobId, workerId, new Date().toISOString()],
        'completeJob',
      )) === 1
    );
  }
  async failJob(jobId: string, workerId: string, error: string): Promise<boolean> {
    this.w();
    return (
      (await this.count(
        `UPDATE jobs SET status = 'FAILED', lease_until_ms = NULL, updated_at = $3, last_error = $4
         WHERE job_id = $1 AND worker_id = $2 AND status = 'CLAIMED'`,
        [jobId, workerId, new Date().toISOString(), pgText(error)],
        'failJob',
      )) === 1
    );
  }
  async getJob(jobId: string): Promise<JobRecord | null> {
    if (!/^\d{1,18}$/.test(jobId)) return null;
    const rows = await this.q<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE job_id = $1`, [jobId]);
    return rows[0] ? jobOf(rows[0]) : null;
  }
  async getJobByKey(key: string): Promise<JobRecord | null> {
    const rows = await this.q<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE key = $1`, [key]);
    return rows[0] ? jobOf(rows[0]) : null;
  }
  async listJobs(statuses: readonly JobStatus[]): Promise<JobRecord[]> {
    const rows = await this.q<JobRow>(
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE status = ANY($1::text[]) ORDER BY job_id`,
      [statuses],
    );
    return rows.map(jobOf);
  }
  async pruneJobs(olderThan: string): Promise<number> {
    this.w();
    return this.count("DELETE FROM jobs WHERE status IN ('DONE', 'FAILED') AND updated_at < $1", [
      olderThan,
    ]);
  }
}
