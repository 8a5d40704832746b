/**
 * Journey (e): the studio on a phone (390 x 844) and on a desktop window at 200 % zoom
 * (1280 x 800 device pixels). Zoom is emulated the way Chromium's own zoom lays a page out: a
 * CSS viewport of 640 x 400 px with devicePixelRatio 2 (Playwright's viewport and
 * deviceScaleFactor, i.e. CDP Emulation.setDeviceMetricsOverride), not CSS `zoom`. At each size
 * a person opens the sessions drawer, picks the cleanup session, approves its pending delete,
 * opens a checkpoint's files, and at every step the shell has no horizontal scroll and the
 * timeline keeps most of the height. Axe runs on every page in both themes.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchChromium, saveScreenshot, startStudio, type RunningStudio } from './harness.ts';
import {
  allAxeViolations,
  DEMO,
  eventually,
  pendingApprovals,
  screenshotOnFailure,
  sessionByTitle,
  type StudioTab,
} from './journeyKit.ts';

interface Size {
  name: string;
  /** The CSS viewport (device pixels / scale). */
  viewport: { width: number; height: number };
  deviceScaleFactor: number;
  /** The least share of the viewport's height the timeline's scroller must get. */
  timelineShare: number;
}

const SIZES: Size[] = [
  {
    name: 'phone-390x844',
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 1,
    timelineShare: 0.6,
  },
  // 1280 x 800 at 200 %: what the page sees is 640 x 400 CSS px.
  {
    name: 'desktop-1280x800-zoom200',
    viewport: { width: 640, height: 400 },
    deviceScaleFactor: 2,
    timelineShare: 0.4,
  },
];

let browser: Browser;
const studios: RunningStudio[] = [];
const tabs: StudioTab[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});

screenshotOnFailure(
  'journey-e',
  () => tabs,
  () => studios.at(-1),
);

afterAll(async () => {
  await browser?.close();
  for (const studio of studios) await studio.stop();
});

/** Horizontal overflow of the document, the shell's main area and the timeline, in px. */
async function horizontalOverflow(page: Page): Promise<Record<string, number>> {
  return page.evaluate(() => {
    const over = (el: Element | null) => (el ? el.scrollWidth - el.clientWidth : 0);
    return {
      document: over(document.scrollingElement),
      body: over(document.body),
      main: over(document.querySelector('main')),
      timeline: over(document.querySelector('[aria-label="Events, oldest first"]')),
      windowScrollX: window.scrollX,
    };
  });
}

async function expectNoHorizontalScroll(page: Page, where = ''): Promise<void> {
  const overflow = await horizontalOverflow(page);
  expect(overflow, `horizontal overflow ${where}`).toEqual({
    document: 0,
    body: 0,
    main: 0,
    timeline: 0,
    windowScrollX: 0,
  });
  // And the document cannot be scrolled at all: the shell is exactly one screen.
  expect(await page.evaluate(() => document.scrollingElement!.scrollHeight)).toBe(
    await page.evaluate(() => window.innerHeight),
  );
}

/** The box of a locator must lie wholly inside the viewport's width. */
async function expectWithinWidth(page: Page, locator: Locator): Promise<void> {
  const box = await locator.boundingBox();
  const width = page.viewportSize()!.width;
  expect(box).not.toBeNull();
  expect(box!.x).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width).toBeLessThanOrEqual(width);
}

async function expectVisible(locator: Locator): Promise<void> {
  await locator.waitFor({ state: 'visible', timeout: 15_000 });
}

/** Axe on the page as shown, then in the other theme, then back; every violation counts. */
async function axeBothThemes(page: Page, where: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const toggle = page.getByRole('banner').getByRole('switch', { name: /Dark/ });
  for (const theme of ['light', 'dark']) {
    const dark = (await toggle.getAttribute('aria-checked')) === 'true';
    if ((theme === 'dark') !== dark) await toggle.click();
    await eventually(
      async () =>
        (await page.evaluate(() => document.documentElement.classList.contains('dark'))) ===
        (theme === 'dark')
          ? true
          : undefined,
      `the ${theme} theme`,
    );
    const violations = await allAxeViolations(page);
    if (violations.length) out[`${where} (${theme})`] = violations;
  }
  await toggle.click();
  return out;
}

