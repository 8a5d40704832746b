/**
 * Diffs before approving Claude Code's writes: the real server (port 0, temp data dir) with a
 * --claude-code folder, the real Claude Code binary against the scripted Messages API fake. The
 * card's diff of Write and Edit is the server's line diff against the file on disk, the target's
 * hash is bound into the argument hash, and approving after the target changed is refused, the
 * approval revoked and Claude Code told the call did not run.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeCodeProjectId, makeClaudeCodeSource } from '../../../server/sources/fromFlags.ts';
import { foreignArgumentHash } from '../../../server/sources/redact.ts';
import type { Engine } from '../../../server/engine/Engine.ts';
import { FakeMessagesApi, type ScriptedReply } from '../../fakes/FakeMessagesApi.ts';
import {
  APPROVE,
  REJECT,
  attach,
  codeOf,
  createSession,
  decideInput,
  keepAlive,
  makeClient,
  ok,
  run,
  sendMessage,
  sha256,
  startHarness,
  waitForEvent,
  type Ev,
} from '../harness.ts';
import { toolCall } from '../approvalKit.ts';

const KEY = 'sk-ant-api03-studio-cc-diffs-0123456789abcdef';
const NOTES = 'line one\nline two\nline three\n';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function studio(script: (root: string) => ScriptedReply[]) {
  const home = mkdtempSync(join(tmpdir(), 'studio-cc-home-'));
  const root = mkdtempSync(join(tmpdir(), 'studio-cc-repo-'));
  writeFileSync(join(root, 'notes.md'), NOTES);
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

const turn = (id: string, name: string, input: Record<string, unknown>): ScriptedReply => ({
  content: [
    { type: 'text', text: `Using ${name}.` },
    { type: 'tool_use', id, name, input },
  ],
});
const done: ScriptedReply = { content: [{ type: 'text', text: 'Done.' }] };

const writeScript = (root: string): ScriptedReply[] => [
  turn('toolu_01Write', 'Write', {
    file_path: join(root, 'notes.md'),
    content: 'line one\nline 2\nline three\nline four\n',
  }),
  done,
];

/** Claude Code edits only a file it read in this session: Read first, then Edit. */
const editScript = (root: string): ScriptedReply[] => [
  turn('toolu_01Read', 'Read', { file_path: join(root, 'notes.md') }),
  turn('toolu_01Edit', 'Edit', {
    file_path: join(root, 'notes.md'),
    old_string: 'line two',
    new_string: 'line 2',
  }),
  done,
];

const approvalOf = (id: string) => (e: Ev) =>
  e.type === 'APPROVAL_REQUESTED' &&
  (e as Ev & { approvalToolCallId: string }).approvalToolCallId === id;
const asApproval = (e: Ev) => {
  const fields = e as Ev & { approvalToolCallId: string; argumentHash: string };
  return { toolCallId: fields.approvalToolCallId, argumentHash: fields.argumentHash };
};

