/**
 * Journey (c): restore an AGENT_WRITE checkpoint of the changelog demo session from the
 * checkpoint browser (preview, confirmation naming it, approval), check on disk that the project
 * now holds exactly the checkpoint's files, then "Undo restore" and check the files are back.
 * The demo project is a 2,000-file folder here (issue 8): the browser pages through its files.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SAMPLE_PROJECT_FILES } from '../../server/workspace/sampleProject.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator } from 'playwright-core';
import { gql, launchChromium, saveScreenshot, startStudio, type RunningStudio } from './harness.ts';
import {
  DEMO,
  eventually,
  folderHashes,
  openStudioTab,
  screenshotOnFailure,
  sessionByTitle,
  sha256OfFile,
  visitPrintedUrl,
  type StudioTab,
} from './journeyKit.ts';

interface Checkpoint {
  checkpointId: string;
  reason: string;
  projectRevision: string;
  contentHash: string;
  restoredAt: string | null;
  fileCount: number;
}

const EXTRA_FILES = 2000;
/** The manifests of the checkpoints, read page by page. */
const manifests = new Map<string, Map<string, string>>();

let studio: RunningStudio;
let browser: Browser;
let tab: StudioTab;
/** The project folder (path → hash) before the first restore. */
let original: Map<string, string>;

beforeAll(async () => {
  // The sample project plus 2,000 more files, in place before the studio first scans it.
  const dataDir = mkdtempSync(join(tmpdir(), 'studio-e2e-'));
  const root = join(dataDir, 'projects', 'sample-app');
  const files: Record<string, string> = { ...SAMPLE_PROJECT_FILES };
  for (let i = 0; i < EXTRA_FILES; i++)
    files[`src/generated/g${i % 25}/m${String(i).padStart(4, '0')}.ts`] =
      `export const m${i} = ${i};\n`;
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  studio = await startStudio({ dataDir });
  browser = await launchChromium();
  tab = await openStudioTab(browser, studio, { viewport: { width: 1400, height: 1000 } });
});

screenshotOnFailure(
  'journey-c',
  () => [tab],
  () => studio,
);

afterAll(async () => {
  await browser?.close();
  await studio?.stop();
});

async function checkpointsOf(sessionId: string): Promise<Checkpoint[]> {
  const result = await gql<{ studioCheckpoints: { edges: { node: Checkpoint }[] } }>(
    studio,
    `query($s: String!) { studioCheckpoints(sessionId: $s, first: 50) { edges { node {
      checkpointId reason projectRevision contentHash restoredAt fileCount } } } }`,
    { s: sessionId },
  );
  if (!result.data) throw new Error(JSON.stringify(result.errors));
  const list = result.data.studioCheckpoints.edges.map((e) => e.node);
  for (const c of list)
    if (!manifests.has(c.checkpointId)) manifests.set(c.checkpointId, await filesOf(c));
  return list;
}

/** Every file of a checkpoint, through the paged StudioCheckpoint.files. */
async function filesOf(checkpoint: Checkpoint): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let after: string | null = null;
  for (;;) {
    type FilesPage = {
      studioCheckpoint: {
        files: {
          pageInfo: { hasNextPage: boolean; endCursor: string | null };
          edges: { node: { path: string; contentHash: string } }[];
        };
      };
    };
    const result: { data?: FilesPage | null; errors?: unknown } = await gql<FilesPage>(
      studio,
      `query($id: String!, $after: String) { studioCheckpoint(checkpointId: $id) {
        files(first: 500, after: $after) { pageInfo { hasNextPage endCursor } edges { node { path contentHash } } } } }`,
      { id: checkpoint.checkpointId, after },
    );
    if (!result.data) throw new Error(JSON.stringify(result.errors));
    const page: FilesPage['studioCheckpoint']['files'] = result.data.studioCheckpoint.files;
    for (const e of page.edges) out.set(e.node.path, e.node.contentHash);
    if (!page.pageInfo.hasNextPage) return out;
    after = page.pageInfo.endCursor;
  }
}

async function projectHash(sessionId: string): Promise<{ revision: string; contentHash: string }> {
  const result = await gql<{ studioProject: { revision: string; contentHash: string } }>(
    studio,
    `query($s: String!) { studioProject(sessionId: $s) { revision contentHash } }`,
    { s: sessionId },
  );
  if (!result.data) throw new Error(JSON.stringify(result.errors));
  return result.data.studioProject;
}

