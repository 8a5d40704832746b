/**
 * PgStore's numbered migrations. Each runs once, in order, inside one transaction that holds a
 * transaction-level advisory lock, so instances starting together apply each exactly once; each
 * is recorded in schema_migrations. Never edit a released migration: add the next number.
 *
 * Current-state tables keep the record as JSON text (the exact text the engine wrote) plus the
 * columns that queries filter, sort or fence on. Order columns come from sequences.
 */
export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: 'event log, current state, search, jobs',
    sql: `
CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);

CREATE TABLE events (
  session_id text NOT NULL,
  seq bigint NOT NULL,
  event_id text NOT NULL,
  type text NOT NULL,
  run_id text,
  created_at text NOT NULL,
  payload text NOT NULL,
  foreign_id text,
  CONSTRAINT events_pkey PRIMARY KEY (session_id, seq),
  CONSTRAINT events_event_id_key UNIQUE (event_id)
);
CREATE UNIQUE INDEX events_foreign ON events (session_id, foreign_id) WHERE foreign_id IS NOT NULL;

-- Whole-session search: one row per event, written by insertEvent in the append's transaction.
-- pos follows insertion (seq order within a session) and is the search cursor. The tsvector holds
-- the body's words (weight D) and the session's token (weight A), so one GIN lookup narrows to
-- the session and the words at once, as SQLite's session_key column does.
CREATE TABLE event_search (
  pos bigserial PRIMARY KEY,
  session_id text NOT NULL,
  seq bigint NOT NULL,
  type text NOT NULL,
  body text NOT NULL,
  document tsvector NOT NULL
);
CREATE INDEX event_search_document ON event_search USING gin (document);

CREATE SEQUENCE sessions_ord;
CREATE TABLE sessions (
  session_id text PRIMARY KEY,
  ord bigint NOT NULL UNIQUE,
  app_id text NOT NULL,
  client_epoch text NOT NULL,
  state text NOT NULL
);
CREATE INDEX sessions_app ON sessions (app_id, ord);

CREATE TABLE runs (run_id text PRIMARY KEY, session_id text NOT NULL, state text NOT NULL);
CREATE TABLE tool_calls (tool_call_id text PRIMARY KEY, session_id text NOT NULL, state text NOT NULL);

CREATE TABLE approvals (
  approval_id text PRIMARY KEY,
  session_id text NOT NULL,
  status text NOT NULL,
  expires_at text NOT NULL,
  decided_at text,
  state text NOT NULL
);
CREATE INDEX approvals_pending ON approvals (status, expires_at);
CREATE INDEX approvals_decided ON approvals (decided_at DESC, approval_id) WHERE status <> 'PENDING';

CREATE SEQUENCE approval_rules_ord;
CREATE TABLE approval_rules (
  rule_id text PRIMARY KEY, ord bigint NOT NULL UNIQUE, app_id text NOT NULL, state text NOT NULL);
CREATE INDEX approval_rules_app ON approval_rules (app_id, ord);

CREATE TABLE leases (
  lease_id text PRIMARY KEY, session_id text NOT NULL, status text NOT NULL, state text NOT NULL);
CREATE INDEX leases_active ON leases (status, session_id);

CREATE SEQUENCE checkpoints_ord;
CREATE TABLE checkpoints (
  checkpoint_id text PRIMARY KEY,
  ord bigint NOT NULL UNIQUE,
  session_id text NOT NULL,
  project_id text NOT NULL,
  state text NOT NULL
);
CREATE INDEX checkpoints_session ON checkpoints (session_id, ord);
CREATE INDEX checkpoints_project ON checkpoints (project_id, ord);

CREATE TABLE projects (project_id text PRIMARY KEY, state text NOT NULL);

CREATE TABLE clients (
  session_id text NOT NULL,
  client_instance_id text NOT NULL,
  attached boolean NOT NULL,
  state text NOT NULL,
  PRIMARY KEY (session_id, client_instance_id)
);
CREATE INDEX clients_attached ON clients (attached) WHERE attached;

CREATE TABLE idempotency (
  operation text NOT NULL,
  key text NOT NULL,
  created_at text NOT NULL,
  state text NOT NULL,
  CONSTRAINT idempotency_pkey PRIMARY KEY (operation, key)
);
CREATE INDEX idempotency_created ON idempotency (created_at);

CREATE TABLE restore_jobs (tool_call_id text PRIMARY KEY, state text NOT NULL);

CREATE TABLE questions (
  session_id text NOT NULL, question_id text NOT NULL, state text NOT NULL,
  PRIMARY KEY (session_id, question_id));
CREATE INDEX questions_id ON questions (question_id);

CREATE TABLE budgets (session_id text PRIMARY KEY, state text NOT NULL);

-- The outbox: effects a decision authorizes, claimed by workers after commit (SKIP LOCKED).
CREATE TABLE jobs (
  job_id bigserial PRIMARY KEY,
  kind text NOT NULL,
  key text NOT NULL UNIQUE,
  payload text NOT NULL,
  status text NOT NULL CHECK (status IN ('PENDING', 'CLAIMED', 'DONE', 'FAILED')),
  worker_id text,
  lease_until_ms bigint,
  attempts integer NOT NULL DEFAULT 0,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  last_error text
);
CREATE INDEX jobs_claimable ON jobs (kind, job_id) WHERE status IN ('PENDING', 'CLAIMED');
CREATE INDEX jobs_finished ON jobs (updated_at) WHERE status IN ('DONE', 'FAILED');
`,
  },
  {
    version: 2,
    name: 'source leases and source calls',
    sql: `
-- Which instance runs each source (demo agent, a bridge, a Claude Code session): one row per
-- source, taken and renewed by a conditional upsert (server/store/postgres/SourceLeases.ts).
CREATE TABLE source_leases (
  source_id text PRIMARY KEY,
  holder text NOT NULL,
  expires_at_ms bigint NOT NULL,
  acquired_at_ms bigint NOT NULL,
  generation bigint NOT NULL DEFAULT 1
);

-- Results of calls to a source made on an instance that does not run it (server/multi): the
-- call is a job of kind 'source:<sourceId>', its result is kept here until the caller reads it.
CREATE TABLE source_call_results (
  key text PRIMARY KEY,
  result text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

`,
  },
  {
    version: 3,
    name: 'the instance that claimed a job',
    sql: `
-- The PgStore instance whose claim this is, while that instance held its liveness lock (an
-- advisory lock on its LISTEN connection): once the lock is gone the claim lapses at once,
-- without waiting for lease_until_ms (PgStore.claimJob). NULL: the lease alone decides.
ALTER TABLE jobs ADD COLUMN claimed_instance text;
`,
  },
];
