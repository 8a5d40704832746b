/**
 * Journey: control in a hidden tab. A tab that controls a session keeps control while it is
 * hidden for longer than the server's 5 s heartbeat window, and approves afterwards without any
 * attach step. Headless Chromium never hides a page itself (every page stays "visible" and its
 * timers run at full pace, whatever the CDP window or tab calls), so the page is hidden the way
 * Chromium treats a background tab: `document.visibilityState` is "hidden", a visibilitychange
 * fires, and main-thread timers of a second or more fire at most once a minute (Chromium's
 * intensive throttling of hidden pages; dedicated workers are not throttled). Chromium is launched
 * without Playwright's own anti-throttling switches.
 *
 * The control case shows the emulation bites: the same hidden tab without workers loses control
 * (CLIENT_DETACHED HEARTBEAT_TIMEOUT), so the worker timer (src/graphql/ticker.ts) is what keeps it.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, saveScreenshot, startStudio, type RunningStudio } from './harness.ts';
import {
  DEMO,
  eventually,
  expectTimelineFollows,
  openStudioTab,
  pendingApprovals,
  readHistory,
  screenshotOnFailure,
  sessionByTitle,
  visitPrintedUrl,
  type StudioTab,
} from './journeyKit.ts';

/** Installed before the app's scripts: `window.__studioHide(true)` hides the tab. */
function hiddenTabEmulation({ workers }: { workers: boolean }): void {
  const w = window as unknown as {
    __studioHide: (on: boolean) => void;
    __studioHidden: boolean;
    Worker?: unknown;
  };
  w.__studioHidden = false;
  if (!workers) delete w.Worker;
  const realSetInterval = window.setInterval.bind(window);
  const realSetTimeout = window.setTimeout.bind(window);
  let lastWake = 0;
  /** A hidden page's timer of 1 s or more wakes at most once a minute. */
  const throttled = (fn: () => void, ms: number) => () => {
    if (!w.__studioHidden || ms < 1000) return fn();
    const now = Date.now();
    if (now - lastWake < 60_000) return undefined;
    lastWake = now;
    return fn();
  };
  window.setInterval = ((handler: TimerHandler, ms = 0, ...args: unknown[]) =>
    typeof handler === 'function'
      ? realSetInterval(
          throttled(() => handler(...args), ms),
          ms,
        )
      : realSetInterval(handler, ms)) as typeof window.setInterval;
  window.setTimeout = ((handler: TimerHandler, ms = 0, ...args: unknown[]) =>
    typeof handler === 'function' && ms >= 1000
      ? realSetTimeout(() => {
          if (!w.__studioHidden) return handler(...args);
          // Deferred to the next minute wake-up.
          return realSetTimeout(() => handler(...args), 60_000);
        }, ms)
      : realSetTimeout(handler, ms)) as typeof window.setTimeout;
  Object.defineProperty(document, 'visibilityState', {
    get: () => (w.__studioHidden ? 'hidden' : 'visible'),
  });
  Object.defineProperty(document, 'hidden', { get: () => w.__studioHidden });
  w.__studioHide = (on: boolean) => {
    w.__studioHidden = on;
    lastWake = Date.now();
    document.dispatchEvent(new Event('visibilitychange'));
  };
}

let studio: RunningStudio;
let browser: Browser;

beforeAll(async () => {
  studio = await startStudio();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    ignoreDefaultArgs: [
      '--disable-background-timer-throttling',
      '--disable-renderer-backgrounding',
      '--disable-backgrounding-occluded-windows',
    ],
  });
});

const tabs: StudioTab[] = [];
screenshotOnFailure(
  'journey-hidden-tab',
  () => tabs,
  () => studio,
);

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

async function openHiddenCapableTab(workers: boolean, title: string): Promise<StudioTab> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(hiddenTabEmulation, { workers });
  const tab = await openStudioTab(browser, studio, { context });
  tabs.push(tab);
  await visitPrintedUrl(tab, studio);
  await tab.page
    .getByRole('navigation', { name: 'Sessions' })
    .getByRole('link', { name: title })
    .click();
  await tab.page.getByRole('heading', { name: title, exact: true }).waitFor();
  return tab;
}

