/**
 * Approvals and decisions (decisions.ts) on the real server and store: of racing decisions on
 * one approval exactly one is recorded; a batch with one bad item decides nothing; a decision
 * commits together with its outbox job; a lapsed approval is expired by the sweep and a late
 * decision is refused; a foreign runtime hears a decision from the outbox after it was recorded,
 * and a granted call it refuses ends with TOOL_FAILED.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, waitUntil } from '../../test/server/harness.ts';
import type { Harness } from '../../test/server/harness.ts';
import type { Source, SourceHost, ToolDecision } from '../sources/Source.ts';
import { StudioError } from './StudioError.ts';
import { ErrorCode, LOCAL_APP_ID } from '../../protocol/contract.ts';

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

/** A runtime that takes decisions (or refuses them), recording what it was told. */
class DecidingRuntime implements Source {
  readonly sourceId = 'deciding-runtime';
  readonly checkpointsSupported = false;
  host: SourceHost | null = null;
  readonly delivered: ToolDecision[] = [];
  readonly recorded: ToolDecision[] = [];
  refuse = false;
  async start(host: SourceHost): Promise<void> {
    this.host = host;
    host.setStatus('LIVE');
  }
  async stop(): Promise<void> {}
  async deliverDecision(decision: ToolDecision): Promise<void> {
    if (this.refuse)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'The runtime no longer waits for this call',
      );
    this.delivered.push(decision);
  }
  onDecisionRecorded(decision: ToolDecision): void {
    this.recorded.push(decision);
  }
}

describe('decisions delivered to a foreign runtime', () => {
  const runtime = new DecidingRuntime();
  let hr: Harness;
  beforeAll(async () => {
    hr = await startHarness({ demo: false, sources: [runtime] });
  });
  afterAll(async () => {
    await hr.dispose();
  });

  async function asked(n: number) {
    const sessionId = `deciding-${n}`;
    await runtime.host!.ensureSession({ sessionId, title: 't', mode: 'ASK', requestedModel: 'm' });
    const engine = hr.server.engine;
    const { clientEpoch } = await engine.attach({ sessionId });
    const approval = await engine.proposeWithApproval({
      sessionId,
      runId: null,
      toolName: 'bash',
      arguments: { command: 'ls' },
      safeSummary: 'List files',
      reasons: ['test'],
    });
    const input = {
      sessionId,
      clientEpoch,
      toolCallId: approval.toolCallId,
      argumentHash: approval.argumentHash,
    };
    return { engine, approval, input };
  }

  it('records the decision first, then the outbox delivers it once and the source continues', async () => {
    const { engine, approval, input } = await asked(1);
    await engine.decide(input, true);
    await waitUntil(
      () => runtime.recorded.some((d) => d.approvalId === approval.approvalId),
      'the job',
    );
    expect(runtime.delivered.filter((d) => d.approvalId === approval.approvalId)).toHaveLength(1);
    expect((await engine.reads.getApproval(approval.approvalId))?.status).toBe('GRANTED');
  });

  it('ends a granted call the runtime refuses with TOOL_FAILED, and says why', async () => {
    const { engine, approval, input } = await asked(2);
    runtime.refuse = true;
    try {
      // The decision is recorded; the refusal comes from the job, after the commit.
      expect((await engine.decide(input, true)).status).toBe('GRANTED');
      const call = await waitUntil(async () => {
        const now = await engine.reads.getToolCall(approval.toolCallId);
        return now?.status === 'FAILED' ? now : undefined;
      }, 'the call to fail');
      expect(call.error).toMatchObject({ code: 'AGENT_HOST_UNAVAILABLE' });
      expect(call.error?.message).toContain('no longer waits');
    } finally {
      runtime.refuse = false;
    }
    expect(runtime.recorded.some((d) => d.approvalId === approval.approvalId)).toBe(false);
  });
});
