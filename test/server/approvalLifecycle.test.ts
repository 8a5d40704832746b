/**
 * Truthful ends of a pending approval, over real sockets: cancelling the run, closing or pausing
 * the session, the run ending on its own and the source withdrawing the call each revoke it
 * (APPROVAL_DENIED status REVOKED, the call CANCELLED, pendingApproval cleared) and a later
 * decision is refused with AGENT_APPROVAL_REVOKED. An expired or revoked demo call can be asked again.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVE,
  decideInput,
  failCode,
  getSession,
  history,
  key,
  makeClient,
  ok,
  startHarness,
  waitForEvent,
  waitForRunEnd,
  waitUntil,
} from './harness.ts';
import type { Harness, StudioClient } from './harness.ts';
import {
  ASK_AGAIN,
  CANCEL,
  CLOSE,
  PAUSE,
  RESUME,
  control,
  startDelete,
  toolCall,
  type PendingDelete,
} from './approvalKit.ts';

/** Asserts the revocation: approval REVOKED, call CANCELLED, nothing pending, decisions refused. */
async function expectRevoked(c: StudioClient, r: PendingDelete, reason: RegExp): Promise<void> {
  const state = await waitUntil(async () => {
    const s = await toolCall(c, r.approval.toolCallId);
    return s.approval?.status === 'REVOKED' ? s : undefined;
  }, 'the revocation');
  expect(state.status).toBe('CANCELLED');
  expect(state.approval?.studioDecisionReason).toMatch(reason);
  expect(state.approval?.studioAutomatic).toBe(true);
  const session = await getSession(c, r.a.sessionId);
  expect(session.pendingApproval).toBeNull();
  expect(await failCode(c, APPROVE, decideInput(r.a, r.approval))).toBe('AGENT_APPROVAL_REVOKED');
  const events = await history(c, r.a.sessionId);
  const revoked = events.find(
    (e) => e.type === 'APPROVAL_DENIED' && e.approvalId === r.requested.approvalId,
  );
  expect(revoked?.approvalStatus).toBe('REVOKED');
  const cancelled = events.find(
    (e) =>
      e.type === 'TOOL_FAILED' &&
      e.toolCallId === r.approval.toolCallId &&
      e.toolStatus === 'CANCELLED',
  );
  expect(cancelled).toBeTruthy();
  expect(BigInt(cancelled!.seq)).toBe(BigInt(revoked!.seq) + 1n);
}