describe('Claude Code writes show their diff before approval', () => {
  it('a Write shows the line diff against the file on disk, binds its hash, and lands once approved', async () => {
    const { c, a, root, sessionId } = await studio(writeScript);
    const { runId } = await sendMessage(c, a, 'Update the notes');
    const { event } = await waitForEvent(
      c,
      sessionId,
      approvalOf('toolu_01Write'),
      'the ask',
      60_000,
    );
    const approval = asApproval(event);
    const state = await toolCall(c, approval.toolCallId);
    const file = state.studioDiff?.files[0];
    expect(file?.path).toBe('notes.md');
    expect(file?.beforeHash).toBe(sha256(NOTES));
    expect(file?.afterHash).toBe(sha256('line one\nline 2\nline three\nline four\n'));
    expect(file?.removed).toBe(1);
    expect(file?.added).toBe(2);
    expect(file?.hunks).toMatch(/^-line two$/m);
    expect(file?.hunks).toMatch(/^\+line 2$/m);
    expect(file?.hunks).toMatch(/^\+line four$/m);
    // The hash binds the target: not the bare hash of the input.
    const input = {
      file_path: join(root, 'notes.md'),
      content: 'line one\nline 2\nline three\nline four\n',
    };
    expect(approval.argumentHash).not.toBe(foreignArgumentHash('Write', input));
    expect(approval.argumentHash).toBe(
      foreignArgumentHash('Write', {
        input,
        diffTargets: [{ path: 'notes.md', contentHash: sha256(NOTES) }],
      }),
    );
    expect(state.argumentHash).toBe(approval.argumentHash);
    await ok(c, APPROVE, decideInput(a, approval));
    await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED' && e.runId === runId,
      'the end of the run',
      60_000,
    );
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe(
      'line one\nline 2\nline three\nline four\n',
    );
  }, 120_000);

  it('an Edit shows the edit applied to the file on disk as a diff', async () => {
    const { c, a, root, sessionId } = await studio(editScript);
    const { runId } = await sendMessage(c, a, 'Fix the second line');
    const { event } = await waitForEvent(
      c,
      sessionId,
      approvalOf('toolu_01Edit'),
      'the ask',
      60_000,
    );
    const approval = asApproval(event);
    const file = (await toolCall(c, approval.toolCallId)).studioDiff?.files[0];
    expect(file?.path).toBe('notes.md');
    expect(file?.beforeHash).toBe(sha256(NOTES));
    expect(file?.afterHash).toBe(sha256('line one\nline 2\nline three\n'));
    expect([file?.added, file?.removed]).toEqual([1, 1]);
    expect(file?.hunks).toContain(' line one\n-line two\n+line 2\n line three');
    await ok(c, APPROVE, decideInput(a, approval));
    await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED' && e.runId === runId,
      'the end of the run',
      60_000,
    );
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('line one\nline 2\nline three\n');
  }, 120_000);

  it('approving after the target changed is refused, the approval revoked, and the file keeps the new text', async () => {
    const { api, c, a, root, sessionId } = await studio(writeScript);
    const { runId } = await sendMessage(c, a, 'Update the notes');
    const { event } = await waitForEvent(
      c,
      sessionId,
      approvalOf('toolu_01Write'),
      'the ask',
      60_000,
    );
    const approval = asApproval(event);
    writeFileSync(join(root, 'notes.md'), 'a human edited this meanwhile\n');
    const refused = await run(c, APPROVE, decideInput(a, approval));
    expect(codeOf(refused.error)).toBe('AGENT_APPROVAL_MISMATCH');
    expect(refused.error?.graphQLErrors[0]?.message).toContain('notes.md changed');
    expect((await toolCall(c, approval.toolCallId)).approval?.status).toBe('REVOKED');
    await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED' && e.runId === runId,
      'the end of the run',
      60_000,
    );
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('a human edited this meanwhile\n');
    expect(JSON.stringify(api.loopRequests()[1]?.messages.at(-1))).toContain(
      'revoked this approval',
    );
  }, 120_000);
});

const SUGGESTIONS = `query Suggestions($toolCallId: String!) {
  studioToolCall(toolCallId: $toolCallId) {
    approval { studioReasons studioRuleSuggestions { effect toolName match argumentName argumentPrefix scope label } }
  }
}`;

describe("Claude Code's permission suggestions reach the card", () => {
  it('a Bash prefix rule and acceptEdits for a Write, in the studio rule terms', async () => {
    const { c, a, sessionId } = await studio((dir) => [
      turn('toolu_01Bash', 'Bash', { command: 'npm run lint -- --fix', description: 'Lint' }),
      turn('toolu_01Write', 'Write', { file_path: join(dir, 'notes.md'), content: 'x\n' }),
      done,
    ]);
    await sendMessage(c, a, 'Lint, then write');
    const bash = await waitForEvent(c, sessionId, approvalOf('toolu_01Bash'), 'the ask', 60_000);
    const suggestionsOf = async (toolCallId: string) =>
      (
        await ok<{
          studioToolCall: { approval: { studioRuleSuggestions: Record<string, unknown>[] } };
        }>(c, SUGGESTIONS, { toolCallId })
      ).studioToolCall.approval.studioRuleSuggestions;
    expect(await suggestionsOf('toolu_01Bash')).toEqual([
      {
        effect: 'ALLOW',
        toolName: 'Bash',
        match: 'ARGUMENT_PREFIX',
        argumentName: 'command',
        argumentPrefix: 'npm run ',
        scope: 'PROJECT',
        label: 'Allow Bash(npm run *) in local settings',
      },
    ]);
    const reasons = (
      await ok<{ studioToolCall: { approval: { studioReasons: string[] } } }>(c, SUGGESTIONS, {
        toolCallId: 'toolu_01Bash',
      })
    ).studioToolCall.approval.studioReasons;
    expect(reasons).toContain('Claude Code suggests: Allow Bash(npm run *) in local settings');
    await ok(c, REJECT, decideInput(a, asApproval(bash.event), { reason: 'not now' }));
    await waitForEvent(c, sessionId, approvalOf('toolu_01Write'), 'the write ask', 60_000);
    expect(await suggestionsOf('toolu_01Write')).toEqual([
      {
        effect: 'ALLOW',
        toolName: 'Write',
        match: 'ANY',
        argumentName: null,
        argumentPrefix: null,
        scope: 'SESSION',
        label: "Accept edits for this session (Claude Code's acceptEdits mode)",
      },
    ]);
  }, 120_000);
});
