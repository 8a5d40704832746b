import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../server/store/SqliteStore.ts';
import { SqliteCheckpointer } from '../../../server/store/sqliteCheckpointer.ts';
import { makeTempDir } from '../harness.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('SqliteCheckpointer', () => {
  it('copies the WAL back into the database file from its worker thread', async () => {
    const dir = makeTempDir('studio-ckpt-');
    dirs.push(dir);
    const file = join(dir, 'studio.db');
    const store = new SqliteStore(file);
    try {
      for (let i = 0; i < 50; i += 1)
        await store.transaction(async (tx) => tx.putMeta(`k${i}`, 'x'.repeat(8192)));
      await store.checkpointNow();
      // The database file alone, without its WAL, has every committed row.
      copyFileSync(file, join(dir, 'alone.db'));
      const alone = new Database(join(dir, 'alone.db'), { readonly: true });
      expect(alone.prepare('SELECT value FROM meta WHERE key = ?').pluck().get('k49')).toBe(
        'x'.repeat(8192),
      );
      alone.close();
    } finally {
      await store.close();
    }
  });

  it('reports a worker that cannot open its database, so the writer checkpoints by itself', async () => {
    const dir = makeTempDir('studio-ckpt-missing-');
    dirs.push(dir);
    const failed = new Promise<unknown>((resolve) => {
      const checkpointer = new SqliteCheckpointer(join(dir, 'no-such.db'), resolve);
      void checkpointer.checkpointNow();
    });
    expect(((await failed) as Error).message).toMatch(/unable to open/i);
  });
});
