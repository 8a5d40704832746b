import { describe, expect, it } from 'vitest';
import { SlicedIngest, SocketBackpressure } from './slicedIngest.ts';
import { appendSafely } from './bridgeSupport.ts';
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

describe('SlicedIngest.host: appends gathered inside a slice', () => {
  function gathering(maxItems = 1_000) {
    const host = new MemorySourceHost();
    void host.ensureSession({ sessionId: 'a', title: 'A', mode: 'BUILD', requestedModel: 'm' });
    void host.ensureSession({ sessionId: 'b', title: 'B', mode: 'BUILD', requestedModel: 'm' });
    const calls: { sessionId: string; count: number }[] = [];
    const append = host.append.bind(host);
    host.append = (sessionId, drafts) => {
      calls.push({ sessionId, count: drafts.length });
      return append(sessionId, drafts);
    };
    const seen: string[] = [];
    const ingest: SlicedIngest<{ session: string; n: number; read?: boolean }> = new SlicedIngest({
      host,
      maxItems,
      maxMs: 60_000,
      apply: async ({ session, n, read }) => {
        if (read) seen.push((await ingest.host.findSession(session))?.lastEventSeq ?? 'none');
        await appendSafely(
          ingest.host,
          session,
          [
            {
              type: 'STUDIO_LOG',
              level: 'info',
              origin: 'test',
              message: `m${n}`,
              foreignId: `f${n}`,
            },
          ],
          [],
        );
        if (await ingest.host.hasForeignId(session, `f${n}`)) seen.push(`has f${n}`);
      },
      onError: (error) => {
        throw error;
      },
    });
    return { host, calls, seen, ingest };
  }
  const messages = (host: MemorySourceHost, id: string) =>
    host.events(id).map((e) => (e as { message?: string }).message);

  it('hands consecutive drafts of one session to the engine in appends of at most 50, in order', async () => {
    const { host, calls, ingest } = gathering();
    await ingest.push(...Array.from({ length: 120 }, (_, n) => ({ session: 'a', n })));
    expect(host.groupCommits).toBe(1);
    expect(calls.map((c) => c.count)).toEqual([50, 50, 20]);
    expect(messages(host, 'a')).toEqual(Array.from({ length: 120 }, (_, n) => `m${n}`));
  });

  it('a draft for another session or a read hands over what was gathered first', async () => {
    const { host, calls, seen, ingest } = gathering();
    await ingest.push(
      { session: 'a', n: 1 },
      { session: 'a', n: 2 },
      { session: 'b', n: 3 },
      { session: 'a', n: 4, read: true },
      { session: 'a', n: 5 },
    );
    expect(calls).toEqual([
      { sessionId: 'a', count: 2 },
      { sessionId: 'b', count: 1 },
      { sessionId: 'a', count: 2 },
    ]);
    // The read saw both earlier events of session a; hasForeignId saw each gathered draft.
    expect(seen).toEqual(['has f1', 'has f2', 'has f3', '2', 'has f4', 'has f5']);
    expect(messages(host, 'a')).toEqual(['m1', 'm2', 'm4', 'm5']);
    expect(messages(host, 'b')).toEqual(['m3']);
  });

  it('a draft the engine refuses is replaced by a warning row; the drafts gathered with it are kept', async () => {
    const { host, ingest } = gathering();
    host.refuse = (d) => (d as { message?: string }).message === 'm2';
    await ingest.push(...[1, 2, 3].map((n) => ({ session: 'a', n })));
    expect(messages(host, 'a')).toEqual(['m1', expect.stringContaining('could not record'), 'm3']);
  });

  it('outside a slice the host appends at once', async () => {
    const { host, calls, ingest } = gathering();
    await ingest.host.append('a', [
      { type: 'STUDIO_LOG', level: 'info', origin: 'test', message: 'now' },
    ]);
    expect(calls).toEqual([{ sessionId: 'a', count: 1 }]);
    expect(messages(host, 'a')).toEqual(['now']);
  });
});

