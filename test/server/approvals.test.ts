/**
 * Approvals of the demo agent's `workspace.file.delete` call on a real project folder: approve,
 * reject, expiry, mismatch, concurrent double approval and single use.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVE,
  REJECT,
  attach,
  checkpointManifest,
  codeOf,
  createSession,
  decideInput,
  failCode,
  getSession,
  history,
  keepAlive,
  makeClient,
  ok,
  projectDir,
  run,
  sendMessage,
  startHarness,
  typesOf,
  waitForEvent,
  waitForRunEnd,
} from './harness.ts';
import type { ApprovalData, Attachment, Ev, Harness, StudioClient } from './harness.ts';

const SCRATCH = 'tmp/agent-scratch.md';

interface DeleteRun {
  a: Attachment;
  runId: string;
  requested: Ev;
  proposed: Ev;
  approval: { toolCallId: string; argumentHash: string };
  scratch: string;
  stop(): void;
}

/** A BUILD session on cleanup-app whose run patched files and now waits on the delete approval. */
async function startDeleteRun(h: Harness, c: StudioClient): Promise<DeleteRun> {
  const session = await createSession(c, 'BUILD', 'cleanup-app');
  const a = await attach(c, session.sessionId);
  const stop = keepAlive(c, a);
  const { runId } = await sendMessage(c, a, 'Update the changelog, then clean up the scratch file');
  const { event: requested, events } = await waitForEvent(
    c,
    session.sessionId,
    (e) => e.type === 'APPROVAL_REQUESTED' && e.runId === runId,
    'the delete approval',
  );
  const proposed = events.find(
    (e) => e.type === 'TOOL_PROPOSED' && e.toolCallId === requested.approvalToolCallId,
  )!;
  const scratch = join(projectDir(h, 'cleanup-app'), SCRATCH);
  return {
    a,
    runId,
    requested,
    proposed,
    approval: { toolCallId: requested.approvalToolCallId!, argumentHash: requested.argumentHash! },
    scratch,
    stop,
  };
}

/** The events of one tool call (and its approval) plus checkpoints and run ends, after `seq`. */
function flowAfter(events: Ev[], seq: string, toolCallId: string, runId: string): Ev[] {
  return events.filter(
    (e) =>
      BigInt(e.seq) > BigInt(seq) &&
      (e.toolCallId === toolCallId ||
        e.approvalToolCallId === toolCallId ||
        e.type === 'CHECKPOINT_CREATED' ||
        (e.runId === runId && e.type.startsWith('RUN_'))),
  );
}

