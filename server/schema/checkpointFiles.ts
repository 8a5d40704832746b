/**
 * Resolvers of the paged checkpoint manifests (issue 8): `StudioCheckpoint.files`,
 * `StudioCheckpoint.changes` (comparison and restore preview) and `StudioProject.files`. A
 * manifest can hold any number of files; these serve it by path, a page at a time.
 */
import { pageByPath } from '../engine/checkpointContent.ts';
import type { Engine } from '../engine/Engine.ts';
import { StudioError } from '../engine/StudioError.ts';
import { diffManifests, sortManifest, type ManifestFile } from '../workspace/manifest.ts';
import { checkpointFileView } from './views.ts';
import { ErrorCode } from '../../protocol/contract.ts';

const FILES_PAGE_DEFAULT = 100;
const FILES_PAGE_MAX = 500;

type Args = Record<string, unknown>;
interface Ctx {
  engine: Engine;
}

interface FileChange {
  path: string;
  change: 'ADDED' | 'CHANGED' | 'REMOVED' | 'MODE_CHANGED' | 'NOT_RESTORABLE';
  from: ManifestFile | null;
  to: ManifestFile | null;
  changedOutsideAgent: boolean;
  notRestorableReason: string | null;
}

function pageArgs(a: Args): { first: number; after: string | null; pathPrefix: string | null } {
  const first = a.first ?? FILES_PAGE_DEFAULT;
  if (typeof first !== 'number' || !Number.isInteger(first) || first < 1)
    throw new StudioError(ErrorCode.BAD_REQUEST, 'first must be at least 1.', { field: 'first' });
  const text = (name: string): string | null => {
    const v = a[name];
    if (v === null || v === undefined) return null;
    if (typeof v !== 'string' || v.length > 1024)
      throw new StudioError(
        ErrorCode.BAD_REQUEST,
        `${name} must be a path of at most 1024 characters.`,
        {
          field: name,
        },
      );
    return v;
  };
  return {
    first: Math.min(first, FILES_PAGE_MAX),
    after: text('after'),
    pathPrefix: text('pathPrefix'),
  };
}

function fileConnection(files: readonly ManifestFile[], a: Args) {
  const page = pageByPath(files, pageArgs(a));
  return {
    edges: page.items.map((f, i) => ({ cursor: page.cursors[i]!, node: checkpointFileView(f) })),
    pageInfo: { hasNextPage: page.hasNextPage, endCursor: page.cursors.at(-1) ?? null },
    totalCount: page.totalCount,
  };
}

async function requireCheckpoint(engine: Engine, checkpointId: string) {
  const c = await engine.reads.getCheckpoint(checkpointId);
  if (!c) throw new StudioError(ErrorCode.CHECKPOINT_NOT_FOUND, `No checkpoint ${checkpointId}.`);
  return c;
}

async function changesAgainstProject(engine: Engine, checkpointId: string): Promise<FileChange[]> {
  const { plan, drifted } = await engine.restorePreview(
    await requireCheckpoint(engine, checkpointId),
  );
  const out: FileChange[] = [];
  const row = (
    path: string,
    change: FileChange['change'],
    from: ManifestFile | null,
    to: ManifestFile | null,
    reason: string | null = null,
  ) =>
    out.push({
      path,
      change,
      from,
      to,
      changedOutsideAgent: drifted.has(path),
      notRestorableReason: reason,
    });
  for (const f of plan.added) row(f.path, 'ADDED', null, f);
  for (const c of plan.changed) row(c.to.path, 'CHANGED', c.from, c.to);
  for (const f of plan.removed) row(f.path, 'REMOVED', f, null);
  for (const f of plan.modeChanged)
    row(f.path, 'MODE_CHANGED', { ...f, ...(f.executable ? {} : { executable: true }) }, f);
  for (const n of plan.notRestorable) row(n.path, 'NOT_RESTORABLE', null, null, n.reason);
  return out;
}

async function changesBetween(
  engine: Engine,
  againstId: string,
  checkpointId: string,
): Promise<FileChange[]> {
  const to = requireCheckpoint(engine, checkpointId);
  const from = requireCheckpoint(engine, againstId);
  if ((await from).projectId !== (await to).projectId)
    throw new StudioError(ErrorCode.BAD_REQUEST, 'Both checkpoints must be of one project.', {
      field: 'against',
    });
  const diff = diffManifests(
    await engine.checkpointFiles(await from),
    await engine.checkpointFiles(await to),
  );
  const out: FileChange[] = [];
  const base = { changedOutsideAgent: false, notRestorableReason: null };
  for (const f of diff.added)
    out.push(
      f.notCaptured
        ? {
            ...base,
            path: f.path,
            change: 'NOT_RESTORABLE',
            from: null,
            to: f,
            notRestorableReason: 'not captured: over the cap',
          }
        : { ...base, path: f.path, change: 'ADDED', from: null, to: f },
    );
  for (const c of diff.changed) {
    const modeOnly = c.from.contentHash === c.to.contentHash && c.from.kind === c.to.kind;
    out.push({
      ...base,
      path: c.path,
      change: modeOnly ? 'MODE_CHANGED' : 'CHANGED',
      from: c.from,
      to: c.to,
    });
  }
  for (const f of diff.removed)
    out.push({ ...base, path: f.path, change: 'REMOVED', from: f, to: null });
  return out;
}

function changeConnection(all: FileChange[], a: Args) {
  const sorted = [...all].sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  const page = pageByPath(sorted, pageArgs(a));
  const count = (c: FileChange['change']) => all.filter((x) => x.change === c).length;
  return {
    edges: page.items.map((c, i) => ({
      cursor: page.cursors[i]!,
      node: {
        ...c,
        from: c.from ? checkpointFileView(c.from) : null,
        to: c.to ? checkpointFileView(c.to) : null,
      },
    })),
    pageInfo: { hasNextPage: page.hasNextPage, endCursor: page.cursors.at(-1) ?? null },
    totalCount: page.totalCount,
    added: count('ADDED'),
    changed: count('CHANGED'),
    removed: count('REMOVED'),
    modeChanged: count('MODE_CHANGED'),
    notRestorable: count('NOT_RESTORABLE'),
    changedOutsideAgent: all.filter((x) => x.changedOutsideAgent).length,
  };
}

/** Field resolvers to merge into the schema's type map (wrapped by the caller's error guard). */
export const checkpointFileResolvers = {
  StudioCheckpoint: {
    files: async (c: { checkpointId: string }, a: Args, { engine }: Ctx) =>
      fileConnection(
        await engine.checkpointFiles(await requireCheckpoint(engine, c.checkpointId)),
        a,
      ),
    changes: async (c: { checkpointId: string }, a: Args, { engine }: Ctx) => {
      const against = a.against;
      if (against !== null && against !== undefined && typeof against !== 'string')
        throw new StudioError(ErrorCode.BAD_REQUEST, 'against must be a checkpointId.', {
          field: 'against',
        });
      return changeConnection(
        await (against
          ? changesBetween(engine, against, c.checkpointId)
          : changesAgainstProject(engine, c.checkpointId)),
        a,
      );
    },
  },
  StudioProject: {
    files: async (p: { projectId: string; available: boolean }, a: Args, { engine }: Ctx) =>
      fileConnection(p.available ? sortManifest(await engine.projectFiles(p.projectId)) : [], a),
  },
};