/** The checkpoint's files as path → hash (every file of the demo projects targets SERVER). */
function manifestOf(checkpoint: Checkpoint): Map<string, string> {
  const files = manifests.get(checkpoint.checkpointId);
  if (!files) throw new Error(`no manifest read for ${checkpoint.checkpointId}`);
  return files;
}

const projectRoot = () => join(studio.dataDir, 'projects', 'sample-app');
const shortId = (id: string) => `${id.slice(0, 8)}…`;

/** Restores one checkpoint in its restore panel: preview, confirmation naming it, approval. */
async function restoreThroughUi(
  flow: Locator,
  checkpoint: Checkpoint,
  firstAction: boolean,
): Promise<void> {
  const name = `checkpoint ${shortId(checkpoint.checkpointId)}`;
  await expectVisible(flow.getByRole('heading', { name: `Restore ${name}` }));
  // The preview says which files change: CHANGELOG.md is overwritten, nothing else.
  const changes = flow.getByRole('table', { name: 'Files the restore changes' });
  await expectVisible(changes);
  const rows = changes.getByRole('row');
  await expectVisible(rows.filter({ hasText: 'CHANGELOG.md' }).getByText('Overwritten'));
  expect(await rows.count()).toBe(2); // the header and CHANGELOG.md
  // One confirmation: the preview states the server's counts and what restoring does.
  await expectVisible(
    flow.getByText(`revision ${checkpoint.projectRevision}`, { exact: false }).first(),
  );
  await expectVisible(flow.getByText(/1 overwritten, 0 re-created, 0 deleted/));
  if (firstAction)
    await expectVisible(
      flow.getByText(
        /Restoring attaches this tab .* other tabs and clients on this session are fenced/,
      ),
    );
  await flow.getByRole('button', { name: `Restore ${name}`, exact: true }).click();

  const card = flow.getByRole('article', { name: /^project\.checkpoint\.restore/ });
  await expectVisible(card.getByText('Waiting for approval', { exact: true }));
  await expectVisible(
    flow.getByText('Waiting for your approval of the restore call. Nothing has changed yet.'),
  );
  await card.getByRole('button', { name: 'Approve', exact: true }).click();
  // Requesting the restore attached this tab (the confirmation said so): approving sends at once.
  await expectVisible(card.getByText('Succeeded', { exact: true }));
  await expectVisible(flow.getByText(`Restored ${name}.`, { exact: false }));
}

