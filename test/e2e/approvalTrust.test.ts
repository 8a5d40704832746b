/**
 * Journeys for approvals people can trust (issue 10), in real Chromium against the real server:
 * make a rule from a card and watch the next call pass; batch-approve three calls in the inbox;
 * cancel a run and watch its card become revoked. Screenshots go to test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { gql, launchChromium, saveScreenshot, startStudio, type RunningStudio } from './harness.ts';
import {
  eventually,
  openStudioTab,
  pendingApprovals,
  readHistory,
  screenshotOnFailure,
  visitPrintedUrl,
  type PendingApproval,
  type StudioTab,
} from './journeyKit.ts';

let studio: RunningStudio;
let browser: Browser;
let tab: StudioTab;

const CLEANUP = 'Update the changelog, then clean up the scratch file';

beforeAll(async () => {
  studio = await startStudio();
  browser = await launchChromium();
  tab = await openStudioTab(browser, studio, { viewport: { width: 1280, height: 900 } });
  await visitPrintedUrl(tab, studio);
});

screenshotOnFailure(
  'journey-trust',
  () => [tab],
  () => studio,
);

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

async function expectVisible(locator: Locator): Promise<void> {
  await locator.first().waitFor({ state: 'visible', timeout: 15_000 });
}

function card(page: Page, toolCallId: string): Locator {
  return page.locator(`article[data-tool-call-id="${toolCallId}"]`);
}

/** A new BUILD session on `projectId` (through the contract), returning its id. */
async function newSession(projectId: string): Promise<string> {
  const result = await gql<{ crowdyStudioAgentCreateSession: { sessionId: string } }>(
    studio,
    `mutation($input: CreateAgentSessionInput!) { crowdyStudioAgentCreateSession(input: $input) { sessionId } }`,
    { input: { idempotencyKey: `e2e-${Math.random()}`, appId: '1', projectId, mode: 'BUILD' } },
  );
  return result.data!.crowdyStudioAgentCreateSession.sessionId;
}

/** Opens a session page and sends `text` through the message box. */
async function send(page: Page, sessionId: string, text: string): Promise<void> {
  await page.goto(`${studio.url}/sessions/${encodeURIComponent(sessionId)}`);
  const box = page.getByRole('textbox', { name: /Message to the agent/ });
  await box.fill(text);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
}

async function pendingOf(sessionId: string, except: string[] = []): Promise<PendingApproval> {
  return eventually(async () => {
    const all = await pendingApprovals(studio);
    return all.find((a) => a.studioSessionId === sessionId && !except.includes(a.approvalId));
  }, 'a pending approval');
}

