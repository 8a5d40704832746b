/**
 * Journey: Leviath runs followed by the real studio server (`--leviath` against the fake gateway,
 * `--leviath-workspace` on a real folder), in real Chromium. A pending tool approval is approved in
 * the studio: the gateway receives exactly the documented interaction answer, and the workspace was
 * checkpointed (an exact pre-image) before that answer left. A confirm question is answered from
 * its card with both fields Leviath reads. The gateway token never reaches the browser, the
 * server's output or the store, even when a run logs it.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FakeLeviathPeer, type FakeInteraction, type FakeRun } from '../fakes/FakeLeviathPeer.ts';
import type { RecordedRequest } from '../fakes/recordedRequest.ts';
import { gql, launchChromium, saveScreenshot, startStudio, type RunningStudio } from './harness.ts';
import {
  BrowserTraffic,
  decide,
  eventually,
  expectVisible,
  filesWithSecrets,
  linesWithSecrets,
  toolCallCard,
} from './bridgesKit.ts';

const state = JSON.parse(
  readFileSync(new URL('../fixtures/leviath/state-at-connect.json', import.meta.url), 'utf8'),
) as {
  config: Record<string, unknown>;
  runs: FakeRun[];
  interactions: Record<string, FakeInteraction>;
};

const REVIEWER = 'reviewer-1786409300-aa11bb22';
const CODER = 'coder-1786409275-d17e8f82';
const APPROVAL_ID = 'approve-toolu_01RM';
const TOOL_CALL_ID = 'toolu_01RM';
/** What the fixture's run metadata carries and the bridge must never keep. */
const CALLBACK_SECRET = 'cbsecret_fixtureValue789';
const TOKEN = `lev-e2e-${Math.random().toString(36).slice(2, 10)}-GatewayToken`;
const CONFIRM: FakeInteraction = {
  id: 'ask-call_15',
  kind: 'confirm',
  prompt: 'Overwrite README.md?',
  options: ['Yes', 'No'],
  tool_name: null,
  tool_arguments: null,
  required: true,
  stage_name: 'implement',
  body: null,
  body_format: 'plain',
};

let peer: FakeLeviathPeer;
let studio: RunningStudio;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let traffic: BrowserTraffic;
const pageErrors: string[] = [];
const dataDir = mkdtempSync(join(tmpdir(), 'studio-e2e-lev-'));
const workspace = mkdtempSync(join(tmpdir(), 'studio-e2e-lev-ws-'));
/** When the gateway accepted each answer (ms since the epoch). */
const acceptedAt = new Map<string, number>();
/** The session's checkpoints as the studio served them while the gateway held the approval. */
let checkpointsWhenAnswered: CheckpointNode[] | null = null;

function answersTo(runId: string): RecordedRequest[] {
  return peer.requests.filter(
    (r) => r.method === 'POST' && r.pathname === `/api/agents/${runId}/interaction`,
  );
}

function frame(runId: string, fields: Record<string, unknown>): Record<string, unknown> {
  return { agent_id: runId, run_id: runId, ...fields };
}

interface CheckpointNode {
  checkpointId: string;
  reason: string;
  exactPreImage: boolean;
  createdAt: string;
  files: { path: string }[];
}

async function checkpoints(sessionId: string): Promise<CheckpointNode[]> {
  type Paged = Omit<CheckpointNode, 'files'> & { files: { edges: { node: { path: string } }[] } };
  const result = await gql<{
    studioCheckpoints: { supported: boolean; edges: { node: Paged }[] };
  }>(
    studio,
    `query ($sessionId: String!) { studioCheckpoints(sessionId: $sessionId, first: 20) {
      supported edges { node { checkpointId reason exactPreImage createdAt
        files(first: 200) { edges { node { path } } } } } } }`,
    { sessionId },
  );
  if (!result.data) throw new Error(`studioCheckpoints failed: ${JSON.stringify(result.errors)}`);
  expect(result.data.studioCheckpoints.supported).toBe(true);
  return result.data.studioCheckpoints.edges.map(({ node }) => ({
    ...node,
    files: node.files.edges.map((e) => e.node),
  }));
}

