import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContentStore } from './contentStore.ts';
import { canonicalManifestHash, canonicalManifestText, type ManifestFile } from './manifest.ts';
import { canonicalJson } from './canonicalJson.ts';
import { ProjectWorkspace, journalBodyText, type JournalBody } from './ProjectWorkspace.ts';
import { TreeScanner } from './scanTree.ts';
import { makeTempEnv, readTree, writeTree, type TempEnv } from './testKit.ts';
import { WorkspaceError } from './WorkspaceError.ts';

let env: TempEnv;
beforeEach(() => {
  env = makeTempEnv();
});
afterEach(() => env.dispose());

const digest = (content: string | Buffer) =>
  'sha256:' + createHash('sha256').update(content).digest('hex');

function errorOf(fn: () => unknown): WorkspaceError {
  try {
    fn();
  } catch (err) {
    if (err instanceof WorkspaceError) return err;
    throw err;
  }
  throw new Error('expected a WorkspaceError');
}

function hashOf(ws: ProjectWorkspace, path: string): string {
  const file = ws.scan().find((f) => f.path === path);
  if (!file) throw new Error(`no ${path}`);
  return file.contentHash;
}

describe('ProjectWorkspace.createSample', () => {
  it('writes a small TypeScript project into a missing folder, the same on every run', () => {
    ProjectWorkspace.createSample(env.root);
    const files = env.workspace().scan();
    expect(files.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'src/index.ts',
        'src/greet.ts',
        'src/greet.test.ts',
        'docs/notes.md',
      ]),
    );
    expect(files.length).toBeLessThanOrEqual(12);
    expect(JSON.parse(env.workspace().readFile('package.json')).type).toBe('module');

    const other = join(env.base, 'other');
    fs.mkdirSync(other);
    ProjectWorkspace.createSample(other);
    expect(
      canonicalManifestHash(
        new ProjectWorkspace({
          projectId: 'p2',
          root: other,
          contentStore: env.store,
          journalDir: env.journalDir,
        }).scan(),
      ),
    ).toBe(canonicalManifestHash(files));
  });

  it('leaves a folder that already has content alone', () => {
    writeTree(env.root, { 'mine.txt': 'keep me' });
    ProjectWorkspace.createSample(env.root);
    expect(readTree(env.root)).toEqual({ 'mine.txt': 'keep me' });
  });
});

