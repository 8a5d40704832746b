/**
 * WalSync: a commit is acknowledged only after an fdatasync that started after it has finished,
 * in commit order, and commits made while one sync runs share the next. The thread-pool sync is
 * held by the test (node:fs's fdatasync is intercepted) so each step can be watched; the file,
 * the descriptor and the synchronous sync are real.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const pending: ((error: Error | null) => void)[] = [];
let failSync = false;
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return {
    ...real,
    fdatasync: (_fd: number, callback: (error: Error | null) => void) => pending.push(callback),
    fdatasyncSync: (fd: number) => {
      if (failSync) throw new Error('EIO: i/o error, fdatasync');
      real.fdatasyncSync(fd);
    },
  };
});

const { WalSync } = await import('../../../server/store/walSync.ts');
const { SqliteStore } = await import('../../../server/store/SqliteStore.ts');

let dir: string;
let wal: InstanceType<typeof WalSync>;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'walsync-'));
  writeFileSync(join(dir, 'studio.db-wal'), '');
  wal = new WalSync(join(dir, 'studio.db-wal'));
  pending.length = 0;
  failSync = false;
});
afterEach(() => {
  wal.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Lets every settled promise's callbacks run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('WalSync', () => {
  it('acknowledges a commit only after a sync that started after it, in commit order', async () => {
    const acked: number[] = [];
    const first = wal.commit();
    const a = wal.durable(first).then(() => acked.push(first));
    await settle();
    expect(pending).toHaveLength(1);
    // Two commits while the first sync runs: that sync does not cover them.
    const second = wal.commit();
    const third = wal.commit();
    const b = wal.durable(second).then(() => acked.push(second));
    const c = wal.durable(third).then(() => acked.push(third));
    expect(wal.idle).toBe(false);
    pending.shift()!(null);
    await a;
    await settle();
    expect(acked).toEqual([first]);
    // They share the next sync: one more fdatasync for both.
    expect(pending).toHaveLength(1);
    pending.shift()!(null);
    await Promise.all([b, c]);
    expect(acked).toEqual([first, second, third]);
    expect(wal.idle).toBe(true);
    expect(pending).toHaveLength(0);
  });

  it('a commit already covered resolves without another sync', async () => {
    const n = wal.commit();
    const done = wal.durable(n);
    await settle();
    pending.shift()!(null);
    await done;
    await wal.durable(n);
    expect(pending).toHaveLength(0);
  });

  it('a failed thread-pool sync is retried once on this thread; both failing reach the caller', async () => {
    const n = wal.commit();
    const retried = wal.durable(n);
    await settle();
    pending.shift()!(new Error('EIO: i/o error, fdatasync'));
    await retried;
    expect(wal.idle).toBe(true);

    failSync = true;
    const m = wal.commit();
    const failed = wal.durable(m);
    await settle();
    pending.shift()!(new Error('EIO: i/o error, fdatasync'));
    await expect(failed).rejects.toThrow(/could not make the commit durable .*EIO/);
    expect(wal.idle).toBe(false);
    // A later call tries again.
    failSync = false;
    const again = wal.durable(m);
    await settle();
    pending.shift()!(null);
    await again;
    expect(wal.idle).toBe(true);
  });
});

describe('SqliteStore on WalSync', () => {
  /** Closes the store, releasing every sync it asks for meanwhile. */
  async function closeReleasing(store: InstanceType<typeof SqliteStore>): Promise<void> {
    let closed = false;
    const closing = store.close().then(() => (closed = true));
    while (!closed) {
      while (pending.length) pending.shift()!(null);
      await settle();
    }
    await closing;
  }
  const peek = (key: string) => {
    const db = new Database(join(dir, 'studio.db'), { readonly: true });
    try {
      return db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key);
    } finally {
      db.close();
    }
  };

  it('acknowledges and notifies a write only once its sync is done; the next write commits meanwhile', async () => {
    const store = new SqliteStore(join(dir, 'studio.db'));
    try {
      const heard: string[] = [];
      store.listen((n) => heard.push(n.payload));
      let written = false;
      const write = store
        .transaction(async (tx) => {
          await tx.putMeta('k', 'v');
          tx.notify('meta', 'k');
        })
        .then(() => (written = true));
      await settle();
      // Committed (the WAL has it) but not synced: not acknowledged, not heard.
      expect(pending).toHaveLength(1);
      expect(peek('k')).toBe('v');
      expect([written, heard]).toEqual([false, []]);
      // The writer is not held by the sync.
      const next = store.transaction(async (tx) => tx.putMeta('k2', 'v2'));
      await settle();
      expect(peek('k2')).toBe('v2');
      pending.shift()!(null);
      await write;
      expect(heard).toEqual(['k']);
      await settle();
      pending.shift()!(null);
      await next;
    } finally {
      await closeReleasing(store);
    }
  });

  it('a read waits for the sync of every commit before it, and no write begins until it has its snapshot', async () => {
    const store = new SqliteStore(join(dir, 'studio.db'));
    try {
      const write = store.transaction(async (tx) => tx.putMeta('k', 'v'));
      await settle();
      expect(pending).toHaveLength(1);
      let read: (string | null)[] | undefined;
      const reading = store
        .transaction(async (tx) => Promise.all([tx.getMeta('k'), tx.getMeta('k2')]), {
          readOnly: true,
        })
        .then((values) => (read = values));
      const next = store.transaction(async (tx) => tx.putMeta('k2', 'v2'));
      await settle();
      // The read waits for the disk; the write after it waits for the read.
      expect(read).toBeUndefined();
      expect(peek('k2')).toBeUndefined();
      pending.shift()!(null);
      await Promise.all([write, reading]);
      // Its snapshot: the synced commit, not the write that waited for it.
      expect(read).toEqual(['v', null]);
      await settle();
      expect(peek('k2')).toBe('v2');
      pending.shift()!(null);
      await next;
    } finally {
      await closeReleasing(store);
    }
  });
});