beforeAll(async () => {
  // The folder the runs work in: the approved `rm -rf build && make` will change it.
  mkdirSync(join(workspace, 'build'));
  mkdirSync(join(workspace, 'src'));
  writeFileSync(join(workspace, 'Makefile'), 'app: src/main.c\n\tcc -o build/app src/main.c\n');
  writeFileSync(join(workspace, 'src', 'main.c'), 'int main(void) { return 0; }\n');
  writeFileSync(join(workspace, 'build', 'stale.o'), 'stale object\n');
  writeFileSync(join(workspace, 'README.md'), '# app\n');

  peer = await FakeLeviathPeer.start({
    token: TOKEN,
    config: state.config,
    runs: state.runs,
    interactions: state.interactions,
    // The daemon acts on an answer the moment the gateway accepts it, before the 202 goes back:
    // for the approved command that means the build folder is replaced. So the pre-image must be
    // in the store (committed, readable by anyone) by the time the answer arrives: the studio is
    // asked for it while the gateway still holds the answer.
    onAccepted: async (answer) => {
      acceptedAt.set(String(answer.body.request_id), Date.now());
      if (answer.body.request_id !== APPROVAL_ID || answer.body.approved !== true) return;
      checkpointsWhenAnswered = await checkpoints(`leviath-${REVIEWER}`);
      rmSync(join(workspace, 'build'), { recursive: true, force: true });
      mkdirSync(join(workspace, 'build'));
      writeFileSync(join(workspace, 'build', 'app'), 'fresh binary\n');
    },
  });

  studio = await startStudio({
    dataDir,
    args: ['--no-demo', '--leviath', peer.url, '--leviath-workspace', workspace],
    env: { LEVIATH_TOKEN: TOKEN },
  });
  await eventually(
    () => (peer.socketCount() > 0 ? true : undefined),
    'the bridge to open /ws',
    20_000,
  );
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  traffic = new BrowserTraffic(page, studio.url);
});

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
  await peer?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

