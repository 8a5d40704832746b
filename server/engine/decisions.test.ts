/**
 * Approvals and decisions (decisions.ts) on the real server and store: of racing decisions on
 * one approval exactly one is recorded; a batch with one bad item decides nothing; a decision
 * commits together with its outbox job; a lapsed approval is expired by the sweep and a late
 * decision is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from '../../test/server/harness.ts';
import type { Harness } from '../../test/server/harness.ts';
import { LOCAL_APP_ID } from '../../protocol/contract.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.dispose();
});

/** A session with an attached client and one pending approval (no run: nothing continues it). */
async function pending(options: { ttlMs?: number } = {}) {
  const engine = h.server.engine;
  const { sessionId } = await engine.createSession({ appId: LOCAL_APP_ID, mode: 'ASK' });
  const { clientEpoch } = await engine.attach({ sessionId });
  const approval = await engine.proposeWithApproval({
    sessionId,
    runId: null,
    toolName: 'note.write',
    arguments: { text: 'hello' },
    safeSummary: 'Write a note',
    reasons: ['test'],
    ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}),
  });
  return { engine, sessionId, clientEpoch, approval };
}

describe('decisions', () => {
  it('records exactly one of two racing decisions on one approval', async () => {
    const { engine, sessionId, clientEpoch, approval } = await pending();
    const input = {
      sessionId,
      clientEpoch,
      toolCallId: approval.toolCallId,
      argumentHash: approval.argumentHash,
    };
    const results = await Promise.allSettled([
      engine.decide(input, true),
      engine.decide(input, false),
      engine.decide(input, true),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results)
      if (r.status === 'rejected')
        expect(r.reason).toMatchObject({ code: 'AGENT_APPROVAL_MISMATCH' });
    const events = (
      await engine.snapshot((reads) => reads.readEventPayloads(sessionId, 0n, 1000))
    ).map((json) => JSON.parse(json) as { type: string });
    expect(
      events.filter((e) => e.type === 'APPROVAL_GRANTED' || e.type === 'APPROVAL_DENIED'),
    ).toHaveLength(1);
  });

  it('decides nothing when one decision of a batch has the wrong hash', async () => {
    const one = await pending();
    const two = await pending();
    await expect(
      one.engine.decideBatch(
        [
          {
            sessionId: one.sessionId,
            clientEpoch: one.clientEpoch,
            toolCallId: one.approval.toolCallId,
            argumentHash: one.approval.argumentHash,
            approve: true,
          },
          {
            sessionId: two.sessionId,
            clientEpoch: two.clientEpoch,
            toolCallId: two.approval.toolCallId,
            argumentHash: `sha256:${'0'.repeat(64)}`,
            approve: true,
          },
        ],
        null,
      ),
    ).rejects.toMatchObject({ code: 'AGENT_APPROVAL_MISMATCH' });
    expect((await one.engine.reads.getApproval(one.approval.approvalId))?.status).toBe('PENDING');
    expect((await two.engine.reads.getApproval(two.approval.approvalId))?.status).toBe('PENDING');
  });

  it('commits a decision together with its outbox job, which the worker then runs', async () => {
    const { engine, sessionId, clientEpoch, approval } = await pending();
    await engine.decide(
      {
        sessionId,
        clientEpoch,
        toolCallId: approval.toolCallId,
        argumentHash: approval.argumentHash,
      },
      false,
    );
    await engine.jobsIdle();
    const jobs = await engine.listJobs(['PENDING', 'CLAIMED', 'DONE', 'FAILED']);
    const job = jobs.find((j) => j.key === `decision:${approval.approvalId}`);
    expect(job?.status).toBe('DONE');
    expect((await engine.reads.getToolCall(approval.toolCallId))?.status).toBe('DENIED');
  });

  it('expires a lapsed approval in the sweep and refuses a late decision', async () => {
    const { engine, sessionId, clientEpoch, approval } = await pending({ ttlMs: 1 });
    // Past the deadline on the engine's clock (the real one here), then one sweep pass.
    while (engine.now() <= Date.parse(approval.expiresAt)) await new Promise(setImmediate);
    await engine.sweep();
    expect((await engine.reads.getApproval(approval.approvalId))?.status).toBe('EXPIRED');
    await expect(
      engine.decide(
        {
          sessionId,
          clientEpoch,
          toolCallId: approval.toolCallId,
          argumentHash: approval.argumentHash,
        },
        true,
      ),
    ).rejects.toMatchObject({ code: 'AGENT_APPROVAL_EXPIRED' });
  });
});
