import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TreeScanner } from './scanTree.ts';
import { makeTempEnv, writeTree, type TempEnv } from './testKit.ts';

let env: TempEnv;
let scanner: TreeScanner;

beforeEach(() => {
  env = makeTempEnv();
  const files: Record<string, string> = {
    '.gitignore': 'build/\n',
    'build/out.js': 'built\n',
    's/.gitignore': '*.log\n',
    's/keep.log': 'a log\n',
  };
  for (let i = 0; i < 30; i++) files[`s/${i % 3}/${i}.txt`] = `file ${i}\n`;
  writeTree(env.root, files);
  ageAll();
  scanner = new TreeScanner(env.root, { maxFileBytes: 1 << 20, patterns: {} });
});
afterEach(() => env.dispose());

/** Moves every mtime (files and directories) 10 s back: caches trust only what is older than 1 s. */
function ageAll(): void {
  const past = new Date(Date.now() - 10_000);
  const visit = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = join(dir, e.name);
      if (e.isDirectory()) visit(abs);
      fs.utimesSync(abs, past, past);
    }
  };
  visit(env.root);
  fs.utimesSync(env.root, past, past);
}

/** What a scanner with no cache at all sees. */
const fresh = () => new TreeScanner(env.root, { maxFileBytes: 1 << 20, patterns: {} }).scan({});
const paths = (scan: { files: { path: string }[] }) => scan.files.map((f) => f.path);

describe('the directory listing cache', () => {
  it('lists only the directories whose entries changed', () => {
    // root, s, s/0, s/1, s/2 (build/ is ignored, never entered)
    expect(scanner.scan({}).dirsListed).toBe(5);
    expect(scanner.scan({}).dirsListed).toBe(0);

    fs.writeFileSync(join(env.root, 's/1/new.txt'), 'new\n');
    const afterAdd = scanner.scan({});
    expect(afterAdd.dirsListed).toBe(1);
    expect(paths(afterAdd)).toContain('s/1/new.txt');
    expect(afterAdd.files).toEqual(fresh().files);
  });

  it('sees deletions, renames, new directories and a directory turned into a file', () => {
    scanner.scan({});
    fs.rmSync(join(env.root, 's/0/0.txt'));
    fs.renameSync(join(env.root, 's/2/2.txt'), join(env.root, 's/2/two.txt'));
    fs.mkdirSync(join(env.root, 's/1/deeper'));
    fs.writeFileSync(join(env.root, 's/1/deeper/d.txt'), 'deep\n');
    fs.rmSync(join(env.root, 's/0'), { recursive: true });
    fs.writeFileSync(join(env.root, 's/0'), 's/0 is a file now\n');
    const scan = scanner.scan({});
    expect(scan.files).toEqual(fresh().files);
    expect(paths(scan)).toContain('s/1/deeper/d.txt');
    expect(paths(scan)).toContain('s/2/two.txt');
    expect(paths(scan)).toContain('s/0');
    expect(paths(scan).some((p) => p.startsWith('s/0/'))).toBe(false);
  });

  it('decides again when an ignore file above an unchanged directory is edited', () => {
    const before = scanner.scan({});
    expect(paths(before)).not.toContain('s/keep.log');
    expect(paths(before)).not.toContain('build/out.js');
    // Editing a file in place leaves its directory's mtime alone: only the layer tells.
    const sDir = fs.statSync(join(env.root, 's'));
    fs.writeFileSync(join(env.root, 's/.gitignore'), '*.tmp\n');
    fs.writeFileSync(join(env.root, '.gitignore'), 'nothing\n');
    expect(fs.statSync(join(env.root, 's')).mtimeMs).toBe(sDir.mtimeMs);
    const after = scanner.scan({});
    expect(paths(after)).toContain('s/keep.log');
    expect(paths(after)).toContain('build/out.js');
    expect(after.files).toEqual(fresh().files);
  });

  it('never walks through a directory swapped for a link', () => {
    scanner.scan({});
    const outside = join(env.base, 'outside');
    writeTree(outside, { 'secret.txt': 'outside the project\n' });
    fs.rmSync(join(env.root, 's/1'), { recursive: true });
    fs.symlinkSync(outside, join(env.root, 's/1'));
    const scan = scanner.scan({});
    expect(paths(scan).some((p) => p.startsWith('s/1/'))).toBe(false);
    expect(scan.files.find((f) => f.path === 's/1')?.kind).toBe('SYMLINK');
    expect(scan.files).toEqual(fresh().files);
  });
});
