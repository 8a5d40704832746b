/**
 * Batch subscriptions of one session share their reads (server/schema/subscriptions.ts,
 * BatchCache), on the real server and both stores: the observers woken by a commit read its
 * events once, and each one's read at its new cursor, made when its consumer took the batch, is
 * answered from the cache until the session's next commit, instead of one empty read per observer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
