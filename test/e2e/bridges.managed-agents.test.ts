/**
 * Journey: a Claude Managed Agents session followed by the real studio server (`--managed-agents`
 * against the fake peer), in real Chromium. An `ask` call appears live, is approved in the studio,
 * and the peer receives exactly the documented `user.tool_confirmation`; a subagent's cross-posted
 * ask carries its attribution into the card. The API key never reaches the browser, the server's
 * output or the store, even when the runtime echoes it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  BETA,
  FakeManagedAgentsPeer,
  VERSION,
  type FakeEvent,
} from '../fakes/FakeManagedAgentsPeer.ts';
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

interface SessionFixture {
  session: Record<string, unknown> & { id: string; title: string };
  history: FakeEvent[];
}

function fixture<T>(name: string): T {
  return JSON.parse(
    readFileSync(new URL(`../fixtures/managed-agents/${name}`, import.meta.url), 'utf8'),
  ) as T;
}

const live = fixture<SessionFixture & { live: FakeEvent[]; afterAllow: FakeEvent[] }>(
  'live-approval.json',
);
const multi = fixture<SessionFixture & { racingIdle: FakeEvent[]; crossPostedAsk: FakeEvent[] }>(
  'subagent-race.json',
);

// Distinctive, so any copy of it anywhere is found; realistic prefix, so the journey also covers
// what the logger's pattern masking would hide.
const API_KEY = `sk-ant-api03-E2eBridgeKey${Math.random().toString(36).slice(2, 10)}Zq`;

let peer: FakeManagedAgentsPeer;
let studio: RunningStudio;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let traffic: BrowserTraffic;
const pageErrors: string[] = [];
const dataDir = mkdtempSync(join(tmpdir(), 'studio-e2e-ma-'));

function confirmationsTo(sessionId: string): RecordedRequest[] {
  return peer.requests.filter(
    (r) => r.method === 'POST' && r.pathname === `/v1/sessions/${sessionId}/events`,
  );
}

beforeAll(async () => {
  peer = await FakeManagedAgentsPeer.start({
    apiKey: API_KEY,
    sessions: {
      [live.session.id]: { session: live.session, history: live.history },
      [multi.session.id]: { session: multi.session, history: multi.history },
    },
  });
  peer.onEventsSent = (sessionId, sent) => {
    const allowed = sent.some((e) => e.type === 'user.tool_confirmation' && e.result === 'allow');
    if (!allowed) return;
    if (sessionId === live.session.id) {
      // The runtime runs the call; its output echoes the key (an agent printing its environment).
      const events = live.afterAllow.map((e) =>
        e.type === 'agent.tool_result'
          ? {
              ...e,
              content: [{ type: 'text', text: `Tests: 48 passed\nANTHROPIC_API_KEY=${API_KEY}` }],
            }
          : e,
      );
      setTimeout(() => peer.emit(sessionId, events), 200);
    } else if (sessionId === multi.session.id) {
      setTimeout(
        () =>
          peer.emit(sessionId, [
            {
              id: 'sevt_M020',
              type: 'session.thread_status_running',
              processed_at: '2026-11-22T14:01:00Z',
              session_thread_id: 'sthr_01Rev',
              agent_name: 'reviewer',
            },
            {
              id: 'sevt_M021',
              type: 'agent.tool_result',
              processed_at: '2026-11-22T14:01:05Z',
              tool_use_id: 'sevt_M009',
              content: [{ type: 'text', text: 'ALTER TABLE' }],
              is_error: false,
              session_thread_id: 'sthr_01Rev',
            },
          ]),
        200,
      );
    }
  };
  studio = await startStudio({
    dataDir,
    args: [
      '--no-demo',
      '--managed-agents',
      `${live.session.id},${multi.session.id}`,
      '--managed-agents-url',
      peer.url,
    ],
    env: { ANTHROPIC_API_KEY: API_KEY },
  });
  // Both bridges are following their streams before the runtime asks anything.
  for (const id of [live.session.id, multi.session.id])
    await eventually(
      () => (peer.openStreams(id) > 0 ? true : undefined),
      `the bridge to follow ${id}`,
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
});

describe('Managed Agents bridge journey', () => {
  it('shows a live ask, approves it and posts exactly the documented user.tool_confirmation', async () => {
    await page.goto(`${studio.url}/#token=${studio.token}`);
    const sessions = page.getByRole('navigation', { name: 'Sessions' });
    await sessions.getByRole('link', { name: live.session.title }).click();
    await expectVisible(page.getByText('The date test is flaky, fix it.').first());

    // The runtime asks now, while the session is open.
    peer.emit(live.session.id, live.live);
    const call = toolCallCard(page, 'sevt_L006');
    await call.waitFor({ timeout: 15_000 });
    await expectVisible(call.getByRole('heading', { name: /^bash/ }));
    await expectVisible(call.getByText('Waiting for approval', { exact: true }));
    const prompt = call.getByRole('region', { name: 'Approval needed' });
    await expectVisible(prompt.getByText('Policy: always_ask'));
    await expectVisible(call.getByText(/npm test -- --runInBand/).first());
    expect(confirmationsTo(live.session.id)).toHaveLength(0);
    await saveScreenshot(page, 'bridges-ma-pending');

    await decide(call, 'Approve');

    await expectVisible(call.getByText('Succeeded', { exact: true }));
    await expectVisible(call.locator('strong', { hasText: /^Approved/ }));
    // The turn ends: the timeline shows the run's end (the header's Run fact then reads
    // "No run": the server clears currentRun once a run is terminal).
    await expectVisible(
      page.getByRole('feed', { name: 'Events' }).getByText('Run succeeded').last(),
    );
    await expectVisible(page.getByText('All green.').first());
    await saveScreenshot(page, 'bridges-ma-approved');

    // Exactly one request, with the documented path, body and headers; the echo and the
    // stream that follows add none.
    const posts = confirmationsTo(live.session.id);
    expect(posts).toHaveLength(1);
    const post = posts[0]!;
    expect(post.url).toBe(`/v1/sessions/${live.session.id}/events`);
    expect(post.json).toEqual({
      events: [{ type: 'user.tool_confirmation', tool_use_id: 'sevt_L006', result: 'allow' }],
    });
    expect(post.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(post.headers['anthropic-version']).toBe(VERSION);
    expect(
      String(post.headers['anthropic-beta'])
        .split(',')
        .map((s) => s.trim()),
    ).toContain(BETA);
    expect(post.headers['content-type']).toBe('application/json');

    // What the runtime echoed with the key in it is stored and shown redacted.
    const stored = await gql<{ studioToolCall: { status: string; resultJson: string | null } }>(
      studio,
      'query ($id: String!) { studioToolCall(toolCallId: $id) { status resultJson } }',
      { id: 'sevt_L006' },
    );
    expect(stored.data?.studioToolCall.status).toBe('SUCCEEDED');
    expect(stored.data?.studioToolCall.resultJson).toContain('Tests: 48 passed');
    expect(stored.data?.studioToolCall.resultJson).toContain('[redacted]');
    expect(pageErrors).toEqual([]);
  });

  it('attributes a cross-posted subagent ask and answers it once despite the race and the double echo', async () => {
    const sessions = page.getByRole('navigation', { name: 'Sessions' });
    await sessions.getByRole('link', { name: multi.session.title }).click();
    await expectVisible(
      page.getByText('Have the reviewer check the migration, then ship.').first(),
    );

    // The idle events listing the call arrive before the call itself (the documented race).
    peer.emit(multi.session.id, multi.racingIdle);
    peer.emit(multi.session.id, multi.crossPostedAsk);
    const call = toolCallCard(page, 'sevt_M009');
    await call.waitFor({ timeout: 15_000 });
    await expectVisible(call.locator('p', { hasText: /^Asked by subagent reviewer$/ }));
    await expectVisible(call.getByText('Waiting for approval', { exact: true }));
    await saveScreenshot(page, 'bridges-ma-subagent-pending');

    await decide(call, 'Approve');
    await expectVisible(call.getByText('Succeeded', { exact: true }));
    await saveScreenshot(page, 'bridges-ma-subagent-approved');

    const posts = confirmationsTo(multi.session.id);
    expect(posts).toHaveLength(1);
    expect(posts[0]!.url).toBe(`/v1/sessions/${multi.session.id}/events`);
    // No session_thread_id: the API routes by the event id.
    expect(posts[0]!.json).toEqual({
      events: [{ type: 'user.tool_confirmation', tool_use_id: 'sevt_M009', result: 'allow' }],
    });
    expect(posts[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(pageErrors).toEqual([]);
  });

  it('never lets the API key reach the browser, the server output, the store or a URL', async () => {
    // The key travelled only in its header to the peer, never in a URL or a body.
    expect(peer.requests.length).toBeGreaterThan(0);
    for (const request of peer.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(request.url).not.toContain(API_KEY);
      expect(request.body).not.toContain(API_KEY);
    }

    expect(traffic.sawBundle()).toBe(true);
    expect(traffic.frames.length).toBeGreaterThan(0);
    // The recorder does see what the runtime sent next to the key (a positive control).
    expect(await traffic.sightings(['Tests: 48 passed'])).not.toEqual([]);
    expect(await traffic.sightings([API_KEY])).toEqual([]);
    expect(linesWithSecrets(studio.output, [API_KEY])).toEqual([]);
    expect(filesWithSecrets(dataDir, [API_KEY])).toEqual([]);
  });
});
