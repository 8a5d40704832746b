/**
 * Attachments: epoch fencing, heartbeat expiry and acknowledgements, through the real urql client
 * and graphql-ws subscriptions.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACK,
  APPROVE,
  EVENTS_SUBSCRIPTION,
  HEARTBEAT,
  attach,
  codeOf,
  collect,
  createSession,
  decideInput,
  failCode,
  getSession,
  history,
  keepAlive,
  key,
  makeClient,
  ok,
  projectDir,
  sendMessage,
  startHarness,
  waitForEvent,
  waitForRunEnd,
} from './harness.ts';
import type { ApprovalData, Attachment, Ev, Harness } from './harness.ts';

const heartbeatVars = (a: Attachment) => ({
  input: { idempotencyKey: key('hb'), sessionId: a.sessionId, clientEpoch: a.clientEpoch },
});
const ackVars = (a: Attachment, throughSeq: string) => ({
  input: {
    idempotencyKey: key('ack'),
    sessionId: a.sessionId,
    clientEpoch: a.clientEpoch,
    throughSeq,
  },
});

describe('epoch fencing', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });

  afterAll(async () => {
    await h.dispose();
  });

  it('fences the older client: its stream ends with AGENT_CLIENT_EPOCH_STALE, its decisions are refused, and the newer client decides', async () => {
    const clientA = makeClient(h);
    const clientB = makeClient(h);
    const session = await createSession(clientA, 'BUILD', 'cleanup-app');
    const a = await attach(clientA, session.sessionId);
    const stopA = keepAlive(clientA, a);
    const run = await sendMessage(clientA, a, 'Please clean up the scratch file');
    const { event: requested } = await waitForEvent(
      clientA,
      session.sessionId,
      (e) => e.type === 'APPROVAL_REQUESTED' && e.runId === run.runId,
      'the delete approval',
    );
    const streamA = collect<Ev>(
      clientA,
      EVENTS_SUBSCRIPTION,
      { sessionId: session.sessionId, afterSeq: requested.seq, clientEpoch: a.clientEpoch },
      'crowdyStudioAgentEvents',
    );
    await ok(clientA, HEARTBEAT, heartbeatVars(a));

    const b = await attach(clientB, session.sessionId);
    const stopB = keepAlive(clientB, b);
    try {
      expect(BigInt(b.clientEpoch)).toBeGreaterThan(BigInt(a.clientEpoch));
      expect(b.session.clientEpoch).toBe(b.clientEpoch);

      await streamA.ended;
      expect(codeOf(streamA.errors[0])).toBe('AGENT_CLIENT_EPOCH_STALE');
      // The fenced stream delivered nothing from the new epoch's attachment onwards.
      expect(
        streamA.items.every(
          (e) => e.type !== 'CLIENT_ATTACHED' || e.lifecycleEpoch !== b.clientEpoch,
        ),
      ).toBe(true);

      const approval = {
        toolCallId: requested.approvalToolCallId!,
        argumentHash: requested.argumentHash!,
      };
      expect(await failCode(clientA, APPROVE, decideInput(a, approval))).toBe(
        'AGENT_CLIENT_EPOCH_STALE',
      );
      expect(await failCode(clientA, HEARTBEAT, heartbeatVars(a))).toBe('AGENT_CLIENT_EPOCH_STALE');
      expect(await failCode(clientA, ACK, ackVars(a, '1'))).toBe('AGENT_CLIENT_EPOCH_STALE');
      // A stream opened with the fenced epoch is refused at once.
      const late = collect<Ev>(
        clientA,
        EVENTS_SUBSCRIPTION,
        { sessionId: session.sessionId, afterSeq: '0', clientEpoch: a.clientEpoch },
        'crowdyStudioAgentEvents',
      );
      await late.ended;
      expect(late.items).toEqual([]);
      expect(codeOf(late.errors[0])).toBe('AGENT_CLIENT_EPOCH_STALE');

      const events = await history(clientB, session.sessionId);
      expect(
        events.some(
          (e) =>
            e.type === 'CLIENT_DETACHED' &&
            e.lifecycleEpoch === a.clientEpoch &&
            e.lifecycleReason === 'CLIENT_REATTACHED',
        ),
      ).toBe(true);
      expect(events.filter((e) => e.type === 'APPROVAL_GRANTED')).toEqual([]);

      // The approval is still pending and B's decision goes through.
      const pending = (await getSession(clientB, session.sessionId)).pendingApproval;
      expect(pending?.approvalId).toBe(requested.approvalId);
      const granted = await ok<{ crowdyStudioAgentApproveTool: ApprovalData }>(
        clientB,
        APPROVE,
        decideInput(b, approval),
      );
      expect(granted.crowdyStudioAgentApproveTool.status).toBe('GRANTED');
      expect(granted.crowdyStudioAgentApproveTool.approved).toBe(true);
      const end = await waitForRunEnd(clientB, session.sessionId, run.runId);
      expect(end.filter((e) => e.runId === run.runId).pop()?.type).toBe('RUN_SUCCEEDED');
      expect(existsSync(join(projectDir(h, 'cleanup-app'), 'tmp/agent-scratch.md'))).toBe(false);
    } finally {
      stopA();
      stopB();
    }
  });

  it('moves the acknowledgement forward only, never past committed history, and replays from it on the next attach', async () => {
    const c = makeClient(h);
    const session = await createSession(c, 'ASK');
    const instance = `browser-${key('instance')}`;
    const a = await attach(c, session.sessionId, instance);
    expect(a.replayAfterSeq).toBe('0');
    const last = (await getSession(c, session.sessionId)).lastEventSeq;
    expect(BigInt(last)).toBeGreaterThanOrEqual(3n);

    const ack = async (through: string) =>
      (
        await ok<{ crowdyStudioAgentAcknowledgeEvents: { throughSeq: string } }>(
          c,
          ACK,
          ackVars(a, through),
        )
      ).crowdyStudioAgentAcknowledgeEvents.throughSeq;
    expect(await ack('2')).toBe('2');
    expect(await ack('1')).toBe('2');
    expect(await ack(last)).toBe(last);
    expect(await failCode(c, ACK, ackVars(a, (BigInt(last) + 1n).toString()))).toBe(
      'AGENT_EVENT_CURSOR_INVALID',
    );
    expect(await ack('2')).toBe(last);

    const again = await attach(c, session.sessionId, instance);
    expect(again.replayAfterSeq).toBe(last);
    expect(BigInt(again.clientEpoch)).toBeGreaterThan(BigInt(a.clientEpoch));
    expect(BigInt(again.replayAfterSeq)).toBeLessThanOrEqual(BigInt(again.session.lastEventSeq));
    const stranger = await attach(c, session.sessionId, `browser-${key('other')}`);
    expect(stranger.replayAfterSeq).toBe('0');
  });
});

describe('heartbeat expiry', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ heartbeatStaleMs: 800 });
  });

  afterAll(async () => {
    await h.dispose();
  });

  it('detaches an attachment that stops heart-beating and keeps one that heart-beats', async () => {
    const c = makeClient(h);
    const keptSession = await createSession(c, 'ASK');
    const silentSession = await createSession(c, 'ASK');
    // The kept attachment is older than the silent one: had its heartbeats not counted, it would
    // have lapsed first.
    const kept = await attach(c, keptSession.sessionId);
    const stop = keepAlive(c, kept, 150);
    try {
      const silent = await attach(c, silentSession.sessionId);
      const stream = collect<Ev>(
        c,
        EVENTS_SUBSCRIPTION,
        { sessionId: silentSession.sessionId, afterSeq: '0', clientEpoch: silent.clientEpoch },
        'crowdyStudioAgentEvents',
      );
      const { event } = await waitForEvent(
        c,
        silentSession.sessionId,
        (e) => e.type === 'CLIENT_DETACHED' && e.lifecycleEpoch === silent.clientEpoch,
        'the silent attachment to be detached',
      );
      expect(event.lifecycleReason).toBe('HEARTBEAT_TIMEOUT');
      await stream.ended;
      expect(codeOf(stream.errors[0])).toBe('AGENT_CLIENT_EPOCH_STALE');
      expect(await failCode(c, HEARTBEAT, heartbeatVars(silent))).toBe('AGENT_CLIENT_EPOCH_STALE');
      expect(await failCode(c, ACK, ackVars(silent, '1'))).toBe('AGENT_CLIENT_EPOCH_STALE');
      expect((await getSession(c, silentSession.sessionId)).clientEpoch).toBeNull();

      const keptEvents = await history(c, keptSession.sessionId);
      expect(keptEvents.filter((e) => e.type === 'CLIENT_DETACHED')).toEqual([]);
      expect((await getSession(c, keptSession.sessionId)).clientEpoch).toBe(kept.clientEpoch);
      await ok(c, HEARTBEAT, heartbeatVars(kept));
      await ok(c, ACK, ackVars(kept, '1'));

      // Attaching again works and gives a newer epoch.
      const back = await attach(c, silentSession.sessionId);
      expect(BigInt(back.clientEpoch)).toBeGreaterThan(BigInt(silent.clientEpoch));
      expect(back.session.clientEpoch).toBe(back.clientEpoch);
    } finally {
      stop();
    }
  });
});