describe('ProjectWorkspace.scan', () => {
  it('hashes every file, sorted, skipping .git and temp files anywhere, honouring .gitignore', () => {
    const binary = Buffer.from([0, 1, 2, 254, 255]);
    writeTree(env.root, {
      '.gitignore': 'node_modules/\n*.log\n',
      'b.txt': 'bee',
      'a/z.txt': 'zed',
      'bin.dat': binary,
      'empty.txt': '',
      'debug.log': 'ignored',
      '.git/HEAD': 'ref: refs/heads/main',
      'node_modules/x/index.js': 'x',
      'pkg/node_modules/y.js': 'y',
      'a/.studio-tmp-123-abc': 'staged',
    });
    fs.mkdirSync(join(env.root, 'empty-dir'));
    expect(env.workspace().scan()).toEqual<ManifestFile[]>([
      {
        target: 'SERVER',
        path: '.gitignore',
        contentHash: digest('node_modules/\n*.log\n'),
        byteLength: 20,
      },
      { target: 'SERVER', path: 'a/z.txt', contentHash: digest('zed'), byteLength: 3 },
      { target: 'SERVER', path: 'b.txt', contentHash: digest('bee'), byteLength: 3 },
      { target: 'SERVER', path: 'bin.dat', contentHash: digest(binary), byteLength: 5 },
      { target: 'SERVER', path: 'empty.txt', contentHash: digest(''), byteLength: 0 },
    ]);
  });

  it('honours nested .gitignore files, .git/info/exclude, .studioignore and project patterns', () => {
    writeTree(env.root, {
      '.gitignore': 'build/\n*.tmp\n',
      '.git/info/exclude': 'secret.env\n',
      '.studioignore': 'scratch/\n',
      'secret.env': 'x',
      'a.tmp': 'x',
      'build/out.js': 'x',
      'scratch/notes.md': 'x',
      'pkg/.gitignore': '!keep.tmp\ngen/\n',
      'pkg/keep.tmp': 'kept by the nested file',
      'pkg/gen/g.ts': 'x',
      'pkg/src/a.ts': 'a',
      'docs/big.pdf': 'x',
      'dist/app.js': 'x',
    });
    const ws = new ProjectWorkspace({
      projectId: 'p1',
      root: env.root,
      contentStore: env.store,
      journalDir: env.journalDir,
      patterns: { exclude: ['*.pdf'], include: ['build/'] },
    });
    expect(ws.scan().map((f) => f.path)).toEqual([
      '.gitignore',
      '.studioignore',
      'build/out.js',
      'dist/app.js',
      'pkg/.gitignore',
      'pkg/keep.tmp',
      'pkg/src/a.ts',
    ]);
  });

  it('reports a missing folder as NOT_FOUND', () => {
    expect(errorOf(() => env.workspace().scan()).code).toBe('NOT_FOUND');
  });

  it('takes any number of files, and records a file over the cap as not captured', () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 300; i++) many[`f/${String(i).padStart(3, '0')}.txt`] = String(i);
    writeTree(env.root, { ...many, 'big.bin': Buffer.alloc(4096, 1) });
    const ws = new ProjectWorkspace({
      projectId: 'p1',
      root: env.root,
      contentStore: env.store,
      journalDir: env.journalDir,
      maxFileBytes: 4000,
    });
    const snap = ws.snapshot();
    expect(snap.files).toHaveLength(301);
    const big = snap.files.find((f) => f.path === 'big.bin')!;
    expect(big).toMatchObject({ notCaptured: 'OVER_CAP', byteLength: 4096 });
    expect(big.contentHash).toBe(digest(Buffer.alloc(4096, 1)));
    expect(env.store.has(big.contentHash)).toBe(false);
    expect(ws.manifest(snap.contentHash)).toEqual(snap.files);

    // The preview and the restore say which file they cannot put back, and leave it alone.
    fs.writeFileSync(join(env.root, 'big.bin'), Buffer.alloc(4096, 2));
    fs.writeFileSync(join(env.root, 'f/000.txt'), 'edited');
    const plan = ws.previewRestore(snap.files);
    expect(plan.notRestorable).toEqual([{ path: 'big.bin', reason: 'not captured: over the cap' }]);
    expect(plan.changed.map((c) => c.to.path)).toEqual(['f/000.txt']);
    const restored = ws.restore(snap.files);
    expect(restored.notRestorable.map((n) => n.path)).toEqual(['big.bin']);
    expect(fs.readFileSync(join(env.root, 'f/000.txt'), 'utf8')).toBe('0');
    expect(fs.readFileSync(join(env.root, 'big.bin'))).toEqual(Buffer.alloc(4096, 2));
  });

  it('reads only changed files on a rescan (stat cache)', () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 200; i++) many[`s/${i}.txt`] = String(i);
    writeTree(env.root, many);
    // Old enough that the cache trusts their stat (a fresh write is always read again).
    const past = new Date(Date.now() - 10_000);
    for (const name of Object.keys(many)) fs.utimesSync(join(env.root, name), past, past);
    const scanner = new TreeScanner(env.root, { maxFileBytes: 1 << 20, patterns: {} });
    expect(scanner.scan({}).filesRead).toBe(200);
    fs.writeFileSync(join(env.root, 's/7.txt'), 'seven');
    const second = scanner.scan({});
    expect(second.filesRead).toBe(1);
    expect(second.files.find((f) => f.path === 's/7.txt')?.contentHash).toBe(digest('seven'));
    // The one just written is read again next time (its mtime may not have ticked yet).
    expect(scanner.scan({}).filesRead).toBe(1);
  });
});

