/**
 * Diffs before approving Leviath's path tools: the real studio server (port 0, temp data dir)
 * with `--leviath-workspace` on a real folder, against the fake gateway over real sockets. A
 * write_file / edit_file approval shows the server's line diff of the file in the workspace (the
 * path taken relative to the run's working folder), the target's hash is bound into the
 * argument hash, and approving after the target changed is refused and revoked: Leviath is not
 * answered.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Engine } from '../../../server/engine/Engine.ts';
import { makeLeviathSource } from '../../../server/sources/fromFlags.ts';
import { foreignArgumentHash } from '../../../server/sources/redact.ts';
import { leviathStudioSessionId } from '../../../server/sources/leviath/LeviathSource.ts';
import { FakeLeviathPeer, type FakeInteraction } from '../../fakes/FakeLeviathPeer.ts';
import {
  APPROVE,
  attach,
  codeOf,
  decideInput,
  keepAlive,
  makeClient,
  ok,
  run,
  sha256,
  startHarness,
  waitForEvent,
  waitUntil,
  type Ev,
} from '../harness.ts';
import { toolCall } from '../approvalKit.ts';

const TOKEN = 'lev-diff-token-0123456789abcdef';
const RUN = 'writer-1786409400-dd44ee55';
const SESSION = leviathStudioSessionId(RUN);
const NOTES = '# Notes\nold line\nend\n';

const disposers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const d of disposers.splice(0).reverse()) await d();
});

function approvalRequest(tool: string, args: Record<string, unknown>): FakeInteraction {
  return {
    id: `approve-toolu_${tool}`,
    kind: 'tool_approval',
    prompt: `Allow tool call: \`${tool}\` - \`${String(args.path)}\`?`,
    options: ['Allow once', 'Deny'],
    tool_name: tool,
    tool_arguments: args,
    required: true,
    stage_name: 'draft',
    body: null,
    body_format: 'plain',
  };
}

async function studio(request: FakeInteraction) {
  const workspace = mkdtempSync(join(tmpdir(), 'studio-lev-diff-'));
  disposers.push(() => rmSync(workspace, { recursive: true, force: true }));
  mkdirSync(join(workspace, 'docs'));
  writeFileSync(join(workspace, 'docs', 'notes.md'), NOTES);
  const peer = await FakeLeviathPeer.start({
    token: TOKEN,
    config: {},
    runs: [
      {
        run_id: RUN,
        agent_name: 'writer',
        task: 'Update the notes',
        status: 'waiting_input',
        workdir: join(workspace, 'docs'),
        title: 'Notes',
        started_at: 1786409400,
        updated_at: 1786409460,
      },
    ],
    interactions: { [RUN]: request },
  });
  disposers.push(() => peer.close());
  const h = await startHarness({
    demo: false,
    sources: [
      (engine: Engine) =>
        makeLeviathSource(engine, { url: peer.url, token: TOKEN, workspaceDir: workspace }),
    ],
  });
  disposers.push(() => h.dispose());
  const c = makeClient(h);
  const { event } = await waitForEvent(
    c,
    SESSION,
    (e) => e.type === 'APPROVAL_REQUESTED',
    'the approval',
  );
  const fields = event as Ev & { approvalToolCallId: string; argumentHash: string };
  const approval = { toolCallId: fields.approvalToolCallId, argumentHash: fields.argumentHash };
  const a = await attach(c, SESSION);
  h.track(keepAlive(c, a));
  return { peer, c, a, workspace, approval };
}

describe('Leviath path tools show their diff before approval', () => {
  it('write_file: the diff of the file in the workspace, relative to the run folder, bound into the hash', async () => {
    const args = { path: 'notes.md', content: '# Notes\nnew line\nend\n' };
    const { peer, c, a, approval } = await studio(approvalRequest('write_file', args));
    const state = await toolCall(c, approval.toolCallId);
    const file = state.studioDiff?.files[0];
    expect(file?.path).toBe('docs/notes.md');
    expect(file?.beforeHash).toBe(sha256(NOTES));
    expect(file?.afterHash).toBe(sha256(args.content));
    expect(file?.hunks).toContain(' # Notes\n-old line\n+new line\n end');
    expect(approval.argumentHash).not.toBe(foreignArgumentHash('write_file', args));
    expect(approval.argumentHash).toBe(
      foreignArgumentHash('write_file', {
        input: args,
        diffTargets: [{ path: 'docs/notes.md', contentHash: sha256(NOTES) }],
      }),
    );
    await ok(c, APPROVE, decideInput(a, approval));
    // The outbox delivers the recorded decision after its commit.
    await waitUntil(() => peer.answers.length > 0, 'the answer to Leviath');
    expect(peer.answers).toEqual([
      {
        runId: RUN,
        body: { request_id: 'approve-toolu_write_file', approved: true, scope: 'once' },
      },
    ]);
  });

  it('edit_file: the edit applied to the file on disk, as a diff', async () => {
    const args = { path: 'notes.md', old_str: 'old line', new_str: 'edited line' };
    const { c, approval } = await studio(approvalRequest('edit_file', args));
    const file = (await toolCall(c, approval.toolCallId)).studioDiff?.files[0];
    expect(file?.path).toBe('docs/notes.md');
    expect(file?.afterHash).toBe(sha256('# Notes\nedited line\nend\n'));
    expect([file?.added, file?.removed]).toEqual([1, 1]);
    expect(file?.hunks).toContain('-old line\n+edited line');
  });

  it('approving after the target changed is refused and revoked, and Leviath is answered approved: false once', async () => {
    const args = { path: 'notes.md', content: '# Notes\nnew line\nend\n' };
    const { peer, c, a, workspace, approval } = await studio(approvalRequest('write_file', args));
    writeFileSync(join(workspace, 'docs', 'notes.md'), 'someone else wrote this\n');
    const refused = await run(c, APPROVE, decideInput(a, approval));
    expect(codeOf(refused.error)).toBe('AGENT_APPROVAL_MISMATCH');
    expect(refused.error?.graphQLErrors[0]?.message).toContain('docs/notes.md changed');
    expect((await toolCall(c, approval.toolCallId)).approval?.status).toBe('REVOKED');
    // A revoked approval is answered approved: false, once, so the daemon stops waiting.
    await vi.waitFor(() => expect(peer.answers).toHaveLength(1));
    expect(peer.answers.map((answer) => answer.body)).toEqual([
      { request_id: 'approve-toolu_write_file', approved: false, scope: 'once' },
    ]);
  });

  it('a shell call gets no diff, and its hash is the bare hash of its input', async () => {
    const args = { path: 'notes.md', command: 'cat notes.md' };
    const { c, approval } = await studio(approvalRequest('shell', args));
    expect((await toolCall(c, approval.toolCallId)).studioDiff).toBeNull();
    expect(approval.argumentHash).toBe(foreignArgumentHash('shell', args));
  });
});