describe.each(SIZES)('journey (e) at $name', (size) => {
  let studio: RunningStudio;
  let tab: StudioTab;

  beforeAll(async () => {
    studio = await startStudio();
    studios.push(studio);
    const context = await browser.newContext({
      viewport: size.viewport,
      deviceScaleFactor: size.deviceScaleFactor,
    });
    const page = await context.newPage();
    tab = { context, page, pageErrors: [] };
    page.on('pageerror', (error) => tab.pageErrors.push(error.message));
    tabs.push(tab);
  });

  afterAll(async () => {
    await tab?.context.close();
  });

  it('picks a session from the drawer and approves its call without horizontal scrolling', async () => {
    const { page } = tab;
    const session = await sessionByTitle(studio, DEMO.cleanup);
    const approval = await eventually(
      async () =>
        (await pendingApprovals(studio)).find((a) => a.studioSessionId === session.sessionId),
      'the pending delete',
    );
    await page.goto(`${studio.url}/#token=${studio.token}`);

    // Below 900 px the sessions list is a drawer behind the header's button.
    const menu = page.getByRole('banner').getByRole('button', { name: 'Sessions' });
    await expectVisible(menu);
    expect(page.url()).not.toContain(studio.token);
    const sessions = page.getByRole('navigation', { name: 'Sessions' });
    expect(await sessions.isVisible()).toBe(false);
    await expectNoHorizontalScroll(page);
    await saveScreenshot(page, `journey-e-${size.name}-home`);

    await menu.click();
    await expectVisible(sessions);
    await saveScreenshot(page, `journey-e-${size.name}-drawer`);
    // Escape closes it and gives the focus back to the button.
    await page.keyboard.press('Escape');
    await sessions.waitFor({ state: 'hidden' });
    expect(await menu.evaluate((el) => el === document.activeElement)).toBe(true);
    await menu.click();
    await sessions.getByRole('link', { name: DEMO.cleanup }).click();
    await sessions.waitFor({ state: 'hidden' });

    await expectVisible(page.getByRole('heading', { level: 1, name: DEMO.cleanup }));
    const timeline = page.getByRole('region', { name: 'Events, oldest first' });
    await expectVisible(timeline);
    const card = page.locator(`article[data-tool-call-id="${approval.toolCallId}"]`);
    await expectVisible(card.getByText('Waiting for approval', { exact: true }));
    const approve = card.getByRole('button', { name: 'Approve', exact: true });
    await approve.scrollIntoViewIfNeeded();
    await expectVisible(approve);

    const height = (await timeline.boundingBox())!.height;
    expect(height / size.viewport.height).toBeGreaterThanOrEqual(size.timelineShare);
    await expectWithinWidth(page, approve);
    await expectWithinWidth(page, card.getByRole('button', { name: 'Deny…', exact: true }));
    await expectNoHorizontalScroll(page);
    await saveScreenshot(page, `journey-e-${size.name}-pending`);

    // Approving attaches at once (no extra step) and says once what that means.
    await approve.click();
    await expectVisible(page.getByText(/This tab now controls the session/).first());
    await expectVisible(card.getByText('Succeeded', { exact: true }));
    await eventually(
      () =>
        existsSync(join(studio.dataDir, 'projects', 'cleanup-app', 'tmp', 'agent-scratch.md'))
          ? undefined
          : true,
      'the scratch file to be deleted',
    );
    await expectNoHorizontalScroll(page);
    await saveScreenshot(page, `journey-e-${size.name}-approved`);
    expect(tab.pageErrors).toEqual([]);
  });

  it('searches the whole session on the server and jumps to a match', async () => {
    const { page } = tab;
    const session = await sessionByTitle(studio, DEMO.cleanup);
    await page.getByRole('searchbox', { name: 'Search the whole session' }).fill('scratch');
    await page
      .getByRole('search', { name: 'Whole session' })
      .getByRole('button', { name: 'Search' })
      .click();
    const results = page.getByRole('region', { name: 'Matches for scratch' });
    const first = results.getByRole('link').first();
    await expectVisible(first);
    expect(await first.locator('mark').first().innerText()).toMatch(/^scratch/i);
    await expectWithinWidth(page, first);
    await expectNoHorizontalScroll(page);
    await saveScreenshot(page, `journey-e-${size.name}-search`);
    const seq = /#(\d+)/.exec(await first.innerText())![1]!;
    await first.click();
    await page.waitForURL(`**/sessions/${session.sessionId}/events/${seq}`);
    const row = page.locator(`article[data-seq="${seq}"], article[data-last-seq="${seq}"]`).first();
    await expectVisible(row);
    expect(await row.getAttribute('aria-current')).toBe('true');
    expect(tab.pageErrors).toEqual([]);
  });

  it("opens a checkpoint's files without horizontal scrolling", async () => {
    const { page } = tab;
    await page
      .getByRole('navigation', { name: 'Session views' })
      .getByRole('link', { name: 'Checkpoints' })
      .click();
    await expectVisible(page.getByRole('heading', { level: 1, name: 'Checkpoints' }));
    const files = page.getByRole('button', { name: /^Files of checkpoint/ }).first();
    await files.scrollIntoViewIfNeeded();
    await files.click();
    const panel = page.getByRole('region', { name: /^Files of checkpoint/ });
    await expectVisible(panel);
    await expectVisible(panel.getByText('CHANGELOG.md', { exact: true }).first());
    await panel.scrollIntoViewIfNeeded();
    await expectNoHorizontalScroll(page);
    await saveScreenshot(page, `journey-e-${size.name}-checkpoint-files`);
    expect(tab.pageErrors).toEqual([]);
  });

  it('has no axe violations on any page in either theme', async () => {
    const { page } = tab;
    const session = await sessionByTitle(studio, DEMO.cleanup);
    const found: Record<string, unknown> = {};
    const pages: [string, string, Locator][] = [
      ['home', '/', page.getByRole('heading', { level: 1, name: 'Agent Studio' })],
      [
        'session',
        `/sessions/${session.sessionId}`,
        page.getByRole('article', { name: /^Run succeeded/ }),
      ],
      [
        'checkpoints',
        `/sessions/${session.sessionId}/checkpoints`,
        page.locator('tr[data-checkpoint-id]').first(),
      ],
      ['inbox', '/inbox', page.getByText('No approvals are waiting.', { exact: false })],
      ['not found', '/no/such/page', page.getByRole('heading', { level: 1, name: 'Nothing here' })],
    ];
    // At this size, and once more at a plain desktop size: axe skips what is scrolled out of
    // view (a wide table's far columns here), so each page is checked where it all shows too.
    for (const viewport of [size.viewport, { width: 1280, height: 800 }]) {
      await page.setViewportSize(viewport);
      for (const [where, path, ready] of pages) {
        await page.goto(`${studio.url}${path}`);
        await expectVisible(ready);
        await expectNoHorizontalScroll(page, `on ${where}`);
        Object.assign(found, await axeBothThemes(page, `${where} at ${viewport.width}px`));
      }
    }
    await page.setViewportSize(size.viewport);
    expect(found).toEqual({});
    expect(tab.pageErrors).toEqual([]);
  });
});