describe('approval lifecycle', () => {
  let h: Harness;
  let c: StudioClient;

  beforeAll(async () => {
    h = await startHarness();
    c = makeClient(h);
  });
  afterAll(async () => {
    await h.dispose();
  });

  it('cancelling the run revokes its approval; the run ends cancelled, never "denied"', async () => {
    const r = await startDelete(h, c);
    await ok(c, CANCEL, {
      input: {
        idempotencyKey: key('cancel'),
        sessionId: r.a.sessionId,
        clientEpoch: r.a.clientEpoch,
      },
    });
    const events = await waitForRunEnd(c, r.a.sessionId, r.runId);
    const end = events.find(
      (e) => e.runId === r.runId && e.type.startsWith('RUN_') && e.type !== 'RUN_STARTED',
    );
    expect(end?.type).toBe('RUN_CANCELLED');
    expect(events.some((e) => e.type === 'RUN_FAILED' && e.runId === r.runId)).toBe(false);
    await expectRevoked(c, r, /cancelled/);
    expect(existsSync(r.scratch)).toBe(true);
  });

  it('closing the session revokes its approval and a later decision says revoked, not closed', async () => {
    const r = await startDelete(h, c);
    await ok(c, CLOSE, control(r.a));
    await expectRevoked(c, r, /run was cancelled|session was closed/);
  });

  it('pausing the session revokes the approval; on resume the demo agent asks again', async () => {
    const r = await startDelete(h, c);
    await ok(c, PAUSE, control(r.a));
    await expectRevoked(c, r, /paused/);
    await ok(c, RESUME, control(r.a));
    const { event } = await waitForEvent(
      c,
      r.a.sessionId,
      (e) =>
        e.type === 'APPROVAL_REQUESTED' &&
        e.runId === r.runId &&
        e.approvalId !== r.requested.approvalId,
      'the approval asked again',
    );
    expect(event.approvalStatus).toBe('PENDING');
    await ok(
      c,
      APPROVE,
      decideInput(r.a, {
        toolCallId: event.approvalToolCallId!,
        argumentHash: event.argumentHash!,
      }),
    );
    const ended = await waitForRunEnd(c, r.a.sessionId, r.runId);
    expect(ended.some((e) => e.type === 'RUN_SUCCEEDED' && e.runId === r.runId)).toBe(true);
  });

  it('a run that ends on its own revokes what it still waited on', async () => {
    const r = await startDelete(h, c);
    await h.server.engine.append(r.a.sessionId, [
      { type: 'RUN_FAILED', runId: r.runId, reason: 'The runtime crashed.', code: 'X' },
    ]);
    await expectRevoked(c, r, /run ended/);
  });

  it('a source withdrawing the call revokes its approval and keeps the source’s own ending', async () => {
    const r = await startDelete(h, c);
    await h.server.engine.append(r.a.sessionId, [
      {
        type: 'TOOL_FAILED',
        runId: r.runId,
        toolCallId: r.approval.toolCallId,
        toolName: 'workspace.file.delete',
        toolVersion: '1.0.0',
        status: 'FAILED',
        error: { code: 'AGENT_TOOL_FAILED', message: 'withdrawn by the runtime', retryable: false },
      },
    ]);
    const state = await toolCall(c, r.approval.toolCallId);
    expect(state.approval?.status).toBe('REVOKED');
    expect(state.approval?.studioDecisionReason).toMatch(/withdrew/);
    expect(state.status).toBe('FAILED');
    expect(await failCode(c, APPROVE, decideInput(r.a, r.approval))).toBe('AGENT_APPROVAL_REVOKED');
    await h.server.engine.endRun(r.a.sessionId, r.runId, 'RUN_CANCELLED', 'test cleanup');
  });

  it('offers Ask again for a revoked demo call; asking again proposes it in a new run', async () => {
    const r = await startDelete(h, c);
    await ok(c, CANCEL, {
      input: {
        idempotencyKey: key('cancel'),
        sessionId: r.a.sessionId,
        clientEpoch: r.a.clientEpoch,
      },
    });
    await waitForRunEnd(c, r.a.sessionId, r.runId);
    const state = await waitUntil(async () => {
      const s = await toolCall(c, r.approval.toolCallId);
      return s.studioCanAskAgain ? s : undefined;
    }, 'Ask again to be offered');
    expect(state.approval?.status).toBe('REVOKED');
    const again = (
      await ok<{
        studioAskAgain: {
          approvalId: string;
          toolCallId: string;
          argumentHash: string;
          status: string;
        };
      }>(c, ASK_AGAIN, {
        input: {
          idempotencyKey: key('again'),
          sessionId: r.a.sessionId,
          clientEpoch: r.a.clientEpoch,
          toolCallId: r.approval.toolCallId,
        },
      })
    ).studioAskAgain;
    expect(again.status).toBe('PENDING');
    expect(again.toolCallId).not.toBe(r.approval.toolCallId);
    // Asking again for the same old call while the new one waits is refused.
    expect(
      await failCode(c, ASK_AGAIN, {
        input: {
          idempotencyKey: key('again'),
          sessionId: r.a.sessionId,
          clientEpoch: r.a.clientEpoch,
          toolCallId: r.approval.toolCallId,
        },
      }),
    ).toBe('BAD_USER_INPUT');
    await ok(c, APPROVE, decideInput(r.a, again));
    await waitUntil(() => !existsSync(r.scratch), 'the scratch file to be deleted');
    const after = await waitUntil(async () => {
      const s = await getSession(c, r.a.sessionId);
      return s.activeRun === null ? s : undefined;
    }, 'the asked-again run to end');
    expect(after.currentRun?.status).toBe('SUCCEEDED');
    expect(after.currentRun?.runId).not.toBe(r.runId);
  });

  it('a human denial says a human denied', async () => {
    const r = await startDelete(h, c);
    await ok(
      c,
      `mutation Reject($input: DecideAgentToolInput!) { crowdyStudioAgentRejectTool(input: $input) { status studioDecidedBy } }`,
      decideInput(r.a, r.approval),
    );
    const events = await waitForRunEnd(c, r.a.sessionId, r.runId);
    const failed = events.find((e) => e.type === 'RUN_FAILED' && e.runId === r.runId);
    expect(failed?.code).toBe('AGENT_APPROVAL_DENIED');
    const state = await toolCall(c, r.approval.toolCallId);
    expect(state.approval?.status).toBe('DENIED');
    expect(state.approval?.studioDecidedBy).toBe('owner');
    expect(state.status).toBe('DENIED');
  });
});
