import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalManifestHash } from './manifest.ts';
import { ProjectWorkspace } from './ProjectWorkspace.ts';
import { makeTempEnv, writeTree, type TempEnv } from './testKit.ts';

let env: TempEnv;
let ws: ProjectWorkspace;
beforeEach(() => {
  env = makeTempEnv();
});
afterEach(() => {
  ws?.close();
  env.dispose();
});

/** The folder as a fresh workspace with no cache and no watcher scans it: the oracle. */
function truth(): string {
  const fresh = new ProjectWorkspace({
    projectId: 'oracle',
    root: env.root,
    contentStore: env.store,
    journalDir: join(env.base, 'oracle-journal'),
    statCacheFile: null,
  });
  return canonicalManifestHash(fresh.scan());
}

const abs = (rel: string) => join(env.root, ...rel.split('/'));

/**
 * Dates every file under `rel` an hour back: a file modified within 1 s of a scan is stat'ed
 * again by the next (its mtime may not have ticked), so only old files show what the watcher
 * spares. Done before a folder is watched, or where it is not (its events would name them all).
 */
function age(rel = ''): void {
  const past = new Date(Date.now() - 3600_000);
  const visit = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) visit(p);
      else if (e.isFile()) fs.utimesSync(p, past, past);
    }
  };
  visit(rel ? abs(rel) : env.root);
}

/** A watched workspace whose first (full) checkpoint is taken. */
async function watched(
  files: Record<string, string>,
  faultInjector?: (step: string) => void,
): Promise<ProjectWorkspace> {
  writeTree(env.root, files);
  age();
  ws = env.workspace(faultInjector);
  ws.startWatching();
  const first = await ws.syncedSnapshot();
  expect(ws.lastScan).toMatchObject({ path: 'FULL', distrust: 'no full scan yet' });
  expect(first.contentHash).toBe(truth());
  return ws;
}

/** A synced checkpoint, checked against the oracle; returns the scan's report. */
async function checkpoint(): Promise<NonNullable<ProjectWorkspace['lastScan']>> {
  const state = await ws.syncedSnapshot();
  expect(state.contentHash).toBe(truth());
  return ws.lastScan!;
}

const BASE = {
  '.gitignore': 'node_modules/\n*.log\n',
  'src/a.ts': 'a\n',
  'src/b.ts': 'b\n',
  'src/deep/c.ts': 'c\n',
  'docs/readme.md': 'readme\n',
  'node_modules/dep/index.js': 'dep\n',
};

/** inotify watches this process holds (every inotify instance's, from /proc). */
function inotifyWatches(): number {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    let link: string;
    try {
      link = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (link !== 'anon_inode:inotify') continue;
    const info = fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
    n += info.split('\n').filter((l) => l.startsWith('inotify wd:')).length;
  }
  return n;
}