describe('stored manifests', () => {
  it('stores later manifests as small deltas that a fresh store gives back exactly', () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 300; i++) many[`m/${String(i).padStart(3, '0')}.txt`] = `file ${i}\n`;
    writeTree(env.root, many);
    const ws = env.workspace();
    const packs = () =>
      fs
        .readdirSync(join(env.base, 'data', 'blobs', 'packs'))
        .filter((f) => f.endsWith('.pack'))
        .map((f) => fs.statSync(join(env.base, 'data', 'blobs', 'packs', f)));
    const states = [ws.snapshot()];
    const edits: (() => void)[] = [
      () => fs.writeFileSync(join(env.root, 'm/150.txt'), 'changed\n'),
      // A new first entry, a new last entry, then both gone again.
      () => writeTree(env.root, { 'a-first.txt': 'first', 'z/last.txt': 'last' }),
      () => {
        fs.rmSync(join(env.root, 'a-first.txt'));
        fs.rmSync(join(env.root, 'z'), { recursive: true });
      },
      // The first and the last file of the base gone, one made executable, a link, a non-ASCII name.
      () => {
        fs.rmSync(join(env.root, 'm/000.txt'));
        fs.rmSync(join(env.root, 'm/299.txt'));
        fs.chmodSync(join(env.root, 'm/010.txt'), 0o755);
        fs.symlinkSync('010.txt', join(env.root, 'm/link'));
        writeTree(env.root, { 'm/é-ü.txt': 'ünïcode' });
      },
      () => {},
      // Most files changed: more than a quarter of the base is new, so it is stored whole.
      () => {
        for (let i = 1; i < 299; i++)
          fs.writeFileSync(join(env.root, `m/${String(i).padStart(3, '0')}.txt`), `v2 ${i}\n`);
      },
      () => fs.writeFileSync(join(env.root, 'm/001.txt'), 'v3\n'),
    ];
    const sizes: number[] = [];
    for (const edit of edits) {
      edit();
      const before = packs().length;
      states.push(ws.snapshot());
      const added = packs().slice(before);
      sizes.push(added.reduce((sum, st) => sum + st.size, 0));
    }
    const fresh = new ContentStore(join(env.base, 'data', 'blobs'));
    for (const state of states) {
      expect(state.contentHash).toBe(canonicalManifestHash(state.files));
      expect(fresh.get(state.contentHash).toString('utf8')).toBe(
        canonicalManifestText(state.files),
      );
    }
    const full = fresh.get(states[0]!.contentHash).length;
    // One changed file: its blob and a delta of one entry, not the manifest again.
    expect(sizes[0]).toBeLessThan(full / 8);
    expect(sizes[3]).toBeLessThan(full / 4);
    // Nothing changed: nothing written.
    expect(sizes[4]).toBe(0);
    // A new base after the big change, and the next delta is against it.
    expect(sizes[6]).toBeLessThan(full / 8);
  });
});

