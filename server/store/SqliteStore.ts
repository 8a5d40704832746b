import Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import type { Store } from './Store.ts';
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

const SCHEMA_VERSION = '1';

// Current-state tables keep the record as JSON plus the columns queries filter or sort on.
const DDL = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  event_id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  run_id TEXT,
  created_at TEXT NOT NULL,
  payload TEXT NOT NULL,
  foreign_id TEXT,
  PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS events_foreign ON events (session_id, foreign_id) WHERE foreign_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS sessions (
  session_id TEXT PRIMARY KEY, ord INTEGER NOT NULL UNIQUE, app_id TEXT NOT NULL, state TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS sessions_app ON sessions (app_id, ord);
CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tool_calls (tool_call_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS approvals (
  approval_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, status TEXT NOT NULL, expires_at TEXT NOT NULL, state TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS approvals_pending ON approvals (status, expires_at);
CREATE TABLE IF NOT EXISTS leases (
  lease_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, status TEXT NOT NULL, state TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS leases_active ON leases (status, session_id);
CREATE TABLE IF NOT EXISTS checkpoints (
  checkpoint_id TEXT PRIMARY KEY, ord INTEGER NOT NULL UNIQUE, session_id TEXT NOT NULL, project_id TEXT NOT NULL, state TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS checkpoints_session ON checkpoints (session_id, ord);
CREATE INDEX IF NOT EXISTS checkpoints_project ON checkpoints (project_id, ord);
CREATE TABLE IF NOT EXISTS projects (project_id TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS clients (
  session_id TEXT NOT NULL, client_instance_id TEXT NOT NULL, attached INTEGER NOT NULL, state TEXT NOT NULL,
  PRIMARY KEY (session_id, client_instance_id));
CREATE TABLE IF NOT EXISTS idempotency (
  operation TEXT NOT NULL, key TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (operation, key));
CREATE TABLE IF NOT EXISTS restore_jobs (tool_call_id TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS questions (
  session_id TEXT NOT NULL, question_id TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (session_id, question_id));
CREATE TABLE IF NOT EXISTS budgets (session_id TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS approval_rules (
  rule_id TEXT PRIMARY KEY, ord INTEGER NOT NULL UNIQUE, app_id TEXT NOT NULL, state TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS approval_rules_app ON approval_rules (app_id, ord);
CREATE INDEX IF NOT EXISTS approvals_decided ON approvals (status, json_extract(state, '$.decidedAt'));
-- Whole-session search (studioSearchEvents): one row per event, written by insertEvent in the
-- append's transaction. session_key is the session id as one indexed token (sessionToken), so
-- the match itself narrows to one session; rowid follows insertion, i.e. seq order within a session.
CREATE VIRTUAL TABLE IF NOT EXISTS event_search USING fts5(
  session_key, body, session_id UNINDEXED, seq UNINDEXED, type UNINDEXED,
  tokenize = 'unicode61 remove_diacritics 2'
);
`;

type Row = { state: string };
const parse = <T>(row: Row | undefined): T | null => (row ? (JSON.parse(row.state) as T) : null);

/** The SQLite implementation of Store: one file in the data dir, WAL mode, synchronous=FULL. */
export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly stmts: Record<string, Statement>;
  private readonly readEventsStmt: Statement;
  private readonly readPayloadsStmt: Statement;

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // FULL: a commit is on disk before any client hears of it, so a crash (even of the machine)
    // loses nothing that was acknowledged. WAL keeps that to one fsync per transaction.
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(DDL);
    const version = this.db.prepare('SELECT value FROM meta WHERE key = ?').get('schemaVersion') as
      { value: string } | undefined;
    if (!version)
      this.db
        .prepare('INSERT INTO meta (key, value) VALUES (?, ?)')
        .run('schemaVersion', SCHEMA_VERSION);
    else if (version.value !== SCHEMA_VERSION)
      throw new Error(
        `data dir store has schema version ${version.value}; this server needs ${SCHEMA_VERSION}`,
      );

    const s = (sql: string) => this.db.prepare(sql);
    this.stmts = {
      insertEvent: s(
        'INSERT INTO events (session_id, seq, event_id, type, run_id, created_at, payload, foreign_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      indexEvent: s(
        'INSERT INTO event_search (session_key, body, session_id, seq, type) VALUES (?, ?, ?, ?, ?)',
      ),
      hasForeign: s('SELECT 1 FROM events WHERE session_id = ? AND foreign_id = ?'),
      countEvents: s('SELECT count(*) AS n FROM events WHERE session_id = ?'),
      getSession: s('SELECT state FROM sessions WHERE session_id = ?'),
      putSession: s(
        `INSERT INTO sessions (session_id, ord, app_id, state) VALUES (?, (SELECT coalesce(max(ord), 0) + 1 FROM sessions), ?, ?)
         ON CONFLICT (session_id) DO UPDATE SET state = excluded.state, app_id = excluded.app_id`,
      ),
      listSessions: s(
        'SELECT state, ord FROM sessions WHERE app_id = ? AND ord < ? ORDER BY ord DESC LIMIT ?',
      ),
      allSessions: s('SELECT state FROM sessions ORDER BY ord'),
      getRun: s('SELECT state FROM runs WHERE run_id = ?'),
      putRun: s('INSERT OR REPLACE INTO runs (run_id, session_id, state) VALUES (?, ?, ?)'),
      getToolCall: s('SELECT state FROM tool_calls WHERE tool_call_id = ?'),
      putToolCall: s(
        'INSERT OR REPLACE INTO tool_calls (tool_call_id, session_id, state) VALUES (?, ?, ?)',
      ),
      getApproval: s('SELECT state FROM approvals WHERE approval_id = ?'),
      putApproval: s(
        'INSERT OR REPLACE INTO approvals (approval_id, session_id, status, expires_at, state) VALUES (?, ?, ?, ?, ?)',
      ),
      pendingAll: s(
        "SELECT state FROM approvals WHERE status = 'PENDING' ORDER BY expires_at, approval_id",
      ),
      pendingOf: s(
        "SELECT state FROM approvals WHERE status = 'PENDING' AND session_id = ? ORDER BY expires_at, approval_id",
      ),
      decided: s(
        "SELECT state FROM approvals WHERE status <> 'PENDING' ORDER BY json_extract(state, '$.decidedAt') DESC, approval_id LIMIT ?",
      ),
      getRule: s('SELECT state FROM approval_rules WHERE rule_id = ?'),
      putRule: s(
        `INSERT INTO approval_rules (rule_id, ord, app_id, state)
         VALUES (?, (SELECT coalesce(max(ord), 0) + 1 FROM approval_rules), ?, ?)
         ON CONFLICT (rule_id) DO UPDATE SET state = excluded.state`,
      ),
      listRules: s('SELECT state FROM approval_rules WHERE app_id = ? ORDER BY ord'),
      getLease: s('SELECT state FROM leases WHERE lease_id = ?'),
      putLease: s(
        'INSERT OR REPLACE INTO leases (lease_id, session_id, status, state) VALUES (?, ?, ?, ?)',
      ),
      activeLeasesAll: s("SELECT state FROM leases WHERE status = 'ACTIVE'"),
      activeLeasesOf: s("SELECT state FROM leases WHERE status = 'ACTIVE' AND session_id = ?"),
      getCheckpoint: s('SELECT state FROM checkpoints WHERE checkpoint_id = ?'),
      putCheckpoint: s(
        `INSERT INTO checkpoints (checkpoint_id, ord, session_id, project_id, state)
         VALUES (?, (SELECT coalesce(max(ord), 0) + 1 FROM checkpoints), ?, ?, ?)
         ON CONFLICT (checkpoint_id) DO UPDATE SET state = excluded.state`,
      ),
      listCheckpoints: s(
        'SELECT state, ord FROM checkpoints WHERE session_id = ? AND ord < ? ORDER BY ord DESC LIMIT ?',
      ),
      checkpointsOfProject: s(
        'SELECT state FROM checkpoints WHERE project_id = ? ORDER BY ord DESC',
      ),
      getProject: s('SELECT state FROM projects WHERE project_id = ?'),
      putProject: s('INSERT OR REPLACE INTO projects (project_id, state) VALUES (?, ?)'),
      getClient: s('SELECT state FROM clients WHERE session_id = ? AND client_instance_id = ?'),
      putClient: s(
        'INSERT OR REPLACE INTO clients (session_id, client_instance_id, attached, state) VALUES (?, ?, ?, ?)',
      ),
      attachedClients: s('SELECT state FROM clients WHERE attached = 1'),
      getIdem: s('SELECT state FROM idempotency WHERE operation = ? AND key = ?'),
      putIdem: s('INSERT INTO idempotency (operation, key, state) VALUES (?, ?, ?)'),
      getRestore: s('SELECT state FROM restore_jobs WHERE tool_call_id = ?'),
      putRestore: s('INSERT OR REPLACE INTO restore_jobs (tool_call_id, state) VALUES (?, ?)'),
      deleteRestore: s('DELETE FROM restore_jobs WHERE tool_call_id = ?'),
      listRestore: s('SELECT state FROM restore_jobs'),
      getQuestion: s('SELECT state FROM questions WHERE session_id = ? AND question_id = ?'),
      findQuestion: s('SELECT state FROM questions WHERE question_id = ? LIMIT 1'),
      putQuestion: s(
        'INSERT OR REPLACE INTO questions (session_id, question_id, state) VALUES (?, ?, ?)',
      ),
      getBudget: s('SELECT state FROM budgets WHERE session_id = ?'),
      putBudget: s('INSERT OR REPLACE INTO budgets (session_id, state) VALUES (?, ?)'),
      searchEvents: s(
        `SELECT rowid, seq, type, snippet(event_search, 1, char(1), char(2), '…', 16) AS snippet
         FROM event_search WHERE event_search MATCH ? AND session_id = ? AND rowid < ?
         ORDER BY rowid DESC LIMIT ?`,
      ).safeIntegers(true),
      getMeta: s('SELECT value FROM meta WHERE key = ?'),
      putMeta: s('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'),
    };
    this.readPayloadsStmt = s(
      'SELECT payload FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ).pluck();
    this.readEventsStmt = s(
      'SELECT session_id, seq, event_id, type, run_id, created_at, payload, foreign_id FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ).safeIntegers(true);
    this.backfillSearch();
  }

  private stmt(name: string): Statement {
    const found = this.stmts[name];
    if (!found) throw new Error(`no statement ${name}`);
    return found;
  }

  transaction<T>(fn: () => T): T {
    // Nested calls join the outer transaction (better-sqlite3 uses savepoints for them).
    return this.db.transaction(fn).immediate();
  }

  close(): void {
    this.db.close();
  }

  insertEvent(row: EventRow): void {
    this.stmt('insertEvent').run(
      row.sessionId,
      row.seq,
      row.eventId,
      row.type,
      row.runId,
      row.createdAt,
      row.payload,
      row.foreignId,
    );
    // Same transaction as the event (the engine's append): the index never lags the log.
    this.stmt('indexEvent').run(
      sessionToken(row.sessionId),
      eventText(row.payload),
      row.sessionId,
      row.seq,
      row.type,
    );
  }

  searchEvents(
    sessionId: string,
    query: string,
    beforeCursor: bigint | null,
    limit: number,
  ): EventSearchHit[] {
    const expression = ftsQuery(query);
    if (!expression) return [];
    const match = `session_key : ${sessionToken(sessionId)} AND body : (${expression})`;
    const rows = this.stmt('searchEvents').all(
      match,
      sessionId,
      beforeCursor ?? 9223372036854775807n,
      BigInt(limit),
    ) as { rowid: bigint; seq: bigint; type: string; snippet: string }[];
    return rows.map((r) => ({
      cursor: r.rowid,
      seq: BigInt(r.seq),
      type: r.type,
      snippet: snippetParts(r.snippet),
    }));
  }

  /** Indexes the events of a data dir written before the search index existed (once). */
  private backfillSearch(): void {
    if (this.getMeta('eventSearch') === '1') return;
    const read = this.db
      .prepare(
        'SELECT session_id, seq, type, payload FROM events WHERE (session_id, seq) > (?, ?) ORDER BY session_id, seq LIMIT 5000',
      )
      .safeIntegers(true);
    this.transaction(() => {
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
          this.stmt('indexEvent').run(
            sessionToken(r.session_id),
            eventText(r.payload),
            r.session_id,
            r.seq,
            r.type,
          );
        const last = rows.at(-1);
        if (!last) break;
        after = [last.session_id, last.seq];
      }
      this.putMeta('eventSearch', '1');
    });
  }

  readEvents(sessionId: string, afterSeq: bigint, limit: number): EventRow[] {
    const rows = this.readEventsStmt.all(sessionId, afterSeq, BigInt(limit)) as {
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

  readEventPayloads(sessionId: string, afterSeq: bigint, limit: number): string[] {
    return this.readPayloadsStmt.all(sessionId, afterSeq, BigInt(limit)) as string[];
  }

  hasForeignId(sessionId: string, foreignId: string): boolean {
    return this.stmt('hasForeign').get(sessionId, foreignId) !== undefined;
  }

  countEvents(sessionId: string): number {
    return (this.stmt('countEvents').get(sessionId) as { n: number }).n;
  }

  getSession(sessionId: string): SessionRecord | null {
    return parse(this.stmt('getSession').get(sessionId) as Row | undefined);
  }
  putSession(r: SessionRecord): void {
    this.stmt('putSession').run(r.sessionId, r.appId, JSON.stringify(r));
  }
  listSessions(appId: string, beforeOrder: number | null, limit: number) {
    const rows = this.stmt('listSessions').all(
      appId,
      beforeOrder ?? Number.MAX_SAFE_INTEGER,
      limit,
    ) as (Row & {
      ord: number;
    })[];
    return rows.map((r) => ({ record: JSON.parse(r.state) as SessionRecord, order: r.ord }));
  }
  listAllSessions(): SessionRecord[] {
    return (this.stmt('allSessions').all() as Row[]).map(
      (r) => JSON.parse(r.state) as SessionRecord,
    );
  }

  getRun(runId: string): RunRecord | null {
    return parse(this.stmt('getRun').get(runId) as Row | undefined);
  }
  putRun(r: RunRecord): void {
    this.stmt('putRun').run(r.runId, r.sessionId, JSON.stringify(r));
  }

  getToolCall(id: string): ToolCallRecord | null {
    return parse(this.stmt('getToolCall').get(id) as Row | undefined);
  }
  putToolCall(r: ToolCallRecord): void {
    this.stmt('putToolCall').run(r.toolCallId, r.sessionId, JSON.stringify(r));
  }

  getApproval(id: string): ApprovalRecord | null {
    return parse(this.stmt('getApproval').get(id) as Row | undefined);
  }
  putApproval(r: ApprovalRecord): void {
    this.stmt('putApproval').run(
      r.approvalId,
      r.sessionId,
      r.status,
      r.expiresAt,
      JSON.stringify(r),
    );
  }
  listPendingApprovals(sessionId: string | null): ApprovalRecord[] {
    const rows = (
      sessionId === null ? this.stmt('pendingAll').all() : this.stmt('pendingOf').all(sessionId)
    ) as Row[];
    return rows.map((r) => JSON.parse(r.state) as ApprovalRecord);
  }

  listDecidedApprovals(limit: number): ApprovalRecord[] {
    return (this.stmt('decided').all(limit) as Row[]).map(
      (r) => JSON.parse(r.state) as ApprovalRecord,
    );
  }

  getApprovalRule(ruleId: string): ApprovalRuleRecord | null {
    return parse(this.stmt('getRule').get(ruleId) as Row | undefined);
  }
  putApprovalRule(r: ApprovalRuleRecord): void {
    this.stmt('putRule').run(r.ruleId, r.appId, JSON.stringify(r));
  }
  listApprovalRules(appId: string): ApprovalRuleRecord[] {
    return (this.stmt('listRules').all(appId) as Row[]).map(
      (r) => JSON.parse(r.state) as ApprovalRuleRecord,
    );
  }

  getLease(id: string): LeaseRecord | null {
    return parse(this.stmt('getLease').get(id) as Row | undefined);
  }
  putLease(r: LeaseRecord): void {
    this.stmt('putLease').run(r.leaseId, r.sessionId, r.status, JSON.stringify(r));
  }
  listActiveLeases(sessionId: string | null): LeaseRecord[] {
    const rows = (
      sessionId === null
        ? this.stmt('activeLeasesAll').all()
        : this.stmt('activeLeasesOf').all(sessionId)
    ) as Row[];
    return rows.map((r) => JSON.parse(r.state) as LeaseRecord);
  }

  getCheckpoint(id: string): CheckpointRecord | null {
    return parse(this.stmt('getCheckpoint').get(id) as Row | undefined);
  }
  putCheckpoint(r: CheckpointRecord): void {
    this.stmt('putCheckpoint').run(r.checkpointId, r.sessionId, r.projectId, JSON.stringify(r));
  }
  listCheckpoints(sessionId: string, beforeOrder: number | null, limit: number) {
    const rows = this.stmt('listCheckpoints').all(
      sessionId,
      beforeOrder ?? Number.MAX_SAFE_INTEGER,
      limit,
    ) as (Row & { ord: number })[];
    return rows.map((r) => ({ record: JSON.parse(r.state) as CheckpointRecord, order: r.ord }));
  }
  listCheckpointsOfProject(projectId: string): CheckpointRecord[] {
    return (this.stmt('checkpointsOfProject').all(projectId) as Row[]).map(
      (r) => JSON.parse(r.state) as CheckpointRecord,
    );
  }

  getProject(id: string): ProjectRecord | null {
    return parse(this.stmt('getProject').get(id) as Row | undefined);
  }
  putProject(r: ProjectRecord): void {
    this.stmt('putProject').run(r.projectId, JSON.stringify(r));
  }

  getClient(sessionId: string, clientInstanceId: string): ClientRecord | null {
    return parse(this.stmt('getClient').get(sessionId, clientInstanceId) as Row | undefined);
  }
  putClient(r: ClientRecord): void {
    this.stmt('putClient').run(
      r.sessionId,
      r.clientInstanceId,
      r.attached ? 1 : 0,
      JSON.stringify(r),
    );
  }
  listAttachedClients(): ClientRecord[] {
    return (this.stmt('attachedClients').all() as Row[]).map(
      (r) => JSON.parse(r.state) as ClientRecord,
    );
  }

  getIdempotency(operation: string, key: string): IdempotencyRecord | null {
    return parse(this.stmt('getIdem').get(operation, key) as Row | undefined);
  }
  putIdempotency(r: IdempotencyRecord): void {
    this.stmt('putIdem').run(r.operation, r.key, JSON.stringify(r));
  }

  getRestoreJob(toolCallId: string): RestoreJobRecord | null {
    return parse(this.stmt('getRestore').get(toolCallId) as Row | undefined);
  }
  putRestoreJob(r: RestoreJobRecord): void {
    this.stmt('putRestore').run(r.toolCallId, JSON.stringify(r));
  }
  deleteRestoreJob(toolCallId: string): void {
    this.stmt('deleteRestore').run(toolCallId);
  }
  listRestoreJobs(): RestoreJobRecord[] {
    return (this.stmt('listRestore').all() as Row[]).map(
      (r) => JSON.parse(r.state) as RestoreJobRecord,
    );
  }

  getQuestion(sessionId: string, questionId: string): QuestionRecord | null {
    return parse(this.stmt('getQuestion').get(sessionId, questionId) as Row | undefined);
  }
  putQuestion(r: QuestionRecord): void {
    this.stmt('putQuestion').run(r.sessionId, r.questionId, JSON.stringify(r));
  }

  findQuestionById(questionId: string): QuestionRecord | null {
    return parse(this.stmt('findQuestion').get(questionId) as Row | undefined);
  }

  getBudget(sessionId: string): BudgetRecord | null {
    return parse(this.stmt('getBudget').get(sessionId) as Row | undefined);
  }
  putBudget(r: BudgetRecord): void {
    this.stmt('putBudget').run(r.sessionId, JSON.stringify(r));
  }

  getMeta(key: string): string | null {
    const row = this.stmt('getMeta').get(key) as { value: string } | undefined;
    return row ? row.value : null;
  }
  putMeta(key: string, value: string): void {
    this.stmt('putMeta').run(key, value);
  }
}
