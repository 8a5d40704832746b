/**
 * Journey (b): approve the pending delete of the cleanup demo session and see it run (the file
 * is gone on disk), then ask the agent to clean up again through the message box, deny that
 * call with a reason and see the run end failed (the file stays on disk).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
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
  type PendingApproval,
  type StudioTab,
} from './journeyKit.ts';

let studio: RunningStudio;
let browser: Browser;
let tab: StudioTab;

beforeAll(async () => {
  studio = await startStudio();
  browser = await launchChromium();
  tab = await openStudioTab(browser, studio, { viewport: { width: 1280, height: 900 } });
});

screenshotOnFailure(
  'journey-b',
  () => [tab],
  () => studio,
);

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

const scratchFile = () =>
  join(studio.dataDir, 'projects', 'cleanup-app', 'tmp', 'agent-scratch.md');

/** The session header's "Run" fact (the last run's status and error code). */
function runFact(page: Page): Locator {
  return page.locator('main header dl dt:text-is("Run") + dd');
}

/** The tool-call card of one call (the app marks it with data-tool-call-id). */
function card(page: Page, toolCallId: string): Locator {
  return page.locator(`article[data-tool-call-id="${toolCallId}"]`);
}

async function pendingOf(sessionId: string, except: string[] = []): Promise<PendingApproval> {
  return eventually(async () => {
    const all = await pendingApprovals(studio);
    return all.find((a) => a.studioSessionId === sessionId && !except.includes(a.approvalId));
  }, 'a pending approval');
}