describe('journey (c): restore a checkpoint and undo it', () => {
  it('restores an AGENT_WRITE checkpoint: the project folder becomes that checkpoint', async () => {
    const { page } = tab;
    const session = await sessionByTitle(studio, DEMO.changelog);
    const checkpoints = await checkpointsOf(session.sessionId);
    expect(checkpoints.map((c) => c.reason).sort()).toEqual([
      'AGENT_WRITE',
      'AGENT_WRITE',
      'MANUAL',
    ]);
    // The earliest agent write's pre-image: CHANGELOG.md as it was before the agent touched it.
    const target = checkpoints
      .filter((c) => c.reason === 'AGENT_WRITE')
      .sort((a, b) => Number(a.projectRevision) - Number(b.projectRevision))[0]!;
    original = folderHashes(projectRoot());
    const originalChangelog = sha256OfFile(join(projectRoot(), 'CHANGELOG.md'));
    const targetChangelog = manifestOf(target).get('CHANGELOG.md');
    expect(targetChangelog).toBeDefined();
    expect(targetChangelog).not.toBe(originalChangelog);
    const before = await projectHash(session.sessionId);

    await visitPrintedUrl(tab, studio);
    await page
      .getByRole('navigation', { name: 'Sessions' })
      .getByRole('link', { name: DEMO.changelog })
      .click();
    await page
      .getByRole('navigation', { name: 'Session views' })
      .getByRole('link', { name: 'Checkpoints' })
      .click();
    await expectVisible(page.getByRole('heading', { name: 'Checkpoints', exact: true }));
    const row = page.locator(`tr[data-checkpoint-id="${target.checkpointId}"]`);
    await expectVisible(row.getByText('Before an agent write'));
    await row.getByRole('button', { name: /^Restore checkpoint/ }).click();

    const flow = page.getByRole('region', {
      name: `Restore checkpoint ${shortId(target.checkpointId)}`,
    });
    await restoreThroughUi(flow, target, true);
    await expectVisible(flow.getByText(/\(RESTORE_PREIMAGE\)/));
    await expectVisible(flow.getByRole('button', { name: 'Undo restore' }));

    // On disk: exactly the checkpoint's files, byte for byte.
    expect(folderHashes(projectRoot())).toEqual(manifestOf(target));
    expect(sha256OfFile(join(projectRoot(), 'CHANGELOG.md'))).toBe(targetChangelog);
    const after = await projectHash(session.sessionId);
    expect(after.contentHash).toBe(target.contentHash);
    expect(BigInt(after.revision)).toBe(BigInt(before.revision) + 1n);

    // The browser lists the new pre-image (the state just before) and marks the restored one.
    const now = await checkpointsOf(session.sessionId);
    const preimage = now.find((c) => c.reason === 'RESTORE_PREIMAGE');
    expect(preimage?.contentHash).toBe(before.contentHash);
    expect(now.find((c) => c.checkpointId === target.checkpointId)?.restoredAt).not.toBeNull();
    const preimageRow = page.locator(`tr[data-checkpoint-id="${preimage!.checkpointId}"]`);
    await expectVisible(preimageRow.getByText('Before a restore'));
    await expectVisible(row.getByText(/^Restored /));
    await expectVisible(row.getByText('Matches current project'));
    await flow.getByRole('button', { name: 'Undo restore' }).scrollIntoViewIfNeeded();
    await saveScreenshot(page, 'journey-c-restored');

    // The browser pages through the checkpoint's files, a hundred at a time.
    expect(target.fileCount).toBeGreaterThan(EXTRA_FILES);
    const name = `checkpoint ${shortId(target.checkpointId)}`;
    await row.getByRole('button', { name: `Files of ${name}` }).click();
    const panel = page.getByRole('region', { name: `Files of ${name}` });
    await expectVisible(panel.getByText(`1–100 of ${target.fileCount}`));
    await panel.getByRole('button', { name: 'Next page' }).click();
    await expectVisible(panel.getByText(`101–200 of ${target.fileCount}`));
    await panel.getByLabel('Folder (path prefix)').fill('src/generated/g3/');
    await expectVisible(panel.getByText(`1–80 of 80`));
    await panel.getByRole('button', { name: 'Close' }).click();
  });

  it('undoes the restore: the project folder is back as it was', async () => {
    const { page } = tab;
    const session = await sessionByTitle(studio, DEMO.changelog);
    const preimage = (await checkpointsOf(session.sessionId)).find(
      (c) => c.reason === 'RESTORE_PREIMAGE',
    );
    if (!preimage) throw new Error('no RESTORE_PREIMAGE checkpoint');
    const restored = folderHashes(projectRoot());

    await page.getByRole('button', { name: 'Undo restore' }).click();
    const flow = page.getByRole('region', {
      name: `Restore checkpoint ${shortId(preimage.checkpointId)}`,
    });
    await restoreThroughUi(flow, preimage, false);

    const back = folderHashes(projectRoot());
    expect(back).toEqual(manifestOf(preimage));
    expect(back).toEqual(original);
    expect(back).not.toEqual(restored);
    expect(sha256OfFile(join(projectRoot(), 'CHANGELOG.md'))).toBe(original.get('CHANGELOG.md'));
    expect((await projectHash(session.sessionId)).contentHash).toBe(preimage.contentHash);
    await eventually(
      async () =>
        (await page
          .locator(`tr[data-checkpoint-id="${preimage.checkpointId}"]`)
          .getByText('Matches current project')
          .count()) > 0
          ? true
          : undefined,
      'the pre-image row to match the project',
    );
    await flow
      .getByText(`Restored checkpoint ${shortId(preimage.checkpointId)}.`, { exact: false })
      .scrollIntoViewIfNeeded();
    await saveScreenshot(page, 'journey-c-undone');
    expect(tab.pageErrors).toEqual([]);
  });
});

async function expectVisible(locator: Locator): Promise<void> {
  await locator.waitFor({ state: 'visible', timeout: 15_000 });
}
