import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../../support/postgresDatabase.ts';
import type { TestDatabase } from '../../support/postgresDatabase.ts';

describe('the PostgreSQL test harness', () => {
  const made: TestDatabase[] = [];
  afterAll(async () => {
    for (const db of made) await db.drop();
  });

  it('gives each caller its own empty database on a real PostgreSQL with password auth', async () => {
    const a = await freshDatabase();
    const b = await freshDatabase();
    made.push(a, b);
    expect(a.url).not.toBe(b.url);
    const ca = new pg.Client({ connectionString: a.url });
    const cb = new pg.Client({ connectionString: b.url });
    await ca.connect();
    await cb.connect();
    try {
      const version = await ca.query<{ server_version_num: string }>('SHOW server_version_num');
      expect(Number(version.rows[0]!.server_version_num)).toBeGreaterThanOrEqual(150000);
      await ca.query('CREATE TABLE t (x int)');
      const seen = await cb.query(`SELECT to_regclass('t') AS t`);
      expect(seen.rows[0].t).toBeNull();
      const wrong = new URL(a.url);
      wrong.password = 'not-the-password';
      const intruder = new pg.Client({ connectionString: wrong.toString() });
      await expect(intruder.connect()).rejects.toThrow(/password authentication failed/);
      await intruder.end().catch(() => undefined);
    } finally {
      await ca.end();
      await cb.end();
    }
  });
});
