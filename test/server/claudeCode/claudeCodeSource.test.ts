/**
 * Claude Code sessions started and supervised through the studio: the real server (port 0, temp
 * data dir) with a --claude-code folder, the real Claude Code binary run by the Agent SDK against
 * the scripted Messages API fake, and the contract's own mutations through the real client.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeCodeProjectId, makeClaudeCodeSource } from '../../../server/sources/fromFlags.ts';
import type { Engine } from '../../../server/engine/Engine.ts';
import { FakeMessagesApi, type ScriptedReply } from '../../fakes/FakeMessagesApi.ts';
import {
  APPROVE,
  REJECT,
  attach,
  createSession,
  decideInput,
  keepAlive,
  makeClient,
  ok,
  sendMessage,
  startHarness,
  waitForEvent,
  type Ev,
} from '../harness.ts';

const KEY = 'sk-ant-api03-studio-cc-0123456789abcdef';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function studio(script: (root: string) => ScriptedReply[], approvalTtlMs?: number) {
  const home = mkdtempSync(join(tmpdir(), 'studio-cc-home-'));
  const root = mkdtempSync(join(tmpdir(), 'studio-cc-repo-'));
  writeFileSync(join(root, 'notes.md'), 'before\n');
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const api = await FakeMessagesApi.start(KEY, script(root));
  cleanups.push(() => api.close());
  const h = await startHarness({
    demo: false,
    sources: [
      (engine: Engine) =>
        makeClaudeCodeSource(engine, {
          dirs: [root],
          apiKey: KEY,
          baseUrl: api.url,
          home,
          env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
          ...(approvalTtlMs ? { approvalTtlMs } : {}),
        }),
    ],
  });
  cleanups.push(() => h.dispose());
  const c = makeClient(h);
  const session = await createSession(c, 'BUILD', claudeCodeProjectId(root));
  const a = await attach(c, session.sessionId);
  h.track(keepAlive(c, a));
  return { api, h, c, a, root, sessionId: session.sessionId };
}

const writeTurn = (root: string): ScriptedReply[] => [
  {
    content: [
      { type: 'text', text: 'Updating the notes.' },
      {
        type: 'tool_use',
        id: 'toolu_01Notes',
        name: 'Write',
        input: { file_path: join(root, 'notes.md'), content: 'after\n' },
      },
    ],
  },
  { content: [{ type: 'text', text: 'Notes updated.' }] },
];

const pendingApproval = (e: Ev) => e.type === 'APPROVAL_REQUESTED';
const asApproval = (e: Ev) => {
  const fields = e as Ev & { approvalToolCallId: string; argumentHash: string };
  return { toolCallId: fields.approvalToolCallId, argumentHash: fields.argumentHash };
};

describe('Claude Code through the studio', () => {
  it('a write approved in the studio lands on disk after an exact pre-image checkpoint', async () => {
    const { h, c, a, root, sessionId } = await studio(writeTurn);
    const { runId } = await sendMessage(c, a, 'Update the notes');
    const { event } = await waitForEvent(c, sessionId, pendingApproval, 'the approval', 60_000);
    const approval = asApproval(event);
    expect(approval.toolCallId).toBe('toolu_01Notes');
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('before\n');
    await ok(c, APPROVE, decideInput(a, approval));
    const { events } = await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED' && e.runId === runId,
      'the end of the run',
      60_000,
    );
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('after\n');
    const types = events.map((e) => e.type);
    // The pre-image checkpoint is committed before the grant, and one follows the tool result.
    const firstCheckpoint = types.indexOf('CHECKPOINT_CREATED');
    expect(firstCheckpoint).toBeGreaterThan(-1);
    expect(firstCheckpoint).toBeLessThan(types.indexOf('APPROVAL_GRANTED'));
    expect(types.lastIndexOf('CHECKPOINT_CREATED')).toBeGreaterThan(
      types.indexOf('TOOL_SUCCEEDED'),
    );
    expect(types).toContain('BUDGET_UPDATED');
    expect(h.logs.join('\n')).not.toContain(KEY);
  }, 120_000);

  it('a denial leaves the file untouched and the model receives the reason', async () => {
    const { api, c, a, root, sessionId } = await studio(writeTurn);
    await sendMessage(c, a, 'Update the notes');
    const { event } = await waitForEvent(c, sessionId, pendingApproval, 'the approval', 60_000);
    const approval = asApproval(event);
    await ok(c, REJECT, decideInput(a, approval, { reason: 'Keep the old notes.' }));
    await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED',
      'the end of the run',
      60_000,
    );
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('before\n');
    expect(existsSync(join(root, 'notes.md'))).toBe(true);
    expect(JSON.stringify(api.loopRequests()[1]?.messages.at(-1))).toContain('Keep the old notes.');
  }, 120_000);

  it('an approval nobody decides expires, and Claude Code is told it was denied because it expired', async () => {
    const { api, c, root, sessionId } = await studio(writeTurn, 1_000);
    const a = await attach(c, sessionId);
    await sendMessage(c, a, 'Update the notes');
    await waitForEvent(c, sessionId, (e) => e.type === 'APPROVAL_EXPIRED', 'the expiry', 60_000);
    await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED',
      'the end of the run',
      60_000,
    );
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('before\n');
    expect(JSON.stringify(api.loopRequests()[1]?.messages.at(-1))).toContain('expired');
  }, 120_000);

  it('lists the folder in studioProjects with the source that starts sessions in it', async () => {
    const { c, root } = await studio(writeTurn);
    const data = await ok<{
      studioProjects: { projectId: string; name: string; studioStartSource: string }[];
    }>(c, 'query P { studioProjects { projectId name studioStartSource } }');
    expect(data.studioProjects).toEqual([
      {
        projectId: claudeCodeProjectId(root),
        name: root.split('/').at(-1),
        studioStartSource: 'claude-code',
      },
    ]);
  }, 60_000);
});
