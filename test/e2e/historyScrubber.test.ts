/**
 * Journey (f): the history scrubber on a phone (390 x 844, touch). The data dir is seeded by the
 * real server in-process: a BUILD session writes the changelog (a checkpoint), asks to delete
 * the scratch file, is approved, and then logs 600 more events, so the checkpoint and the
 * approval sit on page 0 while the timeline opens on page 2. The built studio then serves that
 * data dir to real Chromium, where a person taps the checkpoint's mark on the rail: page 0
 * loads on demand, the row is scrolled to and highlighted, the session as of that seq shows the
 * checkpoint, the keyboard steps to the next mark, and "Restore the project to here" opens that
 * checkpoint's restore. No horizontal scroll, and the timeline keeps most of the height.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchChromium, saveScreenshot, startStudio, type RunningStudio } from './harness.ts';
import { eventually, screenshotOnFailure, type StudioTab } from './journeyKit.ts';
import {
  APPROVE,
  appendMany,
  decideInput,
  makeClient,
  ok,
  startHarness,
  waitForRunEnd,
} from '../server/harness.ts';
import { startDelete } from '../server/approvalKit.ts';
import { rmSync } from 'node:fs';

let browser: Browser;
let studio: RunningStudio | undefined;
let tab: StudioTab | undefined;
let sessionId = '';
let dataDir = '';

beforeAll(async () => {
  const h = await startHarness({ keepDataDir: true });
  dataDir = h.dataDir;
  const c = makeClient(h);
  const r = await startDelete(h, c);
  sessionId = r.a.sessionId;
  await ok(c, APPROVE, decideInput(r.a, r.approval));
  await waitForRunEnd(c, sessionId, r.runId);
  r.stop();
  await appendMany(h, sessionId, 600, 'later work');
  await h.dispose();
  studio = await startStudio({ dataDir });
  browser = await launchChromium();
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    hasTouch: true,
    isMobile: true,
  });
  const page = await context.newPage();
  tab = { context, page, pageErrors: [] };
  page.on('pageerror', (error) => tab!.pageErrors.push(error.message));
});

screenshotOnFailure(
  'journey-f',
  () => (tab ? [tab] : []),
  () => studio,
);

afterAll(async () => {
  await tab?.context.close();
  await browser?.close();
  await studio?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function expectVisible(locator: Locator): Promise<void> {
  await locator.waitFor({ state: 'visible', timeout: 15_000 });
}

async function expectNoHorizontalScroll(page: Page): Promise<void> {
  const overflow = await page.evaluate(() => {
    const over = (el: Element | null) => (el ? el.scrollWidth - el.clientWidth : 0);
    return {
      document: over(document.scrollingElement),
      main: over(document.querySelector('main')),
      windowScrollX: window.scrollX,
    };
  });
  expect(overflow).toEqual({ document: 0, main: 0, windowScrollX: 0 });
}

describe('journey (f): the history scrubber on a phone', () => {
  it('taps a checkpoint on the rail, loads its older page, and shows the session as of it', async () => {
    const { page } = tab!;
    await page.goto(
      `${studio!.url}/sessions/${encodeURIComponent(sessionId)}#token=${studio!.token}`,
    );
    const slider = page.getByRole('slider', { name: 'History' });
    await expectVisible(slider);
    const timeline = page.getByRole('region', { name: 'Events, oldest first' });
    await expectVisible(timeline);
    // The newest page is 2 (seq 600 and on): no row of page 0 (seqs 1 to 256) is shown.
    await expectVisible(page.locator('article[data-seq]').first());
    const shownSeqs = async () =>
      page
        .locator('article[data-seq]')
        .evaluateAll((rows) => rows.map((row) => Number(row.getAttribute('data-seq'))));
    expect(Math.min(...(await shownSeqs()))).toBeGreaterThan(256);
    expect(await slider.getAttribute('aria-valuetext')).toMatch(/^Live: the newest event, #\d+$/);
    const checkpointMark = slider.locator('[data-mark-kind="CHECKPOINT"]').first();
    await checkpointMark.waitFor({ state: 'attached' });
    expect(await slider.locator('[data-mark-kind="APPROVAL"]').count()).toBeGreaterThanOrEqual(2);
    await saveScreenshot(page, 'journey-f-phone-390x844-live');

    const title = (await checkpointMark.getAttribute('title'))!;
    const seq = /^#(\d+) /.exec(title)![1]!;
    const box = (await checkpointMark.boundingBox())!;
    await page.touchscreen.tap(box.x + box.width / 2, box.y + box.height / 2);

    expect(await slider.getAttribute('aria-valuenow')).toBe(seq);
    const panel = page.getByRole('region', { name: `The session as of event ${seq}` });
    await expectVisible(panel);
    await expectVisible(panel.getByRole('link', { name: 'Restore the project to here' }));
    // Page 0 loaded on demand; the checkpoint's row is scrolled to and highlighted.
    const row = page.locator(`article[data-seq="${seq}"], article[data-last-seq="${seq}"]`).first();
    await expectVisible(row);
    await eventually(
      async () => ((await row.getAttribute('aria-current')) === 'true' ? true : undefined),
      'the checkpoint row to be highlighted',
    );
    const height = (await timeline.boundingBox())!.height;
    expect(height / 844).toBeGreaterThanOrEqual(0.5);
    await expectNoHorizontalScroll(page);
    await saveScreenshot(page, 'journey-f-phone-390x844-at-checkpoint');

    // The keyboard steps on to the next mark (the delete's approval), focus staying on the rail.
    await slider.focus();
    await page.keyboard.press('PageDown');
    await eventually(
      async () =>
        /Approval asked/.test((await slider.getAttribute('aria-valuetext')) ?? '')
          ? true
          : undefined,
      'the approval mark',
    );
    const askedSeq = (await slider.getAttribute('aria-valuenow'))!;
    const asked = page.getByRole('region', { name: `The session as of event ${askedSeq}` });
    await expectVisible(asked.getByText('1 approval waiting'));
    expect(await slider.evaluate((el) => el === document.activeElement)).toBe(true);
    await saveScreenshot(page, 'journey-f-phone-390x844-at-approval');

    await asked.getByRole('link', { name: 'Restore the project to here' }).click();
    await page.waitForURL(`**/sessions/${encodeURIComponent(sessionId)}/checkpoints/*/restore`);
    await expectVisible(page.getByRole('region', { name: /^Restore / }));
    await expectNoHorizontalScroll(page);
    await saveScreenshot(page, 'journey-f-phone-390x844-restore');

    // Back on the timeline, End returns to live.
    await page.goBack();
    await expectVisible(slider);
    await slider.focus();
    await page.keyboard.press('End');
    await eventually(
      async () =>
        /^Live/.test((await slider.getAttribute('aria-valuetext')) ?? '') ? true : undefined,
      'back to live',
    );
    expect(tab!.pageErrors).toEqual([]);
  });

  it('on a wide screen opens checkpoint panels beside the list, saying what made each one', async () => {
    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    try {
      await page.goto(
        `${studio!.url}/sessions/${encodeURIComponent(sessionId)}/checkpoints#token=${studio!.token}`,
      );
      await expectVisible(page.getByRole('heading', { level: 1, name: 'Checkpoints' }));
      const list = page.getByRole('table').first();
      await expectVisible(list);
      await expectVisible(
        page.getByText(/^Taken before workspace\.file\.\w+ wrote to the project$/).first(),
      );
      await page
        .getByRole('button', { name: /^Files of checkpoint/ })
        .first()
        .click();
      const panel = page.getByRole('region', { name: /^Files of checkpoint/ });
      await expectVisible(panel);
      const listBox = (await list.boundingBox())!;
      const panelBox = (await panel.boundingBox())!;
      // Beside the list, and in view without scrolling.
      expect(panelBox.x).toBeGreaterThanOrEqual(listBox.x + listBox.width - 1);
      expect(panelBox.y).toBeLessThan(1000);
      await saveScreenshot(page, 'journey-f-desktop-1600x1000-checkpoints-beside');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
