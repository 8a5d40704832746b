/**
 * The real Claude Code agent (the binary the Agent SDK ships in its platform package), run through
 * `@anthropic-ai/claude-agent-sdk`'s `query()` against the scripted Messages API fake: offline,
 * temp HOME and working folder, the key only in the child's environment. This pins the SDK
 * behaviour the studio's Claude Code source relies on: canUseTool is asked before a write with
 * the exact input, `allow` writes the file, `deny` leaves it untouched and the model receives the
 * reason as the tool result.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { query, type PermissionResult, type SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeMessagesApi } from '../../fakes/FakeMessagesApi.ts';

const KEY = 'sk-ant-api03-claude-code-fake-0123456789';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function runWrite(decide: (input: Record<string, unknown>) => PermissionResult) {
  const home = mkdtempSync(join(tmpdir(), 'studio-cc-home-'));
  const project = mkdtempSync(join(tmpdir(), 'studio-cc-project-'));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  cleanups.push(() => rmSync(project, { recursive: true, force: true }));
  const target = join(project, 'notes.md');
  const api = await FakeMessagesApi.start(KEY, [
    {
      content: [
        { type: 'text', text: 'Writing the notes.' },
        {
          type: 'tool_use',
          id: 'toolu_01Write',
          name: 'Write',
          input: { file_path: target, content: 'hello\n' },
        },
      ],
    },
    { content: [{ type: 'text', text: 'Finished.' }] },
  ]);
  cleanups.push(() => api.close());
  const asked: { toolName: string; input: Record<string, unknown>; decisionReason?: string }[] = [];
  const messages: SDKMessage[] = [];
  const run = query({
    prompt: 'Write notes.md',
    options: {
      cwd: project,
      model: 'claude-sonnet-4-6',
      permissionMode: 'default',
      settingSources: [],
      allowedTools: [],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        ANTHROPIC_API_KEY: KEY,
        ANTHROPIC_BASE_URL: api.url,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      },
      canUseTool: async (toolName, input, options) => {
        asked.push({
          toolName,
          input,
          ...(options.decisionReason ? { decisionReason: options.decisionReason } : {}),
        });
        return decide(input);
      },
    },
  });
  for await (const message of run) messages.push(message);
  return { api, asked, messages, target };
}

describe('the real Claude Code binary against the Messages fake', () => {
  it('asks canUseTool before a Write with its exact input, and writes the file once allowed', async () => {
    const { asked, messages, target } = await runWrite((input) => ({
      behavior: 'allow',
      updatedInput: input,
    }));
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      toolName: 'Write',
      input: { file_path: target, content: 'hello\n' },
    });
    expect(readFileSync(target, 'utf8')).toBe('hello\n');
    const init = messages.find((m) => m.type === 'system' && m.subtype === 'init');
    expect(init).toMatchObject({ permissionMode: 'default', model: 'claude-sonnet-4-6' });
    const result = messages.find((m) => m.type === 'result');
    expect(result).toMatchObject({ subtype: 'success', result: 'Finished.' });
  }, 120_000);

  it('sends the key only in its header: never in a URL, a body, or a message the host sees', async () => {
    const { api, messages } = await runWrite((input) => ({
      behavior: 'allow',
      updatedInput: input,
    }));
    expect(api.requests.length).toBeGreaterThan(0);
    for (const request of api.requests) {
      expect(request.url).not.toContain(KEY);
      expect(request.body).not.toContain(KEY);
      const carriers = Object.entries(request.headers).filter(([, v]) => String(v).includes(KEY));
      expect(carriers.map(([name]) => name)).toEqual(['x-api-key']);
    }
    expect(JSON.stringify(messages)).not.toContain(KEY);
  }, 120_000);

  it('a deny leaves the file untouched and the model receives the reason as the tool result', async () => {
    const { api, target } = await runWrite(() => ({
      behavior: 'deny',
      message: 'Not in this folder, please.',
    }));
    expect(existsSync(target)).toBe(false);
    const second = api.loopRequests()[1];
    expect(JSON.stringify(second?.messages.at(-1))).toContain('Not in this folder, please.');
  }, 120_000);
});
