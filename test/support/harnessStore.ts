/**
 * Which store the server suites run on: `STUDIO_TEST_STORE=postgres` (set by the Vitest project
 * `server-pg`) gives each harness data dir its own fresh database on the run's PostgreSQL
 * cluster; anything else keeps the embedded SQLite file in the data dir. A restart (a harness
 * started again on the same data dir) gets the same database back, as a restarted server would.
 */
import { freshDatabase } from './postgresDatabase.ts';
import type { TestDatabase } from './postgresDatabase.ts';

export type TestStoreKind = 'sqlite' | 'postgres';

export function testStoreKind(): TestStoreKind {
  return process.env.STUDIO_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';
}

const databases = new Map<string, Promise<TestDatabase>>();

/** The database URL for a harness data dir (null on SQLite). */
export async function harnessDatabaseUrl(dataDir: string): Promise<string | null> {
  if (testStoreKind() !== 'postgres') return null;
  let db = databases.get(dataDir);
  if (!db) {
    db = freshDatabase();
    databases.set(dataDir, db);
  }
  return (await db).url;
}

/** Drops the data dir's database (when the data dir itself is removed). */
export async function releaseHarnessDatabase(dataDir: string): Promise<void> {
  const db = databases.get(dataDir);
  if (!db) return;
  databases.delete(dataDir);
  await (await db).drop();
}
