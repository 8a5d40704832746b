/**
 * Journey: start a Claude Code session from the "New session" form (the real server with
 * `--claude-code`, the real Claude Code binary run by the Agent SDK against the scripted Messages
 * API fake), see the Write's diff and the rule editor start from Claude Code's suggestion,
 * approve the Write in the tool-call card, and see the file land on disk after a pre-image
 * checkpoint. The key never reaches the browser.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { FakeMessagesApi } from '../fakes/FakeMessagesApi.ts';
import { launchChromium, saveScreenshot, startStudio, type RunningStudio } from './harness.ts';
import {
  eventually,
  listSessions,
  openStudioTab,
  readHistory,
  screenshotOnFailure,
  visitPrintedUrl,
  type StudioTab,
} from './journeyKit.ts';

const KEY = 'sk-ant-api03-e2e-claude-code-0123456789abcdef';
let studio: RunningStudio;
let browser: Browser;
let tab: StudioTab;
let api: FakeMessagesApi;
let root: string;
let home: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'studio-e2e-cc-repo-'));
  home = mkdtempSync(join(tmpdir(), 'studio-e2e-cc-home-'));
  writeFileSync(join(root, 'notes.md'), 'before\n');
  api = await FakeMessagesApi.start(KEY, [
    {
      content: [
        { type: 'text', text: 'Updating the notes.' },
        {
          type: 'tool_use',
          id: 'toolu_01E2eNotes',
          name: 'Write',
          input: { file_path: join(root, 'notes.md'), content: 'after\n' },
        },
      ],
    },
    { content: [{ type: 'text', text: 'Notes updated.' }] },
  ]);
  studio = await startStudio({
    args: ['--no-demo', '--claude-code', root],
    env: {
      ANTHROPIC_API_KEY: KEY,
      ANTHROPIC_BASE_URL: api.url,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      HOME: home,
    },
  });
  browser = await launchChromium();
  tab = await openStudioTab(browser, studio, { viewport: { width: 1280, height: 900 } });
});

screenshotOnFailure(
  'journey-claude-code',
  () => [tab],
  () => studio,
);

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
  await api?.close();
  rmSync(root, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

describe('journey: a Claude Code session started in the studio', () => {
  it('starts from the New session form, approves the Write in the card, and the file lands on disk', async () => {
    const { page } = tab;
    const bodies: string[] = [];
    page.on('response', (response) => {
      void response.text().then(
        (text) => bodies.push(text),
        () => undefined,
      );
    });
    await visitPrintedUrl(tab, studio);
    await page.getByText('New session', { exact: true }).click();
    const form = page.getByRole('form', { name: 'New session' });
    const folder = root.split('/').pop()!;
    await form.getByLabel('Project').selectOption({ label: `${folder} (claude-code)` });
    await form.getByLabel('First message').fill('Update the notes');
    await form.getByRole('button', { name: 'Start session' }).click();

    // The new session opens; its Write waits for approval in a card.
    await page.waitForURL(/\/sessions\//);
    const [session] = await listSessions(studio);
    expect(session?.mode).toBe('BUILD');
    const call = page.locator('article[data-tool-call-id="toolu_01E2eNotes"]');
    await call.getByText('Waiting for approval', { exact: true }).waitFor();
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toBe('before\n');
    await saveScreenshot(page, 'journey-claude-code-pending');

    // Before approving: the server's line diff of the Write against the file on disk, and the
    // rule editor starts from Claude Code's own suggestion (acceptEdits for the session).
    const diff = call.getByRole('region', { name: 'Diff of notes.md' });
    await diff.getByText('-before', { exact: true }).waitFor();
    await diff.getByText('+after', { exact: true }).waitFor();
    await diff.scrollIntoViewIfNeeded();
    await saveScreenshot(page, 'journey-claude-code-diff');
    await call.getByRole('button', { name: 'Always allow…' }).click();
    const editor = call.getByRole('form', { name: /allow rule/i });
    await editor.getByText(/Starts from Claude Code.s suggestion/).waitFor();
    await editor.getByText(/Accept edits for this session/).waitFor();
    await editor.scrollIntoViewIfNeeded();
    expect(await editor.getByRole('radio', { name: 'any call of this tool' }).isChecked()).toBe(
      true,
    );
    expect(await editor.getByRole('radio', { name: 'this session' }).isChecked()).toBe(true);
    await saveScreenshot(page, 'journey-claude-code-rule-suggestion');
    await editor.getByRole('button', { name: 'Cancel' }).click();

    await call.getByRole('button', { name: 'Approve', exact: true }).click();
    await call.getByText('Succeeded', { exact: true }).waitFor();
    await eventually(
      () => (readFileSync(join(root, 'notes.md'), 'utf8') === 'after\n' ? true : undefined),
      'the file to be written',
    );

    // A pre-image checkpoint was committed before the grant reached Claude Code.
    const history = await eventually(async () => {
      const events = await readHistory(studio, session!.sessionId);
      return events.some((e) => e.type === 'RUN_SUCCEEDED') ? events : undefined;
    }, 'the run to finish');
    const types = history.map((e) => e.type);
    const checkpoint = types.indexOf('CHECKPOINT_CREATED');
    expect(checkpoint).toBeGreaterThan(-1);
    expect(checkpoint).toBeLessThan(types.indexOf('TOOL_DISPATCHED'));
    await page.getByText('Notes updated.').first().waitFor();
    await saveScreenshot(page, 'journey-claude-code-approved');
    // The text streamed (chunks of one message, then its final): one bubble each, no text twice.
    expect(types).toContain('ASSISTANT_CHUNK');
    await eventually(
      async () =>
        (await page.getByText('Notes updated.', { exact: true }).count()) === 1 ? true : undefined,
      'the final text in its one bubble',
    );
    expect(await page.getByText('Updating the notes.', { exact: true }).count()).toBe(1);

    // The key reached the Messages API only; never the browser.
    expect(api.requests.length).toBeGreaterThan(0);
    expect(bodies.some((b) => b.includes(KEY))).toBe(false);
    expect(tab.pageErrors).toEqual([]);
  });
});
