/**
 * The kernel on a real SqliteStore: nested writes join the open transaction (one commit), a
 * throw rolls back everything joined, after-commit steps run only after a commit, `db` outside a
 * transaction opens its own, `reads` refuses writes, and a group commit writes sessions once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../store/SqliteStore.ts';
import { Kernel } from './kernel.ts';
import { sessionRecord } from '../../test/server/store/conformance.ts';

let dir: string;
let store: SqliteStore;
let kernel: Kernel;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'studio-kernel-'));
  store = new SqliteStore(join(dir, 'studio.db'));
  kernel = new Kernel(store);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Kernel', () => {
  it('joins a nested write to the open transaction: one commit, one notification', async () => {
    const seen: string[] = [];
    kernel.onNotification((n) => seen.push(n.payload));
    await kernel.write(async (tx) => {
      await tx.putSession(sessionRecord('outer'));
      await kernel.write(async (inner) => {
        expect(inner).toBe(tx);
        await kernel.db.putSession(sessionRecord('inner'));
        kernel.db.notify('c', 'joined');
      });
      expect(seen).toEqual([]);
    });
    expect(seen).toEqual(['joined']);
    expect((await kernel.db.getSession('inner'))?.sessionId).toBe('inner');
  });

  it('rolls back what a nested write did when the outer transaction throws', async () => {
    await expect(
      kernel.write(async () => {
        await kernel.write(async () => kernel.db.putSession(sessionRecord('lost')));
        throw new Error('outer fails');
      }),
    ).rejects.toThrow('outer fails');
    expect(await kernel.db.getSession('lost')).toBeNull();
  });

  it('runs after-commit steps after the commit and never after a rollback', async () => {
    const ran: string[] = [];
    let resolveRan!: () => void;
    const stepRan = new Promise<void>((resolve) => (resolveRan = resolve));
    await kernel.write(async () => {
      kernel.afterCommit(() => {
        ran.push('committed');
        resolveRan();
      });
      await kernel.db.putMeta('k', 'v');
      expect(ran).toEqual([]);
    });
    await expect(
      kernel.write(async () => {
        kernel.afterCommit(() => ran.push('rolled back'));
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    await stepRan;
    // A later step proves the rolled-back one had its chance to run and did not.
    await new Promise<void>((resolve) => kernel.afterCommit(resolve));
    expect(ran).toEqual(['committed']);
  });

  it('a step started inside a transaction does not join it once it ended', async () => {
    let later!: Promise<void>;
    await kernel.write(async () => {
      later = new Promise<void>((resolve) => setTimeout(resolve, 5)).then(() =>
        kernel.db.putSession(sessionRecord('after')),
      );
    });
    await later;
    expect((await kernel.db.getSession('after'))?.sessionId).toBe('after');
  });

  it('reads refuse writes; a read inside a write sees the write', async () => {
    expect(() => (kernel.reads as unknown as { putMeta: unknown }).putMeta).toThrow(/not a read/);
    await kernel.write(async () => {
      await kernel.db.putSession(sessionRecord('mine'));
      expect((await kernel.reads.getSession('mine'))?.sessionId).toBe('mine');
    });
  });

  it('a group commit writes each session record once, at its end', async () => {
    await kernel.write((tx) => tx.putSession(sessionRecord('g')));
    await kernel.group(async () => {
      const group = kernel.groupOf()!;
      group.set('g', sessionRecord('g', { lastEventSeq: '7' }));
      expect((await kernel.db.getSession('g'))?.lastEventSeq).toBe('0');
    });
    expect((await kernel.db.getSession('g'))?.lastEventSeq).toBe('7');
  });
});