/** Counts the heartbeats the page sends (HTTP POSTs of StudioHeartbeat). */
function countHeartbeats(page: Page): { count: () => number } {
  let n = 0;
  page.on('request', (request) => {
    if (request.method() === 'POST' && (request.postData() ?? '').includes('StudioHeartbeat'))
      n += 1;
  });
  return { count: () => n };
}

const controls = (page: Page) => page.getByText(/^This tab controls the session \(client epoch/);

describe('journey: control in a hidden tab', () => {
  it('keeps control hidden for longer than the heartbeat window, then approves with no attach step', async () => {
    const session = await sessionByTitle(studio, DEMO.changelog);
    const tab = await openHiddenCapableTab(true, DEMO.changelog);
    const page = tab.page;
    const beats = countHeartbeats(page);
    await page
      .getByRole('textbox', { name: /Message to the agent/ })
      .fill('clean up the scratch file');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await controls(page).waitFor();
    const approval = await eventually(async () => {
      const all = await pendingApprovals(studio);
      return all.find((a) => a.studioSessionId === session.sessionId);
    }, 'the delete approval');
    const epoch = (await sessionByTitle(studio, DEMO.changelog)).currentClientEpoch;

    await page.evaluate(() =>
      (window as unknown as { __studioHide: (on: boolean) => void }).__studioHide(true),
    );
    expect(await page.evaluate(() => document.visibilityState)).toBe('hidden');
    const hiddenAt = Date.now();
    const before = beats.count();
    // Six heartbeats while hidden: at 2 s each, more than twice the 5 s detach window.
    await eventually(
      () => (beats.count() - before >= 6 ? true : undefined),
      'six heartbeats from the hidden tab',
      30_000,
    );
    expect(Date.now() - hiddenAt).toBeGreaterThan(10_000);
    const history = await readHistory(studio, session.sessionId);
    expect(history.filter((e) => e.type === 'CLIENT_DETACHED')).toEqual([]);
    expect((await sessionByTitle(studio, DEMO.changelog)).currentClientEpoch).toBe(epoch);

    // Back in front: still in control, and Approve acts at once.
    await page.evaluate(() =>
      (window as unknown as { __studioHide: (on: boolean) => void }).__studioHide(false),
    );
    await controls(page).waitFor();
    const card = page.locator(`article[data-tool-call-id="${approval.toolCallId}"]`);
    const approve = card.getByRole('button', { name: 'Approve', exact: true });
    await expectTimelineFollows(page, approve);
    await saveScreenshot(page, 'journey-hidden-tab-still-controls');
    await approve.click();
    await eventually(async () => {
      const events = await readHistory(studio, session.sessionId);
      return events.some(
        (e) => e.type === 'APPROVAL_GRANTED' && e.approvalId === approval.approvalId,
      )
        ? true
        : undefined;
    }, 'the grant');
    const after = await readHistory(studio, session.sessionId);
    expect(after.filter((e) => e.type === 'CLIENT_ATTACHED').map((e) => e.clientEpoch)).toEqual([
      epoch,
    ]);
  }, 90_000);

  it('control case: without the worker timer, the same hidden tab loses control after the window', async () => {
    const session = await sessionByTitle(studio, DEMO.cleanup);
    const tab = await openHiddenCapableTab(false, DEMO.cleanup);
    const page = tab.page;
    await page.getByRole('button', { name: 'Take control', exact: true }).click();
    await controls(page).waitFor();
    const epoch = (await sessionByTitle(studio, DEMO.cleanup)).currentClientEpoch;
    await page.evaluate(() =>
      (window as unknown as { __studioHide: (on: boolean) => void }).__studioHide(true),
    );
    const detached = await eventually(
      async () =>
        (await readHistory(studio, session.sessionId)).find(
          (e) => e.type === 'CLIENT_DETACHED' && e.clientEpoch === epoch,
        ),
      'the server to detach the hidden tab',
      30_000,
    );
    expect(detached.reason).toBe('HEARTBEAT_TIMEOUT');
  }, 90_000);
});
