/**
 * Journey (f): every tab of the studio works. A deep link opened in a second tab of the same
 * browser opens without asking (the open tab hands its token over a same-origin
 * BroadcastChannel); in a browser with no studio tab open, the page offers a paste field; a
 * `#token=` typed into the address bar later is taken at once (no reload) and removed. No
 * request the browser makes carries the token in its URL, and no server line but the one it
 * prints at start names it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator } from 'playwright-core';
import { launchChromium, saveScreenshot, startStudio, type RunningStudio } from './harness.ts';
import {
  DEMO,
  openStudioTab,
  screenshotOnFailure,
  sessionByTitle,
  visitPrintedUrl,
  type StudioTab,
} from './journeyKit.ts';

let studio: RunningStudio;
let browser: Browser;
const tabs: StudioTab[] = [];
const requestedUrls: string[] = [];

beforeAll(async () => {
  studio = await startStudio();
  browser = await launchChromium();
});

screenshotOnFailure(
  'journey-f',
  () => tabs,
  () => studio,
);

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

async function track(tab: StudioTab): Promise<StudioTab> {
  tab.page.on('request', (request) => requestedUrls.push(request.url()));
  tabs.push(tab);
  return tab;
}

async function expectVisible(locator: Locator): Promise<void> {
  await locator.waitFor({ state: 'visible', timeout: 15_000 });
}

describe('journey (f): a token for every tab', () => {
  it('opens a deep link in a second tab without asking: the open tab hands the token over', async () => {
    const first = await track(await openStudioTab(browser, studio));
    await visitPrintedUrl(first, studio);
    const session = await sessionByTitle(studio, DEMO.changelog);

    // Like Ctrl+click: a new tab of the same browser, the link's address, no token in it.
    const second = await track(await openStudioTab(browser, studio, { context: first.context }));
    await second.page.goto(`${studio.url}/sessions/${session.sessionId}/events/1`);
    await expectVisible(second.page.getByRole('heading', { level: 1, name: DEMO.changelog }));
    await expectVisible(
      second.page
        .getByRole('article', { name: /, event 1$/ })
        .and(second.page.locator('[aria-current="true"]')),
    );
    expect(await second.page.evaluate(() => sessionStorage.getItem('agent-studio:token'))).toBe(
      studio.token,
    );
    expect(second.page.url()).not.toContain(studio.token);
    await saveScreenshot(second.page, 'journey-f-handed-over');
    expect([...first.pageErrors, ...second.pageErrors]).toEqual([]);
  });

  it('offers a paste field when no studio tab is open, and opens the deep link with it', async () => {
    const session = await sessionByTitle(studio, DEMO.cleanup);
    const lone = await track(await openStudioTab(browser, studio));
    const { page } = lone;
    await page.goto(`${studio.url}/sessions/${session.sessionId}`);
    await expectVisible(page.getByRole('heading', { name: 'This tab has no access token' }));
    const field = page.getByLabel('The printed address or the access token');
    await field.fill('not an address');
    await page.getByRole('button', { name: 'Open the studio' }).click();
    await expectVisible(page.getByRole('alert').getByText(/neither the printed address/));
    await saveScreenshot(page, 'journey-f-paste-field');

    await field.fill(`${studio.url}/#token=${studio.token}`);
    await page.getByRole('button', { name: 'Open the studio' }).click();
    await expectVisible(page.getByRole('heading', { level: 1, name: DEMO.cleanup }));
    expect(page.url()).toBe(`${studio.url}/sessions/${session.sessionId}`);
    expect(lone.pageErrors).toEqual([]);
  });

  it('takes a #token= typed into the address bar at once, without a reload, and removes it', async () => {
    const lone = tabs.at(-1)!;
    const { page } = lone;
    const marker = await page.evaluate(() => {
      (window as unknown as { notReloaded: boolean }).notReloaded = true;
      return true;
    });
    expect(marker).toBe(true);

    await page.evaluate(() => {
      window.location.hash = 'token=not-the-right-token';
    });
    await expectVisible(
      page.getByRole('heading', { name: "The server did not accept this tab's token" }),
    );
    expect(page.url()).not.toContain('not-the-right-token');

    await page.evaluate((token) => {
      window.location.hash = `token=${token}`;
    }, studio.token);
    await expectVisible(page.getByRole('heading', { level: 1, name: DEMO.cleanup }));
    expect(page.url()).not.toContain(studio.token);
    expect(
      await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded),
    ).toBe(true);
    expect(lone.pageErrors).toEqual([]);
  });

  it('never put the token in a URL the browser requested or in a server line', async () => {
    expect(requestedUrls.length).toBeGreaterThan(10);
    expect(requestedUrls.filter((url) => url.includes(studio.token))).toEqual([]);
    const lines = studio.output.filter((line) => line.includes(studio.token));
    // The one line that names it is the address the server prints for the person who started it.
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Agent Studio listening on http:\/\/\S+\/#token=/);
  });
});