describe('folder watcher', () => {
  it('sees a change made right before the checkpoint (the cookie), stat-ing only it', async () => {
    await watched(BASE);
    for (let i = 0; i < 20; i++) {
      // Same size, written within the same millisecond as the last checkpoint: a stat could not
      // tell these apart, the events can.
      fs.writeFileSync(abs('src/a.ts'), `${i % 10}\n`);
      const report = await checkpoint();
      expect(report).toMatchObject({ path: 'WATCHER', filesStatted: 1, filesRead: 1 });
    }
    expect(fs.readFileSync(abs('src/a.ts'), 'utf8')).toBe('9\n');
  });

  it('finds a new directory with files, and later changes inside it', async () => {
    await watched(BASE);
    writeTree(env.root, { 'src/new/deeper/x.ts': 'x\n', 'src/new/y.ts': 'y\n' });
    let report = await checkpoint();
    // The new folder is walked whole (no watch saw it fill), the rest not at all.
    expect(report).toMatchObject({ path: 'WATCHER', filesStatted: 2 });
    expect(ws.scan().map((f) => f.path)).toContain('src/new/deeper/x.ts');
    // The new directories are watched now: an edit in them is an event like any other (y.ts is
    // stat'ed again only because it is younger than a second).
    fs.appendFileSync(abs('src/new/deeper/x.ts'), 'more\n');
    report = await checkpoint();
    expect(report).toMatchObject({ path: 'WATCHER', filesStatted: 2, filesRead: 2 });
  });

  it('follows renames of files and directories, and changes inside a renamed directory', async () => {
    await watched(BASE);
    fs.renameSync(abs('src/a.ts'), abs('src/renamed.ts'));
    expect((await checkpoint()).path).toBe('WATCHER');
    fs.renameSync(abs('src/deep'), abs('docs/moved'));
    expect((await checkpoint()).path).toBe('WATCHER');
    const paths = ws.scan().map((f) => f.path);
    expect(paths).toContain('docs/moved/c.ts');
    expect(paths).not.toContain('src/deep/c.ts');
    // The moved directory's old watch named it src/deep: its events must reach docs/moved.
    fs.writeFileSync(abs('docs/moved/c.ts'), 'changed after the move\n');
    fs.writeFileSync(abs('docs/moved/d.ts'), 'new after the move\n');
    expect((await checkpoint()).path).toBe('WATCHER');
    // A directory moved in from outside the project, and one moved back over an old name.
    const outside = join(env.base, 'outside');
    writeTree(outside, { 'o.ts': 'o\n', 'sub/p.ts': 'p\n' });
    fs.renameSync(outside, abs('src/deep'));
    expect((await checkpoint()).path).toBe('WATCHER');
    fs.writeFileSync(abs('src/deep/sub/p.ts'), 'p2\n');
    expect((await checkpoint()).path).toBe('WATCHER');
  });

  it('sees deletions of files and of whole directories', async () => {
    await watched(BASE);
    fs.rmSync(abs('src/b.ts'));
    expect((await checkpoint()).path).toBe('WATCHER');
    fs.rmSync(abs('src'), { recursive: true });
    expect((await checkpoint()).path).toBe('WATCHER');
    expect(ws.scan().map((f) => f.path)).toEqual(['.gitignore', 'docs/readme.md']);
    // Recreated under the same name (its old watch is gone with it).
    writeTree(env.root, { 'src/deep/c.ts': 'again\n' });
    expect((await checkpoint()).path).toBe('WATCHER');
    fs.writeFileSync(abs('src/deep/c.ts'), 'and again\n');
    expect(await checkpoint()).toMatchObject({ path: 'WATCHER', filesStatted: 1 });
  });

  it('keeps modes and links: a chmod and a retargeted link are events', async () => {
    await watched(BASE);
    fs.symlinkSync('a.ts', abs('src/link.ts'));
    expect((await checkpoint()).path).toBe('WATCHER');
    fs.chmodSync(abs('src/b.ts'), 0o755);
    expect((await checkpoint()).path).toBe('WATCHER');
    expect(ws.scan().find((f) => f.path === 'src/b.ts')?.executable).toBe(true);
    fs.rmSync(abs('src/link.ts'));
    fs.symlinkSync('deep/c.ts', abs('src/link.ts'));
    expect((await checkpoint()).path).toBe('WATCHER');
  });

  it('leaves changes in ignored folders out, without stat-ing them', async () => {
    await watched(BASE);
    const before = ws.state().contentHash;
    const many: Record<string, string> = {};
    for (let i = 0; i < 2000; i++) many[`node_modules/dep${i % 20}/f${i}.js`] = `${i}\n`;
    writeTree(env.root, { ...many, 'src/debug.log': 'noise\n' });
    const state = await ws.syncedSnapshot();
    expect(ws.lastScan).toMatchObject({ path: 'WATCHER' });
    expect(ws.lastScan!.filesStatted).toBe(0);
    expect(state.contentHash).toBe(before);
    expect(state.contentHash).toBe(truth());
    // node_modules is not watched at all: its directories cost no watches.
    expect(ws.watchedDirs).toBe(4);
    // Un-ignored by an edit of .gitignore: now captured, and watched from then on.
    age('node_modules');
    fs.writeFileSync(abs('.gitignore'), '*.log\n');
    expect((await checkpoint()).path).toBe('WATCHER');
    expect(ws.scan().some((f) => f.path === 'node_modules/dep3/f3.js')).toBe(true);
    fs.writeFileSync(abs('node_modules/dep3/f3.js'), 'edited\n');
    // (and .gitignore, younger than a second)
    expect(await checkpoint()).toMatchObject({ path: 'WATCHER', filesStatted: 2 });
  });

  it('falls back to a full scan that finds everything after a possible queue overflow', async () => {
    await watched(BASE);
    // More events than the kernel queues (16,384) while the event loop is busy: some are lost.
    for (let i = 0; i < 12000; i++) {
      fs.appendFileSync(abs('src/a.ts'), 'x');
      fs.appendFileSync(abs('src/b.ts'), 'y');
    }
    writeTree(env.root, { 'docs/late.md': 'written after the overflow\n', 'src/deep/c.ts': 'C\n' });
    const report = await checkpoint();
    expect(report).toMatchObject({ path: 'FULL', distrust: 'possible overflow' });
    expect(ws.scan().map((f) => f.path)).toContain('docs/late.md');
    // That full scan is the new starting point: the watcher is trusted again.
    fs.writeFileSync(abs('docs/readme.md'), 'after\n');
    expect((await checkpoint()).path).toBe('WATCHER');
  });

  it('scans in full when a watch cannot be added, and still finds everything', async () => {
    await watched(BASE, (step) => {
      if (step === 'watch:src/deep') throw Object.assign(new Error('no space'), { code: 'ENOSPC' });
    });
    expect(ws.watchStatus).toBe('watch failed');
    expect(ws.watchedDirs).toBe(0);
    fs.writeFileSync(abs('src/deep/c.ts'), 'unwatched\n');
    expect(await checkpoint()).toMatchObject({ path: 'FULL', distrust: 'watch failed' });
  });

  it('scans in full when its cookie cannot be written', async () => {
    await watched(BASE);
    fs.rmSync(`${env.journalDir}.cookies`, { recursive: true });
    fs.writeFileSync(abs('src/a.ts'), 'after the cookie folder went\n');
    expect(await checkpoint()).toMatchObject({ path: 'FULL', distrust: 'cookie failed' });
  });

  it('agrees with a full scan over a random run of edits, moves and deletions', async () => {
    await watched(BASE);
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const dirs = ['src', 'src/deep', 'docs', 'lib', 'lib/x/y'];
    for (let step = 0; step < 40; step++) {
      const dir = dirs[random(dirs.length)]!;
      const name = `${dir}/f${random(6)}.ts`;
      switch (random(6)) {
        case 0:
        case 1:
          writeTree(env.root, { [name]: `${step}\n` });
          break;
        case 2:
          fs.rmSync(abs(name), { force: true });
          break;
        case 3:
          if (fs.existsSync(abs(dir)))
            fs.renameSync(abs(dir), abs(`${dir.replace(/\//g, '-')}-${step}`));
          break;
        case 4:
          if (fs.existsSync(abs(name))) fs.chmodSync(abs(name), step % 2 ? 0o755 : 0o644);
          break;
        default:
          fs.rmSync(abs(dir), { recursive: true, force: true });
      }
      // Interleaved with scans that do not store (and a full one): every snapshot still has all
      // of its content stored.
      if (step % 3 === 1) expect((await ws.syncedState()).contentHash).toBe(truth());
      if (step % 7 === 3) expect(ws.state().contentHash).toBe(truth());
      expect((await checkpoint()).path).toBe('WATCHER');
      for (const f of ws.scan()) expect(env.store.has(f.contentHash)).toBe(true);
    }
  });

  it('stores again what a garbage collection removed, and what a scan that stores nothing read', async () => {
    await watched(BASE);
    fs.writeFileSync(abs('src/deep/c.ts'), 'read by a state scan first\n');
    await ws.syncedState();
    expect(ws.lastScan!.path).toBe('WATCHER');
    await checkpoint();
    const c = ws.scan().find((f) => f.path === 'src/deep/c.ts')!;
    expect(env.store.has(c.contentHash)).toBe(true);
    // Everything collected: the next snapshot must put every file back, watcher or not.
    env.store.collectGarbage({ live: new Set(), graceMs: 0, now: Date.now() + 1000 });
    expect(env.store.has(c.contentHash)).toBe(false);
    fs.writeFileSync(abs('docs/readme.md'), 'after the collection\n');
    expect((await checkpoint()).path).toBe('WATCHER');
    for (const f of ws.scan()) expect(env.store.has(f.contentHash)).toBe(true);
  });

  it('a restore through the workspace is seen by the next synced checkpoint', async () => {
    await watched(BASE);
    const first = ws.state();
    fs.writeFileSync(abs('src/a.ts'), 'changed\n');
    fs.rmSync(abs('docs'), { recursive: true });
    await checkpoint();
    ws.restore(first.files);
    expect((await checkpoint()).path).toBe('WATCHER');
    expect(ws.state().contentHash).toBe(first.contentHash);
  });

  it('close releases every watch; scans after it are full ones', async () => {
    const before = inotifyWatches();
    await watched(BASE);
    // src, src/deep, docs, the root, and the cookie folder.
    expect(inotifyWatches()).toBe(before + 5);
    ws.close();
    expect(inotifyWatches()).toBe(before);
    fs.writeFileSync(abs('src/a.ts'), 'after close\n');
    expect(await checkpoint()).toMatchObject({ path: 'FULL', distrust: 'not watching' });
    expect(inotifyWatches()).toBe(before);
  });
});
