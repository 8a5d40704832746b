/**
 * The kill switch and "Ask again" with the Claude Code source: the real server (port 0, temp data
 * dir) with a --claude-code folder, the real Claude Code binary against the scripted Messages API
 * fake. Turning the kill switch on interrupts the running turn, revokes its ask (Claude Code is
 * answered deny), refuses new messages with AGENT_DISABLED until it is turned off. An expired
 * call is asked again by a user message; the model's same call becomes the new approval, a
 * different one stays an ordinary card and studioAskAgain says so.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeCodeProjectId, makeClaudeCodeSource } from '../../../server/sources/fromFlags.ts';
import type { Engine } from '../../../server/engine/Engine.ts';
import { FakeMessagesApi, type ScriptedReply } from '../../fakes/FakeMessagesApi.ts';
import {
  APPROVE,
  SEND,
  attach,
  codeOf,
  createSession,
  decideInput,
  failCode,
  keepAlive,
  key,
  makeClient,
  ok,
  run,
  sendMessage,
  startHarness,
  waitForEvent,
  type Attachment,
  type Ev,
  type StudioClient,
} from '../harness.ts';
import { ASK_AGAIN, SET_POLICY, toolCall, type PolicyData } from '../approvalKit.ts';

const KEY = 'sk-ant-api03-studio-cc-kill-0123456789abcdef';
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
  return { api, c, a, root, sessionId: session.sessionId };
}

const write = (id: string, root: string, content = 'after\n'): ScriptedReply => ({
  content: [
    { type: 'text', text: 'Updating the notes.' },
    { type: 'tool_use', id, name: 'Write', input: { file_path: join(root, 'notes.md'), content } },
  ],
});
const say = (text: string): ScriptedReply => ({ content: [{ type: 'text', text }] });

const askOf = (toolCallId: string) => (e: Ev) =>
  e.type === 'APPROVAL_REQUESTED' && e.approvalToolCallId === toolCallId;
const asApproval = (e: Ev) => ({
  toolCallId: e.approvalToolCallId!,
  argumentHash: e.argumentHash!,
});
const runEnded =
  (runId: string, type = 'RUN_SUCCEEDED') =>
  (e: Ev) =>
    e.type === type && e.runId === runId;

async function setKill(c: StudioClient, on: boolean, expectedRevision: string) {
  return (
    await ok<{ setCrowdyStudioAgentPolicy: PolicyData }>(c, SET_POLICY, {
      input: { idempotencyKey: key('policy'), appId: '1', expectedRevision, killSwitch: on },
    })
  ).setCrowdyStudioAgentPolicy;
}

const askAgain = (a: Attachment, toolCallId: string) => ({
  input: {
    idempotencyKey: key('again'),
    sessionId: a.sessionId,
    clientEpoch: a.clientEpoch,
    toolCallId,
  },
});

/** Waits until the call's approval has expired and its turn ended (Ask again is offered). */
async function expiredAndSettled(c: StudioClient, sessionId: string, runId: string) {
  await waitForEvent(c, sessionId, (e) => e.type === 'APPROVAL_EXPIRED', 'the expiry', 60_000);
  await waitForEvent(c, sessionId, runEnded(runId), 'the end of the turn', 60_000);
}

describe('the kill switch stops Claude Code', () => {
  it('interrupts the turn, revokes the ask (Claude Code denied), refuses messages until turned off', async () => {
    const { api, c, a, root, sessionId } = await studio((dir) => [
      write('toolu_01Kill', dir),
      say('Back after the kill switch.'),
    ]);
    const { runId } = await sendMessage(c, a, 'Update the notes');
    const { event } = await waitForEvent(c, sessionId, askOf('toolu_01Kill'), 'the ask', 60_000);

    const on = await setKill(c, true, '0');
    expect(on).toMatchObject({ killSwitch: true, disableReasonCode: 'KILL_SWITCH' });
    await waitForEvent(c, sessionId, runEnded(runId, 'RUN_CANCELLED'), 'the cancelled run', 60_000);
    const call = await toolCall(c, 'toolu_01Kill');
    expect(call.approval?.status).toBe('REVOKED');
    expect(call.status).toBe('CANCELLED');
    expect(await failCode(c, APPROVE, decideInput(a, asApproval(event)))).toBe(
      'AGENT_APPROVAL_REVOKED',
    );
    const refused = await run(c, SEND, {
      input: {
        idempotencyKey: key('send'),
        sessionId,
        clientEpoch: a.clientEpoch,
        content: 'Carry on',
      },
    });
    expect(codeOf(refused.error)).toBe('AGENT_DISABLED');
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('before\n');
    expect(api.loopRequests()).toHaveLength(1);

    await setKill(c, false, '1');
    const next = await sendMessage(c, a, 'Carry on');
    expect(next.runId).not.toBe(runId);
    const { events } = await waitForEvent(
      c,
      sessionId,
      runEnded(next.runId),
      'the next run',
      60_000,
    );
    expect(
      events.some(
        (e) =>
          e.type === 'ASSISTANT_MESSAGE' &&
          e.runId === next.runId &&
          String(e.content).includes('Back after the kill switch.'),
      ),
    ).toBe(true);
    // Claude Code was answered deny (with interrupt) for the revoked call: the next turn's
    // history carries the rejected tool result and Claude Code's interruption marker.
    const history = JSON.stringify(api.loopRequests()[1]?.messages);
    expect(history).toContain(
      '{"type":"tool_result","content":"The user doesn\'t want to proceed with this tool use.',
    );
    expect(history).toContain('"is_error":true,"tool_use_id":"toolu_01Kill"');
    expect(history).toContain('[Request interrupted by user for tool use]');
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('before\n');
  }, 120_000);
});