describe('Leviath bridge journey', () => {
  it('approves a tool approval: one documented answer, an exact pre-image checkpoint taken before it', async () => {
    await page.goto(`${studio.url}/#token=${studio.token}`);
    const sessions = page.getByRole('navigation', { name: 'Sessions' });
    // The reviewer run has no title: the studio names it after its task.
    await sessions.getByRole('link', { name: 'Clean and rebuild' }).click();

    const call = toolCallCard(page, TOOL_CALL_ID);
    await call.waitFor({ timeout: 15_000 });
    await expectVisible(call.getByRole('heading', { name: /^bash/ }));
    await expectVisible(call.getByText('Waiting for approval', { exact: true }));
    await expectVisible(call.getByText('Allow tool call: `bash` - `rm -rf build && make`?'));
    const prompt = call.getByRole('region', { name: 'Approval needed' });
    await expectVisible(prompt.getByText('Leviath asks before running bash'));
    await expectVisible(prompt.getByText('Stage: implement'));
    expect(answersTo(REVIEWER)).toHaveLength(0);
    expect(await checkpoints(`leviath-${REVIEWER}`)).toEqual([]);
    await saveScreenshot(page, 'bridges-leviath-pending');

    await decide(call, 'Approve');
    await expectVisible(call.locator('strong', { hasText: /^Approved/ }));

    // The card turns "Approved" optimistically; the answer reaches the gateway right after.
    const posts = await eventually(
      () => (answersTo(REVIEWER).length > 0 ? answersTo(REVIEWER) : undefined),
      'the answer to reach the gateway',
    );
    expect(posts).toHaveLength(1);
    const post = posts[0]!;
    expect(post.url).toBe(`/api/agents/${REVIEWER}/interaction`);
    expect(post.json).toEqual({ request_id: APPROVAL_ID, approved: true, scope: 'once' });
    expect(post.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(post.headers['content-type']).toBe('application/json');
    await eventually(
      () => existsSync(join(workspace, 'build', 'app')) || undefined,
      'the daemon to run the approved command',
    );

    // The pre-image is the folder as it was before the answer: the stale build, not the new one.
    // It was committed before the answer left: the studio served it while the gateway held it.
    const [preImage, ...others] = await checkpoints(`leviath-${REVIEWER}`);
    expect(checkpointsWhenAnswered).toEqual([preImage]);
    expect(others).toEqual([]);
    expect(preImage).toMatchObject({ reason: 'AGENT_WRITE', exactPreImage: true });
    const prePaths = preImage!.files.map((f) => f.path).sort();
    expect(prePaths).toEqual(['Makefile', 'README.md', 'build/stale.o', 'src/main.c']);
    expect(Date.parse(preImage!.createdAt)).toBeLessThanOrEqual(acceptedAt.get(APPROVAL_ID)!);

    // Leviath runs the call (and its log echoes the token); the card follows it to the end.
    peer.send(
      frame(REVIEWER, { type: 'tool_call_started', call_id: TOOL_CALL_ID, tool: 'bash' }),
      frame(REVIEWER, { type: 'log', line: `[tool] bash: env LEVIATH_TOKEN=${TOKEN} make` }),
      frame(REVIEWER, {
        type: 'tool_call_finished',
        call_id: TOOL_CALL_ID,
        tool: 'bash',
        ok: true,
        summary: 'built build/app',
      }),
    );
    await expectVisible(call.getByText('Succeeded', { exact: true }));
    await expectVisible(page.getByText(/\[tool\] bash: env LEVIATH_TOKEN=\[redacted\] make/));
    const after = await eventually(async () => {
      const all = await checkpoints(`leviath-${REVIEWER}`);
      return all.find((c) => c.reason === 'STUDIO_AFTER_TOOL');
    }, 'the after-tool checkpoint');
    expect(after.exactPreImage).toBe(false);
    expect(after.files.map((f) => f.path)).toContain('build/app');
    await saveScreenshot(page, 'bridges-leviath-approved');

    // The checkpoint browser marks which checkpoint is the exact pre-image.
    await page
      .getByRole('navigation', { name: 'Session views' })
      .getByRole('link', { name: 'Checkpoints' })
      .click();
    await expectVisible(page.getByText('Exact pre-image', { exact: true }));
    expect(await page.getByText('Exact pre-image', { exact: true }).count()).toBe(1);
    await saveScreenshot(page, 'bridges-leviath-checkpoints');
    expect(answersTo(REVIEWER)).toHaveLength(1);
    expect(pageErrors).toEqual([]);
  });

  it('answers a confirm question from its card with both approved and choice_index', async () => {
    // The coder run asks while the studio is open.
    peer.openInteraction(CODER, CONFIRM);
    peer.send(frame(CODER, { type: 'interaction_needed', request: CONFIRM }));

    await page
      .getByRole('navigation', { name: 'Sessions' })
      .getByRole('link', { name: 'Add CSV parser' })
      .click();
    // The asked row carries the live card (the answered row shows the same card again).
    const card = page
      .getByRole('article', { name: 'Question asked, event' })
      .getByRole('article', { name: 'Question from stage implement' });
    await card.waitFor({ timeout: 15_000 });
    await expectVisible(card.getByText('Overwrite README.md?'));
    await saveScreenshot(page, 'bridges-leviath-question');

    // One step, as every action: no attach dialog between the answer and the gateway.
    await card.getByRole('button', { name: 'Yes', exact: true }).click();
    expect(await card.getByRole('alertdialog').count()).toBe(0);
    await expectVisible(card.getByText(/^Answered/));
    await expectVisible(card.getByText('Answer: Yes'));
    await saveScreenshot(page, 'bridges-leviath-answered');

    const posts = await eventually(
      () => (answersTo(CODER).length > 0 ? answersTo(CODER) : undefined),
      'the answer to reach the gateway',
    );
    expect(posts).toHaveLength(1);
    expect(posts[0]!.json).toEqual({ request_id: 'ask-call_15', approved: true, choice_index: 0 });
    expect(posts[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(pageErrors).toEqual([]);
  });

  it('never lets the gateway token reach the browser, the server output, the store or a URL', async () => {
    // The token travelled only in the Authorization header (REST and the /ws upgrade).
    expect(peer.requests.some((r) => r.pathname === '/ws')).toBe(true);
    for (const request of peer.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(request.url).not.toContain(TOKEN);
      expect(request.body).not.toContain(TOKEN);
    }

    expect(traffic.sawBundle()).toBe(true);
    expect(traffic.frames.length).toBeGreaterThan(0);
    // The recorder does see what the run logged next to the token (a positive control).
    expect(await traffic.sightings(['LEVIATH_TOKEN=[redacted]'])).not.toEqual([]);
    expect(await traffic.sightings([TOKEN, CALLBACK_SECRET])).toEqual([]);
    expect(linesWithSecrets(studio.output, [TOKEN, CALLBACK_SECRET])).toEqual([]);
    expect(filesWithSecrets(dataDir, [TOKEN, CALLBACK_SECRET])).toEqual([]);
  });
});
