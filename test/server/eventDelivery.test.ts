/**
 * Replay-then-live delivery of both event subscriptions against the real server: appends race the
 * replay, sockets drop, consumers stall, clients leave. Every assertion is about which seqs arrive
 * and in what order, never about how fast.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVE,
  BATCHES_SUBSCRIPTION,
  EVENTS_SUBSCRIPTION,
  SESSION_FIELDS,
  appendMany,
  appendRacing,
  attach,
  codeOf,
  collect,
  collectRaw,
  createSession,
  decideInput,
  keepAlive,
  makeClient,
  ok,
  sendMessage,
  seqGaps,
  startHarness,
  waitForEvent,
  waitForRunEnd,
  waitUntil,
} from './harness.ts';
import type { Batch, Ev, Harness, SessionData, StudioClient } from './harness.ts';

let h: Harness;
let c: StudioClient;

beforeAll(async () => {
  h = await startHarness();
  c = makeClient(h);
});

afterAll(async () => {
  await h.dispose();
});

const lastSeq = async (sessionId: string): Promise<bigint> =>
  BigInt((await h.server.engine.requireSession(sessionId)).lastEventSeq);
const listeners = (sessionId: string): number => h.server.engine.notifier.listenerCount(sessionId);

/** Checks a run of batches: each batch is contiguous and labelled right; returns all events in order. */
function flatten(batches: Batch[]): Ev[] {
  const events: Ev[] = [];
  for (const b of batches) {
    expect(b.events.length).toBeGreaterThan(0);
    expect(b.fromSeq).toBe(b.events[0]!.seq);
    expect(b.throughSeq).toBe(b.events[b.events.length - 1]!.seq);
    events.push(...b.events);
  }
  return events;
}

/** The racing log lines must appear exactly once each, in append order. */
function expectLabelOrder(events: Ev[], label: string, count: number): void {
  const seen = events
    .filter((e) => e.message?.startsWith(`${label}-`))
    .map((e) => Number.parseInt(e.message!.slice(label.length + 1), 10));
  expect(seen).toEqual(Array.from({ length: count }, (_, i) => i));
}