describe('Ask again with Claude Code', () => {
  it('an expired Write is asked again: the model proposes it anew, approving it writes the file', async () => {
    const { api, c, a, root, sessionId } = await studio(
      (dir) => [
        write('toolu_01Late', dir),
        say('The approval expired; nothing was written.'),
        write('toolu_02Again', dir),
        say('Notes updated.'),
      ],
      4_000,
    );
    const { runId } = await sendMessage(c, a, 'Update the notes');
    await expiredAndSettled(c, sessionId, runId);
    const old = await toolCall(c, 'toolu_01Late');
    expect(old.approval?.status).toBe('EXPIRED');
    expect(old.status).toBe('CANCELLED');
    expect(old.studioCanAskAgain).toBe(true);

    const again = (
      await ok<{ studioAskAgain: { toolCallId: string; argumentHash: string; status: string } }>(
        c,
        ASK_AGAIN,
        askAgain(a, 'toolu_01Late'),
      )
    ).studioAskAgain;
    expect(again).toMatchObject({ toolCallId: 'toolu_02Again', status: 'PENDING' });
    await ok(c, APPROVE, decideInput(a, again));
    const { event: started } = await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_STARTED' && e.runId !== runId,
      'the asked-again run',
    );
    await waitForEvent(c, sessionId, runEnded(started.runId!), 'its end', 60_000);
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('after\n');
    // The model was told which call to propose again, with its input.
    const asked = JSON.stringify(api.loopRequests()[2]?.messages.at(-1));
    expect(asked).toContain('Your earlier Write call was not decided in time');
    expect(asked).toContain('notes.md');
    expect(asked).toContain('after\\\\n');
  }, 120_000);

  it('a call the kill switch revoked is asked again once it is off, saying it was revoked', async () => {
    const { api, c, a, sessionId } = await studio((dir) => [
      write('toolu_01Kill', dir),
      write('toolu_02Again', dir),
      say('Done.'),
    ]);
    const { runId } = await sendMessage(c, a, 'Update the notes');
    await waitForEvent(c, sessionId, askOf('toolu_01Kill'), 'the ask', 60_000);
    await setKill(c, true, '0');
    await waitForEvent(c, sessionId, runEnded(runId, 'RUN_CANCELLED'), 'the cancelled run', 60_000);
    expect(await failCode(c, ASK_AGAIN, askAgain(a, 'toolu_01Kill'))).toBe('AGENT_DISABLED');
    await setKill(c, false, '1');
    expect((await toolCall(c, 'toolu_01Kill')).studioCanAskAgain).toBe(true);
    const again = (
      await ok<{ studioAskAgain: { toolCallId: string; status: string } }>(
        c,
        ASK_AGAIN,
        askAgain(a, 'toolu_01Kill'),
      )
    ).studioAskAgain;
    expect(again).toMatchObject({ toolCallId: 'toolu_02Again', status: 'PENDING' });
    expect(JSON.stringify(api.loopRequests()[1]?.messages.at(-1))).toContain(
      'Your earlier Write call was revoked in the studio before anyone approved it',
    );
  }, 120_000);

  it('when the model proposes something else, that is an ordinary card and Ask again fails clearly', async () => {
    const { c, a, sessionId } = await studio(
      (dir) => [
        write('toolu_01Late', dir),
        say('The approval expired.'),
        write('toolu_02Other', dir, 'something else\n'),
        say('Done.'),
      ],
      4_000,
    );
    const { runId } = await sendMessage(c, a, 'Update the notes');
    await expiredAndSettled(c, sessionId, runId);
    const refused = await run(c, ASK_AGAIN, askAgain(a, 'toolu_01Late'));
    expect(codeOf(refused.error)).toBe('AGENT_APPROVAL_MISMATCH');
    expect(refused.error?.graphQLErrors[0]?.message).toContain(
      'Claude Code proposed a different call (Write) instead of the same Write call',
    );
    const other = await toolCall(c, 'toolu_02Other');
    expect(other.approval?.status).toBe('PENDING');
    expect(other.status).toBe('WAITING_FOR_APPROVAL');
  }, 120_000);
});
