/**
 * `--database-url` on the real server: the studio runs on PostgreSQL (its rows are in the
 * database, not a SQLite file), the URL and its password never reach a log line, and a URL that
 * cannot be used stops the start with a clear error that does not show the password.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startStudioServer } from '../../../server/app.ts';
import { createSession, makeClient, makeTempDir, startHarness } from '../harness.ts';
import { freshDatabase } from '../../support/postgresDatabase.ts';
import type { TestDatabase } from '../../support/postgresDatabase.ts';

describe('the studio on --database-url', () => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });

  it('keeps its state in PostgreSQL and never logs the URL or its password', async () => {
    const db = await freshDatabase();
    dbs.push(db);
    const password = decodeURIComponent(new URL(db.url).password);
    const h = await startHarness({ databaseUrl: db.url });
    try {
      const c = makeClient(h);
      const session = await createSession(c, 'ASK');
      const sql = new pg.Client({ connectionString: db.url });
      await sql.connect();
      try {
        const { rows } = await sql.query('SELECT session_id FROM sessions WHERE session_id = $1', [
          session.sessionId,
        ]);
        expect(rows).toHaveLength(1);
      } finally {
        await sql.end();
      }
      expect(existsSync(join(h.dataDir, 'studio.db'))).toBe(false);
      expect(h.logs.some((line) => line.includes('store: PostgreSQL at 127.0.0.1'))).toBe(true);
      expect(h.logs.filter((line) => line.includes(password) || line.includes(db.url))).toEqual([]);
    } finally {
      await h.dispose();
    }
  });

  it('refuses to start on a database it cannot log in to, naming it without the password', async () => {
    const db = await freshDatabase();
    dbs.push(db);
    const url = new URL(db.url);
    url.password = 'not-the-password-123';
    const logs: string[] = [];
    const error = await startStudioServer({
      port: 0,
      dataDir: makeTempDir(),
      databaseUrl: url.toString(),
      demo: false,
      staticDir: null,
      logWrite: (line) => logs.push(line),
    }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(
      /could not connect to PostgreSQL at 127\.0\.0\.1:\d+\/studio_\w+: /,
    );
    expect(error?.message).not.toContain('not-the-password-123');
    expect(logs.join('\n')).not.toContain('not-the-password-123');
  });
});
