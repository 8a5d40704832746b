/**
 * Batch subscriptions of one session share their reads (server/schema/subscriptions.ts,
 * BatchCache), on the real server and both stores: the observers woken by a commit read its
 * events once, and each one's read at its new cursor, made when its consumer took the batch, is
 * answered from the cache until the session's next commit, instead of one empty read per observer.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHarness } from './harness.ts';
import type { Harness } from './harness.ts';
import { LOCAL_APP_ID } from '../../protocol/contract.ts';
import type { Engine } from '../../server/engine/Engine.ts';
import type { Reads } from '../../server/engine/kernel.ts';
import { eventStream } from '../../server/schema/subscriptions.ts';
import type { EventBatch } from '../../server/schema/subscriptions.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.dispose();
});

/** The engine as subscriptions see it, with its event reads counted (its own batch cache, too). */
function countingEngine(engine: Engine): { engine: Engine; reads: () => number } {
  let count = 0;
  const reads = new Proxy(engine.reads, {
    get: (target, name: string) => {
      const value = target[name as keyof Reads];
      if (name !== 'readEventPayloads' || typeof value !== 'function') return value;
      return (...args: Parameters<Reads['readEventPayloads']>) => {
        count += 1;
        return target.readEventPayloads(...args);
      };
    },
  });
  return {
    engine: Object.create(engine, { reads: { value: reads } }) as Engine,
    reads: () => count,
  };
}

describe('batch subscriptions of one session', () => {
  it('read each commit once, and nothing again per observer until the next commit', async () => {
    const { sessionId } = await h.server.engine.createSession({ appId: LOCAL_APP_ID, mode: 'ASK' });
    const before = (await h.server.engine.reads.getSession(sessionId))!.lastEventSeq;
    const counted = countingEngine(h.server.engine);
    const OBSERVERS = 20;
    const COMMITS = 8;

    const seen: string[][] = Array.from({ length: OBSERVERS }, () => []);
    let waiter: { check: () => boolean; resolve: () => void } | null = null;
    const heard = () => {
      if (waiter?.check()) {
        waiter.resolve();
        waiter = null;
      }
    };
    const allHave = (seq: string) =>
      new Promise<void>((resolve) => {
        waiter = { check: () => seen.every((s) => s[s.length - 1] === seq), resolve };
        heard();
      });

    const streams = await Promise.all(
      seen.map(() =>
        eventStream(
          counted.engine,
          { sessionId, afterSeq: before, clientEpoch: null, maxBatch: 200 },
          true,
        ),
      ),
    );
    const consumers = streams.map(async (stream, i) => {
      for await (const value of stream) {
        for (const event of (value as EventBatch).events) seen[i]!.push(event.seq);
        heard();
        // Each consumer takes its next batch at its own time, as each socket's send does.
        for (let turn = 0; turn < i; turn += 1) await new Promise((done) => setImmediate(done));
      }
    });

    for (let commit = 0; commit < COMMITS; commit += 1) {
      const [stored] = await h.server.engine.append(sessionId, [
        { type: 'STUDIO_LOG', level: 'info', message: `commit ${commit}`, origin: 'test' },
      ]);
      await allHave(stored!.seq);
    }
    const reads = counted.reads();
    for (const stream of streams) await stream.return();
    await Promise.all(consumers);

    // Every observer saw every event, once and in order.
    const expected = seen[0]!;
    expect(expected).toHaveLength(COMMITS);
    expect(expected.map(BigInt)).toEqual(expected.map((_, k) => BigInt(before) + BigInt(k + 1)));
    for (const s of seen) expect(s).toEqual(expected);
    // Per commit: the shared read of its events and one shared empty read at the new cursor
    // (before the first commit: the replay's empty read). One empty read per observer per
    // commit would be OBSERVERS * COMMITS more.
    expect(reads).toBeLessThanOrEqual(3 * COMMITS + 2);
  });
});

/**
 * The engine as subscriptions see it, with each event read recorded (its cursor, and when it
 * returned) and, for one cursor, its rows held back until `release` (read before, returned after).
 */
