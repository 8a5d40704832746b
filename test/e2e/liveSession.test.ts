/**
 * Journey (a): open the studio through the printed URL, watch the live demo session receive new
 * events without a reload, scroll up and come back through the "N new events" control; a wrong
 * token gets an explanation page; the session page and the inbox pass axe (no serious or
 * critical violations).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchChromium, saveScreenshot, startStudio, type RunningStudio } from './harness.ts';
import {
  DEMO,
  eventually,
  openStudioTab,
  screenshotOnFailure,
  seriousAxeViolations,
  sessionByTitle,
  visitPrintedUrl,
  type StudioTab,
} from './journeyKit.ts';

let studio: RunningStudio;
let browser: Browser;
const tabs: StudioTab[] = [];

beforeAll(async () => {
  studio = await startStudio();
  browser = await launchChromium();
});

screenshotOnFailure(
  'journey-a',
  () => tabs,
  () => studio,
);

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

async function newTab(): Promise<StudioTab> {
  const tab = await openStudioTab(browser, studio, { viewport: { width: 1280, height: 720 } });
  tabs.push(tab);
  return tab;
}

/** The seqs of the rows currently rendered in the timeline, from their "Event N" links. */
async function renderedSeqs(page: Page): Promise<number[]> {
  const texts = await page
    .getByRole('feed', { name: 'Events' })
    .getByRole('link', { name: /^Event \d+$/ })
    .allInnerTexts();
  return texts.map((text) => Number(text.replace('#', '')));
}

async function scrollState(region: Locator) {
  return region.evaluate((el) => ({
    top: el.scrollTop,
    height: el.scrollHeight,
    client: el.clientHeight,
    atEnd: el.scrollTop + el.clientHeight >= el.scrollHeight - 2,
  }));
}

/** The first row whose bottom is below the top of the scroll region, and where it is drawn. */
async function topVisibleRow(region: Locator): Promise<{ key: string; y: number }> {
  return region.evaluate((el) => {
    const top = el.getBoundingClientRect().top;
    const rows = [...el.querySelectorAll<HTMLElement>('[data-row-key]')]
      .map((row) => ({ key: row.dataset.rowKey ?? '', rect: row.getBoundingClientRect() }))
      .filter((row) => row.rect.bottom > top + 1)
      .sort((a, b) => a.rect.top - b.rect.top);
    const first = rows[0];
    if (!first) throw new Error('no row rendered');
    return { key: first.key, y: first.rect.top };
  });
}

function eventsFact(page: Page): Locator {
  return page.locator('main dl dt:text-is("Events") + dd');
}

