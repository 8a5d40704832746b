import { act, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import axe from 'axe-core';
import { Provider } from 'urql';
import type { ComponentProps } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { EventBatchesSubscription } from '../../graphql/eventDocuments.ts';
import { makeFakeStudio, studioError, type Handler } from '../../test/fakeStudio.ts';
import {
  makeFakeStudioHttp,
  makeTestQueryClient,
  TEST_TOKEN,
  TestProviders,
  type FakeStudioHttp,
} from '../../test/fakeStudioHttp.tsx';
import { attachHandlers, makeApproval, makeToolCall } from '../../test/studioFixtures.ts';
import { CheckpointBrowserPage } from './CheckpointBrowserPage.tsx';

const hash = (c: string) => `sha256:${c.repeat(64)}`;
const file = (path: string, h: string, byteLength = 100, target = 'SERVER') => ({
  target,
  path,
  contentHash: hash(h),
  byteLength,
});

type FixtureFile = ReturnType<typeof file>;
const node = (f: FixtureFile | undefined) =>
  f ? { ...f, kind: 'FILE', executable: false, notCaptured: null } : null;
const byPath = (a: { path: string }, b: { path: string }) =>
  a.path < b.path ? -1 : a.path > b.path ? 1 : 0;

/** The paged connection the server serves, over a fixture's files (the default resolver calls it). */
function pageOf<T extends { path: string }>(items: T[], args: Record<string, unknown>) {
  const prefix = (args.pathPrefix as string | null) ?? '';
  const after = (args.after as string | null) ?? null;
  const first = (args.first as number | null) ?? 100;
  const kept = [...items].sort(byPath).filter((f) => f.path.startsWith(prefix));
  const start = after === null ? 0 : kept.findIndex((f) => f.path > after);
  const slice = start < 0 ? [] : kept.slice(start, start + first);
  return {
    totalCount: kept.length,
    pageInfo: {
      hasNextPage: start >= 0 && start + first < kept.length,
      endCursor: slice.at(-1)?.path ?? null,
    },
    edges: slice.map((f) => ({ cursor: f.path, node: f })),
  };
}

const fixtureFiles = new Map<string, FixtureFile[]>();

/** `StudioCheckpoint.changes`: from `against` (a checkpoint, or the project) to this checkpoint. */
function changesOf(to: FixtureFile[]) {
  return (args: Record<string, unknown>) => {
    const from = args.against ? (fixtureFiles.get(args.against as string) ?? []) : PROJECT_FILES;
    const rows: { path: string; change: string; from: unknown; to: unknown }[] = [];
    for (const f of to) {
      const old = from.find((o) => o.path === f.path);
      if (!old) rows.push({ path: f.path, change: 'ADDED', from: null, to: node(f) });
      else if (old.contentHash !== f.contentHash)
        rows.push({ path: f.path, change: 'CHANGED', from: node(old), to: node(f) });
    }
    for (const f of from)
      if (!to.some((t) => t.path === f.path))
        rows.push({ path: f.path, change: 'REMOVED', from: node(f), to: null });
    const nodes = rows.map((r) => ({
      ...r,
      changedOutsideAgent: false,
      notRestorableReason: null,
    }));
    const count = (c: string) => rows.filter((r) => r.change === c).length;
    return {
      ...pageOf(nodes, args),
      added: count('ADDED'),
      changed: count('CHANGED'),
      removed: count('REMOVED'),
      modeChanged: 0,
      notRestorable: 0,
      changedOutsideAgent: 0,
    };
  };
}

/** The fixture project's revision now (the project and the restore preview are served at it). */
const fixtureRevision = { current: '4' };
/** The selections studioRestorePreview was asked for, in order (nested fields are not in `calls`). */
const previewCalls: (string[] | null)[] = [];

/** `StudioCheckpoint.studioRestorePreview`: the restore's plan over the project, optionally only `paths`. */
function previewOf(id: string, to: FixtureFile[]) {
  return (args: Record<string, unknown>) => {
    const paths = (args.paths as string[] | null | undefined) ?? null;
    previewCalls.push(paths);
    const all = changesOf(to)({ first: 10_000 }) as {
      edges: { node: { path: string; change: string } }[];
    };
    const rows = all.edges
      .map((e) => e.node)
      .filter((n) => !paths || paths.some((p) => n.path === p || n.path.startsWith(`${p}/`)));
    const count = (c: string) => rows.filter((r) => r.change === c).length;
    return {
      checkpointId: id,
      paths,
      projectRevision: fixtureRevision.current,
      projectContentHash: hash('9'),
      changed: count('CHANGED'),
      added: count('ADDED'),
      removed: count('REMOVED'),
      modeChanged: 0,
      notRestorable: 0,
      changedOutsideAgent: 0,
    };
  };
}

function checkpoint(
  id: string,
  revision: string,
  files: ReturnType<typeof file>[],
  overrides: Record<string, unknown> = {},
) {
  if (!fixtureFiles.has(id)) fixtureFiles.set(id, files);
  return {
    __typename: 'StudioCheckpoint',
    checkpointId: id,
    sessionId: 'session-1',
    projectId: 'project-1',
    projectRevision: revision,
    contentHash: hash(id.slice(-1)),
    reason: 'AGENT_WRITE',
    files: (args: Record<string, unknown>) =>
      pageOf(
        files.map((f) => node(f)!),
        args,
      ),
    changes: changesOf(files),
    studioRestorePreview: previewOf(id, files),
    studioMadeBy: {
      seq: '7',
      runId: 'run-1',
      toolCallId: 'call-w',
      toolName: 'workspace.file.patch',
      restoredCheckpointId: null,
      summary: 'Taken before workspace.file.patch wrote to the project',
    },
    fileList: files,
    fileCount: files.length,
    totalBytes: String(files.reduce((sum, f) => sum + f.byteLength, 0)),
    createdAt: '2026-11-30T09:40:00.000Z',
    restoredAt: null,
    exactPreImage: true,
    ...overrides,
  };
}

const cp1 = checkpoint('cp1-0000-0000-0001', '1', [file('src/a.ts', '1'), file('src/b.ts', '2')]);
const cp2 = checkpoint(
  'cp2-0000-0000-0002',
  '2',
  [file('src/a.ts', '1'), file('src/b.ts', '3'), file('src/c.ts', '4', 5000)],
  {
    restoredAt: '2026-11-30T09:45:00.000Z',
  },
);
const cp3 = checkpoint(
  'cp3-0000-0000-0003',
  '3',
  [file('src/b.ts', '3'), file('src/c.ts', '4', 5000), file('src/d.ts', '5', 20)],
  {
    reason: 'MANUAL',
    exactPreImage: false,
  },
);

const PROJECT_FILES = [file('src/b.ts', '6'), file('src/c.ts', '4', 5000), file('src/e.ts', '7')];

function project(revision = fixtureRevision.current) {
  return {
    __typename: 'StudioProject',
    projectId: 'project-1',
    name: 'Sample project',
    revision,
    contentHash: hash('9'),
    updatedAt: '2026-11-30T09:50:00.000Z',
    fileCount: PROJECT_FILES.length,
    totalBytes: String(PROJECT_FILES.reduce((sum, f) => sum + f.byteLength, 0)),
    available: true,
    unavailableReason: null,
    files: (args: Record<string, unknown>) =>
      pageOf(
        PROJECT_FILES.map((f) => node(f)!),
        args,
      ),
    fileList: PROJECT_FILES,
  };
}

function connection(nodes: unknown[], supported = true, unsupportedReason: string | null = null) {
  return {
    supported,
    unsupportedReason,
    pageInfo: { hasNextPage: false, endCursor: null },
    edges: nodes.map((node, index) => ({ cursor: String(index), node })),
  };
}

const byId = (list: ReturnType<typeof checkpoint>[]) => (args: Record<string, unknown>) =>
  list.find((c) => c.checkpointId === args.checkpointId) ?? null;

function setup(
  extra: Record<string, Handler> = {},
  http: FakeStudioHttp | null = null,
  props: Partial<ComponentProps<typeof CheckpointBrowserPage>> = {},
) {
  const all = [cp3, cp2, cp1];
  fixtureRevision.current = '4';
  previewCalls.length = 0;
  const studio = makeFakeStudio({
    ...attachHandlers(),
    studioCheckpoints: () => connection(all),
    studioCheckpoint: byId(all),
    studioProject: () => project(),
    ...extra,
  });
  const page = (
    <CheckpointBrowserPage
      sessionId="session-1"
      renderToolCall={({ toolCallId, sessionId }) => (
        <p>
          approval card for {toolCallId} in {sessionId}
        </p>
      )}
      {...props}
    />
  );
  const view = render(
    http ? (
      <TestProviders client={studio.client} http={http.http} queryClient={makeTestQueryClient()}>
        {page}
      </TestProviders>
    ) : (
      <Provider value={studio.client}>{page}</Provider>
    ),
  );
  return Object.assign(studio, {
    rerender: (next: Partial<ComponentProps<typeof CheckpointBrowserPage>>) =>
      view.rerender(
        <Provider value={studio.client}>
          <CheckpointBrowserPage
            sessionId="session-1"
            renderToolCall={() => null}
            {...props}
            {...next}
          />
        </Provider>,
      ),
  });
}

describe('CheckpointBrowserPage', () => {
  it('lists checkpoints with reason, revision, short hash, file count and markers', async () => {
    setup();
    const cp2Row = (await screen.findByRole('rowheader', { name: /^cp2-0000…/ })).closest(
      'tr',
    ) as HTMLElement;
    const cells = within(cp2Row);
    expect(cells.getByText('Before an agent write')).toBeTruthy();
    expect(cells.getByText('2', { selector: 'td' })).toBeTruthy();
    expect(cells.getByText(`sha256:${'2'.repeat(12)}…`)).toBeTruthy();
    expect(cells.getByText(/^3 \(/)).toBeTruthy();
    expect(cells.getByText(/^Restored/)).toBeTruthy();
    expect(cells.getByText('Exact pre-image')).toBeTruthy();
    expect(
      cells.getByRole('button', { name: 'Copy content hash of checkpoint cp2-0000…' }),
    ).toBeTruthy();
    expect(screen.getByText('Manual')).toBeTruthy();
    expect(screen.getByText('Current project')).toBeTruthy();
  });

  it('says what made each checkpoint, links its event, and shows the full id on demand', async () => {
    const user = userEvent.setup();
    setup({}, null, { eventHref: (seq) => `/sessions/session-1/events/${seq}` });
    const row = (await screen.findByRole('rowheader', { name: /^cp2-0000…/ })).closest(
      'tr',
    ) as HTMLElement;
    expect(
      within(row).getByText('Taken before workspace.file.patch wrote to the project'),
    ).toBeTruthy();
    expect(within(row).getByRole('link', { name: 'event #7' }).getAttribute('href')).toBe(
      '/sessions/session-1/events/7',
    );
    await user.click(within(row).getByText('Full id'));
    expect(within(row).getByText('cp2-0000-0000-0002')).toBeTruthy();
    expect(
      within(row).getByRole('button', { name: 'Copy full id of checkpoint cp2-0000…' }),
    ).toBeTruthy();
  });

  it('reads the current project again when the session moves on (live, throttled)', async () => {
    const studio = setup({}, null, { lastEventSeq: '10' });
    await screen.findByText('Current project');
    const reads = () => studio.calls.filter((c) => c.field === 'studioProject').length;
    const before = reads();
    fixtureRevision.current = '5';
    studio.rerender({ lastEventSeq: '11' });
    studio.rerender({ lastEventSeq: '12' });
    await vi.waitFor(() => expect(reads()).toBe(before + 1), { timeout: 3000 });
    const projectRow = screen.getByText('Current project').closest('tr') as HTMLElement;
    await vi.waitFor(() => expect(within(projectRow).getByText('5')).toBeTruthy());
  });

  it('shows why a session has no checkpoints instead of an empty list', async () => {
    setup({
      studioCheckpoints: () =>
        connection([], false, 'Managed Agents sessions keep no checkpoint store.'),
    });
    expect(
      await screen.findByText('Managed Agents sessions keep no checkpoint store.'),
    ).toBeTruthy();
    expect(screen.queryByRole('table')).toBeNull();
  });

  it('shows a checkpoint’s files, sortable and filtered by path', async () => {
    const user = userEvent.setup();
    setup();
    await user.click(await screen.findByRole('button', { name: 'Files of checkpoint cp2-0000…' }));
    const panel = await screen.findByRole('region', { name: 'Files of checkpoint cp2-0000…' });
    const table = await within(panel).findByRole('table');
    const paths = () =>
      within(table)
        .getAllByRole('row')
        .slice(1)
        .map((r) => r.querySelectorAll('td')[1]?.textContent);
    expect(paths()).toEqual(['src/a.ts', 'src/b.ts', 'src/c.ts']);
    await user.click(within(table).getByRole('button', { name: 'Size' }));
    await user.click(within(table).getByRole('button', { name: /Size/ }));
    expect(
      within(table).getByRole('columnheader', { name: /Size/ }).getAttribute('aria-sort'),
    ).toBe('descending');
    expect(paths()[0]).toBe('src/c.ts');
    await user.type(within(panel).getByLabelText('Filter by path'), 'b.ts');
    expect(paths()).toEqual(['src/b.ts']);
    expect(within(panel).getByText('1 of 3 files')).toBeTruthy();
  });

  it('pages through a large checkpoint’s files, a page of 100 at a time', async () => {
    const user = userEvent.setup();
    const many = Array.from({ length: 250 }, (_, i) =>
      file(`src/f${String(i).padStart(3, '0')}.ts`, 'a'),
    );
    const large = checkpoint('cpL-0000-0000-000L', '7', many);
    setup({ studioCheckpoints: () => connection([large]), studioCheckpoint: byId([large]) });
    await user.click(await screen.findByRole('button', { name: 'Files of checkpoint cpL-0000…' }));
    const panel = await screen.findByRole('region', { name: 'Files of checkpoint cpL-0000…' });
    const firstPath = async () =>
      (await within(panel).findByRole('table')).querySelectorAll('tbody tr td')[1]?.textContent;
    expect(await within(panel).findByText('1–100 of 250')).toBeTruthy();
    expect(await firstPath()).toBe('src/f000.ts');
    await user.click(within(panel).getByRole('button', { name: 'Next page' }));
    expect(await within(panel).findByText('101–200 of 250')).toBeTruthy();
    expect(await firstPath()).toBe('src/f100.ts');
    await user.click(within(panel).getByRole('button', { name: 'Next page' }));
    expect(await within(panel).findByText('201–250 of 250')).toBeTruthy();
    expect(
      (within(panel).getByRole('button', { name: 'Next page' }) as HTMLButtonElement).disabled,
    ).toBe(true);
    await user.click(within(panel).getByRole('button', { name: 'Previous page' }));
    expect(await within(panel).findByText('101–200 of 250')).toBeTruthy();
    await user.type(within(panel).getByLabelText('Folder (path prefix)'), 'src/f24');
    expect(await within(panel).findByText('1–10 of 10')).toBeTruthy();
  });

  it('compares two checkpoints by file hash', async () => {
    const user = userEvent.setup();
    setup();
    await user.click(
      await screen.findByRole('radio', { name: 'Compare from checkpoint cp1-0000…' }),
    );
    await user.click(screen.getByRole('radio', { name: 'Compare to checkpoint cp3-0000…' }));
    const view = await screen.findByRole('region', {
      name: 'Compare checkpoint cp1-0000… → checkpoint cp3-0000…',
    });
    // cp1 {a:1, b:2} → cp3 {b:3, c:4, d:5}
    expect((view.querySelector('dl') as HTMLElement).textContent).toBe(
      'Added2Removed1Changed1Unchanged0',
    );
    const rows = within(view)
      .getAllByRole('row')
      .slice(1)
      .map((r) => [
        (r as HTMLTableRowElement).cells[0]?.textContent,
        (r as HTMLTableRowElement).cells[2]?.textContent,
      ]);
    expect(rows).toEqual([
      ['Removed', 'src/a.ts'],
      ['Changed', 'src/b.ts'],
      ['Added', 'src/c.ts'],
      ['Added', 'src/d.ts'],
    ]);
  });

  it('compares a checkpoint with the current project', async () => {
    const user = userEvent.setup();
    setup();
    await user.click(
      await screen.findByRole('button', {
        name: 'Compare with current: checkpoint cp3-0000…',
      }),
    );
    const view = await screen.findByRole('region', {
      name: 'Compare checkpoint cp3-0000… → the current project',
    });
    // cp3 {b:3, c:4, d:5} → project {b:6, c:4, e:7}
    const dl = view.querySelector('dl') as HTMLElement;
    expect(dl.textContent).toBe('Added1Removed1Changed1Unchanged1');
  });
  it('has no serious accessibility violations with files, a comparison and a restore preview open', async () => {
    const user = userEvent.setup();
    const container = document.body;
    setup();
    await user.click(await screen.findByRole('button', { name: 'Files of checkpoint cp2-0000…' }));
    await user.click(
      screen.getByRole('button', { name: 'Compare with current: checkpoint cp3-0000…' }),
    );
    await user.click(screen.getByRole('button', { name: 'Restore checkpoint cp1-0000……' }));
    await screen.findByRole('button', { name: 'Restore checkpoint cp1-0000…' });
    await screen.findByRole('region', {
      name: 'Compare checkpoint cp3-0000… → the current project',
    });
    const results = await axe.run(container, { rules: { 'color-contrast': { enabled: false } } });
    const serious = results.violations.filter(
      (v) => v.impact === 'serious' || v.impact === 'critical',
    );
    expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.html).join(' | ')}`)).toEqual([]);
  });
});

describe('CheckpointBrowserPage restore', () => {
  const restoreApproval = () =>
    makeApproval({
      approvalId: 'approval-r',
      toolCallId: 'call-r',
      studioReasons: ['Restore replaces the current project snapshot.'],
      studioToolCall: makeToolCall({
        toolCallId: 'call-r',
        toolName: 'project.checkpoint.restore',
        status: 'WAITING_FOR_APPROVAL',
        approval: makeApproval({ approvalId: 'approval-r', toolCallId: 'call-r' }),
      }),
    });

  async function openRestore(user: ReturnType<typeof userEvent.setup>) {
    // cp1 {a:1, b:2} over the project {b:6, c:4, e:7}: a re-created, b overwritten, c and e deleted.
    await user.click(await screen.findByRole('button', { name: 'Restore checkpoint cp1-0000……' }));
    return screen.findByRole('region', { name: 'Restore checkpoint cp1-0000…' });
  }

  it('previews the server’s counts, restores in one confirmation and shows the approval inline', async () => {
    const user = userEvent.setup();
    const studio = setup({
      studioRequestCheckpointRestore: () => restoreApproval(),
      studioToolCall: () => restoreApproval().studioToolCall,
    });
    const flow = await openRestore(user);
    const restore = await within(flow).findByRole('button', {
      name: 'Restore checkpoint cp1-0000…',
    });
    expect((flow.querySelector('dl') as HTMLElement).textContent).toBe(
      'Re-created1Deleted2Overwritten1Unchanged0',
    );
    expect(within(flow).getByLabelText('What the restore changes').textContent).toBe(
      '1 overwritten, 1 re-created, 2 deleted.',
    );
    expect(within(flow).getByText('src/e.ts')).toBeTruthy();
    expect(within(flow).getByText(/Before an agent write, revision 1/)).toBeTruthy();
    expect(within(flow).getByText(/fenced/)).toBeTruthy();
    expect(studio.calls.some((c) => c.field === 'studioRequestCheckpointRestore')).toBe(false);
    const previews = previewCalls.length;

    await user.click(restore);
    expect(await within(flow).findByText('approval card for call-r in session-1')).toBeTruthy();
    // The preview was computed again right before the request.
    expect(previewCalls.length).toBeGreaterThan(previews);
    expect(within(flow).getByText(/Waiting for your approval of the restore call/)).toBeTruthy();
    const request = studio.calls.find((c) => c.field === 'studioRequestCheckpointRestore');
    expect(request?.args.input).toMatchObject({
      sessionId: 'session-1',
      clientEpoch: '1',
      checkpointId: 'cp1-0000-0000-0001',
      checkpointContentHash: hash('1'),
      expectedRevision: '4',
    });
  });

  it('restores only the files picked in the comparison: the request names them as paths', async () => {
    const user = userEvent.setup();
    const studio = setup({
      studioRequestCheckpointRestore: () => restoreApproval(),
      studioToolCall: () => restoreApproval().studioToolCall,
    });
    await user.click(
      await screen.findByRole('button', { name: 'Compare with current: checkpoint cp3-0000…' }),
    );
    const view = await screen.findByRole('region', {
      name: 'Compare checkpoint cp3-0000… → the current project',
    });
    const restorePicked = await within(view).findByRole('button', { name: /^Restore 0 picked/ });
    expect((restorePicked as HTMLButtonElement).disabled).toBe(true);
    // cp3 {b:3, c:4, d:5} → project {b:6, c:4, e:7}: pick b (changed) and d (gone since).
    await user.click(within(view).getByRole('checkbox', { name: /^Pick src\/b\.ts/ }));
    await user.click(within(view).getByRole('checkbox', { name: /^Pick src\/d\.ts/ }));
    await user.click(within(view).getByRole('button', { name: 'Restore 2 picked files…' }));

    const flow = await screen.findByRole('region', {
      name: 'Restore 2 picked paths of checkpoint cp3-0000…',
    });
    // The preview names the picked files only; the server states the selection's counts on the
    // approval card (its summary is computed from the stored manifests).
    const picked = within(flow).getByRole('region', { name: 'Picked paths' });
    expect(
      within(picked)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['src/b.ts', 'src/d.ts']);
    // Exact counts for the selection, from the server's plan: b overwritten, d re-created.
    expect((await within(flow).findByLabelText('What the restore changes')).textContent).toBe(
      '1 overwritten, 1 re-created, 0 deleted.',
    );
    expect(previewCalls.at(-1)).toEqual(['src/b.ts', 'src/d.ts']);
    await user.click(
      within(flow).getByRole('button', { name: 'Restore 2 picked paths of checkpoint cp3-0000…' }),
    );
    await within(flow).findByText('approval card for call-r in session-1');
    const request = studio.calls.find((c) => c.field === 'studioRequestCheckpointRestore');
    expect(request?.args.input).toMatchObject({
      checkpointId: 'cp3-0000-0000-0003',
      paths: ['src/b.ts', 'src/d.ts'],
    });
  });

  it('restores a picked folder: exact counts for it, and the request names it as a path', async () => {
    const user = userEvent.setup();
    const studio = setup({
      studioRequestCheckpointRestore: () => restoreApproval(),
      studioToolCall: () => restoreApproval().studioToolCall,
    });
    await user.click(
      await screen.findByRole('button', { name: 'Compare with current: checkpoint cp3-0000…' }),
    );
    const view = await screen.findByRole('region', {
      name: 'Compare checkpoint cp3-0000… → the current project',
    });
    await user.type(within(view).getByLabelText('Pick a folder'), 'src/');
    await user.click(within(view).getByRole('button', { name: 'Add folder' }));
    expect(within(view).getByRole('list', { name: 'Picked folders' }).textContent).toContain(
      'src/',
    );
    await user.click(within(view).getByRole('button', { name: 'Restore 1 picked path…' }));
    const flow = await screen.findByRole('region', {
      name: 'Restore 1 picked path of checkpoint cp3-0000…',
    });
    // cp3 {b:3, c:4, d:5} over the project {b:6, c:4, e:7}, all under src/.
    expect((await within(flow).findByLabelText('What the restore changes')).textContent).toBe(
      '1 overwritten, 1 re-created, 1 deleted.',
    );
    expect(previewCalls.at(-1)).toEqual(['src']);
    await user.click(
      within(flow).getByRole('button', { name: 'Restore 1 picked path of checkpoint cp3-0000…' }),
    );
    await within(flow).findByText('approval card for call-r in session-1');
    const request = studio.calls.find((c) => c.field === 'studioRequestCheckpointRestore');
    expect(request?.args.input).toMatchObject({ paths: ['src'] });
  });

  it('follows the restore call through events to success and offers to undo it', async () => {
    const user = userEvent.setup();
    const preimage = checkpoint('cp9-0000-0000-0009', '4', project().fileList, {
      reason: 'RESTORE_PREIMAGE',
    });
    const studio = setup({
      studioRequestCheckpointRestore: () => restoreApproval(),
      studioToolCall: () => restoreApproval().studioToolCall,
      studioCheckpoint: byId([cp3, cp2, cp1, preimage]),
    });
    const flow = await openRestore(user);
    await user.click(
      await within(flow).findByRole('button', { name: 'Restore checkpoint cp1-0000…' }),
    );
    await within(flow).findByText('approval card for call-r in session-1');

    const sub = studio.client
      .subscription(EventBatchesSubscription, { sessionId: 'session-1', afterSeq: '0' })
      .subscribe(() => undefined);
    const toolEvent = (seq: string, status: string, extra: Record<string, unknown>) => ({
      __typename: 'StudioAgentEventBatch',
      sessionId: 'session-1',
      fromSeq: seq,
      throughSeq: seq,
      events: [
        {
          __typename: 'AgentToolEvent',
          protocolVersion: 'crowdy.agent-event/1',
          eventId: `event-${seq}`,
          sessionId: 'session-1',
          seq,
          type: status === 'SUCCEEDED' ? 'TOOL_SUCCEEDED' : 'TOOL_DISPATCHED',
          runId: 'run-1',
          version: '1',
          createdAt: '2026-11-30T09:51:00.000Z',
          toolCallId: 'call-r',
          toolName: 'project.checkpoint.restore',
          toolVersion: '1.0.0',
          status,
          studioToolCall: makeToolCall({
            toolCallId: 'call-r',
            toolName: 'project.checkpoint.restore',
            status,
            ...extra,
          }),
        },
      ],
    });
    await act(async () => {
      await Promise.resolve();
    });
    await act(async () => {
      studio.publish('studioAgentEventBatches', toolEvent('20', 'RUNNING', {}));
    });
    expect(await within(flow).findByText(/Restoring… the project is being written/)).toBeTruthy();
    await act(async () => {
      studio.publish(
        'studioAgentEventBatches',
        toolEvent('21', 'SUCCEEDED', {
          resultJson: JSON.stringify({
            project: { revision: '5' },
            preRestoreCheckpoint: { checkpointId: 'cp9-0000-0000-0009' },
          }),
        }),
      );
    });
    expect(
      await within(flow).findByText(
        /Restored checkpoint cp1-0000…\. The project is now at revision 5\./,
      ),
    ).toBeTruthy();
    expect(
      within(flow).getByText(/saved as checkpoint cp9-0000… \(RESTORE_PREIMAGE\)/),
    ).toBeTruthy();
    sub.unsubscribe();

    await user.click(within(flow).getByRole('button', { name: 'Undo restore' }));
    const undo = await screen.findByRole('region', { name: 'Restore checkpoint cp9-0000…' });
    await within(undo).findByRole('button', { name: 'Restore checkpoint cp9-0000…' });
    expect(within(undo).getByText(/Before a restore, revision/)).toBeTruthy();
  });

  it('recomputes the preview before restoring and, when the project moved on, says so and sends nothing', async () => {
    const user = userEvent.setup();
    const studio = setup({
      studioRequestCheckpointRestore: () => restoreApproval(),
      studioToolCall: () => restoreApproval().studioToolCall,
    });
    const flow = await openRestore(user);
    const restore = await within(flow).findByRole('button', {
      name: 'Restore checkpoint cp1-0000…',
    });
    expect(within(flow).getByText(/\(revision 4\)/)).toBeTruthy();
    // An agent writes while the preview is open.
    fixtureRevision.current = '5';
    await user.click(restore);
    const alert = await within(flow).findByRole('alert');
    expect(alert.textContent).toMatch(
      /The project moved on while this preview was open \(revision 4 → 5\)\. Nothing was sent/,
    );
    expect(studio.calls.filter((c) => c.field === 'studioRequestCheckpointRestore')).toHaveLength(
      0,
    );
    expect(await within(flow).findByText(/\(revision 5\)/)).toBeTruthy();
    // The second press finds nothing new and sends, against revision 5.
    await user.click(within(flow).getByRole('button', { name: 'Restore checkpoint cp1-0000…' }));
    await within(flow).findByText('approval card for call-r in session-1');
    const request = studio.calls.find((c) => c.field === 'studioRequestCheckpointRestore');
    expect(request?.args.input).toMatchObject({ expectedRevision: '5' });
  });

  it('says the project moved on after a revision conflict and refreshes the preview', async () => {
    const user = userEvent.setup();
    const studio = setup({
      studioRequestCheckpointRestore: () => {
        // The project moves between the recomputed preview and the request.
        fixtureRevision.current = '5';
        throw studioError('CROWDY_STUDIO_REVISION_CONFLICT', 'expectedRevision is stale');
      },
    });
    const flow = await openRestore(user);
    await user.click(
      await within(flow).findByRole('button', { name: 'Restore checkpoint cp1-0000…' }),
    );
    const alert = await within(flow).findByRole('alert');
    expect(within(alert).getByText('CROWDY_STUDIO_REVISION_CONFLICT')).toBeTruthy();
    expect(
      within(alert).getByText(
        /The project moved on since this preview: it is no longer at revision 4/,
      ),
    ).toBeTruthy();
    expect(within(flow).queryByText(/approval card/)).toBeNull();
    const before = studio.calls.filter((c) => c.field === 'studioProject').length;
    await user.click(within(alert).getByRole('button', { name: 'Refresh and preview again' }));
    await vi.waitFor(() =>
      expect(studio.calls.filter((c) => c.field === 'studioProject').length).toBeGreaterThan(
        before,
      ),
    );
    expect(await within(flow).findByText(/\(revision 5\)/)).toBeTruthy();
    expect(studio.calls.filter((c) => c.field === 'studioRequestCheckpointRestore')).toHaveLength(
      1,
    );
  });

  it('says so when the checkpoint is not found', async () => {
    const user = userEvent.setup();
    setup({
      studioRequestCheckpointRestore: () => {
        throw studioError('AGENT_CHECKPOINT_NOT_FOUND', 'no such checkpoint');
      },
    });
    const flow = await openRestore(user);
    await user.click(
      await within(flow).findByRole('button', { name: 'Restore checkpoint cp1-0000…' }),
    );
    expect(
      await within(flow).findByText(
        /The server has no checkpoint cp1-0000… with this content hash/,
      ),
    ).toBeTruthy();
  });
});

describe('CheckpointBrowserPage file diffs', () => {
  // Contents by the fixtures' hashes: cp1 {a:1, b:2}, cp3 {b:3, c:4, d:5}, project {b:6, c:4, e:7}.
  const contents = () =>
    makeFakeStudioHttp({
      [hash('1')]: 'export const a = 1;\n',
      [hash('2')]: 'const b = 1;\nshared line\n',
      [hash('3')]: 'const b = 2;\nshared line\nnew tail\n',
      [hash('5')]: 'first\nsecond\n',
      [hash('6')]: 'const b = 6;\nshared line\n',
    });

  async function compareCp1ToCp3(user: ReturnType<typeof userEvent.setup>) {
    await user.click(
      await screen.findByRole('radio', { name: 'Compare from checkpoint cp1-0000…' }),
    );
    await user.click(screen.getByRole('radio', { name: 'Compare to checkpoint cp3-0000…' }));
    return screen.findByRole('region', {
      name: 'Compare checkpoint cp1-0000… → checkpoint cp3-0000…',
    });
  }

  const diffRows = (region: HTMLElement) =>
    within(within(region).getByRole('table'))
      .getAllByRole('row')
      .slice(1)
      .map((row) =>
        within(row)
          .getAllByRole('cell')
          .map((cell) => cell.textContent)
          .join('|'),
      );

  it('shows a changed file’s line diff, fetched once per hash with the bearer token', async () => {
    const user = userEvent.setup();
    const http = contents();
    setup({}, http);
    const view = await compareCp1ToCp3(user);
    const toggle = within(view).getByRole('button', { name: 'Show diff of src/b.ts' });
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    await user.click(toggle);
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    const diff = await within(view).findByRole('region', { name: 'Diff of src/b.ts' });
    await within(diff).findByRole('table', {
      name: 'Line diff of src/b.ts, checkpoint cp1-0000… → checkpoint cp3-0000…',
    });
    expect(diffRows(diff)).toEqual([
      '1||−Removed|const b = 1;',
      '|1|+Added|const b = 2;',
      '2|2| Unchanged|shared line',
      '|3|+Added|new tail',
    ]);
    expect(within(diff).getByText(/: 2 added, 1 removed/)).toBeTruthy();
    expect(http.requests.map((r) => r.url).sort()).toEqual([
      `http://studio.test/api/blobs/${hash('2')}`,
      `http://studio.test/api/blobs/${hash('3')}`,
    ]);
    expect(http.requests.every((r) => r.authorization === `Bearer ${TEST_TOKEN}`)).toBe(true);
    expect(http.requests.some((r) => r.url.includes(TEST_TOKEN))).toBe(false);

    await user.click(within(view).getByRole('button', { name: 'Hide diff of src/b.ts' }));
    expect(within(view).queryByRole('region', { name: 'Diff of src/b.ts' })).toBeNull();
    await user.click(within(view).getByRole('button', { name: 'Show diff of src/b.ts' }));
    await within(view).findByRole('table', { name: /Line diff of src\/b\.ts/ });
    // Blobs are immutable: showing the diff again is served from the query cache.
    expect(http.requests).toHaveLength(2);
  });

  it('shows an added file whole as added and a removed file whole as removed', async () => {
    const user = userEvent.setup();
    setup({}, contents());
    const view = await compareCp1ToCp3(user);
    await user.click(within(view).getByRole('button', { name: 'Show diff of src/d.ts' }));
    const added = await within(view).findByRole('region', { name: 'Diff of src/d.ts' });
    await within(added).findByRole('table');
    expect(diffRows(added)).toEqual(['|1|+Added|first', '|2|+Added|second']);
    await user.click(within(view).getByRole('button', { name: 'Show diff of src/a.ts' }));
    const removed = await within(view).findByRole('region', { name: 'Diff of src/a.ts' });
    await within(removed).findByRole('table');
    expect(diffRows(removed)).toEqual(['1||−Removed|export const a = 1;']);
  });

  it('counts an unchanged file without listing it or offering a diff', async () => {
    const user = userEvent.setup();
    setup({}, contents());
    await user.click(
      await screen.findByRole('button', {
        name: 'Compare with current: checkpoint cp3-0000…',
      }),
    );
    const view = await screen.findByRole('region', {
      name: 'Compare checkpoint cp3-0000… → the current project',
    });
    // The server sends changed paths only (a page at a time); unchanged ones are a count.
    expect((view.querySelector('dl') as HTMLElement).textContent).toContain('Unchanged1');
    expect(within(view).queryByText('src/c.ts')).toBeNull();
    expect(within(view).queryByRole('button', { name: 'Show diff of src/c.ts' })).toBeNull();
    expect(within(view).getByRole('button', { name: 'Show diff of src/b.ts' })).toBeTruthy();
  });

  it('makes hidden characters in file content visible', async () => {
    const user = userEvent.setup();
    const http = contents();
    http.blobs.set(hash('3'), new TextEncoder().encode('const b = 1;\u202E\u200B\nshared line\n'));
    setup({}, http);
    const view = await compareCp1ToCp3(user);
    await user.click(within(view).getByRole('button', { name: 'Show diff of src/b.ts' }));
    const diff = await within(view).findByRole('region', { name: 'Diff of src/b.ts' });
    expect(await within(diff).findByText('⟨U+202E⟩')).toBeTruthy();
    expect(within(diff).getByText('⟨U+200B⟩')).toBeTruthy();
  });

  it('says a binary file’s hashes differ instead of diffing it', async () => {
    const user = userEvent.setup();
    const http = contents();
    http.blobs.set(hash('3'), new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    setup({}, http);
    const view = await compareCp1ToCp3(user);
    await user.click(within(view).getByRole('button', { name: 'Show diff of src/b.ts' }));
    expect(await within(view).findByText(/^Binary file, hashes differ/)).toBeTruthy();
    expect(within(view).queryByRole('table', { name: /Line diff/ })).toBeNull();
  });

  it('does not fetch a file that is too large to diff here', async () => {
    const user = userEvent.setup();
    const http = contents();
    const big = checkpoint('cp3-0000-0000-0003', '3', [
      file('src/b.ts', '3', 300 * 1024),
      file('src/c.ts', '4', 5000),
      file('src/d.ts', '5', 20),
    ]);
    setup(
      {
        studioCheckpoints: () => connection([big, cp2, cp1]),
        studioCheckpoint: byId([big, cp2, cp1]),
      },
      http,
    );
    const view = await compareCp1ToCp3(user);
    await user.click(within(view).getByRole('button', { name: 'Show diff of src/b.ts' }));
    expect(await within(view).findByText(/^Too large to diff here \(300 KiB/)).toBeTruthy();
    expect(http.requests).toHaveLength(0);
  });

  it('explains a rejected token (401) and a missing version (404)', async () => {
    const user = userEvent.setup();
    const http = contents();
    http.blobs.delete(hash('5'));
    setup({}, http);
    const view = await compareCp1ToCp3(user);
    await user.click(within(view).getByRole('button', { name: 'Show diff of src/d.ts' }));
    const missing = await within(view).findByRole('alert');
    expect(missing.textContent).toMatch(
      /The server has no stored content for the version in checkpoint cp3-0000… \(sha256:555555555555…, 404\)/,
    );
    await user.click(within(view).getByRole('button', { name: 'Hide diff of src/d.ts' }));

    http.forceStatus.current = 401;
    await user.click(within(view).getByRole('button', { name: 'Show diff of src/b.ts' }));
    const refused = await within(view).findByRole('alert');
    expect(refused.textContent).toMatch(/did not accept this tab’s token \(401\)/);
    expect(within(refused).queryByRole('button', { name: 'Try again' })).toBeNull();
  });

  it('offers to try again after a server failure and then shows the diff', async () => {
    const user = userEvent.setup();
    const http = contents();
    http.forceStatus.current = 500;
    setup({}, http);
    const view = await compareCp1ToCp3(user);
    await user.click(within(view).getByRole('button', { name: 'Show diff of src/b.ts' }));
    const failed = await within(view).findByRole('alert');
    expect(failed.textContent).toMatch(/answered 500/);
    http.forceStatus.current = null;
    await user.click(within(failed).getByRole('button', { name: 'Try again' }));
    expect(
      await within(view).findByRole('table', { name: /Line diff of src\/b\.ts/ }),
    ).toBeTruthy();
  });

  it('previews a restore’s changes as diffs from the current project to the checkpoint', async () => {
    const user = userEvent.setup();
    setup({}, contents());
    await user.click(await screen.findByRole('button', { name: 'Restore checkpoint cp1-0000……' }));
    const flow = await screen.findByRole('region', { name: 'Restore checkpoint cp1-0000…' });
    await within(flow).findByRole('button', { name: 'Restore checkpoint cp1-0000…' });
    await user.click(within(flow).getByRole('button', { name: 'Show diff of src/b.ts' }));
    const diff = await within(flow).findByRole('region', { name: 'Diff of src/b.ts' });
    await within(diff).findByRole('table', {
      name: 'Line diff of src/b.ts, the current project → checkpoint cp1-0000…',
    });
    expect(diffRows(diff)).toEqual([
      '1||−Removed|const b = 6;',
      '|1|+Added|const b = 1;',
      '2|2| Unchanged|shared line',
    ]);
  });

  it('has no accessibility violations with a diff open', async () => {
    const user = userEvent.setup();
    setup({}, contents());
    const view = await compareCp1ToCp3(user);
    await user.click(within(view).getByRole('button', { name: 'Show diff of src/b.ts' }));
    await within(view).findByRole('table', { name: /Line diff of src\/b\.ts/ });
    const results = await axe.run(document.body, {
      rules: { 'color-contrast': { enabled: false } },
    });
    expect(
      results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.html).join(' | ')}`),
    ).toEqual([]);
  });
});