describe('approvals', () => {
  let h: Harness;
  let c: StudioClient;

  beforeAll(async () => {
    h = await startHarness();
    c = makeClient(h);
  });

  afterAll(async () => {
    await h.dispose();
  });

  it('asks before deleting: TOOL_PROPOSED then APPROVAL_REQUESTED with the exact hash, and the run waits', async () => {
    const r = await startDeleteRun(h, c);
    try {
      expect(r.proposed.toolName).toBe('workspace.file.delete');
      expect(r.proposed.toolStatus).toBe('WAITING_FOR_APPROVAL');
      expect(BigInt(r.proposed.seq)).toBe(BigInt(r.requested.seq) - 1n);
      expect(r.requested.argumentHash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(r.requested.argumentHash).toBe(r.proposed.toolArgumentHash);
      expect(r.requested.approvalStatus).toBe('PENDING');
      expect(Date.parse(r.requested.expiresAt!)).toBeGreaterThan(Date.parse(r.requested.createdAt));
      expect(
        Date.parse(r.requested.expiresAt!) - Date.parse(r.requested.createdAt),
      ).toBeLessThanOrEqual(120_000);
      const session = await getSession(c, r.a.sessionId);
      expect(session.pendingApproval?.approvalId).toBe(r.requested.approvalId);
      expect(session.currentRun).toEqual({ runId: r.runId, status: 'WAITING_FOR_APPROVAL' });
      expect(existsSync(r.scratch)).toBe(true);
    } finally {
      await ok(c, REJECT, decideInput(r.a, r.approval));
      await waitForRunEnd(c, r.a.sessionId, r.runId);
      r.stop();
    }
  });

  it('approve: grants, consumes, runs the delete behind an AGENT_WRITE checkpoint and finishes the run', async () => {
    const r = await startDeleteRun(h, c);
    try {
      const scratchContent = readFileSync(r.scratch, 'utf8');
      const result = (
        await ok<{ crowdyStudioAgentApproveTool: ApprovalData }>(
          c,
          APPROVE,
          decideInput(r.a, r.approval),
        )
      ).crowdyStudioAgentApproveTool;
      expect(result).toMatchObject({
        approvalId: r.requested.approvalId,
        status: 'GRANTED',
        approved: true,
        rejected: false,
      });
      const events = await waitForRunEnd(c, r.a.sessionId, r.runId);
      const flow = flowAfter(events, r.requested.seq, r.approval.toolCallId, r.runId);
      expect(typesOf(flow)).toEqual([
        'APPROVAL_GRANTED',
        'APPROVAL_CONSUMED',
        'TOOL_DISPATCHED',
        'CHECKPOINT_CREATED',
        'TOOL_SUCCEEDED',
        'RUN_SUCCEEDED',
      ]);
      const checkpoint = flow[3]!;
      expect(checkpoint.checkpointReason).toBe('AGENT_WRITE');
      // The pre-image still holds the file the delete removed.
      const preImage = await checkpointManifest(c, checkpoint.checkpointId!);
      expect(preImage.find((f) => f.path === SCRATCH)?.byteLength).toBe(
        Buffer.byteLength(scratchContent),
      );
      expect(existsSync(r.scratch)).toBe(false);
      const after = await getSession(c, r.a.sessionId);
      expect(after.pendingApproval).toBeNull();
      // currentRun stays the newest run once it ended; activeRun is only ever an active one.
      expect(after.currentRun).toEqual({ runId: r.runId, status: 'SUCCEEDED' });
      expect(after.activeRun).toBeNull();
    } finally {
      r.stop();
    }
  });

  it('reject: denies the call and fails the run, and the file stays on disk', async () => {
    const r = await startDeleteRun(h, c);
    try {
      const result = (
        await ok<{ crowdyStudioAgentRejectTool: ApprovalData }>(
          c,
          REJECT,
          decideInput(r.a, r.approval, { reason: 'keep my notes' }),
        )
      ).crowdyStudioAgentRejectTool;
      expect(result).toMatchObject({ status: 'DENIED', rejected: true, approved: false });
      const events = await waitForRunEnd(c, r.a.sessionId, r.runId);
      const flow = flowAfter(events, r.requested.seq, r.approval.toolCallId, r.runId);
      expect(typesOf(flow)).toEqual(['APPROVAL_DENIED', 'TOOL_DENIED', 'RUN_FAILED']);
      expect(flow[1]!.toolStatus).toBe('DENIED');
      expect(existsSync(r.scratch)).toBe(true);
    } finally {
      r.stop();
    }
  });

  it('mismatch: a wrong argumentHash or an unknown call is refused with AGENT_APPROVAL_MISMATCH and records nothing', async () => {
    const r = await startDeleteRun(h, c);
    try {
      const before = await history(c, r.a.sessionId);
      const wrongHash = { ...r.approval, argumentHash: 'sha256:' + '0'.repeat(64) };
      expect(await failCode(c, APPROVE, decideInput(r.a, wrongHash))).toBe(
        'AGENT_APPROVAL_MISMATCH',
      );
      expect(await failCode(c, REJECT, decideInput(r.a, wrongHash))).toBe(
        'AGENT_APPROVAL_MISMATCH',
      );
      expect(
        await failCode(c, APPROVE, decideInput(r.a, { ...r.approval, toolCallId: 'tc_unknown' })),
      ).toBe('AGENT_APPROVAL_MISMATCH');
      const after = await history(c, r.a.sessionId);
      expect(after.map((e) => e.eventId)).toEqual(before.map((e) => e.eventId));
      expect((await getSession(c, r.a.sessionId)).pendingApproval?.status).toBe('PENDING');
      expect(existsSync(r.scratch)).toBe(true);
      // The right hash still works afterwards.
      await ok(c, REJECT, decideInput(r.a, r.approval));
      await waitForRunEnd(c, r.a.sessionId, r.runId);
    } finally {
      r.stop();
    }
  });

  it('concurrent double approval: two approvals at once produce exactly one grant', async () => {
    const r = await startDeleteRun(h, c);
    try {
      const other = makeClient(h);
      const results = await Promise.all([
        run<{ crowdyStudioAgentApproveTool: ApprovalData }>(
          c,
          APPROVE,
          decideInput(r.a, r.approval),
        ),
        run<{ crowdyStudioAgentApproveTool: ApprovalData }>(
          other,
          APPROVE,
          decideInput(r.a, r.approval),
        ),
        run<{ crowdyStudioAgentApproveTool: ApprovalData }>(
          other,
          APPROVE,
          decideInput(r.a, r.approval),
        ),
      ]);
      const granted = results.filter(
        (x) => x.data?.crowdyStudioAgentApproveTool.status === 'GRANTED',
      );
      const refused = results.filter((x) => x.error);
      expect(granted).toHaveLength(1);
      expect(refused).toHaveLength(2);
      for (const x of refused) expect(codeOf(x.error)).toBe('AGENT_APPROVAL_MISMATCH');
      const events = await waitForRunEnd(c, r.a.sessionId, r.runId);
      expect(
        events.filter(
          (e) => e.type === 'APPROVAL_GRANTED' && e.approvalId === r.requested.approvalId,
        ),
      ).toHaveLength(1);
      expect(
        events.filter((e) => e.type === 'TOOL_SUCCEEDED' && e.toolCallId === r.approval.toolCallId),
      ).toHaveLength(1);
    } finally {
      r.stop();
    }
  });

  it('is used once: approving or rejecting again after the grant is refused', async () => {
    const r = await startDeleteRun(h, c);
    try {
      await ok(c, APPROVE, decideInput(r.a, r.approval));
      await waitForRunEnd(c, r.a.sessionId, r.runId);
      const before = await history(c, r.a.sessionId);
      expect(await failCode(c, APPROVE, decideInput(r.a, r.approval))).toBe(
        'AGENT_APPROVAL_MISMATCH',
      );
      expect(await failCode(c, REJECT, decideInput(r.a, r.approval))).toBe(
        'AGENT_APPROVAL_MISMATCH',
      );
      const after = await history(c, r.a.sessionId);
      expect(after.map((e) => e.eventId)).toEqual(before.map((e) => e.eventId));
    } finally {
      r.stop();
    }
  });
});

describe('approval expiry', () => {
  let h: Harness;
  let c: StudioClient;

  beforeAll(async () => {
    h = await startHarness({ approvalTtlMs: 1500 });
    c = makeClient(h);
  });

  afterAll(async () => {
    await h.dispose();
  });

  it('expires a lapsed approval: APPROVAL_EXPIRED, the tool never runs, the file stays, a late approve is refused', async () => {
    const r = await startDeleteRun(h, c);
    try {
      const { events } = await waitForEvent(
        c,
        r.a.sessionId,
        (e) => e.type === 'RUN_FAILED' && e.runId === r.runId,
        'the run to fail after the expiry',
      );
      const flow = flowAfter(events, r.requested.seq, r.approval.toolCallId, r.runId);
      expect(typesOf(flow)).toEqual(['APPROVAL_EXPIRED', 'TOOL_FAILED', 'RUN_FAILED']);
      expect(flow[0]!.approvalStatus).toBe('EXPIRED');
      expect(flow[1]!.toolStatus).toBe('CANCELLED');
      expect(flow[1]!.toolError?.code).toBe('AGENT_APPROVAL_EXPIRED');
      expect(flow[2]!.code).toBe('AGENT_APPROVAL_EXPIRED');
      expect(existsSync(r.scratch)).toBe(true);
      expect((await getSession(c, r.a.sessionId)).pendingApproval).toBeNull();

      expect(await failCode(c, APPROVE, decideInput(r.a, r.approval))).toBe(
        'AGENT_APPROVAL_EXPIRED',
      );
      expect(await failCode(c, REJECT, decideInput(r.a, r.approval))).toBe(
        'AGENT_APPROVAL_EXPIRED',
      );
      const after = await history(c, r.a.sessionId);
      expect(
        after.filter(
          (e) => BigInt(e.seq) > BigInt(r.requested.seq) && e.type === 'APPROVAL_GRANTED',
        ),
      ).toEqual([]);
      expect(
        after.some((e) => e.type === 'TOOL_DISPATCHED' && e.toolCallId === r.approval.toolCallId),
      ).toBe(false);
      expect(existsSync(r.scratch)).toBe(true);
    } finally {
      r.stop();
    }
  });
});