describe('journey (a): a live session', () => {
  it('moves the token out of the printed URL and lists the demo sessions', async () => {
    const tab = await newTab();
    const { page, pageErrors } = tab;
    await visitPrintedUrl(tab, studio);

    expect(page.url()).not.toContain('#token');
    expect(page.url()).not.toContain(studio.token);
    expect(await page.evaluate(() => sessionStorage.getItem('agent-studio:token'))).toBe(
      studio.token,
    );

    const sidebar = page.getByRole('navigation', { name: 'Sessions' });
    for (const title of Object.values(DEMO)) {
      await expectVisible(sidebar.getByRole('link', { name: new RegExp(escape(title)) }));
    }
    // The cleanup session waits on an approval: the sidebar says so.
    await expectVisible(
      sidebar.getByRole('link', { name: new RegExp(escape(DEMO.cleanup)) }).getByText(/1 waiting/),
    );
    expect(pageErrors).toEqual([]);
  });

  it('shows new events of the live session as they arrive, and "N new events" when scrolled up', async () => {
    const tab = tabs[0]!;
    const { page } = tab;
    const live = await sessionByTitle(studio, DEMO.live);
    await page
      .getByRole('navigation', { name: 'Sessions' })
      .getByRole('link', { name: new RegExp(escape(DEMO.live)) })
      .click();
    await expectVisible(page.getByRole('heading', { name: DEMO.live, exact: true }));
    expect(new URL(page.url()).pathname).toBe(`/sessions/${encodeURIComponent(live.sessionId)}`);
    // A marker that survives only if the page is never reloaded.
    await page.evaluate(() => ((window as unknown as { journeyMarker: number }).journeyMarker = 1));

    const region = page.getByRole('region', { name: 'Events, oldest first' });
    await eventually(
      async () => ((await renderedSeqs(page)).length > 0 ? true : undefined),
      'rows',
    );
    // The timeline opens at the newest event.
    const opened = await eventually(async () => {
      const state = await scrollState(region);
      return state.atEnd && state.height > state.client ? state : undefined;
    }, 'the timeline to open at its end');
    expect(opened.top).toBeGreaterThan(0);
    const firstSeqs = await renderedSeqs(page);
    const firstNewest = Math.max(...firstSeqs);
    const firstShownCount = Number(await eventsFact(page).innerText());
    expect(firstNewest).toBeGreaterThan(1);
    expect(firstShownCount).toBeGreaterThanOrEqual(firstNewest);

    // The demo agent sends this session a message every 8 s: new rows appear, the view follows.
    const grown = await eventually(
      async () => {
        const newest = Math.max(...(await renderedSeqs(page)));
        return newest > firstNewest ? newest : undefined;
      },
      'a newer event to be shown',
      25_000,
    );
    expect(grown).toBeGreaterThan(firstNewest);
    expect(Number(await eventsFact(page).innerText())).toBeGreaterThan(firstShownCount);
    await eventually(async () => ((await scrollState(region)).atEnd ? true : undefined), 'follow');
    expect(
      await page.evaluate(() => (window as unknown as { journeyMarker?: number }).journeyMarker),
    ).toBe(1);

    // Scroll up like a reader: new events must not move what is on screen.
    await eventually(
      async () => {
        const state = await scrollState(region);
        return state.height - state.client > 500 ? true : undefined;
      },
      'enough rows to scroll',
      25_000,
    );
    const box = await region.boundingBox();
    if (!box) throw new Error('no timeline region');
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, -400);
    const scrolled = await eventually(async () => {
      const state = await scrollState(region);
      return !state.atEnd ? state : undefined;
    }, 'the view to leave the end');
    await page.waitForTimeout(500);
    const before = await scrollState(region);
    const anchor = await topVisibleRow(region);
    expect(before.top).toBeLessThanOrEqual(scrolled.top + 1);

    const jump = page.getByRole('button', { name: /^\d+ new events? ↓$/ });
    await jump.waitFor({ timeout: 25_000 });
    const countOf = async () => Number(/^(\d+)/.exec(await jump.innerText())?.[1]);
    const firstCount = await countOf();
    expect(firstCount).toBeGreaterThan(0);
    // More events keep arriving; the count grows and the view stays exactly where the reader left it.
    await eventually(
      async () => ((await countOf()) > firstCount ? true : undefined),
      'more new events',
      25_000,
    );
    // New events may first land in rows already there (a tool call's progress): wait for a row
    // of their own to lengthen the list, then check nothing on screen moved.
    const after = await eventually(async () => {
      const state = await scrollState(region);
      return state.height > before.height ? state : undefined;
    }, 'new rows below the view');
    const anchorAfter = await topVisibleRow(region);
    expect(Math.abs(after.top - before.top)).toBeLessThanOrEqual(1);
    expect(anchorAfter.key).toBe(anchor.key);
    expect(Math.abs(anchorAfter.y - anchor.y)).toBeLessThanOrEqual(1);
    expect(after.atEnd).toBe(false);
    await saveScreenshot(page, 'journey-a-new-events');

    await jump.click();
    await eventually(
      async () => ((await scrollState(region)).atEnd ? true : undefined),
      'the jump to the newest',
    );
    await eventually(
      async () => ((await jump.count()) === 0 ? true : undefined),
      'the control to go',
    );
    const newestShown = Math.max(...(await renderedSeqs(page)));
    expect(newestShown).toBeGreaterThan(grown);
    await saveScreenshot(page, 'journey-a-live-session');
    expect(tab.pageErrors).toEqual([]);
  });

  it('explains a wrong token on a page of its own and keeps nothing of it', async () => {
    const { page, pageErrors } = await newTab();
    await page.goto(`${studio.url}/#token=not-the-right-token`);
    await expectVisible(
      page.getByRole('heading', { name: "The server did not accept this tab's token" }),
    );
    await expectVisible(page.getByText('npm start').first());
    expect(page.url()).not.toContain('not-the-right-token');
    expect(await page.evaluate(() => sessionStorage.getItem('agent-studio:token'))).toBeNull();
    expect(await page.getByRole('navigation', { name: 'Sessions' }).count()).toBe(0);
    await saveScreenshot(page, 'journey-a-wrong-token');
    expect(pageErrors).toEqual([]);
  });

  it('has no serious or critical axe violations on a session page and the inbox', async () => {
    const tab = await newTab();
    const { page, pageErrors } = tab;
    await visitPrintedUrl(tab, studio);
    await page
      .getByRole('navigation', { name: 'Sessions' })
      .getByRole('link', { name: new RegExp(escape(DEMO.cleanup)) })
      .click();
    await expectVisible(page.getByRole('button', { name: 'Approve', exact: true }));
    const onSession = await seriousAxeViolations(page);

    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: /Approval inbox/ })
      .click();
    await expectVisible(page.getByRole('heading', { name: 'Approval inbox', exact: true }));
    await expectVisible(page.getByRole('button', { name: 'Approve', exact: true }));
    const onInbox = await seriousAxeViolations(page);

    expect({ session: onSession, inbox: onInbox }).toEqual({ session: [], inbox: [] });
    expect(pageErrors).toEqual([]);
  });
});

async function expectVisible(locator: Locator): Promise<void> {
  await locator.waitFor({ state: 'visible', timeout: 15_000 });
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