describe('SocketBackpressure', () => {
  /** An ingest whose slices hold 5 items, and a socket that records pause/resume with the inbox size. */
  function paced() {
    const host = new MemorySourceHost();
    const applied: number[] = [];
    const ingest = new SlicedIngest<number>({
      host,
      maxItems: 5,
      maxMs: 1_000,
      apply: async (n) => void applied.push(n),
      onError: (error) => {
        throw error;
      },
    });
    const log: string[] = [];
    const socket = {
      paused: false,
      pause() {
        this.paused = true;
        log.push(`pause at ${ingest.pending}`);
      },
      resume() {
        this.paused = false;
        log.push(`resume at ${ingest.pending}`);
      },
    };
    const backpressure = new SocketBackpressure(ingest, socket, 20, 10);
    return { ingest, applied, socket, log, backpressure };
  }

  it('pauses the socket at the high mark, resumes it at the low mark, and loses nothing', async () => {
    const { ingest, applied, socket, log, backpressure } = paced();
    // A peer that sends only while the socket reads, as TCP does.
    let sent = 0;
    while (sent < 100) {
      if (socket.paused) {
        await ingest.whenPendingAtMost(10);
        // The resume runs in the waiter that SocketBackpressure registered first.
        await Promise.resolve();
        expect(socket.paused).toBe(false);
        continue;
      }
      void ingest.push(sent);
      sent += 1;
      backpressure.check();
      expect(ingest.pending).toBeLessThanOrEqual(20);
    }
    await ingest.idle();
    expect(applied).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(log[0]).toBe('pause at 20');
    expect(log.filter((l) => l.startsWith('pause')).length).toBeGreaterThan(1);
    for (const line of log.filter((l) => l.startsWith('resume')))
      expect(Number(line.split(' ').at(-1))).toBeLessThanOrEqual(10);
  });

  it('items buffered outside the inbox pause it too, and it resumes only once they are handed over and drained', async () => {
    const { ingest, applied, socket, log, backpressure } = paced();
    const buffered: number[] = [];
    for (let n = 0; n < 25; n += 1) {
      buffered.push(n);
      backpressure.check(buffered.length);
    }
    expect(log).toEqual(['pause at 0']);
    // Nothing resumes it while the frames wait outside (a bridge still reading state).
    await ingest.idle();
    expect(socket.paused).toBe(true);
    const done = ingest.push(...buffered.splice(0));
    backpressure.handedOver();
    await done;
    expect(socket.paused).toBe(false);
    expect(log).toEqual(['pause at 0', expect.stringMatching(/^resume at (\d|10)$/)]);
    expect(applied).toHaveLength(25);
  });

  it('a stopped ingest releases the socket', async () => {
    const { ingest, socket, backpressure } = paced();
    for (let n = 0; n < 30; n += 1) {
      void ingest.push(n);
      backpressure.check();
    }
    expect(socket.paused).toBe(true);
    ingest.stop();
    await ingest.idle();
    await ingest.whenPendingAtMost(0);
    expect(socket.paused).toBe(false);
  });
});

describe('SlicedIngest on a host that commits before it syncs', () => {
  /** A host whose group commits report "committed" at once and finish ("on disk") when released. */
  class SyncingHost extends MemorySourceHost {
    readonly unsynced: (() => void)[] = [];
    override async groupCommit<T>(
      fn: () => Promise<T>,
      options?: { onCommitted?: () => void },
    ): Promise<T> {
      this.groupCommits += 1;
      const result = await fn();
      options?.onCommitted?.();
      await new Promise<void>((resolve) => this.unsynced.push(resolve));
      return result;
    }
  }

  it('applies the next slice while the last one syncs, at most two unsynced, and settles only once all are on disk', async () => {
    const host = new SyncingHost();
    const applied: number[] = [];
    const ingest = new SlicedIngest<number>({
      host,
      maxItems: 2,
      maxMs: 1_000,
      apply: async (n) => void applied.push(n),
      onError: (error) => {
        throw error;
      },
    });
    let settled = false;
    const done = ingest.push(1, 2, 3, 4, 5, 6).then(() => (settled = true));
    const until = async (check: () => boolean) => {
      while (!check()) await new Promise<void>((resolve) => setImmediate(resolve));
    };
    // Slice 1 committed and waits for its sync; slice 2 applied meanwhile; slice 3 waits.
    await until(() => host.unsynced.length === 2);
    expect(applied).toEqual([1, 2, 3, 4]);
    for (let i = 0; i < 5; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
    expect(applied).toEqual([1, 2, 3, 4]);
    host.unsynced.shift()!();
    await until(() => applied.length === 6);
    // Everything is applied, but two slices are not on disk yet: the inbox has not settled.
    expect(settled).toBe(false);
    host.unsynced.shift()!();
    host.unsynced.shift()!();
    await done;
    expect(settled).toBe(true);
    expect(host.groupCommits).toBe(3);
  });
});
