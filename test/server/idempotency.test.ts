/**
 * Every mutation takes an idempotencyKey: the same key with the same input returns the first result
 * without a second effect; the same key with another input is refused with IDEMPOTENCY_CONFLICT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVE,
  ATTACH,
  CREATE_CHECKPOINT,
  SEND,
  attach,
  createSession,
  failCode,
  history,
  keepAlive,
  key,
  makeClient,
  ok,
  run,
  startHarness,
  waitForEvent,
  waitForRunEnd,
} from './harness.ts';
import type { ApprovalData, Attachment, CheckpointData, Harness, StudioClient } from './harness.ts';

let h: Harness;
let c: StudioClient;

beforeAll(async () => {
  h = await startHarness();
  c = makeClient(h);
});

afterAll(async () => {
  await h.dispose();
});

type RunResult = { crowdyStudioAgentSendMessage: { runId: string } };

const sendVars = (a: Attachment, idempotencyKey: string, content: string) => ({
  input: { idempotencyKey, sessionId: a.sessionId, clientEpoch: a.clientEpoch, content },
});

describe('idempotency', () => {
  it('replays SendMessage with the same key and input: same run, one message, one run', async () => {
    const session = await createSession(c, 'ASK');
    const a = await attach(c, session.sessionId);
    const stop = keepAlive(c, a);
    try {
      const k = key('send');
      const first = (await ok<RunResult>(c, SEND, sendVars(a, k, 'What does this project do?')))
        .crowdyStudioAgentSendMessage;
      await waitForRunEnd(c, session.sessionId, first.runId);
      const second = (await ok<RunResult>(c, SEND, sendVars(a, k, 'What does this project do?')))
        .crowdyStudioAgentSendMessage;
      expect(second.runId).toBe(first.runId);
      const events = await history(c, session.sessionId);
      expect(events.filter((e) => e.type === 'USER_MESSAGE')).toHaveLength(1);
      expect(events.filter((e) => e.type === 'RUN_STARTED')).toHaveLength(1);
    } finally {
      stop();
    }
  });

  it('runs a mutation once when the same key arrives twice at the same time', async () => {
    const session = await createSession(c, 'ASK');
    const a = await attach(c, session.sessionId);
    const stop = keepAlive(c, a);
    try {
      const k = key('send');
      const other = makeClient(h);
      const [one, two] = await Promise.all([
        run<RunResult>(c, SEND, sendVars(a, k, 'Summarize the README')),
        run<RunResult>(other, SEND, sendVars(a, k, 'Summarize the README')),
      ]);
      expect(one.error).toBeUndefined();
      expect(two.error).toBeUndefined();
      expect(two.data!.crowdyStudioAgentSendMessage.runId).toBe(
        one.data!.crowdyStudioAgentSendMessage.runId,
      );
      await waitForRunEnd(c, session.sessionId, one.data!.crowdyStudioAgentSendMessage.runId);
      const events = await history(c, session.sessionId);
      expect(events.filter((e) => e.type === 'RUN_STARTED')).toHaveLength(1);
    } finally {
      stop();
    }
  });

  it('refuses the same key with another input with IDEMPOTENCY_CONFLICT and changes nothing', async () => {
    const session = await createSession(c, 'ASK');
    const a = await attach(c, session.sessionId);
    const stop = keepAlive(c, a);
    try {
      const k = key('send');
      const first = (await ok<RunResult>(c, SEND, sendVars(a, k, 'First question')))
        .crowdyStudioAgentSendMessage;
      await waitForRunEnd(c, session.sessionId, first.runId);
      const before = await history(c, session.sessionId);
      expect(await failCode(c, SEND, sendVars(a, k, 'A different question'))).toBe(
        'IDEMPOTENCY_CONFLICT',
      );
      const after = await history(c, session.sessionId);
      expect(after.map((e) => e.eventId)).toEqual(before.map((e) => e.eventId));
    } finally {
      stop();
    }
  });

  it('replays AttachClient with the same key: same epoch, no second attachment', async () => {
    const session = await createSession(c, 'ASK');
    const input = {
      idempotencyKey: key('attach'),
      sessionId: session.sessionId,
      clientInstanceId: 'browser-1',
    };
    type AttachResult = { crowdyStudioAgentAttachClient: { clientEpoch: string } };
    const first = (await ok<AttachResult>(c, ATTACH, { input })).crowdyStudioAgentAttachClient;
    const second = (await ok<AttachResult>(c, ATTACH, { input })).crowdyStudioAgentAttachClient;
    expect(second.clientEpoch).toBe(first.clientEpoch);
    const events = await history(c, session.sessionId);
    expect(events.filter((e) => e.type === 'CLIENT_ATTACHED')).toHaveLength(1);
    expect(await failCode(c, ATTACH, { input: { ...input, clientInstanceId: 'browser-2' } })).toBe(
      'IDEMPOTENCY_CONFLICT',
    );
  });

  it('replays studioCreateCheckpoint with the same key: one checkpoint', async () => {
    const session = await createSession(c, 'BUILD', 'sample-app');
    const a = await attach(c, session.sessionId);
    const stop = keepAlive(c, a);
    try {
      const input = {
        idempotencyKey: key('cp'),
        sessionId: session.sessionId,
        clientEpoch: a.clientEpoch,
      };
      type Result = { studioCreateCheckpoint: CheckpointData };
      const first = (await ok<Result>(c, CREATE_CHECKPOINT, { input })).studioCreateCheckpoint;
      const second = (await ok<Result>(c, CREATE_CHECKPOINT, { input })).studioCreateCheckpoint;
      expect(second.checkpointId).toBe(first.checkpointId);
      expect(second.contentHash).toBe(first.contentHash);
      const events = await history(c, session.sessionId);
      expect(events.filter((e) => e.type === 'CHECKPOINT_CREATED')).toHaveLength(1);
    } finally {
      stop();
    }
  });

  it('replays an approval with the same key instead of refusing it as used', async () => {
    const session = await createSession(c, 'BUILD', 'cleanup-app');
    const a = await attach(c, session.sessionId);
    const stop = keepAlive(c, a);
    try {
      const { runId } = (
        await ok<RunResult>(c, SEND, sendVars(a, key('send'), 'Remove the scratch file'))
      ).crowdyStudioAgentSendMessage;
      const { event } = await waitForEvent(
        c,
        session.sessionId,
        (e) => e.type === 'APPROVAL_REQUESTED' && e.runId === runId,
        'the approval',
      );
      const input = {
        idempotencyKey: key('approve'),
        sessionId: session.sessionId,
        clientEpoch: a.clientEpoch,
        toolCallId: event.approvalToolCallId!,
        argumentHash: event.argumentHash!,
      };
      type Result = { crowdyStudioAgentApproveTool: ApprovalData };
      const first = (await ok<Result>(c, APPROVE, { input })).crowdyStudioAgentApproveTool;
      await waitForRunEnd(c, session.sessionId, runId);
      const retry = (await ok<Result>(c, APPROVE, { input })).crowdyStudioAgentApproveTool;
      expect(retry).toEqual(first);
      expect(retry.status).toBe('GRANTED');
      const events = await history(c, session.sessionId);
      expect(events.filter((e) => e.type === 'APPROVAL_GRANTED')).toHaveLength(1);
      expect(await failCode(c, APPROVE, { input: { ...input, reason: 'other input' } })).toBe(
        'IDEMPOTENCY_CONFLICT',
      );
    } finally {
      stop();
    }
  });
});
