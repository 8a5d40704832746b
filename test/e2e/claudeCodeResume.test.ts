/**
 * After a studio restart, a Claude Code session continues the same Claude Code conversation: the
 * real studio server process (`build/server.js --claude-code DIR`, as `npm start` runs it) is
 * stopped and started again on the same data dir, and the next message resumes the Claude Code
 * session by id, so the model's next request carries the turns from before the restart.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeMessagesApi } from '../fakes/FakeMessagesApi.ts';
import {
  attach,
  createSession,
  makeClient,
  sendMessage,
  waitForEvent,
  type Harness,
  type StudioClient,
} from '../server/harness.ts';
import { claudeCodeProjectId } from '../../server/sources/fromFlags.ts';
import { claudeCodeSessionIdFor } from '../../server/sources/claude-code/ClaudeCodeSource.ts';
import { startStudio, type RunningStudio } from './harness.ts';

const KEY = 'sk-ant-api03-e2e-cc-resume-0123456789abcdef';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A GraphQL client of a studio server process (the same client the server tests use). */
function clientOf(studio: RunningStudio): StudioClient {
  const disposers: (() => void | Promise<void>)[] = [];
  const target = {
    httpUrl: `${studio.url}/graphql`,
    wsUrl: `${studio.url.replace(/^http/, 'ws')}/graphql`,
    token: studio.token,
    track: (d: () => void | Promise<void>) => disposers.push(d),
  } as unknown as Harness;
  const c = makeClient(target);
  cleanups.push(async () => {
    for (const d of disposers.splice(0).reverse()) await d();
  });
  return c;
}

describe('Claude Code after a studio restart', () => {
  it('the next message resumes the same Claude Code session: the model receives the earlier turns', async () => {
    const root = mkdtempSync(join(tmpdir(), 'studio-e2e-cc-resume-repo-'));
    const home = mkdtempSync(join(tmpdir(), 'studio-e2e-cc-resume-home-'));
    const dataDir = mkdtempSync(join(tmpdir(), 'studio-e2e-cc-resume-data-'));
    cleanups.push(() => {
      for (const dir of [root, home, dataDir]) rmSync(dir, { recursive: true, force: true });
    });
    writeFileSync(join(root, 'notes.md'), 'before\n');
    const api = await FakeMessagesApi.start(KEY, [
      { content: [{ type: 'text', text: 'Noted: the word is heron.' }] },
      { content: [{ type: 'text', text: 'The word was heron.' }] },
    ]);
    cleanups.push(() => api.close());
    const launch = async () => {
      const studio = await startStudio({
        dataDir,
        args: ['--no-demo', '--claude-code', root],
        env: {
          ANTHROPIC_API_KEY: KEY,
          ANTHROPIC_BASE_URL: api.url,
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          HOME: home,
        },
      });
      cleanups.push(() => studio.stop());
      return studio;
    };

    const first = await launch();
    const c1 = clientOf(first);
    const session = await createSession(c1, 'BUILD', claudeCodeProjectId(root));
    const sessionId = session.sessionId;
    const a1 = await attach(c1, sessionId);
    const { runId: firstRun } = await sendMessage(c1, a1, 'Remember the word heron.');
    await waitForEvent(
      c1,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED' && e.runId === firstRun,
      'the first run',
      60_000,
    );
    await c1.dispose();
    await first.stop();
    expect(first.process.exitCode !== null || first.process.signalCode !== null).toBe(true);

    const second = await launch();
    const c2 = clientOf(second);
    const a2 = await attach(c2, sessionId);
    const { runId: secondRun } = await sendMessage(c2, a2, 'Which word did I ask you to remember?');
    const { events } = await waitForEvent(
      c2,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED' && e.runId === secondRun,
      'the run after the restart',
      60_000,
    );
    // The model's request after the restart carries the turns from before it, in order.
    const requests = api.loopRequests();
    expect(requests).toHaveLength(2);
    const seen = JSON.stringify(requests[1]!.messages);
    const order = [
      'Remember the word heron.',
      'Noted: the word is heron.',
      'Which word did I ask you to remember?',
    ].map((text) => seen.indexOf(text));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((x, y) => x - y)).toEqual(order);
    // Both processes ran the one Claude Code session the studio session derives.
    const claudeSession = claudeCodeSessionIdFor(sessionId);
    const logs = events.filter((e) => e.type === 'STUDIO_LOG').map((e) => e.message ?? '');
    expect(logs.filter((m) => m.includes(`session ${claudeSession}`))).toHaveLength(2);
    expect(logs.some((m) => m.includes(`session ${claudeSession} (resumed)`))).toBe(true);
    expect(events.filter((e) => e.type === 'ASSISTANT_MESSAGE').map((e) => e.content)).toEqual([
      'Noted: the word is heron.',
      'The word was heron.',
    ]);
  }, 180_000);
});