describe('symlinks and modes', () => {
  beforeEach(() => {
    writeTree(env.root, { 'real.txt': 'inside', 'dir/a.txt': 'a' });
    fs.writeFileSync(join(env.base, 'secret.txt'), 'outside');
  });

  it('records links as links (never followed), wherever they point', () => {
    fs.symlinkSync('real.txt', join(env.root, 'alias.txt'));
    fs.symlinkSync('dir', join(env.root, 'dir-alias'));
    fs.symlinkSync(join(env.base, 'secret.txt'), join(env.root, 'leak.txt'));
    const ws = env.workspace();
    expect(ws.scan().map((f) => [f.path, f.kind ?? 'FILE', f.contentHash])).toEqual([
      ['alias.txt', 'SYMLINK', digest('real.txt')],
      // UTF-16 order of whole paths: '-' sorts before '/'.
      ['dir-alias', 'SYMLINK', digest('dir')],
      ['dir/a.txt', 'FILE', digest('a')],
      ['leak.txt', 'SYMLINK', digest(join(env.base, 'secret.txt'))],
      ['real.txt', 'FILE', digest('inside')],
    ]);
    // Reading through a link that leaves the folder is still refused.
    expect(errorOf(() => ws.readFile('leak.txt')).code).toBe('PATH_INVALID');
  });

  it('restores links, the execute bit, empty files and deleted files exactly', () => {
    fs.symlinkSync('real.txt', join(env.root, 'alias.txt'));
    fs.symlinkSync('../outside', join(env.root, 'dangling'));
    writeTree(env.root, { 'run.sh': '#!/bin/sh\n', 'empty.txt': '' });
    fs.chmodSync(join(env.root, 'run.sh'), 0o755);
    const ws = env.workspace();
    const snap = ws.snapshot();
    const before = readTree(env.root);

    fs.rmSync(join(env.root, 'alias.txt'));
    fs.writeFileSync(join(env.root, 'alias.txt'), 'now a file');
    fs.rmSync(join(env.root, 'dangling'));
    fs.chmodSync(join(env.root, 'run.sh'), 0o644);
    fs.rmSync(join(env.root, 'empty.txt'));
    fs.writeFileSync(join(env.root, 'added.txt'), 'new');
    const plan = ws.previewRestore(snap.files);
    expect(plan.modeChanged.map((f) => f.path)).toEqual(['run.sh']);
    expect(plan.removed.map((f) => f.path)).toEqual(['added.txt']);

    const restored = ws.restore(snap.files);
    expect(restored.contentHash).toBe(snap.contentHash);
    expect(readTree(env.root)).toEqual(before);
    expect(fs.readlinkSync(join(env.root, 'dangling'))).toBe('../outside');
    expect(fs.statSync(join(env.root, 'run.sh')).mode & 0o100).toBe(0o100);
    expect(canonicalManifestHash(ws.scan())).toBe(snap.contentHash);
  });

  it('refuses to write through a directory link, and writes nothing', () => {
    fs.symlinkSync('dir', join(env.root, 'dir-alias'));
    const before = readTree(env.root);
    const err = errorOf(() =>
      env.workspace().applyChanges([{ path: 'dir-alias/new.txt', content: 'x' }]),
    );
    expect(err.code).toBe('PATH_INVALID');
    expect(readTree(env.root)).toEqual(before);
  });
});

describe('readFile and exists', () => {
  it('reads UTF-8 files and says what exists', () => {
    writeTree(env.root, { 'src/a.ts': 'export const a = "é";\n' });
    const ws = env.workspace();
    expect(ws.readFile('src/a.ts')).toBe('export const a = "é";\n');
    expect(ws.exists('src/a.ts')).toBe(true);
    expect(ws.exists('src')).toBe(false);
    expect(ws.exists('src/missing.ts')).toBe(false);
    expect(errorOf(() => ws.readFile('src/missing.ts')).code).toBe('NOT_FOUND');
    expect(errorOf(() => ws.readFile('src')).code).toBe('NOT_FOUND');
  });

  it.each(['../x', '/etc/passwd', 'a/../../b', 'a\\b'])('refuses the traversal %j', (path) => {
    writeTree(env.root, { a: 'a' });
    fs.writeFileSync(join(env.base, 'x'), 'outside');
    const ws = env.workspace();
    expect(errorOf(() => ws.readFile(path)).code).toBe('PATH_INVALID');
    expect(errorOf(() => ws.exists(path)).code).toBe('PATH_INVALID');
  });
});