describe('journey (b): approve one call, deny another', () => {
  it('approves the pending delete: the card shows what runs, the call succeeds, the file is gone', async () => {
    const { page } = tab;
    const session = await sessionByTitle(studio, DEMO.cleanup);
    const approval = await pendingOf(session.sessionId);
    expect(existsSync(scratchFile())).toBe(true);

    await visitPrintedUrl(tab, studio);
    await page
      .getByRole('navigation', { name: 'Sessions' })
      .getByRole('link', { name: DEMO.cleanup })
      .click();
    const call = card(page, approval.toolCallId);
    await call.waitFor();
    await expectVisible(call.getByRole('heading', { name: /^workspace\.file\.delete/ }));
    await expectVisible(call.getByText('Waiting for approval', { exact: true }));
    await expectVisible(
      call.getByText('Delete 1 file(s) from project "cleanup-app": tmp/agent-scratch.md', {
        exact: false,
      }),
    );
    // The exact hash being approved is the server's, and the countdown runs.
    const prompt = call.getByRole('region', { name: 'Approval needed' });
    expect(
      await prompt.getByLabel('Argument hash being approved', { exact: true }).innerText(),
    ).toBe(approval.argumentHash);
    const timer = prompt.getByRole('timer');
    const firstLeft = await timer.innerText();
    expect(firstLeft).toMatch(/^\d+:\d{2}$/);
    await eventually(
      async () => ((await timer.innerText()) !== firstLeft ? true : undefined),
      'the countdown to tick',
      5_000,
    );
    await saveScreenshot(page, 'journey-b-pending-approval');

    await call.getByRole('button', { name: 'Approve', exact: true }).click();
    // Approving attaches at once (no extra step) and says once what that means.
    await expectVisible(page.getByText(/This tab now controls the session/).first());

    await expectVisible(call.getByText('Succeeded', { exact: true }));
    await expectVisible(call.getByText('Approved and used'));
    // The run finishes: the server records RUN_SUCCEEDED and the timeline shows that row.
    const succeeded = await eventually(async () => {
      const events = await readHistory(studio, session.sessionId);
      return events.find((e) => e.type === 'RUN_SUCCEEDED');
    }, 'the run to finish');
    await expectVisible(
      page
        .getByRole('feed', { name: 'Events' })
        .getByRole('article', { name: `Run succeeded, event ${succeeded.seq}` }),
    );
    await eventually(
      async () => ((await runFact(page).innerText()) === 'Succeeded' ? true : undefined),
      'the header to say the run succeeded',
    );
    await expectVisible(page.getByText(/This tab controls the session/));
    await eventually(
      () => (existsSync(scratchFile()) ? undefined : true),
      'the scratch file to be deleted',
    );
    await saveScreenshot(page, 'journey-b-approved');

    const history = await readHistory(studio, session.sessionId);
    const types = history.filter((e) => e.toolCallId === approval.toolCallId).map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining([
        'APPROVAL_GRANTED',
        'APPROVAL_CONSUMED',
        'TOOL_DISPATCHED',
        'TOOL_SUCCEEDED',
      ]),
    );
    expect(history.at(-1)?.type).toBe('RUN_SUCCEEDED');
    expect(tab.pageErrors).toEqual([]);
  });

  it('asks again through the message box, denies with a reason: the run fails and the file stays', async () => {
    const { page } = tab;
    const session = await sessionByTitle(studio, DEMO.cleanup);
    const before = (await readHistory(studio, session.sessionId)).filter(
      (e) => e.type === 'APPROVAL_REQUESTED',
    );

    const box = page.getByRole('textbox', { name: /Message to the agent/ });
    await box.fill('clean up again');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const approval = await pendingOf(
      session.sessionId,
      before.map((e) => e.approvalId ?? ''),
    );
    // The agent re-created the scratch file before asking to delete it.
    expect(existsSync(scratchFile())).toBe(true);

    const call = card(page, approval.toolCallId);
    await expectTimelineFollows(page, call.getByText('Waiting for approval', { exact: true }));
    expect(await call.getByLabel('Argument hash being approved', { exact: true }).innerText()).toBe(
      approval.argumentHash,
    );
    await call.getByRole('button', { name: 'Deny…', exact: true }).click();
    await call
      .getByRole('textbox', { name: /Reason for denying/ })
      .fill('Keep the scratch file for now');
    await call.getByRole('button', { name: 'Deny call' }).click();

    await expectVisible(call.getByText('Denied', { exact: true }).first());
    await expectVisible(call.getByText('Keep the scratch file for now', { exact: true }));
    await expectVisible(call.getByText('AGENT_APPROVAL_DENIED').first());
    const failed = await eventually(async () => {
      const events = await readHistory(studio, session.sessionId);
      return events.find((e) => e.type === 'RUN_FAILED');
    }, 'the run to end failed');
    expect(failed.runCode).toBe('AGENT_APPROVAL_DENIED');
    const failedRow = page
      .getByRole('feed', { name: 'Events' })
      .getByRole('article', { name: `Run failed, event ${failed.seq}` });
    await expectVisible(failedRow);
    await expectVisible(failedRow.getByText('AGENT_APPROVAL_DENIED').first());
    await eventually(
      async () =>
        (await runFact(page).innerText()) === 'Failed (AGENT_APPROVAL_DENIED)' ? true : undefined,
      'the header to say the run failed',
    );
    await saveScreenshot(page, 'journey-b-denied');

    expect(existsSync(scratchFile())).toBe(true);
    const history = await readHistory(studio, session.sessionId);
    const denied = history.find(
      (e) => e.type === 'APPROVAL_DENIED' && e.approvalId === approval.approvalId,
    );
    expect(denied?.status).toBe('DENIED');
    expect(
      history.some((e) => e.type === 'APPROVAL_GRANTED' && e.approvalId === approval.approvalId),
    ).toBe(false);

    // The message sent from the box is in the timeline: search the loaded events for it.
    await page.getByRole('searchbox', { name: 'Filter loaded events' }).fill('clean up again');
    await expectVisible(
      page
        .getByRole('feed', { name: 'Events' })
        .getByRole('article', { name: /^User message, event \d+$/ })
        .getByText('clean up again', { exact: true }),
    );
    await page.getByRole('button', { name: 'Clear filters' }).click();
    expect(tab.pageErrors).toEqual([]);
  });
});

async function expectVisible(locator: Locator): Promise<void> {
  await locator.waitFor({ state: 'visible', timeout: 15_000 });
}
