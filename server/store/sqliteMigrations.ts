/**
 * SqliteStore's numbered migrations. Each runs once, in order, inside one transaction, and is
 * recorded in schema_migrations; a data dir written by an older server is brought forward at
 * start. Never edit a released migration: add the next number.
 */
export interface SqliteMigration {
  version: number;
  name: string;
  sql: string;
}

export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    // The schema of the synchronous store (meta.schemaVersion '1'), so its data dirs open as they are.
    version: 1,
    name: 'event log and current state',
    sql: `
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
CREATE VIRTUAL TABLE IF NOT EXISTS event_search USING fts5(
  session_key, body, session_id UNINDEXED, seq UNINDEXED, type UNINDEXED,
  tokenize = 'unicode61 remove_diacritics 2'
);
`,
  },
  {
    // Order columns from sequences (never max(ord)+1), seeded from the orders already given.
    version: 2,
    name: 'sequences for order columns',
    sql: `
CREATE TABLE sequences (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO sequences (name, value) VALUES
  ('sessions', (SELECT coalesce(max(ord), 0) FROM sessions)),
  ('checkpoints', (SELECT coalesce(max(ord), 0) FROM checkpoints)),
  ('approval_rules', (SELECT coalesce(max(ord), 0) FROM approval_rules));
`,
  },
  {
    // The outbox: effects a decision authorizes, claimed by workers after commit.
    version: 3,
    name: 'jobs',
    sql: `
CREATE TABLE jobs (
  job_id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  key TEXT NOT NULL UNIQUE,
  payload TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('PENDING', 'CLAIMED', 'DONE', 'FAILED')),
  worker_id TEXT,
  lease_until_ms INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  last_error TEXT
);
CREATE INDEX jobs_claimable ON jobs (status, kind, job_id);
`,
  },
  {
    // Idempotency retention: created_at as a column, so old records are pruned by an index.
    version: 4,
    name: 'idempotency created_at',
    sql: `
ALTER TABLE idempotency ADD COLUMN created_at TEXT NOT NULL DEFAULT '';
UPDATE idempotency SET created_at = coalesce(json_extract(state, '$.createdAt'), '');
CREATE INDEX idempotency_created ON idempotency (created_at);
`,
  },
];