describe('studioAgentEventBatches (observer)', () => {
  it('replays then goes live with every seq exactly once, in order, while appends race the replay', async () => {
    const session = await createSession(c, 'ASK');
    const sessionId = session.sessionId;
    await appendMany(h, sessionId, 4000, 'seed');
    const seeded = await lastSeq(sessionId);

    const sub = collect<Batch>(
      c,
      BATCHES_SUBSCRIPTION,
      { sessionId, afterSeq: '0', maxBatch: 25 },
      'studioAgentEventBatches',
    );
    const delivered = () =>
      sub.items.length ? BigInt(sub.items[sub.items.length - 1]!.throughSeq) : 0n;
    // Appends start with the subscription and go on until the replay has caught up with the seed,
    // so commits land before, during and after the replay.
    let duringReplay = 0;
    const appended = await appendRacing(h, sessionId, 1500, 'race', {
      keepGoing: () => delivered() < seeded,
      onCommit: () => {
        if (delivered() > 0n && delivered() < seeded) duringReplay += 1;
      },
    });
    const total = await lastSeq(sessionId);
    await sub.waitFor(
      (items) => items.length > 0 && BigInt(items[items.length - 1]!.throughSeq) >= total,
      `seq ${total}`,
      20_000,
    );
    sub.unsubscribe();

    expect(duringReplay).toBeGreaterThan(0);
    expect(sub.errors).toEqual([]);
    const events = flatten(sub.items);
    expect(
      seqGaps(
        events.map((e) => e.seq),
        1n,
        total,
      ),
    ).toEqual([]);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);
    expect(
      events.every(
        (e) => e.sessionId === sessionId && e.protocolVersion === 'crowdy.agent-event/1',
      ),
    ).toBe(true);
    expectLabelOrder(events, 'seed', 4000);
    expectLabelOrder(events, 'race', appended);
    await waitUntil(() => listeners(sessionId) === 0, 'the subscription to let go of the session');
  });

  it('resumes after a dropped socket from the last seen seq with no gap and no duplicate', async () => {
    const session = await createSession(c, 'ASK');
    const sessionId = session.sessionId;
    await appendMany(h, sessionId, 1500, 'seed');

    const first = makeClient(h);
    const sub1 = collectRaw<Batch>(
      first.ws,
      BATCHES_SUBSCRIPTION,
      { sessionId, afterSeq: '0', maxBatch: 20 },
      'studioAgentEventBatches',
    );
    await waitUntil(() => sub1.items.length >= 5, 'five batches before the drop');
    const racing = appendRacing(h, sessionId, 1000, 'race');
    await waitUntil(() => sub1.items.length >= 10, 'ten batches before the drop');
    // Kill the TCP connection abruptly, as a network failure would.
    first.sockets[0]!.terminate();
    await sub1.ended;
    await waitUntil(() => listeners(sessionId) === 0, 'the server to end the dropped subscription');

    const resumeAfter = sub1.items[sub1.items.length - 1]!.throughSeq;
    const second = makeClient(h);
    const sub2 = collectRaw<Batch>(
      second.ws,
      BATCHES_SUBSCRIPTION,
      { sessionId, afterSeq: resumeAfter, maxBatch: 20 },
      'studioAgentEventBatches',
    );
    await racing;
    const total = await lastSeq(sessionId);
    await waitUntil(
      () => sub2.items.some((b) => BigInt(b.throughSeq) >= total),
      `seq ${total} after the resume`,
      20_000,
    );
    sub2.unsubscribe();

    expect(sub2.errors).toEqual([]);
    const events = [...flatten(sub1.items), ...flatten(sub2.items)];
    expect(BigInt(sub2.items[0]!.fromSeq)).toBe(BigInt(resumeAfter) + 1n);
    expect(
      seqGaps(
        events.map((e) => e.seq),
        1n,
        total,
      ),
    ).toEqual([]);
    expectLabelOrder(events, 'race', await racing);
    await waitUntil(
      () => listeners(sessionId) === 0,
      'the resumed subscription to end on unsubscribe',
    );
  });

  it('keeps order for a consumer that stops reading for a while', async () => {
    const session = await createSession(c, 'ASK');
    const sessionId = session.sessionId;
    const slow = makeClient(h);
    const sub = collectRaw<Batch>(
      slow.ws,
      BATCHES_SUBSCRIPTION,
      { sessionId, afterSeq: '0', maxBatch: 50 },
      'studioAgentEventBatches',
    );
    await waitUntil(() => sub.items.length > 0, 'the first batch');
    // Stop reading the socket: the server's writes back up in the TCP buffers.
    slow.sockets[0]!.pause();
    // About 6 MB of events while the consumer does not read.
    await appendRacing(h, sessionId, 3000, 'slow', { perCommit: 10, pad: ' ' + 'x'.repeat(2000) });
    const whilePaused = sub.items.length;
    const total = await lastSeq(sessionId);
    slow.sockets[0]!.resume();
    await waitUntil(
      () => sub.items.some((b) => BigInt(b.throughSeq) >= total),
      `seq ${total} after resuming`,
      30_000,
    );
    sub.unsubscribe();

    expect(whilePaused).toBeLessThan(sub.items.length);
    expect(sub.errors).toEqual([]);
    const events = flatten(sub.items);
    expect(
      seqGaps(
        events.map((e) => e.seq),
        1n,
        total,
      ),
    ).toEqual([]);
    expectLabelOrder(events, 'slow', 3000);
    await waitUntil(() => listeners(sessionId) === 0, 'the subscription to end');
  });

  it('ends on the server when the client unsubscribes or its socket closes', async () => {
    const session = await createSession(c, 'ASK');
    const sessionId = session.sessionId;
    const one = makeClient(h);
    const two = makeClient(h);
    const a = collectRaw<Batch>(
      one.ws,
      BATCHES_SUBSCRIPTION,
      { sessionId, afterSeq: '0' },
      'studioAgentEventBatches',
    );
    const b = collectRaw<Batch>(
      two.ws,
      BATCHES_SUBSCRIPTION,
      { sessionId, afterSeq: '0' },
      'studioAgentEventBatches',
    );
    const viaUrql = collect<Batch>(
      c,
      BATCHES_SUBSCRIPTION,
      { sessionId, afterSeq: '0' },
      'studioAgentEventBatches',
    );
    await waitUntil(
      () => a.items.length > 0 && b.items.length > 0 && viaUrql.items.length > 0,
      'all three to replay',
    );
    expect(listeners(sessionId)).toBe(3);

    a.unsubscribe();
    await waitUntil(() => listeners(sessionId) === 2, 'the unsubscribed stream to end');
    await two.dispose();
    await waitUntil(() => listeners(sessionId) === 1, 'the closed socket to end its stream');
    viaUrql.unsubscribe();
    await waitUntil(() => listeners(sessionId) === 0, 'the urql stream to end');

    // Nothing is left behind: a later commit wakes nobody and the session stays writable.
    await h.server.engine.append(sessionId, [
      { type: 'STUDIO_LOG', level: 'info', message: 'after', origin: 'test' },
    ]);
    expect(listeners(sessionId)).toBe(0);
  });

  it('refuses afterSeq beyond the committed history with AGENT_EVENT_CURSOR_INVALID', async () => {
    const session = await createSession(c, 'ASK');
    const beyond = ((await lastSeq(session.sessionId)) + 1n).toString();
    const sub = collect<Batch>(
      c,
      BATCHES_SUBSCRIPTION,
      { sessionId: session.sessionId, afterSeq: beyond },
      'studioAgentEventBatches',
    );
    await sub.ended;
    expect(sub.items).toEqual([]);
    expect(codeOf(sub.errors[0])).toBe('AGENT_EVENT_CURSOR_INVALID');
    expect(listeners(session.sessionId)).toBe(0);
  });
});