describe('snapshot and restore', () => {
  const ORIGINAL = {
    'package.json': '{"name":"demo"}\n',
    'src/index.ts': 'import "./util.ts";\n',
    'src/util.ts': 'export {};\n',
    'docs/guide/intro.md': '# Intro\n',
  };

  it('restores the exact bytes, removing added files and their directories and bringing back deleted ones', () => {
    writeTree(env.root, ORIGINAL);
    fs.writeFileSync(join(env.root, 'logo.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0xff]));
    const ws = env.workspace();
    const checkpoint = ws.snapshot();
    const originalTree = readTree(env.root);
    const originalBytes = fs.readFileSync(join(env.root, 'logo.bin'));

    fs.writeFileSync(join(env.root, 'src/index.ts'), 'changed\n');
    fs.rmSync(join(env.root, 'docs'), { recursive: true });
    fs.rmSync(join(env.root, 'logo.bin'));
    writeTree(env.root, { 'added/deep/new.ts': 'new', 'src/extra.ts': 'extra' });
    expect(ws.scan()).not.toEqual(checkpoint.files);

    const restored = ws.restore(checkpoint.files);
    expect(restored).toMatchObject(checkpoint);
    expect(restored.removed).toEqual(['added/deep/new.ts', 'src/extra.ts']);
    expect(readTree(env.root)).toEqual(originalTree);
    expect(fs.readFileSync(join(env.root, 'logo.bin')).equals(originalBytes)).toBe(true);
    expect(ws.hasPendingJournal()).toBe(false);
  });

  it('returns to the original state by restoring the pre-image taken before a restore', () => {
    writeTree(env.root, ORIGINAL);
    const ws = env.workspace();
    const older = ws.snapshot();
    ws.applyChanges([
      { path: 'src/util.ts', content: 'export const v = 2;\n' },
      { path: 'CHANGELOG.md', content: '# 2\n' },
    ]);
    const current = ws.snapshot();
    const currentTree = readTree(env.root);
    expect(current.contentHash).not.toBe(older.contentHash);

    const preimage = ws.snapshot();
    expect(ws.restore(older.files).contentHash).toBe(older.contentHash);
    expect(ws.restore(preimage.files).contentHash).toBe(current.contentHash);
    expect(readTree(env.root)).toEqual(currentTree);
  });

  it('turns a directory into a file and back', () => {
    writeTree(env.root, { 'lib/a.ts': 'a', 'lib/sub/b.ts': 'b', 'x.txt': 'x' });
    const ws = env.workspace();
    const asDir = ws.snapshot();
    fs.rmSync(join(env.root, 'lib'), { recursive: true });
    writeTree(env.root, { lib: 'now a file' });
    const asFile = ws.snapshot();

    ws.restore(asDir.files);
    expect(readTree(env.root)).toEqual({
      lib: '<dir>',
      'lib/a.ts': 'a',
      'lib/sub': '<dir>',
      'lib/sub/b.ts': 'b',
      'x.txt': 'x',
    });
    expect(ws.restore(asFile.files).contentHash).toBe(asFile.contentHash);
    expect(readTree(env.root)).toEqual({ lib: 'now a file', 'x.txt': 'x' });
  });

  it('refuses to replace a directory holding files it does not manage, touching nothing', () => {
    writeTree(env.root, { lib: 'file', '.gitignore': 'node_modules/\n' });
    const ws = env.workspace();
    const asFile = ws.snapshot();
    fs.rmSync(join(env.root, 'lib'));
    // The ignored folder is not the studio's to delete.
    writeTree(env.root, { 'lib/a.ts': 'a', 'lib/node_modules/dep/index.js': 'dep' });
    const before = readTree(env.root);
    expect(errorOf(() => ws.restore(asFile.files)).code).toBe('PATH_INVALID');
    expect(readTree(env.root)).toEqual(before);
  });

  it('refuses a manifest whose content is not all stored, touching nothing', () => {
    writeTree(env.root, ORIGINAL);
    const ws = env.workspace();
    const files = ws
      .snapshot()
      .files.map((f) =>
        f.path === 'src/util.ts'
          ? { ...f, contentHash: digest('never stored'), byteLength: 12 }
          : f,
      );
    fs.writeFileSync(join(env.root, 'src/index.ts'), 'edited');
    const before = readTree(env.root);
    const err = errorOf(() => ws.restore(files));
    expect(err.code).toBe('NOT_FOUND');
    expect(err.path).toBe('src/util.ts');
    expect(readTree(env.root)).toEqual(before);
  });

  it('refuses a manifest whose byteLength disagrees with the stored content', () => {
    writeTree(env.root, ORIGINAL);
    const ws = env.workspace();
    const files = ws
      .snapshot()
      .files.map((f) => (f.path === 'src/util.ts' ? { ...f, byteLength: f.byteLength + 1 } : f));
    const before = readTree(env.root);
    expect(errorOf(() => ws.restore(files)).code).toBe('HASH_MISMATCH');
    expect(readTree(env.root)).toEqual(before);
  });

  it.each([
    ['a traversal path', { path: '../escape.txt' }, 'PATH_INVALID'],
    ['a .git path', { path: '.git/config' }, 'PATH_INVALID'],
    ['a CLIENT file', { target: 'CLIENT' as const }, 'PATH_INVALID'],
  ])('refuses a manifest with %s', (_label, patch, code) => {
    writeTree(env.root, ORIGINAL);
    const ws = env.workspace();
    const hash = env.store.put('x');
    const files: ManifestFile[] = [
      { target: 'SERVER', path: 'ok.txt', contentHash: hash, byteLength: 1, ...patch },
    ];
    expect(errorOf(() => ws.restore(files)).code).toBe(code);
    expect(fs.existsSync(join(env.base, 'escape.txt'))).toBe(false);
  });

  it('replaces a symlinked file by a regular file so the result equals the manifest', () => {
    writeTree(env.root, { 'a.txt': 'old', 'b.txt': 'old' });
    const ws = env.workspace();
    const wanted = ws.snapshot();
    fs.rmSync(join(env.root, 'b.txt'));
    fs.symlinkSync('a.txt', join(env.root, 'b.txt'));
    fs.writeFileSync(join(env.root, 'a.txt'), 'new');
    expect(ws.restore(wanted.files).contentHash).toBe(wanted.contentHash);
    expect(fs.lstatSync(join(env.root, 'b.txt')).isSymbolicLink()).toBe(false);
  });

  it('keeps an executable file executable when it restores its content', () => {
    writeTree(env.root, { 'run.sh': '#!/bin/sh\necho 1\n' });
    fs.chmodSync(join(env.root, 'run.sh'), 0o755);
    const ws = env.workspace();
    const first = ws.snapshot();
    ws.applyChanges([{ path: 'run.sh', content: '#!/bin/sh\necho 2\n' }]);
    ws.restore(first.files);
    expect(fs.statSync(join(env.root, 'run.sh')).mode & 0o111).not.toBe(0);
  });

  it('recreates a deleted project folder from a checkpoint', () => {
    writeTree(env.root, ORIGINAL);
    const ws = env.workspace();
    const checkpoint = ws.snapshot();
    fs.rmSync(env.root, { recursive: true });
    expect(ws.restore(checkpoint.files)).toMatchObject(checkpoint);
  });
});

describe('applyChanges', () => {
  beforeEach(() =>
    writeTree(env.root, { 'src/a.ts': 'a1', 'src/b.ts': 'b1', 'README.md': 'readme' }),
  );

  it('writes, adds and deletes files, checks expectations, and stores the new content', () => {
    const ws = env.workspace();
    const result = ws.applyChanges([
      { path: 'src/a.ts', content: 'a2', expectedContentHash: digest('a1') },
      { path: 'src/b.ts', content: null, expectedContentHash: digest('b1') },
      { path: 'docs/new/c.md', content: 'c', expectedContentHash: 'ABSENT' },
      { path: 'README.md', content: 'readme' },
    ]);
    expect(result.changedFiles).toEqual(['docs/new/c.md', 'src/a.ts', 'src/b.ts']);
    expect(readTree(env.root)).toEqual({
      'README.md': 'readme',
      docs: '<dir>',
      'docs/new': '<dir>',
      'docs/new/c.md': 'c',
      src: '<dir>',
      'src/a.ts': 'a2',
    });
    expect(result.files).toEqual(ws.scan());
    expect(result.contentHash).toBe(canonicalManifestHash(result.files));
    for (const f of result.files)
      expect(env.store.has(f.contentHash) || f.path === 'README.md').toBe(true);
    expect(env.store.get(digest('a2')).toString()).toBe('a2');
  });

  it('writes nothing when any expectedContentHash is wrong, and names the path', () => {
    const ws = env.workspace();
    const before = readTree(env.root);
    const err = errorOf(() =>
      ws.applyChanges([
        { path: 'src/a.ts', content: 'a2', expectedContentHash: digest('a1') },
        { path: 'new.ts', content: 'n', expectedContentHash: 'ABSENT' },
        { path: 'src/b.ts', content: 'b2', expectedContentHash: digest('stale') },
      ]),
    );
    expect(err.code).toBe('HASH_MISMATCH');
    expect(err.path).toBe('src/b.ts');
    expect(readTree(env.root)).toEqual(before);
    expect(ws.hasPendingJournal()).toBe(false);
    expect(env.store.has(digest('a2'))).toBe(false);
  });

  it('refuses ABSENT for an existing file and deleting a missing one', () => {
    const ws = env.workspace();
    const before = readTree(env.root);
    expect(
      errorOf(() =>
        ws.applyChanges([{ path: 'src/a.ts', content: 'x', expectedContentHash: 'ABSENT' }]),
      ).code,
    ).toBe('HASH_MISMATCH');
    expect(errorOf(() => ws.applyChanges([{ path: 'nope.ts', content: null }])).code).toBe(
      'NOT_FOUND',
    );
    expect(readTree(env.root)).toEqual(before);
  });

  it.each(['../x', '/etc/passwd', 'a/../../b', 'a\\b', '.git/hooks/pre-commit', 'a/.studio-tmp-1'])(
    'refuses the path %j and writes nothing anywhere',
    (path) => {
      const ws = env.workspace();
      const before = readTree(env.base);
      const err = errorOf(() =>
        ws.applyChanges([
          { path: 'src/a.ts', content: 'ok' },
          { path, content: 'pwned' },
        ]),
      );
      expect(err.code).toBe('PATH_INVALID');
      expect(readTree(env.base)).toEqual(before);
    },
  );

  it('refuses a path changed twice, or a file under a file', () => {
    const ws = env.workspace();
    expect(
      errorOf(() =>
        ws.applyChanges([
          { path: 'x', content: '1' },
          { path: 'x', content: '2' },
        ]),
      ).code,
    ).toBe('PATH_INVALID');
    expect(errorOf(() => ws.applyChanges([{ path: 'README.md/inner', content: '1' }])).code).toBe(
      'PATH_INVALID',
    );
  });

  it('enforces 16 changes and 64 KiB per content, and no file count', () => {
    const ws = env.workspace();
    const before = readTree(env.root);
    const seventeen = Array.from({ length: 17 }, (_, i) => ({ path: `n${i}.txt`, content: 'x' }));
    expect(errorOf(() => ws.applyChanges(seventeen)).code).toBe('TOO_MANY_FILES');
    expect(ws.applyChanges(seventeen.slice(0, 16)).changedFiles).toHaveLength(16);
    expect(
      errorOf(() => ws.applyChanges([{ path: 'big.txt', content: 'x'.repeat(64 * 1024 + 1) }]))
        .code,
    ).toBe('TOO_LARGE');
    // Multi-byte characters count as their UTF-8 bytes.
    expect(
      errorOf(() => ws.applyChanges([{ path: 'big.txt', content: 'é'.repeat(32 * 1024 + 1) }]))
        .code,
    ).toBe('TOO_LARGE');
    expect(
      ws.applyChanges([{ path: 'big.txt', content: 'x'.repeat(64 * 1024) }]).changedFiles,
    ).toEqual(['big.txt']);

    // A project is not limited to 128 files: the bound is on the event, not the folder.
    const filler: Record<string, string> = {};
    for (let i = 0; i < 200; i++) filler[`fill/${i}.txt`] = String(i);
    writeTree(env.root, filler);
    expect(ws.applyChanges([{ path: 'one-more.txt', content: 'x' }]).files.length).toBeGreaterThan(
      200,
    );
    expect(Object.keys(before).length).toBeLessThan(Object.keys(readTree(env.root)).length);
  });

  it('treats rewriting identical content as no change', () => {
    const ws = env.workspace();
    const state = ws.scan();
    const result = ws.applyChanges([
      { path: 'src/a.ts', content: 'a1', expectedContentHash: hashOf(ws, 'src/a.ts') },
    ]);
    expect(result.changedFiles).toEqual([]);
    expect(result.files).toEqual(state);
  });
});

describe('journal', () => {
  it('writes its body as exactly the canonical JSON the reader checks', () => {
    const hash = digest('x');
    const body: JournalBody = {
      version: 2,
      projectId: 'p1',
      action: 'RESTORE',
      rootReal: '/tmp/a "quoted" folder/é',
      target: { contentHash: hash, fileCount: 4 },
      ops: [
        { op: 'delete', path: 'gone/\u2028.txt' },
        { op: 'write', path: 'a.txt', contentHash: hash, byteLength: 0 },
        { op: 'write', path: 'bin/run', contentHash: hash, byteLength: 12, executable: true },
        { op: 'link', path: 'l', contentHash: hash, byteLength: 3 },
        { op: 'chmod', path: 'a.txt', executable: false },
      ],
    };
    expect(journalBodyText(body)).toBe(canonicalJson(body));
    expect(() =>
      journalBodyText({
        ...body,
        ops: [{ op: 'link', path: 'l', contentHash: hash, byteLength: 0.5 }],
      }),
    ).toThrow(TypeError);
  });

  it('refuses a new change while an interrupted one is pending, and recover() completes it', () => {
    writeTree(env.root, { 'a.txt': 'a' });
    const crashing = env.workspace((step) => {
      if (step === 'journal-written') throw new Error('crash');
    });
    expect(() => crashing.applyChanges([{ path: 'a.txt', content: 'b' }])).toThrow('crash');
    const ws = env.workspace();
    expect(ws.hasPendingJournal()).toBe(true);
    expect(errorOf(() => ws.applyChanges([{ path: 'a.txt', content: 'c' }])).code).toBe('IO');
    expect(ws.recover()).toEqual({ rolledForward: true });
    expect(ws.readFile('a.txt')).toBe('b');
    expect(ws.recover()).toEqual({ rolledForward: false });
  });

  it('keeps the journal outside the project folder', () => {
    writeTree(env.root, { 'a.txt': 'a' });
    const seen: string[][] = [];
    const ws = env.workspace((step) => {
      if (step === 'journal-written')
        seen.push(fs.readdirSync(env.journalDir), Object.keys(readTree(env.root)));
    });
    ws.applyChanges([{ path: 'a.txt', content: 'b' }]);
    expect(seen[0]).toEqual(['p1.journal.json']);
    expect(seen[1]).toEqual(['a.txt']);
  });

  it('refuses to act on a damaged journal', () => {
    writeTree(env.root, { 'a.txt': 'a' });
    const crashing = env.workspace((step) => {
      if (step === 'journal-written') throw new Error('crash');
    });
    expect(() => crashing.applyChanges([{ path: 'a.txt', content: 'b' }])).toThrow('crash');
    const journal = join(env.journalDir, 'p1.journal.json');
    fs.writeFileSync(journal, fs.readFileSync(journal, 'utf8').replace('"a.txt"', '"../a.txt"'));
    expect(errorOf(() => env.workspace().recover()).code).toBe('JOURNAL_CORRUPT');
    fs.writeFileSync(journal, '{"body":');
    expect(errorOf(() => env.workspace().recover()).code).toBe('JOURNAL_CORRUPT');
    expect(readTree(env.root)).toEqual({ 'a.txt': 'a' });
  });

  it('refuses a project id that cannot name a file', () => {
    expect(
      errorOf(
        () =>
          new ProjectWorkspace({
            projectId: '../x',
            root: env.root,
            contentStore: env.store,
            journalDir: env.journalDir,
          }),
      ).code,
    ).toBe('PATH_INVALID');
  });
});
