/**
 * Journey (d): two tabs on one session. Tab 1 acts (sends a message) and so controls the session;
 * tab 2 acts (pauses it) and takes control; tab 1 says so, disables its decisions and offers to
 * take control back. Then, while tab 1 has not yet heard of a second takeover (its live link and
 * heartbeats held back, as on a slow network), its Approve is refused by the server with
 * AGENT_CLIENT_EPOCH_STALE, shown as such, and nothing is recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchChromium, saveScreenshot, startStudio, type RunningStudio } from './harness.ts';
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

/**
 * Holds back what the server tells one tab (WebSocket frames from the server, heartbeat
 * answers) while `holding`, then delivers it in order: a tab on a slow link.
 */
class SlowLink {
  holding = false;
  private queue: (() => unknown)[] = [];

  async install(page: Page): Promise<void> {
    await page.routeWebSocket(/\/graphql$/, (ws) => {
      const server = ws.connectToServer();
      ws.onMessage((message) => server.send(message));
      server.onMessage((message) => {
        if (this.holding) this.queue.push(() => ws.send(message));
        else ws.send(message);
      });
    });
    await page.route(/\/graphql$/, async (route) => {
      const body = route.request().postData() ?? '';
      if (this.holding && body.includes('StudioHeartbeat')) {
        this.queue.push(() => route.continue());
        return;
      }
      await route.continue();
    });
  }

  async release(): Promise<void> {
    this.holding = false;
    const queued = this.queue;
    this.queue = [];
    for (const deliver of queued) await deliver();
  }
}

let studio: RunningStudio;
let browser: Browser;
let tab1: StudioTab;
let tab2: StudioTab;
const link1 = new SlowLink();

beforeAll(async () => {
  studio = await startStudio();
  browser = await launchChromium();
  tab1 = await openStudioTab(browser, studio, { viewport: { width: 1280, height: 900 } });
  // A second tab of the same browser window; sessionStorage is per tab, so it opens the printed URL too.
  tab2 = await openStudioTab(browser, studio, { context: tab1.context });
  await link1.install(tab1.page);
});

screenshotOnFailure(
  'journey-d',
  () => [tab1, tab2],
  () => studio,
);

afterAll(async () => {
  await link1.release().catch(() => undefined);
  await browser?.close();
  await studio?.stop();
});

function controlBanner(page: Page): Locator {
  return page.getByText(
    /^(Watching\.|This tab controls the session|Another tab or client took control)/,
  );
}

async function openSession(tab: StudioTab): Promise<void> {
  await visitPrintedUrl(tab, studio);
  await tab.page
    .getByRole('navigation', { name: 'Sessions' })
    .getByRole('link', { name: DEMO.changelog })
    .click();
  await expectVisible(tab.page.getByRole('heading', { name: DEMO.changelog, exact: true }));
  // Like a person, look at the timeline before acting: it has opened at its newest event.
  const region = tab.page.getByRole('region', { name: 'Events, oldest first' });
  let settledFor = 0;
  await eventually(async () => {
    const atEnd = await region.evaluate(
      (el) =>
        el.scrollHeight > el.clientHeight && el.scrollTop + el.clientHeight >= el.scrollHeight - 2,
    );
    settledFor = atEnd ? settledFor + 1 : 0;
    return settledFor >= 3 ? true : undefined;
  }, 'the timeline to open at its newest event');
}

