import { describe, expect, it } from 'vitest';
import { SlicedIngest } from './slicedIngest.ts';
import { MemorySourceHost } from '../../test/fakes/MemorySourceHost.ts';

function make(options: {
  maxItems?: number;
  prepare?: (n: number) => (() => Promise<void>) | null;
}) {
  const host = new MemorySourceHost();
  const applied: string[] = [];
  const errors: unknown[] = [];
  const ingest = new SlicedIngest<number>({
    host,
    maxItems: options.maxItems ?? 3,
    maxMs: 1_000,
    ...(options.prepare ? { prepare: options.prepare } : {}),
    apply: async (n) => {
      if (n === 13) throw new Error('unlucky');
      applied.push(`apply ${n}`);
      if (n === 5) return async () => void applied.push('after 5');
      return undefined;
    },
    onError: (error) => errors.push(error),
  });
  return { host, applied, errors, ingest };
}

describe('SlicedIngest', () => {
  it('applies every item in order, in bounded slices of one group commit each', async () => {
    const { host, applied, ingest } = make({ maxItems: 3 });
    const items = [1, 2, 3, 4, 6, 7, 8];
    await ingest.push(...items);
    expect(applied).toEqual(items.map((n) => `apply ${n}`));
    expect(host.groupCommits).toBe(3);
    expect(ingest.pending).toBe(0);
  });

  it('yields to the event loop between slices: a callback queued during the first slice runs before the last', async () => {
    const host = new MemorySourceHost();
    const applied: number[] = [];
    let ranAfter = -1;
    const ingest = new SlicedIngest<number>({
      host,
      maxItems: 2,
      maxMs: 1_000,
      apply: async (n) => {
        if (n === 0) setImmediate(() => (ranAfter = applied.length));
        applied.push(n);
      },
      onError: (error) => {
        throw error;
      },
    });
    await ingest.push(...Array.from({ length: 20 }, (_, i) => i));
    expect(applied).toHaveLength(20);
    // Queued while item 0 was applied; it ran once that slice ended, long before item 19.
    expect(ranAfter).toBeGreaterThanOrEqual(2);
    expect(ranAfter).toBeLessThan(20);
  });

  it('runs prepare work before its item and after-work before the next item; a failing item is skipped', async () => {
    const order: string[] = [];
    const { applied, errors, ingest } = make({
      maxItems: 100,
      prepare: (n) => (n === 4 ? async () => void order.push('prepare 4') : null),
    });
    await ingest.push(3, 4, 5, 13, 6);
    expect(order).toEqual(['prepare 4']);
    expect(applied).toEqual(['apply 3', 'apply 4', 'apply 5', 'after 5', 'apply 6']);
    expect(errors).toHaveLength(1);
  });

  it('picks up items pushed while it drains, and settles idle() only when all are applied', async () => {
    const { applied, ingest } = make({ maxItems: 1 });
    const first = ingest.push(1, 2);
    void ingest.push(3);
    await first;
    await ingest.idle();
    expect(applied).toEqual(['apply 1', 'apply 2', 'apply 3']);
  });
});