describe('crowdyStudioAgentEvents (attached)', () => {
  it('replays then goes live one event at a time with every seq exactly once while appends race the replay', async () => {
    const session = await createSession(c, 'ASK');
    const sessionId = session.sessionId;
    const attachment = await attach(c, sessionId);
    const stop = keepAlive(c, attachment);
    try {
      await appendMany(h, sessionId, 1500, 'seed');
      const seeded = await lastSeq(sessionId);
      const sub = collect<Ev>(
        c,
        EVENTS_SUBSCRIPTION,
        { sessionId, afterSeq: '0', clientEpoch: attachment.clientEpoch },
        'crowdyStudioAgentEvents',
      );
      const delivered = () =>
        sub.items.length ? BigInt(sub.items[sub.items.length - 1]!.seq) : 0n;
      let duringReplay = 0;
      const appended = await appendRacing(h, sessionId, 800, 'race', {
        keepGoing: () => delivered() < seeded,
        onCommit: () => {
          if (delivered() > 0n && delivered() < seeded) duringReplay += 1;
        },
      });
      const total = await lastSeq(sessionId);
      await sub.waitFor(
        (items) => items.length > 0 && BigInt(items[items.length - 1]!.seq) >= total,
        `seq ${total}`,
        20_000,
      );
      sub.unsubscribe();

      expect(duringReplay).toBeGreaterThan(0);
      expect(sub.errors).toEqual([]);
      expect(
        seqGaps(
          sub.items.map((e) => e.seq),
          1n,
          total,
        ),
      ).toEqual([]);
      expect(new Set(sub.items.map((e) => e.eventId)).size).toBe(sub.items.length);
      expectLabelOrder(sub.items, 'seed', 1500);
      expectLabelOrder(sub.items, 'race', appended);
      await waitUntil(() => listeners(sessionId) === 0, 'the subscription to end');
    } finally {
      stop();
    }
  });

  it('refuses afterSeq beyond the committed history with AGENT_EVENT_CURSOR_INVALID', async () => {
    const session = await createSession(c, 'ASK');
    const attachment = await attach(c, session.sessionId);
    const beyond = ((await lastSeq(session.sessionId)) + 5n).toString();
    const sub = collect<Ev>(
      c,
      EVENTS_SUBSCRIPTION,
      { sessionId: session.sessionId, afterSeq: beyond, clientEpoch: attachment.clientEpoch },
      'crowdyStudioAgentEvents',
    );
    await sub.ended;
    expect(sub.items).toEqual([]);
    expect(codeOf(sub.errors[0])).toBe('AGENT_EVENT_CURSOR_INVALID');
  });
});

describe('studioSessionUpdates', () => {
  const UPDATES = `subscription Updates($appId: BigInt!) { studioSessionUpdates(appId: $appId) { ${SESSION_FIELDS} } }`;

  it('pushes a session when its run, its pending approval or its lastEventSeq changes', async () => {
    const updates = collect<SessionData>(c, UPDATES, { appId: '1' }, 'studioSessionUpdates');
    const session = await createSession(c, 'BUILD', 'cleanup-app');
    const a = await attach(c, session.sessionId);
    const stop = keepAlive(c, a);
    try {
      const mine = () => updates.items.filter((s) => s.sessionId === session.sessionId);
      const { runId } = await sendMessage(c, a, 'Tidy the project: remove the scratch file');
      const { event } = await waitForEvent(
        c,
        session.sessionId,
        (e) => e.type === 'APPROVAL_REQUESTED' && e.runId === runId,
        'the approval',
      );
      await updates.waitFor(
        () => mine().some((s) => s.pendingApproval?.approvalId === event.approvalId),
        'an update with the pending approval',
      );
      expect(mine().find((s) => s.pendingApproval)?.currentRun).toEqual({
        runId,
        status: 'WAITING_FOR_APPROVAL',
      });

      await ok(
        c,
        APPROVE,
        decideInput(a, {
          toolCallId: event.approvalToolCallId!,
          argumentHash: event.argumentHash!,
        }),
      );
      const events = await waitForRunEnd(c, session.sessionId, runId);
      const last = events[events.length - 1]!.seq;
      await updates.waitFor(
        () => mine().some((s) => s.lastEventSeq === last),
        `an update at seq ${last}`,
      );
      const final = mine().find((s) => s.lastEventSeq === last)!;
      expect(final.pendingApproval).toBeNull();
      // Updates never go back in time.
      const seqs = mine().map((s) => BigInt(s.lastEventSeq));
      expect(seqs).toEqual([...seqs].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
      expect(updates.errors).toEqual([]);
    } finally {
      stop();
      updates.unsubscribe();
    }
  });

  it('refuses another app with AGENT_PERMISSION_DENIED', async () => {
    const updates = collect<SessionData>(c, UPDATES, { appId: '7' }, 'studioSessionUpdates');
    await updates.ended;
    expect(updates.items).toEqual([]);
    expect(codeOf(updates.errors[0])).toBe('AGENT_PERMISSION_DENIED');
  });
});