describe('journey (d): a second tab takes control', () => {
  it('fences the first tab, which says so, offers to take control back, and whose approve is refused', async () => {
    const session = await sessionByTitle(studio, DEMO.changelog);
    const p1 = tab1.page;
    const p2 = tab2.page;

    // Tab 1 acts: sending a message attaches it (the banner said it would) and the agent asks to delete.
    await openSession(tab1);
    await expectVisible(controlBanner(p1).filter({ hasText: /^Watching\./ }));
    await p1
      .getByRole('textbox', { name: /Message to the agent/ })
      .fill('clean up the scratch file');
    await p1.getByRole('button', { name: 'Send', exact: true }).click();
    await expectVisible(p1.getByText(/^This tab controls the session \(client epoch 1\)/));
    const approval = await eventually(async () => {
      const all = await pendingApprovals(studio);
      return all.find((a) => a.studioSessionId === session.sessionId);
    }, 'the delete approval');
    const card1 = p1.locator(`article[data-tool-call-id="${approval.toolCallId}"]`);
    const approve1 = card1.getByRole('button', { name: 'Approve', exact: true });
    await expectTimelineFollows(p1, approve1);
    expect(await approve1.isEnabled()).toBe(true);

    // Tab 2 watches the same call, then takes control on purpose (pausing would revoke the
    // pending approval, issue 10: a paused session has nothing to approve).
    await openSession(tab2);
    const card2 = p2.locator(`article[data-tool-call-id="${approval.toolCallId}"]`);
    await expectVisible(card2.getByText('Waiting for approval', { exact: true }));
    await expectVisible(controlBanner(p2).filter({ hasText: /^Watching\./ }));
    await p2.getByRole('button', { name: 'Take control', exact: true }).click();
    await expectVisible(p2.getByText(/^This tab controls the session \(client epoch 2\)/));

    // Tab 1 hears of it at once: it says another tab took over and its decisions are off.
    const fenced1 = p1.getByRole('alert').filter({
      hasText: 'Another tab or client took control of this session. This tab now only watches',
    });
    await expectVisible(fenced1);
    await expectVisible(fenced1.getByRole('button', { name: 'Take control back' }));
    await expectVisible(
      card1.getByRole('alert').filter({ hasText: 'decisions from this tab would be refused' }),
    );
    expect(await approve1.isDisabled()).toBe(true);
    await saveScreenshot(p1, 'journey-d-fenced');

    // Taking control back works, and then tab 2 is the one told.
    await fenced1.getByRole('button', { name: 'Take control back' }).click();
    await expectVisible(p1.getByText(/^This tab controls the session \(client epoch 3\)/));
    const fenced2 = p2.getByRole('alert').filter({
      hasText: 'Another tab or client took control of this session. This tab now only watches',
    });
    await expectVisible(fenced2);
    expect(await approve1.isEnabled()).toBe(true);

    // Tab 2 takes over again while tab 1's link is slow: tab 1 still believes it is in control.
    link1.holding = true;
    await fenced2.getByRole('button', { name: 'Take control back' }).click();
    await expectVisible(p2.getByText(/^This tab controls the session \(client epoch 4\)/));
    await eventually(
      async () =>
        (await sessionByTitle(studio, DEMO.changelog)).currentClientEpoch === '4'
          ? true
          : undefined,
      'the server to record epoch 4',
    );
    await expectVisible(p1.getByText(/^This tab controls the session \(client epoch 3\)/));
    await approve1.click();

    // The server refuses it as stale, and the card says exactly that.
    const refusal = card1.getByRole('alert').filter({ hasText: 'AGENT_CLIENT_EPOCH_STALE' });
    await expectVisible(refusal);
    await expectVisible(
      refusal.getByText(
        /another tab or client has taken control of this session, so this tab.s decision was not applied/,
      ),
    );
    await expectVisible(fenced1);
    await expectVisible(fenced1.getByRole('button', { name: 'Take control back' }));
    await saveScreenshot(p1, 'journey-d-refused');
    await link1.release();

    // Nothing was recorded: no grant, the approval still waits, now under tab 2's epoch.
    const history = await readHistory(studio, session.sessionId);
    const decided = history.filter(
      (e) => e.approvalId === approval.approvalId && e.type !== 'APPROVAL_REQUESTED',
    );
    expect(decided).toEqual([]);
    const still = (await pendingApprovals(studio)).find(
      (a) => a.approvalId === approval.approvalId,
    );
    expect(still?.status).toBe('PENDING');
    const attachments = history
      .filter((e) => e.type === 'CLIENT_ATTACHED')
      .map((e) => e.clientEpoch);
    expect(attachments).toEqual(['1', '2', '3', '4']);
    const fencedEpochs = history
      .filter((e) => e.type === 'CLIENT_DETACHED' && e.reason === 'CLIENT_REATTACHED')
      .map((e) => e.clientEpoch);
    expect(fencedEpochs).toEqual(['1', '2', '3']);
    await expectVisible(card2.getByRole('button', { name: 'Approve', exact: true }));
    expect(tab1.pageErrors).toEqual([]);
    expect(tab2.pageErrors).toEqual([]);
  });
});

async function expectVisible(locator: Locator): Promise<void> {
  await locator.waitFor({ state: 'visible', timeout: 15_000 });
}
