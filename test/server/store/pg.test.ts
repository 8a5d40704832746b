/**
 * PgStore on a real PostgreSQL (test/support/postgres.ts): the conformance suite every Store
 * passes, then what only a shared database has: notifications across two stores (two instances)
 * on one database, the LISTEN connection's reconnect, search on PostgreSQL's own index.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PgStore, RESYNC_CHANNEL, inline } from '../../../server/store/postgres/PgStore.ts';
import type {
  Store,
  StoreNotification,
  TransactionOptions,
  Tx,
} from '../../../server/store/Store.ts';
import { freshDatabase } from '../../support/postgresDatabase.ts';
import { JobWorker } from '../../../server/engine/jobs.ts';
import { Kernel } from '../../../server/engine/kernel.ts';
import type { TestDatabase } from '../../support/postgresDatabase.ts';
import { sessionRecord, storeConformance } from './conformance.ts';

async function openPg(url: string): Promise<PgStore> {
  const store = new PgStore({ url });
  await store.migrate();
  return store;
}

storeConformance('PgStore', async () => {
  const db = await freshDatabase();
  let current: Store = await openPg(db.url);
  return {
    get store() {
      return current;
    },
    async reopen() {
      await current.close();
      current = await openPg(db.url);
      return current;
    },
    async dispose() {
      await current.close();
      await db.drop();
    },
  };
});

function waitFor(
  store: Store,
  match: (n: StoreNotification) => boolean,
): Promise<StoreNotification> {
  return new Promise((resolve) => {
    const stop = store.listen((n) => {
      if (match(n)) {
        stop();
        resolve(n);
      }
    });
  });
}

describe('PgStore on a shared database', () => {
  let db: TestDatabase | null = null;
  const stores: PgStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    await db?.drop();
    db = null;
  });
  const two = async () => {
    db = await freshDatabase();
    const a = await openPg(db.url);
    const b = await openPg(db.url);
    stores.push(a, b);
    await a.ready();
    await b.ready();
    return { a, b };
  };

  it('applies migrations once when two instances start together', async () => {
    db = await freshDatabase();
    const [a, b] = await Promise.all([openPg(db.url), openPg(db.url)]);
    stores.push(a, b);
    expect(await a.appliedMigrations()).toEqual(await b.appliedMigrations());
  });

  it('delivers a commit on one instance to listeners on the other, once, after the commit', async () => {
    const { a, b } = await two();
    const onB: StoreNotification[] = [];
    b.listen((n) => onB.push(n));
    const heard = waitFor(b, (n) => n.payload === 'p2');
    await a.transaction(async (tx) => {
      tx.notify('session', 'p1');
      tx.notify('session', 'p1');
      await tx.putSession(sessionRecord('s1'));
    });
    await expect(
      a.transaction(async (tx) => {
        tx.notify('session', 'rolled-back');
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    await a.transaction(async (tx) => {
      tx.notify('session', 'p2');
      await tx.putMeta('k', 'v');
    });
    await heard;
    expect(onB.map((n) => `${n.channel}:${n.payload}`)).toEqual(['session:p1', 'session:p2']);
    const seenByB = await b.transaction((tx) => tx.getSession('s1'), { readOnly: true });
    expect(seenByB?.sessionId).toBe('s1');
  });

  it('reconnects a dropped LISTEN connection, tells its listeners to resync, and hears again', async () => {
    const { a, b } = await two();
    const resynced = waitFor(b, (n) => n.channel === RESYNC_CHANNEL);
    await b.dropListenConnection();
    await resynced;
    const heard = waitFor(b, (n) => n.payload === 'after');
    await a.transaction(async (tx) => {
      tx.notify('session', 'after');
      await tx.putMeta('k', 'v');
    });
    expect((await heard).channel).toBe('session');
  });

  it('serialises appends from two instances to one session: consecutive seqs', async () => {
    const { a, b } = await two();
    await a.transaction((tx) => tx.putSession(sessionRecord('s1')));
    const append = (store: PgStore, i: number) =>
      store.transaction(async (tx) => {
        await tx.lockSession('s1');
        const session = await tx.getSession('s1');
        const seq = BigInt(session!.lastEventSeq) + 1n;
        await tx.insertEvent({
          sessionId: 's1',
          seq,
          eventId: `e${i}`,
          type: 'STUDIO_LOG',
          runId: null,
          createdAt: '2026-01-01T00:00:00.000Z',
          payload: JSON.stringify({ __typename: 'StudioLogEvent', message: `m${i}` }),
          foreignId: null,
        });
        await tx.putSession({ ...session!, lastEventSeq: seq.toString() });
        return seq;
      });
    const seqs = await Promise.all(Array.from({ length: 30 }, (_, i) => append(i % 2 ? a : b, i)));
    expect([...seqs].sort((x, y) => Number(x - y))).toEqual(
      Array.from({ length: 30 }, (_, i) => BigInt(i + 1)),
    );
  });

  it('searches with PostgreSQL full-text search: words of paths and dotted names, no case or accents, prefixes, one session only', async () => {
    const { a } = await two();
    const texts = [
      'ran /usr/bin/env node build.mjs',
      'Café au lait is ready',
      'nothing to see here',
      'the Builder finished',
    ];
    await a.transaction(async (tx) => {
      for (const sessionId of ['s1', 's2']) {
        await tx.putSession(sessionRecord(sessionId));
        for (const [i, message] of texts.entries())
          await tx.insertEvent({
            sessionId,
            seq: BigInt(i + 1),
            eventId: `${sessionId}-${i}`,
            type: 'STUDIO_LOG',
            runId: null,
            createdAt: '2026-01-01T00:00:00.000Z',
            payload: JSON.stringify({ __typename: 'StudioLogEvent', message, seq: String(i + 1) }),
            foreignId: null,
          });
      }
    });
    const search = (q: string, before: bigint | null = null, limit = 10) =>
      a.transaction((tx) => tx.searchEvents('s1', q, before, limit), { readOnly: true });
    expect((await search('bin')).map((h) => h.seq)).toEqual([1n]);
    expect((await search('build.mjs')).map((h) => h.seq)).toEqual([1n]);
    expect((await search('CAFE')).map((h) => h.seq)).toEqual([2n]);
    expect((await search('build')).map((h) => h.seq)).toEqual([1n]);
    expect((await search('build*')).map((h) => h.seq)).toEqual([4n, 1n]);
    expect(await search('"(*')).toEqual([]);
    expect(await search('absent')).toEqual([]);
    const [hit] = await search('lait');
    expect(hit!.snippet.filter((p) => p.match).map((p) => p.text)).toEqual(['lait']);
    expect(hit!.snippet.map((p) => p.text).join('')).toBe('Café au lait is ready');
    const page1 = await search('build*', null, 1);
    const page2 = await search('build*', page1[0]!.cursor, 1);
    expect([page1[0]!.seq, page2[0]!.seq]).toEqual([4n, 1n]);
  });

  it('says which database it could not reach without showing the password', async () => {
    db = await freshDatabase();
    const url = new URL(db.url);
    url.password = 'wrong-secret-password';
    const store = new PgStore({ url: url.toString() });
    const error = await store.migrate().then(
      () => null,
      (e: unknown) => e as Error,
    );
    await store.close();
    expect(error?.message).toMatch(/could not connect to PostgreSQL at 127\.0\.0\.1:\d+\/studio_/);
    expect(error?.message).not.toContain('wrong-secret-password');
  });

  it('writes parameters as literals that read back exactly: quotes, backslashes, unicode, signs, arrays', async () => {
    const { a } = await two();
    const texts = [
      "it's",
      "''; DROP TABLE events; --",
      'C:\\path\\to\\file',
      "\\'; SELECT 1; --",
      'naïve café 🎉 \u2028',
      '$1 $2 $$',
      '',
    ];
    const rows = await a.transaction(
      async (tx) =>
        (tx as unknown as { sql: (t: string) => Promise<Record<string, unknown>[]> }).sql(
          inline(
            'SELECT $1::text[] AS texts, $2::bigint AS big, $3::float8 AS neg, $4 AS flag, $5::text AS none',
            [texts, -9007199254740993n, -1.5, true, null],
          ),
        ),
      { readOnly: true },
    );
    expect(rows[0]).toEqual({ texts, big: '-9007199254740993', neg: -1.5, flag: true, none: null });
    expect(() => inline('SELECT $1', [new Date()])).toThrow(/SQL literal/);
    expect(() => inline('SELECT $1', ['a\u0000b'])).toThrow(/NUL/);
    expect(() => inline('SELECT $2', ['x'])).toThrow(/\$2/);
  });

  it('a deferred write is visible to the rest of its transaction, to no one else before commit, and a failing one rolls back every write with it', async () => {
    const { a, b } = await two();
    const row = (seq: bigint, eventId: string) => ({
      sessionId: 's1',
      seq,
      eventId,
      type: 'STUDIO_LOG',
      runId: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      payload: JSON.stringify({ __typename: 'StudioLogEvent', message: `it's ${eventId} \\ ok` }),
      foreignId: null,
    });
    let seenOutside: unknown = 'not read';
    const inside = await a.transaction(async (tx) => {
      await tx.putSession(sessionRecord('s1', { lastEventSeq: '1' }));
      await tx.insertEvent(row(1n, 'e1'));
      await tx.putRun({ runId: 'r1', sessionId: 's1', status: 'RUNNING' } as never);
      seenOutside = await b.transaction((other) => other.getSession('s1'), { readOnly: true });
      return {
        events: (await tx.readEvents('s1', 0n, 10)).map((e) => e.eventId),
        session: (await tx.getSession('s1'))?.lastEventSeq,
        run: await tx.getRun('r1'),
      };
    });
    expect(seenOutside).toBeNull();
    expect(inside).toEqual({
      events: ['e1'],
      session: '1',
      run: { runId: 'r1', sessionId: 's1', status: 'RUNNING' },
    });
    expect(await b.transaction((tx) => tx.getRun('r1'), { readOnly: true })).toEqual(inside.run);

    // e1's eventId again: a unique violation that is not a retryable conflict, sent with COMMIT.
    await expect(
      a.transaction(async (tx) => {
        await tx.putSession(sessionRecord('s1', { lastEventSeq: '3' }));
        await tx.insertEvent(row(2n, 'e2'));
        await tx.insertEvent(row(3n, 'e1'));
        await tx.putRun({ runId: 'r2', sessionId: 's1', status: 'RUNNING' } as never);
      }),
    ).rejects.toMatchObject({ code: '23505', constraint: 'events_event_id_key' });
    const after = await b.transaction(
      async (tx) => ({
        events: (await tx.readEvents('s1', 0n, 10)).map((e) => e.eventId),
        session: (await tx.getSession('s1'))?.lastEventSeq,
        run: await tx.getRun('r2'),
      }),
      { readOnly: true },
    );
    expect(after).toEqual({ events: ['e1'], session: '1', run: null });
  });

  it('a read-only transaction of several statements reads one snapshot while another instance commits between them', async () => {
    const { a, b } = await two();
    await a.transaction((tx) => tx.putSession(sessionRecord('s1', { title: 'before' })));
    let runs = 0;
    const seen = await b.transaction(
      async (tx) => {
        runs += 1;
        const first = await tx.getSession('s1');
        if (runs === 2)
          await a.transaction((w) => w.putSession(sessionRecord('s1', { title: 'after' })));
        const second = await tx.getSession('s1');
        return [first?.title, second?.title];
      },
      { readOnly: true },
    );
    // The first run stopped at its second statement; the second ran inside one snapshot.
    expect(runs).toBe(2);
    expect(seen).toEqual(['before', 'before']);
    expect((await b.transaction((tx) => tx.getSession('s1'), { readOnly: true }))?.title).toBe(
      'after',
    );
  });

  it('takes over a job at once when the instance that claimed it lost its connection, never while it lives', async () => {
    const { a, b } = await two();
    const now = Date.now();
    await a.transaction((tx) => tx.enqueueJob({ kind: 'k', key: 'one', payload: '{}' }));
    const claimed = await a.transaction((tx) => tx.claimJob(['k'], 'worker-a', now, 60_000));
    expect(claimed?.workerId).toBe('worker-a');
    // A lives: its claim holds until the lease runs out.
    expect(await b.transaction((tx) => tx.claimJob(['k'], 'worker-b', now + 1, 60_000))).toBeNull();
    expect(
      (await b.transaction((tx) => tx.claimJob(['k'], 'worker-b', now + 60_000, 60_000)))?.workerId,
    ).toBe('worker-b');
    // B's claim, B gone (its connections closed as a killed process's are): A takes it at once.
    await b.close();
    const taken = await a.transaction((tx) =>
      tx.claimJob(['k'], 'worker-a2', now + 60_001, 60_000),
    );
    expect(taken).toMatchObject({ workerId: 'worker-a2', attempts: 3, status: 'CLAIMED' });
    expect(await a.transaction((tx) => tx.completeJob(taken!.jobId, 'worker-a2'))).toBe(true);
  });

  it("a starting worker takes over a job whose instance dies just after it first looked, and never a live instance's job", async () => {
    const { a, b } = await two();
    await a.transaction((tx) => tx.enqueueJob({ kind: 'k', key: 'two', payload: '{}' }));
    const claimed = await a.transaction((tx) => tx.claimJob(['k'], 'worker-a', Date.now(), 60_000));
    expect(claimed?.workerId).toBe('worker-a');
    const ran: string[] = [];
    // B as its kernel sees it, telling when one of its claims found nothing to take.
    let foundNothing: () => void = () => undefined;
    const watched = (tx: Tx): Tx =>
      new Proxy(tx, {
        get: (target, name: string) => {
          const value = (target as unknown as Record<string, unknown>)[name];
          if (name !== 'claimJob' || typeof value !== 'function')
            return typeof value === 'function' ? value.bind(target) : value;
          return async (...args: Parameters<Tx['claimJob']>) => {
            const job = await target.claimJob(...args);
            if (!job) foundNothing();
            return job;
          };
        },
      });
    const bSeen: Store = Object.assign(Object.create(b) as PgStore, {
      transaction: <T>(fn: (tx: Tx) => Promise<T>, opts?: TransactionOptions) =>
        b.transaction((tx) => fn(watched(tx)), opts),
    });
    const quiet = {
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
      addSecret: () => undefined,
    };
    const worker = (waitMs: number) =>
      new JobWorker(
        new Kernel(bSeen),
        quiet,
        { k: async (job) => void ran.push(job.key) },
        Date.now,
        60_000,
        waitMs,
      );
    // A lives: a starting worker leaves its job alone, however long it looks.
    const patient = worker(300);
    await patient.start();
    await patient.stop();
    expect(ran).toEqual([]);
    expect((await b.transaction((tx) => tx.getJob(claimed!.jobId)))?.workerId).toBe('worker-a');
    // A dies (its connections end, as a killed process's do) once the next worker has looked.
    const emptyClaim = new Promise<void>((resolve) => (foundNothing = resolve));
    const restarted = worker(10_000);
    const started = restarted.start();
    await emptyClaim;
    await a.close();
    await started;
    expect(ran).toEqual(['two']);
    expect((await b.transaction((tx) => tx.getJob(claimed!.jobId)))?.status).toBe('DONE');
    await restarted.stop();
  });

  it("reads a locked session's current run as the previous lock holder committed it", async () => {
    const { a, b } = await two();
    const run = (status: string) => ({ runId: 'r1', sessionId: 's1', status }) as never;
    await a.transaction(async (tx) => {
      await tx.putSession(sessionRecord('s1', { currentRunId: 'r1' }));
      await tx.putRun(run('RUNNING'));
    });
    let waiting: Promise<unknown> | null = null;
    await a.transaction(async (tx) => {
      await tx.lockSession('s1');
      await tx.putRun(run('SUCCEEDED'));
      // B asks for the lock while A holds it, so B's statement starts before A commits.
      waiting = b.transaction(async (other) => {
        await other.lockSession('s1');
        return other.getRun('r1');
      });
      await expect
        .poll(
          async () =>
            (
              await a.query<{ n: string }>(
                "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
              )
            ).rows[0]!.n,
          { timeout: 10_000 },
        )
        .toBe('1');
    });
    expect(await waiting).toMatchObject({ status: 'SUCCEEDED' });
  });
});
