/**
 * Two and three real studio servers on one PostgreSQL database behave as one studio: events
 * appended through one reach subscribers on another in order with no gap or duplicate; an attach
 * on one fences a client of another; concurrent approvals of one call on two instances give
 * exactly one grant; an approved restore runs once; and when the instance running the sources is
 * killed with SIGKILL, the sources move to another instance within seconds and keep working.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  APPROVE,
  BATCHES_SUBSCRIPTION,
  CREATE_CHECKPOINT,
  EVENTS_SUBSCRIPTION,
  HEARTBEAT,
  REQUEST_RESTORE,
  attach,
  codeOf,
  collect,
  createSession,
  decideInput,
  getProject,
  failCode,
  history,
  key,
  keepAlive,
  ok,
  run,
  sendMessage,
  seqGaps,
  waitForEvent,
  waitForRunEnd,
  waitUntil,
} from '../server/harness.ts';
import type { ApprovalData, Batch, CheckpointData, Ev } from '../server/harness.ts';
import { killHard, startCluster } from './multiKit.ts';
import type { Cluster } from './multiKit.ts';

describe('several studio servers on one PostgreSQL', () => {
  let cluster: Cluster | null = null;
  afterEach(async () => {
    await cluster?.stop();
    cluster = null;
  });

  it('delivers events appended through A to an observer on B in order, with no gap or duplicate', async () => {
    cluster = await startCluster(2);
    const [A, B] = cluster.instances as [Cluster['instances'][0], Cluster['instances'][0]];
    const onA = cluster.client(A);
    const onB = cluster.client(B);
    const session = await createSession(onA, 'ASK');
    const observer = collect<Batch>(
      onB,
      BATCHES_SUBSCRIPTION,
      { sessionId: session.sessionId, afterSeq: '0' },
      'studioAgentEventBatches',
    );
    const a = await attach(onA, session.sessionId);
    const stop = keepAlive(onA, a);
    try {
      for (const content of ['What does this project do?', 'And the tests?']) {
        const { runId } = await sendMessage(onA, a, content);
        await waitForRunEnd(onA, session.sessionId, runId);
      }
      const written = await history(onA, session.sessionId);
      const last = written.at(-1)!.seq;
      await observer.waitFor(
        (batches) => batches.some((b) => b.throughSeq === last),
        'the observer on B to reach the last event',
        20_000,
      );
      const seen = observer.items.flatMap((b) => b.events.map((e) => e.seq));
      expect(seqGaps(seen, 1n, BigInt(last))).toEqual([]);
      expect(observer.items.flatMap((b) => b.events.map((e) => e.eventId))).toEqual(
        written.map((e) => e.eventId),
      );
    } finally {
      stop();
      observer.unsubscribe();
    }
  });

  it('fences a client of A when another attaches on B, and of concurrent approvals on A and B exactly one grants', async () => {
    cluster = await startCluster(2);
    const [A, B] = cluster.instances as [Cluster['instances'][0], Cluster['instances'][0]];
    const onA = cluster.client(A);
    const onB = cluster.client(B);
    const session = await createSession(onA, 'BUILD', 'cleanup-app');
    const first = await attach(onA, session.sessionId);
    const stopFirst = keepAlive(onA, first);
    const { runId } = await sendMessage(onA, first, 'Please clean up the scratch file');
    const { event: requested } = await waitForEvent(
      onA,
      session.sessionId,
      (e) => e.type === 'APPROVAL_REQUESTED' && e.runId === runId,
      'the delete approval',
      20_000,
    );
    const stream = collect<Ev>(
      onA,
      EVENTS_SUBSCRIPTION,
      { sessionId: session.sessionId, afterSeq: requested.seq, clientEpoch: first.clientEpoch },
      'crowdyStudioAgentEvents',
    );
    const second = await attach(onB, session.sessionId);
    stopFirst();
    const stopSecond = keepAlive(onB, second);
    try {
      await stream.ended;
      expect(codeOf(stream.errors[0])).toBe('AGENT_CLIENT_EPOCH_STALE');
      expect(
        await failCode(onA, HEARTBEAT, {
          input: {
            idempotencyKey: key('hb'),
            sessionId: session.sessionId,
            clientEpoch: first.clientEpoch,
          },
        }),
      ).toBe('AGENT_CLIENT_EPOCH_STALE');

      // The holder of the new epoch approves from both instances at once (two tabs behind a
      // load balancer): the database lets exactly one decision through.
      const approval = {
        toolCallId: requested.approvalToolCallId!,
        argumentHash: requested.argumentHash!,
      };
      const results = await Promise.all(
        [onA, onB, onA, onB].map((c) => run(c, APPROVE, decideInput(second, approval))),
      );
      const granted = results.filter((r) => !r.error);
      expect(granted).toHaveLength(1);
      await waitForRunEnd(onB, session.sessionId, runId);
      const events = await history(onB, session.sessionId);
      expect(
        events.filter(
          (e) => e.type === 'APPROVAL_GRANTED' && e.approvalToolCallId === approval.toolCallId,
        ),
      ).toHaveLength(1);
    } finally {
      stopSecond();
      stream.unsubscribe();
    }
  });

  it('runs an approved restore once when both instances approve it', async () => {
    cluster = await startCluster(2);
    const [A, B] = cluster.instances as [Cluster['instances'][0], Cluster['instances'][0]];
    const onA = cluster.client(A);
    const onB = cluster.client(B);
    const session = await createSession(onA, 'BUILD', 'sample-app');
    const a = await attach(onA, session.sessionId);
    const stop = keepAlive(onA, a);
    try {
      const cp = (
        await ok<{ studioCreateCheckpoint: CheckpointData }>(onA, CREATE_CHECKPOINT, {
          input: { idempotencyKey: key('cp'), sessionId: a.sessionId, clientEpoch: a.clientEpoch },
        })
      ).studioCreateCheckpoint;
      const approval = (
        await ok<{ studioRequestCheckpointRestore: ApprovalData }>(onB, REQUEST_RESTORE, {
          input: {
            idempotencyKey: key('restore'),
            sessionId: a.sessionId,
            clientEpoch: a.clientEpoch,
            checkpointId: cp.checkpointId,
            checkpointContentHash: cp.contentHash,
            expectedRevision: (await getProject(onA, a.sessionId)).revision,
          },
        })
      ).studioRequestCheckpointRestore;
      // Two reviewers' approvals (different idempotency keys) on A and B at once: one is
      // recorded, the other is refused as used once (already decided or consumed, or a decision in
      // progress).
      const results = await Promise.all(
        [onA, onB].map((c) => run(c, APPROVE, decideInput(a, approval))),
      );
      expect(results.filter((r) => !r.error)).toHaveLength(1);
      const refused = results.filter((r) => r.error);
      expect(refused).toHaveLength(1);
      expect(codeOf(refused[0]!.error)).toBe('AGENT_APPROVAL_MISMATCH');
      expect(refused[0]!.error!.graphQLErrors[0]!.message).toMatch(
        /(GRANTED|CONSUMED), not PENDING|in progress/,
      );
      const restored = (e: Ev) =>
        e.type === 'CHECKPOINT_RESTORED' && e.checkpointId === cp.checkpointId;
      await waitForEvent(onB, session.sessionId, restored, 'the restore', 30_000);
      const ofCall = (type: string) => (e: Ev) =>
        e.type === type &&
        (e.toolCallId === approval.toolCallId || e.approvalToolCallId === approval.toolCallId);
      // Read through the other instance: one grant, one run, one restore, one pre-image.
      const events = await history(onA, session.sessionId);
      expect(events.filter(ofCall('APPROVAL_GRANTED'))).toHaveLength(1);
      expect(events.filter(ofCall('APPROVAL_CONSUMED'))).toHaveLength(1);
      expect(events.filter(ofCall('TOOL_DISPATCHED'))).toHaveLength(1);
      expect(events.filter(ofCall('TOOL_SUCCEEDED'))).toHaveLength(1);
      expect(events.filter(restored)).toHaveLength(1);
      expect(
        events.filter(
          (e) => e.type === 'CHECKPOINT_CREATED' && e.checkpointReason === 'RESTORE_PREIMAGE',
        ),
      ).toHaveLength(1);
    } finally {
      stop();
    }
  });

  it('moves the sources to a surviving instance within seconds when their instance is killed with SIGKILL, and they keep working', async () => {
    cluster = await startCluster(3);
    const c = cluster;
    const holder = await waitUntil(
      async () => (await c.holderOf('demo')) ?? undefined,
      'a holder of the demo source',
      20_000,
    );
    const survivor = c.instances.find((i) => i !== holder)!;
    const onSurvivor = c.client(survivor);
    const session = await createSession(onSurvivor, 'ASK');
    const a = await attach(onSurvivor, session.sessionId);
    const stop = keepAlive(onSurvivor, a);
    try {
      const before = await sendMessage(onSurvivor, a, 'What does this project do?');
      await waitForRunEnd(onSurvivor, session.sessionId, before.runId);

      const killedAt = Date.now();
      await killHard(holder);
      const next = await waitUntil(
        async () => {
          const now = await c.holderOf('demo');
          return now && now !== holder ? now : undefined;
        },
        'another instance to take the demo source',
        15_000,
        50,
      );
      const movedMs = Date.now() - killedAt;
      expect(next).not.toBe(holder);
      // TTL 3 s + heartbeat 1 s (server/multi/multiInstance.ts), with room for a busy machine.
      expect(movedMs).toBeLessThan(8_000);

      const after = await sendMessage(onSurvivor, a, 'And the tests?');
      const events = await waitForRunEnd(onSurvivor, session.sessionId, after.runId);
      expect(events.some((e) => e.runId === after.runId && e.type === 'RUN_SUCCEEDED')).toBe(true);
      expect(
        seqGaps(
          events.map((e) => e.seq),
          1n,
          BigInt(events.at(-1)!.seq),
        ),
      ).toEqual([]);
    } finally {
      stop();
    }
  });
});
