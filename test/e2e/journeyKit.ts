/**
 * Shared steps of the end-to-end journeys: open the studio the way a person does (the printed
 * URL), look sessions up on the server, read a session's history, and read project folders on
 * disk. UI steps stay in the journeys; this file only sets up and checks state.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterEach } from 'vitest';
import { gql, saveScreenshot, type RunningStudio } from './harness.ts';

/** The demo sessions seeded into an empty data dir (server/sources/demo/seedDemo.ts). */
export const DEMO = {
  cleanup: 'Update the changelog, then clean up the scratch file',
  changelog: 'Note the new shout option in the changelog',
  question: 'What does this project do?',
  live: 'Check the build status and summarize it',
} as const;

export interface StudioTab {
  context: BrowserContext;
  page: Page;
  /** Uncaught page errors (a journey fails on any). */
  pageErrors: string[];
}

/** A fresh browser context with one tab opened on the address `npm start` prints. */
export async function openStudioTab(
  browser: Browser,
  studio: Pick<RunningStudio, 'url' | 'token'>,
  options: { viewport?: { width: number; height: number }; context?: BrowserContext } = {},
): Promise<StudioTab> {
  const context =
    options.context ??
    (await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 800 } }));
  const page = await context.newPage();
  const tab: StudioTab = { context, page, pageErrors: [] };
  page.on('pageerror', (error) => tab.pageErrors.push(error.message));
  return tab;
}

/** Navigates a tab to the printed `${url}/#token=...` and waits for the shell. */
export async function visitPrintedUrl(
  tab: StudioTab,
  studio: Pick<RunningStudio, 'url' | 'token'>,
): Promise<void> {
  await tab.page.goto(`${studio.url}/#token=${studio.token}`);
  await tab.page.getByRole('navigation', { name: 'Sessions' }).waitFor();
}

interface SessionNode {
  sessionId: string;
  studioTitle: string | null;
  mode: string;
  projectId: string | null;
  lastEventSeq: string;
  currentClientEpoch: string;
}

/** Every session the server holds for the local app. */
export async function listSessions(
  studio: Pick<RunningStudio, 'url' | 'token'>,
): Promise<SessionNode[]> {
  const result = await gql<{ crowdyStudioAgentSessions: { nodes: SessionNode[] } }>(
    studio,
    `query { crowdyStudioAgentSessions(appId: "1", first: 100) {
      nodes { sessionId studioTitle mode projectId lastEventSeq currentClientEpoch } } }`,
  );
  if (!result.data) throw new Error(`sessions query failed: ${JSON.stringify(result.errors)}`);
  return result.data.crowdyStudioAgentSessions.nodes;
}

/** The session with this title (the demo titles are unique). */
export async function sessionByTitle(
  studio: Pick<RunningStudio, 'url' | 'token'>,
  title: string,
): Promise<SessionNode> {
  const session = (await listSessions(studio)).find((s) => s.studioTitle === title);
  if (!session) throw new Error(`no session titled ${title}`);
  return session;
}

/** The fields of a history event the journeys look at (others stay undefined). */
export interface HistoryEvent {
  __typename: string;
  seq: string;
  type: string;
  runId: string | null;
  approvalId?: string;
  toolCallId?: string;
  status?: string;
  clientEpoch?: string | null;
  reason?: string | null;
  runCode?: string | null;
  checkpointId?: string;
  checkpointReason?: string;
}

/** A session's whole history in seq order, read page by page with crowdyStudioAgentHistory. */
export async function readHistory(
  studio: Pick<RunningStudio, 'url' | 'token'>,
  sessionId: string,
): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let afterSeq = '0';
  for (;;) {
    const result = await gql<{
      crowdyStudioAgentHistory: { events: HistoryEvent[]; hasMore: boolean };
    }>(
      studio,
      `query History($sessionId: String!, $afterSeq: BigInt) {
        crowdyStudioAgentHistory(sessionId: $sessionId, afterSeq: $afterSeq, first: 200) {
          hasMore
          events {
            __typename
            ... on AgentEventBase { seq type runId }
            ... on AgentApprovalEvent { approvalId toolCallId status }
            ... on AgentToolEvent { toolCallId }
            ... on AgentLifecycleEvent { clientEpoch reason }
            ... on AgentRunEvent { runCode: code }
            ... on AgentCheckpointEvent { checkpointId checkpointReason: reason }
          }
        }
      }`,
      { sessionId, afterSeq },
    );
    const page = result.data?.crowdyStudioAgentHistory;
    if (!page) throw new Error(`history query failed: ${JSON.stringify(result.errors)}`);
    events.push(...page.events);
    const last = page.events[page.events.length - 1];
    if (!page.hasMore || !last) return events;
    afterSeq = last.seq;
  }
}

