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
  REQUEST_RESTORE,
  attach,
  createSession,
  decideInput,
  getProject,
  keepAlive,
  key,
  listCheckpoints,
  makeClient,
  ok,
  sendMessage,
  startHarness,
  waitForEvent,
  type ApprovalData,
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
    // The pre-image checkpoint is committed before the call runs (the outbox's delivery takes it
    // after the grant commits, before Claude Code is allowed), and one follows the tool result.
    const firstCheckpoint = types.indexOf('CHECKPOINT_CREATED');
    expect(firstCheckpoint).toBeGreaterThan(types.indexOf('APPROVAL_GRANTED'));
    expect(firstCheckpoint).toBeLessThan(types.indexOf('TOOL_DISPATCHED'));
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

  it("a subagent's ask is attributed to the subagent the Agent tool started", async () => {
    const task = 'Write "after" into notes.md';
    // The subagent's requests start from its task; the main loop's never contain it.
    const inSubagent = (body: { messages?: { content: unknown }[] }) =>
      JSON.stringify(body.messages?.[0]?.content ?? '').includes('into notes.md');
    const inMain = (body: { messages?: { content: unknown }[] }) => !inSubagent(body);
    const subagentTurn = (root: string): ScriptedReply[] => [
      {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_01Agent',
            name: 'Agent',
            input: {
              description: 'Update the notes',
              prompt: task,
              subagent_type: 'general-purpose',
            },
          },
        ],
        when: inMain,
      },
      {
        when: inSubagent,
        content: [
          {
            type: 'tool_use',
            id: 'toolu_01SubWrite',
            name: 'Write',
            input: { file_path: join(root, 'notes.md'), content: 'after\n' },
          },
        ],
      },
      { when: inSubagent, content: [{ type: 'text', text: 'Subagent: notes written.' }] },
      { when: inMain, content: [{ type: 'text', text: 'The subagent updated the notes.' }] },
    ];
    const { c, a, root, sessionId } = await studio(subagentTurn);
    await sendMessage(c, a, 'Have a subagent update the notes');
    const decided = new Set<string>();
    // Approve whatever Claude Code asks (the Agent call may ask too) until the subagent's Write.
    let write: Ev | undefined;
    while (!write) {
      const { event } = await waitForEvent(
        c,
        sessionId,
        (e) => pendingApproval(e) && !decided.has(asApproval(e).toolCallId),
        'the next approval',
        60_000,
      );
      const approval = asApproval(event);
      decided.add(approval.toolCallId);
      if (approval.toolCallId === 'toolu_01SubWrite') {
        write = event;
        // While it waits, the card and the inbox say which subagent asked.
        const pending = await ok<{
          studioPendingApprovals: {
            approval: { toolCallId: string; studioReasons: string[] };
            toolCall: { askedBy: string | null };
          }[];
        }>(
          c,
          'query P { studioPendingApprovals(appId: "1") { approval { toolCallId studioReasons } toolCall { askedBy } } }',
        );
        const mine = pending.studioPendingApprovals.find(
          (p) => p.approval.toolCallId === 'toolu_01SubWrite',
        );
        expect(mine?.toolCall.askedBy).toBe('subagent general-purpose: Update the notes');
        expect(mine?.approval.studioReasons).toContain(
          'Asked by subagent general-purpose: Update the notes',
        );
      }
      await ok(c, APPROVE, decideInput(a, approval));
    }
    await waitForEvent(
      c,
      sessionId,
      // The Agent tool runs its subagent in the background: the main turn may end first.
      (e) => e.type === 'TOOL_SUCCEEDED' && e.toolCallId === 'toolu_01SubWrite',
      "the subagent's write",
      60_000,
    );
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('after\n');
  }, 120_000);

  it('AskUserQuestion becomes a question card; the answer reaches Claude Code as answers in updatedInput', async () => {
    const askTurn = (): ScriptedReply[] => [
      {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_01Ask',
            name: 'AskUserQuestion',
            input: {
              questions: [
                {
                  question: 'Which greeting should the notes use?',
                  header: 'Greeting',
                  options: [
                    { label: 'Hello', description: 'Friendly' },
                    { label: 'Good day', description: 'Formal' },
                  ],
                  multiSelect: false,
                },
              ],
            },
          },
        ],
      },
      { content: [{ type: 'text', text: 'Going with the formal greeting.' }] },
    ];
    const { api, c, a, sessionId } = await studio(askTurn);
    const { runId } = await sendMessage(c, a, 'Ask me which greeting to use');
    await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'STUDIO_QUESTION_ASKED',
      'the question',
      60_000,
    );
    const answered = await ok<{
      studioAnswerQuestion: {
        status: string;
        answerChoiceIndex: number | null;
        askedBy: string;
        kind: string;
        choices: string[];
        prompt: string;
      };
    }>(
      c,
      `mutation A($input: StudioAnswerQuestionInput!) {
        studioAnswerQuestion(input: $input) { status answerChoiceIndex askedBy kind choices prompt }
      }`,
      {
        input: {
          idempotencyKey: `answer-${Date.now()}`,
          sessionId,
          clientEpoch: a.clientEpoch,
          questionId: 'toolu_01Ask/q0',
          choiceIndex: 1,
        },
      },
    );
    expect(answered.studioAnswerQuestion).toMatchObject({
      status: 'ANSWERED',
      answerChoiceIndex: 1,
      askedBy: 'Claude Code',
      kind: 'MULTIPLE_CHOICE',
      choices: ['Hello', 'Good day'],
    });
    expect(answered.studioAnswerQuestion.prompt).toContain(
      '[Greeting] Which greeting should the notes use?',
    );
    await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED' && e.runId === runId,
      'the end of the run',
      60_000,
    );
    // The tool result the model read carries the chosen label as the answer.
    const result = JSON.stringify(api.loopRequests()[1]?.messages.at(-1));
    expect(result).toContain('Good day');
    expect(result).toContain('Which greeting should the notes use?');
  }, 120_000);

  it('cancel interrupts Claude Code: the pending write is denied, the file stays, the run ends cancelled', async () => {
    const { c, a, root, sessionId } = await studio(writeTurn);
    const { runId } = await sendMessage(c, a, 'Update the notes');
    await waitForEvent(c, sessionId, pendingApproval, 'the approval', 60_000);
    const cancelled = await ok<{ crowdyStudioAgentCancelRun: { cancelled: boolean } }>(
      c,
      `mutation C($input: CancelAgentRunInput!) {
        crowdyStudioAgentCancelRun(input: $input) { runId status cancelled }
      }`,
      {
        input: {
          idempotencyKey: `cancel-${Date.now()}`,
          sessionId,
          clientEpoch: a.clientEpoch,
          runId,
        },
      },
    );
    expect(cancelled.crowdyStudioAgentCancelRun.cancelled).toBe(true);
    const { events } = await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_CANCELLED' && e.runId === runId,
      'the cancelled run',
      60_000,
    );
    expect(events.some((e) => e.type === 'APPROVAL_GRANTED')).toBe(false);
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('before\n');
  }, 120_000);

  it("streams the model's text into one message as it arrives, then the final text once", async () => {
    const reply = 'Here is a longer answer that streams in four paced pieces.';
    // Paced as a model streams: each delta 200 ms after the one before (longer than a chunk waits).
    const { api, c, a, sessionId } = await studio(() => [
      { content: [{ type: 'text', text: reply }], textDeltas: 4, deltaGapMs: 200 },
    ]);
    const { runId } = await sendMessage(c, a, 'Say something');
    const { events } = await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED' && e.runId === runId,
      'the end of the run',
      60_000,
    );
    const finals = events.filter((e) => e.type === 'ASSISTANT_MESSAGE');
    expect(finals.map((e) => e.content)).toEqual([reply]);
    const final = finals[0] as Ev;
    const chunks = events.filter((e) => e.type === 'ASSISTANT_CHUNK');
    // The text grew in several chunks of the same message, in order, before the final, which
    // carries the whole text once.
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(chunks.length).toBeLessThanOrEqual(4);
    expect(chunks.every((e) => e.messageId === final.messageId)).toBe(true);
    expect(chunks.map((e) => e.content).join('')).toBe(reply);
    expect(chunks.every((e) => BigInt(e.seq) < BigInt(final.seq))).toBe(true);
    expect(final.messageId).toMatch(/^msg_fake_\d+-0$/);
    expect(api.loopRequests()).toHaveLength(1);
  }, 120_000);

  it('coalesces deltas that come in quick succession into few chunks', async () => {
    const reply = 'Twenty small deltas written at once by the model, as tokens stream in.';
    const { c, a, sessionId } = await studio(() => [
      { content: [{ type: 'text', text: reply }], textDeltas: 20 },
    ]);
    const { runId } = await sendMessage(c, a, 'Say something');
    const { events } = await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED' && e.runId === runId,
      'the end of the run',
      60_000,
    );
    const chunks = events.filter((e) => e.type === 'ASSISTANT_CHUNK');
    expect(chunks.length).toBeGreaterThanOrEqual(1);
    expect(chunks.length).toBeLessThan(20);
    expect(chunks.map((e) => e.content).join('')).toBe(reply);
  }, 120_000);

  it('a text block after a tool call streams into its own message, not the first one', async () => {
    const { c, a, root, sessionId } = await studio((dir) => [
      {
        content: [
          { type: 'text', text: 'Reading first.' },
          {
            type: 'tool_use',
            id: 'toolu_01Read',
            name: 'Read',
            input: { file_path: join(dir, 'notes.md') },
          },
          { type: 'text', text: 'Then more text.' },
        ],
        stopReason: 'tool_use',
      },
      { content: [{ type: 'text', text: 'All read.' }] },
    ]);
    const { runId } = await sendMessage(c, a, 'Read the notes');
    // Read may or may not ask (read-only tools can be allowed without asking): approve if asked.
    const { events } = await waitForEvent(
      c,
      sessionId,
      (e) => (e.type === 'RUN_SUCCEEDED' && e.runId === runId) || pendingApproval(e),
      'the end of the run or an approval',
      60_000,
    );
    const asked = events.find(pendingApproval);
    if (asked) await ok(c, APPROVE, decideInput(a, asApproval(asked)));
    const done = await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED' && e.runId === runId,
      'the end of the run',
      60_000,
    );
    const texts = new Map<string, { chunks: string; final: string[] }>();
    for (const e of done.events) {
      if (e.type !== 'ASSISTANT_CHUNK' && e.type !== 'ASSISTANT_MESSAGE') continue;
      const entry = texts.get(e.messageId!) ?? { chunks: '', final: [] };
      if (e.type === 'ASSISTANT_CHUNK') entry.chunks += e.content;
      else entry.final.push(e.content!);
      texts.set(e.messageId!, entry);
    }
    expect([...texts.values()]).toEqual([
      { chunks: 'Reading first.', final: ['Reading first.'] },
      { chunks: 'Then more text.', final: ['Then more text.'] },
      { chunks: 'All read.', final: ['All read.'] },
    ]);
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('before\n');
  }, 120_000);

  it("restoring the pre-image checkpoint of Claude Code's writes, through the restore approval, puts the folder back on disk", async () => {
    const { c, a, root, sessionId } = await studio((dir) => [
      {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_01Edit',
            name: 'Write',
            input: { file_path: join(dir, 'notes.md'), content: 'after\n' },
          },
        ],
      },
      {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_01New',
            name: 'Write',
            input: { file_path: join(dir, 'src', 'new.ts'), content: 'export const x = 1;\n' },
          },
        ],
      },
      { content: [{ type: 'text', text: 'Both files written.' }] },
    ]);
    const { runId } = await sendMessage(c, a, 'Write two files');
    const decided = new Set<string>();
    for (const id of ['toolu_01Edit', 'toolu_01New']) {
      const { event } = await waitForEvent(
        c,
        sessionId,
        (e) => pendingApproval(e) && asApproval(e).toolCallId === id,
        `the approval of ${id}`,
        60_000,
      );
      decided.add(id);
      await ok(c, APPROVE, decideInput(a, asApproval(event)));
    }
    await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED' && e.runId === runId,
      'the end of the run',
      60_000,
    );
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('after\n');
    expect(readFileSync(join(root, 'src', 'new.ts'), 'utf8')).toBe('export const x = 1;\n');
    // The oldest checkpoint is the exact pre-image taken before the first write was allowed.
    const checkpoints = await listCheckpoints(c, sessionId);
    const preImage = [...checkpoints].sort((x, y) =>
      Number(BigInt(x.projectRevision) - BigInt(y.projectRevision)),
    )[0]!;
    expect(preImage.exactPreImage).toBe(true);
    expect(preImage.files.map((f) => f.path)).toEqual(['notes.md']);
    const project = await getProject(c, sessionId);
    const restore = await ok<{ studioRequestCheckpointRestore: ApprovalData }>(c, REQUEST_RESTORE, {
      input: {
        idempotencyKey: key('restore'),
        sessionId,
        clientEpoch: a.clientEpoch,
        checkpointId: preImage.checkpointId,
        checkpointContentHash: preImage.contentHash,
        expectedRevision: project.revision,
      },
    }).then((d) => d.studioRequestCheckpointRestore);
    expect(restore.status).toBe('PENDING');
    // Nothing moves before the approval.
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('after\n');
    await ok(c, APPROVE, decideInput(a, restore));
    await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'TOOL_SUCCEEDED' && e.toolCallId === restore.toolCallId,
      'the restore',
      60_000,
    );
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('before\n');
    expect(existsSync(join(root, 'src', 'new.ts'))).toBe(false);
    const after = await getProject(c, sessionId);
    expect(after.contentHash).toBe(preImage.contentHash);
  }, 180_000);

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
