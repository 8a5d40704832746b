/**
 * studioDecideTools over real sockets: a batch applies all or nothing, its error names each
 * failing item, and concurrent decisions of the same approval apply it once.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ProjectWorkspace } from '../../server/workspace/ProjectWorkspace.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVE,
  decideInput,
  key,
  makeClient,
  ok,
  run,
  startHarness,
  codeOf,
  waitForRunEnd,
  waitUntil,
} from './harness.ts';
import type { Harness, StudioClient } from './harness.ts';
import { DECIDE_TOOLS, startDelete, toolCall, type PendingDelete } from './approvalKit.ts';

function item(r: PendingDelete, approve: boolean, hash = r.approval.argumentHash) {
  return {
    sessionId: r.a.sessionId,
    clientEpoch: r.a.clientEpoch,
    toolCallId: r.approval.toolCallId,
    argumentHash: hash,
    approve,
  };
}

describe('studioDecideTools', () => {
  let h: Harness;
  let c: StudioClient;

  beforeAll(async () => {
    h = await startHarness();
    c = makeClient(h);
    // A third real project folder, so three runs can wait at once without moving each other's revision.
    const root = join(h.dataDir, 'projects', 'third-app');
    mkdirSync(root, { recursive: true });
    ProjectWorkspace.createSample(root);
    await h.server.engine.registerProject({ projectId: 'third-app', name: 'third-app', root });
  });
  afterAll(async () => {
    await h.dispose();
  });

  it('approves three calls of three sessions in one batch, each recorded with who decided', async () => {
    const runs = [
      await startDelete(h, c),
      await startDelete(h, c, { projectId: 'sample-app' }),
      await startDelete(h, c, { projectId: 'third-app' }),
    ];
    const data = await ok<{
      studioDecideTools: { status: string; studioDecidedBy: string; toolCallId: string }[];
    }>(c, DECIDE_TOOLS, {
      input: { idempotencyKey: key('batch'), decisions: runs.map((r) => item(r, true)) },
    });
    expect(data.studioDecideTools.map((a) => a.status)).toEqual(['GRANTED', 'GRANTED', 'GRANTED']);
    expect(data.studioDecideTools.every((a) => a.studioDecidedBy === 'owner')).toBe(true);
    for (const r of runs) {
      const events = await waitForRunEnd(c, r.a.sessionId, r.runId);
      expect(events.some((e) => e.type === 'RUN_SUCCEEDED' && e.runId === r.runId)).toBe(true);
    }
    expect(existsSync(runs[1]!.scratch)).toBe(false);
  });

  it('applies none when one fails, and names each failing item', async () => {
    const a = await startDelete(h, c);
    const b = await startDelete(h, c);
    const d = await startDelete(h, c);
    const wrong = 'sha256:' + '0'.repeat(64);
    const result = await run(c, DECIDE_TOOLS, {
      input: {
        idempotencyKey: key('batch'),
        decisions: [item(a, true), item(b, true, wrong), item(d, false, wrong)],
      },
    });
    expect(codeOf(result.error)).toBe('AGENT_APPROVAL_MISMATCH');
    const items = result.error?.graphQLErrors[0]?.extensions?.items as {
      index: number;
      toolCallId: string;
      code: string;
    }[];
    expect(items.map((i) => [i.index, i.toolCallId])).toEqual([
      [1, b.approval.toolCallId],
      [2, d.approval.toolCallId],
    ]);
    expect(result.error?.graphQLErrors[0]?.message).toContain(b.approval.toolCallId);
    for (const r of [a, b, d])
      expect((await toolCall(c, r.approval.toolCallId)).approval?.status).toBe('PENDING');
    await ok(c, DECIDE_TOOLS, {
      input: { idempotencyKey: key('batch'), decisions: [a, b, d].map((r) => item(r, false)) },
    });
    for (const r of [a, b, d]) await waitForRunEnd(c, r.a.sessionId, r.runId);
  });

  it('refuses a batch that names one call twice', async () => {
    const a = await startDelete(h, c);
    const result = await run(c, DECIDE_TOOLS, {
      input: { idempotencyKey: key('batch'), decisions: [item(a, true), item(a, false)] },
    });
    expect(codeOf(result.error)).toBe('AGENT_APPROVAL_MISMATCH');
    expect((await toolCall(c, a.approval.toolCallId)).approval?.status).toBe('PENDING');
    await ok(c, APPROVE, decideInput(a.a, a.approval));
    await waitForRunEnd(c, a.a.sessionId, a.runId);
  });

  it('races a batch against a single decision of one of its calls: each approval is decided once, the batch whole or not at all', async () => {
    for (let round = 0; round < 3; round++) {
      // Two project folders: when the single decision wins, b's delete must not change the file
      // a's diff showed (that would rightly revoke a).
      const a = await startDelete(h, c, { projectId: 'sample-app' });
      const b = await startDelete(h, c);
      const [batch, single] = await Promise.all([
        run(c, DECIDE_TOOLS, {
          input: { idempotencyKey: key('batch'), decisions: [item(a, true), item(b, true)] },
        }),
        run(c, APPROVE, decideInput(b.a, b.approval)),
      ]);
      const sa = (await toolCall(c, a.approval.toolCallId)).approval?.status;
      const sb = await waitUntil(async () => {
        const s = (await toolCall(c, b.approval.toolCallId)).approval?.status;
        return s !== 'PENDING' ? s : undefined;
      }, 'b decided');
      expect(batch.error && single.error).toBeFalsy();
      if (batch.error) {
        expect(sa).toBe('PENDING');
        expect(single.error).toBeUndefined();
        await ok(c, APPROVE, decideInput(a.a, a.approval));
      } else {
        expect(sa).not.toBe('PENDING');
        expect(codeOf(single.error)).toMatch(/AGENT_APPROVAL_MISMATCH/);
      }
      expect(['GRANTED', 'CONSUMED']).toContain(sb);
      await waitForRunEnd(c, a.a.sessionId, a.runId);
      await waitForRunEnd(c, b.a.sessionId, b.runId);
    }
  });
});