export interface PendingApproval {
  approvalId: string;
  toolCallId: string;
  argumentHash: string;
  safeSummary: string;
  expiresAt: string;
  status: string;
  studioSessionId: string;
}

/** Every PENDING approval the server holds (the inbox's source). */
export async function pendingApprovals(
  studio: Pick<RunningStudio, 'url' | 'token'>,
): Promise<PendingApproval[]> {
  const result = await gql<{ studioPendingApprovals: { approval: PendingApproval }[] }>(
    studio,
    `query { studioPendingApprovals(appId: "1") {
      approval { approvalId toolCallId argumentHash safeSummary expiresAt status studioSessionId } } }`,
  );
  if (!result.data)
    throw new Error(`pending approvals query failed: ${JSON.stringify(result.errors)}`);
  return result.data.studioPendingApprovals.map((p) => p.approval);
}

/** Polls `read` until it returns a value that is not undefined (or throws after `timeoutMs`). */
export async function eventually<T>(
  read: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** `sha256:<hex>` of a file's bytes, as checkpoints record it. */
export function sha256OfFile(path: string): string {
  return `sha256:${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
}

/**
 * The files of a project folder as path → `sha256:<hex>`, skipping what the studio skips
 * (`.git/`, `node_modules/`, its own `.studio-tmp-*` files).
 */
export function folderHashes(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (
        entry.name === '.git' ||
        entry.name === 'node_modules' ||
        entry.name.startsWith('.studio-tmp-')
      )
        continue;
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(join(dir, entry.name), rel);
      else if (entry.isFile()) out.set(rel, sha256OfFile(join(dir, entry.name)));
    }
  };
  walk(root, '');
  return out;
}

/**
 * Waits until `target` (something a new event brings) is visible in the timeline, and fails
 * plainly if instead the timeline stopped following and offers "N new events ↓": the reader was
 * at the newest event, so new ones must come into view on their own.
 */
export async function expectTimelineFollows(
  page: Page,
  target: Locator,
  timeoutMs = 20_000,
): Promise<void> {
  const jump = page.getByRole('button', { name: /^\d+ new events? ↓$/ });
  await target.or(jump).first().waitFor({ state: 'visible', timeout: timeoutMs });
  if ((await jump.count()) > 0 && !(await target.isVisible()))
    throw new Error(
      `the timeline stopped following new events: "${await jump.innerText()}" is shown instead of the new row`,
    );
}

interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * Injects the installed axe-core (once per document) and returns every violation, with the
 * experimental rules (label-content-name-mismatch among them) switched on as well.
 */
export async function allAxeViolations(page: Page): Promise<AxeViolation[]> {
  const axePath = new URL('../../node_modules/axe-core/axe.min.js', import.meta.url).pathname;
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: axePath });
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run: (ctx: Document, options: unknown) => Promise<AxeResults>;
          getRules: (tags: string[]) => { ruleId: string }[];
        };
      }
    ).axe;
    interface AxeResults {
      violations: {
        id: string;
        impact: string | null;
        help: string;
        nodes: { target: unknown[] }[];
      }[];
    }
    const rules = Object.fromEntries(
      axe.getRules(['experimental']).map((rule) => [rule.ruleId, { enabled: true }]),
    );
    const results = await axe.run(document, { rules });
    return results.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? '',
      help: v.help,
      targets: v.nodes.slice(0, 5).map((n) => n.target.map(String).join(' ')),
    }));
  });
}

/** Injects the installed axe-core and returns the serious and critical violations. */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  return (await allAxeViolations(page)).filter(
    (v) => v.impact === 'serious' || v.impact === 'critical',
  );
}

/**
 * When a test of this file fails: saves a screenshot of every given tab
 * (`<name>-failed-<n>.png`) and prints the server's last log lines, so a journey that breaks in
 * CI shows what the person saw and what the server said.
 */
export function screenshotOnFailure(
  name: string,
  tabs: () => (StudioTab | undefined)[],
  studio?: () => Pick<RunningStudio, 'output'> | undefined,
): void {
  afterEach(async (context) => {
    if (context.task.result?.state !== 'fail') return;
    let n = 0;
    for (const tab of tabs()) {
      n += 1;
      if (tab && !tab.page.isClosed())
        await saveScreenshot(tab.page, `${name}-failed-${n}`).catch(() => undefined);
    }
    const output = studio?.()?.output;
    if (output?.length)
      console.error(`[${name}] server output (last 30 lines):\n${output.slice(-30).join('\n')}`);
  });
}