describe('approvals people can trust', () => {
  it('cancel a run and watch its card become revoked, with Ask again', async () => {
    const { page } = tab;
    const sessionId = await newSession('cleanup-app');
    await send(page, sessionId, CLEANUP);
    const approval = await pendingOf(sessionId);
    const call = card(page, approval.toolCallId);
    await expectVisible(call.getByText('Waiting for approval', { exact: true }));
    await expectVisible(call.getByRole('region', { name: /Diff of tmp\/agent-scratch\.md/ }));
    await page.getByRole('button', { name: /^Cancel run/ }).click();
    await expectVisible(call.getByText('Revoked', { exact: true }));
    await expectVisible(call.getByText(/Nobody denied it/));
    expect(await call.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
    await expectVisible(call.getByRole('button', { name: 'Ask again' }));
    const history = await readHistory(studio, sessionId);
    expect(history.some((e) => e.type === 'RUN_CANCELLED')).toBe(true);
    expect(history.some((e) => e.type === 'RUN_FAILED')).toBe(false);
    await saveScreenshot(page, 'journey-trust-revoked');
    expect((await pendingApprovals(studio)).some((a) => a.approvalId === approval.approvalId)).toBe(
      false,
    );
  });

  it('make a rule from a card and watch the next call pass', async () => {
    const { page } = tab;
    const sessionId = await newSession('cleanup-app');
    await send(page, sessionId, CLEANUP);
    const first = await pendingOf(sessionId);
    const call = card(page, first.toolCallId);
    await expectVisible(call.getByText('Waiting for approval', { exact: true }));
    await call.getByRole('button', { name: 'Always allow…' }).click();
    const editor = call.getByRole('form', { name: 'Always allow rule' });
    await expectVisible(editor);
    // Prefilled from the call: a path prefix of this session; the DESTRUCTIVE warning must be accepted.
    expect(await editor.getByRole('textbox', { name: 'Prefix' }).inputValue()).toBe('tmp/');
    await expectVisible(editor.getByText(/DESTRUCTIVE/));
    expect(await editor.getByRole('button', { name: 'Save rule' }).isDisabled()).toBe(true);
    await editor.getByLabel(/Let this rule allow DESTRUCTIVE calls/).check();
    await saveScreenshot(page, 'journey-trust-rule-editor');
    await editor.getByRole('button', { name: 'Save rule' }).click();
    await expectVisible(call.getByText(/Rule saved/));
    // This call still waits for a person (rules apply when a call asks); approve it.
    await call.getByRole('button', { name: 'Approve', exact: true }).click();
    await eventually(async () => {
      const events = await readHistory(studio, sessionId);
      return events.some((e) => e.type === 'RUN_SUCCEEDED') ? true : undefined;
    }, 'the first run to finish');
    // The next call passes by the rule, with nobody clicking.
    const box = page.getByRole('textbox', { name: /Message to the agent/ });
    await box.fill('clean up again');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const granted = await eventually(async () => {
      const events = await readHistory(studio, sessionId);
      return events.filter((e) => e.type === 'APPROVAL_GRANTED')[1];
    }, 'the next call to be allowed by the rule');
    const next = card(page, granted.toolCallId!);
    await expectVisible(next.getByText(/Allowed by rule/));
    await expectVisible(next.getByText('Succeeded', { exact: true }));
    await saveScreenshot(page, 'journey-trust-rule-passed');
    await page.getByRole('link', { name: 'Rules', exact: true }).click();
    const row = page.getByRole('row', { name: /Allow workspace\.file\.delete/ });
    await expectVisible(row);
    expect(await row.getByRole('cell').nth(3).innerText()).toBe('1');
    await saveScreenshot(page, 'journey-trust-rules-page');
    await row.getByRole('button', { name: /^Revoke rule/ }).click();
    await expectVisible(page.getByRole('table').filter({ hasText: 'Revoked and expired rules' }));
  });

  it('batch-approve three calls in the inbox', async () => {
    const { page } = tab;
    // Three waiting calls of three sessions (two share cleanup-app: the later run moves its
    // revision, so the earlier delete may fail after approval; the approvals are what is batched).
    const sessions = [
      await newSession('sample-app'),
      await newSession('cleanup-app'),
      await newSession('cleanup-app'),
    ];
    const approvals: PendingApproval[] = [];
    for (const s of sessions) {
      await send(page, s, CLEANUP);
      approvals.push(await pendingOf(s));
    }
    await page.goto(`${studio.url}/inbox`);
    await page.getByRole('button', { name: 'Compact list' }).click();
    const list = page.getByRole('list', { name: 'Pending approvals' });
    await expectVisible(list);
    for (const a of approvals) expect(a.status).toBe('PENDING');
    await page.getByLabel('Select all').check();
    await page.getByRole('button', { name: /^Approve selected/ }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Approve these calls' });
    await expectVisible(dialog);
    for (const a of approvals) await expectVisible(dialog.getByText(a.argumentHash));
    await saveScreenshot(page, 'journey-trust-batch-confirm');
    await dialog.getByRole('button', { name: /^Approve \d+ calls?$/ }).click();
    for (const a of approvals)
      await eventually(async () => {
        const events = await readHistory(studio, a.studioSessionId);
        return events.some((e) => e.type === 'APPROVAL_GRANTED' && e.approvalId === a.approvalId)
          ? true
          : undefined;
      }, 'each batched approval to be granted');
    await expectVisible(page.getByText(/^Approved \d+ calls?\.$/));
    await expectVisible(
      page.getByRole('list', { name: 'Recently decided approvals' }).getByText(/Approved by owner/),
    );
    await saveScreenshot(page, 'journey-trust-batch-done');
    expect(tab.pageErrors).toEqual([]);
  });
});