function recordingEngine(engine: Engine, holdAt: string | null = null) {
  const reads: { afterSeq: string; done: boolean }[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const proxied = new Proxy(engine.reads, {
    get: (target, name: string) => {
      const value = target[name as keyof Reads];
      if (name !== 'readEventPayloads' || typeof value !== 'function') return value;
      return async (...args: Parameters<Reads['readEventPayloads']>) => {
        const read = { afterSeq: args[1].toString(), done: false };
        reads.push(read);
        const rows = await target.readEventPayloads(...args);
        if (read.afterSeq === holdAt) await gate;
        read.done = true;
        return rows;
      };
    },
  });
  return {
    engine: Object.create(engine, { reads: { value: proxied } }) as Engine,
    reads,
    release,
  };
}

async function logSession(events: number): Promise<{ sessionId: string; first: bigint }> {
  const { sessionId } = await h.server.engine.createSession({ appId: LOCAL_APP_ID, mode: 'ASK' });
  const first = BigInt((await h.server.engine.reads.getSession(sessionId))!.lastEventSeq);
  await h.server.engine.append(
    sessionId,
    Array.from({ length: events }, (_, k) => ({
      type: 'STUDIO_LOG' as const,
      level: 'info' as const,
      message: `event ${k}`,
      origin: 'test',
    })),
  );
  return { sessionId, first };
}

describe('a batch subscription behind the log', () => {
  it('reads the next batch while its consumer holds a full one, and reads no rows twice', async () => {
    const { sessionId, first } = await logSession(23);
    const recorded = recordingEngine(h.server.engine);
    const stream = await eventStream(
      recorded.engine,
      { sessionId, afterSeq: first.toString(), clientEpoch: null, maxBatch: 5 },
      true,
    );
    const seqs: bigint[] = [];
    for (let batch = 0; batch < 5; batch += 1) {
      const step = await stream.next();
      const events = (step.value as EventBatch).events;
      seqs.push(...events.map((e) => BigInt(e.seq)));
      const cursor = seqs[seqs.length - 1]!.toString();
      // Not asked for the next batch yet: its read is already under way (or done).
      if (events.length === 5)
        await vi.waitFor(() => expect(recorded.reads.map((r) => r.afterSeq)).toContain(cursor));
    }
    await stream.return();
    expect(seqs).toEqual(Array.from({ length: 23 }, (_, k) => first + BigInt(k + 1)));
    // One read per batch and the short one's, each cursor once: 0, 5, 10, 15, 20 after `first`.
    expect(recorded.reads.map((r) => BigInt(r.afterSeq) - first)).toEqual([0n, 5n, 10n, 15n, 20n]);
  });

  it('delivers a commit made while a read-ahead of the same rows was out of date', async () => {
    const { sessionId, first } = await logSession(10);
    const end = (first + 10n).toString();
    // The read-ahead at the end of the log finds nothing, and returns only after the commit.
    const recorded = recordingEngine(h.server.engine, end);
    const stream = await eventStream(
      recorded.engine,
      { sessionId, afterSeq: first.toString(), clientEpoch: null, maxBatch: 5 },
      true,
    );
    await stream.next();
    const second = (await stream.next()).value as EventBatch;
    expect(second.throughSeq).toBe(end);
    await vi.waitFor(() => expect(recorded.reads.map((r) => r.afterSeq)).toContain(end));
    // The commit's notification is heard (the stream's own listener is called before this
    // one) before the consumer asks again, so only a fresh read can find the new row.
    const heard = new Promise<void>((resolve) => {
      const unlisten = h.server.engine.notifier.onSession(sessionId, () => {
        unlisten();
        resolve();
      });
    });
    const [stored] = await h.server.engine.append(sessionId, [
      { type: 'STUDIO_LOG', level: 'info', message: 'after the read-ahead', origin: 'test' },
    ]);
    await heard;
    const next = stream.next();
    // The stream takes two turns of the event loop to come back to its read (the push, then its
    // yield): it then finds the held read-ahead still out, and waits for it.
    for (let turn = 0; turn < 3; turn += 1) await new Promise((done) => setImmediate(done));
    recorded.release();
    const third = (await next).value as EventBatch;
    await stream.return();
    expect(third.events.map((e) => e.seq)).toEqual([stored!.seq]);
    // The stale empty read was not taken for current: the rows were read again after the commit.
    expect(recorded.reads.filter((r) => r.afterSeq === end).length).toBe(2);
  });
});
