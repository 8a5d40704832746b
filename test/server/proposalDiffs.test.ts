/**
 * Diffs before approving, over real sockets and a real project folder: the server computes the
 * line diff of the demo agent's patch and delete against the files on disk, and a decision on a
 * call whose target changed since the diff was made is refused (and the approval revoked).
 */
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVE,
  decideInput,
  failCode,
  history,
  makeClient,
  ok,
  run,
  startHarness,
  waitForEvent,
  waitForRunEnd,
  sha256,
  codeOf,
} from './harness.ts';
import type { Harness, StudioClient } from './harness.ts';
import { startDelete, toolCall } from './approvalKit.ts';

describe('proposal diffs', () => {
  let h: Harness;
  let c: StudioClient;

  beforeAll(async () => {
    h = await startHarness();
    c = makeClient(h);
  });
  afterAll(async () => {
    await h.dispose();
  });

  it('shows the delete as removed lines of the file on disk, and the patch as added lines', async () => {
    const r = await startDelete(h, c);
    const state = await toolCall(c, r.approval.toolCallId);
    const file = state.studioDiff?.files[0];
    expect(file?.path).toBe('tmp/agent-scratch.md');
    expect(file?.afterHash).toBeNull();
    expect(file?.beforeHash).toMatch(/^sha256:/);
    expect(file?.removed).toBe(1);
    expect(file?.hunks).toContain('-Scratch notes for: Update the changelog');
    const events = await history(c, r.a.sessionId);
    const patch = events.find(
      (e) => e.type === 'TOOL_PROPOSED' && e.toolName === 'workspace.file.patch',
    );
    const patchState = await toolCall(c, patch!.toolCallId!);
    const changelog = patchState.studioDiff?.files.find((f) => f.path === 'CHANGELOG.md');
    expect(changelog?.added).toBeGreaterThanOrEqual(1);
    expect(changelog?.hunks).toMatch(/^\+- Update the changelog, then clean up the scratch file$/m);
    await ok(c, APPROVE, decideInput(r.a, r.approval));
    await waitForRunEnd(c, r.a.sessionId, r.runId);
  });

  it('refuses to approve a call whose target changed since the diff was shown, and asks again with the new diff', async () => {
    const r = await startDelete(h, c);
    const before = (await toolCall(c, r.approval.toolCallId)).studioDiff!.files[0]!;
    writeFileSync(r.scratch, 'Someone else wrote this meanwhile\nand this\n');
    const refused = await run(c, APPROVE, decideInput(r.a, r.approval));
    expect(codeOf(refused.error)).toBe('AGENT_APPROVAL_MISMATCH');
    expect(refused.error?.graphQLErrors[0]?.message).toContain('tmp/agent-scratch.md changed');
    expect((await toolCall(c, r.approval.toolCallId)).approval?.status).toBe('REVOKED');
    expect(await failCode(c, APPROVE, decideInput(r.a, r.approval))).toBe('AGENT_APPROVAL_REVOKED');
    const { event } = await waitForEvent(
      c,
      r.a.sessionId,
      (e) =>
        e.type === 'APPROVAL_REQUESTED' &&
        e.runId === r.runId &&
        e.approvalId !== r.requested.approvalId,
      'the call asked again',
    );
    const again = await toolCall(c, event.approvalToolCallId!);
    const file = again.studioDiff!.files[0]!;
    expect(file.beforeHash).toBe(sha256('Someone else wrote this meanwhile\nand this\n'));
    expect(file.beforeHash).not.toBe(before.beforeHash);
    expect(file.removed).toBe(2);
    expect(file.hunks).toContain('-Someone else wrote this meanwhile');
    await ok(
      c,
      APPROVE,
      decideInput(r.a, {
        toolCallId: event.approvalToolCallId!,
        argumentHash: event.argumentHash!,
      }),
    );
    await waitForRunEnd(c, r.a.sessionId, r.runId);
  });

  it('binds the diff target into the argument hash (same arguments, other file content, other hash)', async () => {
    const engine = h.server.engine;
    const ctx = 'ctx-1';
    const args = { expectedRevision: '1', paths: ['a.txt'] };
    const one = engine.argumentHash('ses', 'tc', 'workspace.file.delete', args, ctx, [
      { path: 'a.txt', contentHash: sha256('one') },
    ]);
    const two = engine.argumentHash('ses', 'tc', 'workspace.file.delete', args, ctx, [
      { path: 'a.txt', contentHash: sha256('two') },
    ]);
    expect(one).not.toBe(two);
    expect(engine.argumentHash('ses', 'tc', 'workspace.file.delete', args, ctx)).not.toBe(one);
  });
});
