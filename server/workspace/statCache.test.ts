import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TEMP_PREFIX } from './durableFs.ts';
import { canonicalManifestHash, sha256Digest } from './manifest.ts';
import { TreeScanner } from './scanTree.ts';
import { makeTempEnv, writeTree, type TempEnv } from './testKit.ts';

let env: TempEnv;
let cacheFile: string;
const FILES = 200;

beforeEach(() => {
  env = makeTempEnv();
  cacheFile = join(env.base, 'data', 'stat-cache', 'p1.tsv');
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) files[`s/${i % 7}/${i}.txt`] = `file ${i}\n`;
  writeTree(env.root, files);
  fs.symlinkSync('0/0.txt', join(env.root, 's', 'link'));
  fs.chmodSync(join(env.root, 's/1/1.txt'), 0o755);
  ageAll();
});
afterEach(() => env.dispose());

/** Moves every mtime 10 s back: the cache trusts only files older than 1 s. */
function ageAll(): void {
  const past = new Date(Date.now() - 10_000);
  const visit = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const abs = join(dir, e.name);
      if (e.isDirectory()) visit(abs);
      else if (e.isSymbolicLink()) fs.lutimesSync(abs, past, past);
      else fs.utimesSync(abs, past, past);
    }
  };
  visit(env.root);
}

/** A scanner as a freshly started studio process makes it. */
const restarted = (maxFileBytes = 1 << 20) =>
  new TreeScanner(env.root, { maxFileBytes, patterns: {}, cacheFile });

describe('the stat cache across restarts', () => {
  it('lets the first scan after a restart read only what changed', () => {
    const first = restarted().scan({});
    expect(first.filesRead).toBe(FILES + 1);
    expect(fs.existsSync(cacheFile)).toBe(true);

    const again = restarted().scan({});
    expect(again.filesRead).toBe(0);
    expect(again.files).toEqual(first.files);
    expect(canonicalManifestHash(again.files)).toBe(canonicalManifestHash(first.files));

    fs.writeFileSync(join(env.root, 's/3/3.txt'), 'edited while the studio was down\n');
    const third = restarted().scan({});
    expect(third.filesRead).toBe(1);
    expect(third.files.find((f) => f.path === 's/3/3.txt')?.contentHash).toBe(
      sha256Digest('edited while the studio was down\n'),
    );
  });

  it('re-reads a file edited at the same size with its mtime set back (ctime moved)', () => {
    const path = join(env.root, 's/2/2.txt');
    const before = fs.statSync(path);
    restarted().scan({});
    fs.writeFileSync(path, 'FILE 2\n'); // same length as 'file 2\n'
    fs.utimesSync(path, before.atime, before.mtime);
    expect(fs.statSync(path).mtimeMs).toBe(before.mtimeMs);
    const scan = restarted().scan({});
    expect(scan.filesRead).toBe(1);
    expect(scan.files.find((f) => f.path === 's/2/2.txt')?.contentHash).toBe(
      sha256Digest('FILE 2\n'),
    );
  });

  it('ignores a torn or damaged file and reads everything again, then rewrites it', () => {
    const good = restarted().scan({});
    const text = fs.readFileSync(cacheFile);
    fs.writeFileSync(cacheFile, text.subarray(0, Math.floor(text.length / 2)));
    const afterTear = restarted().scan({});
    expect(afterTear.filesRead).toBe(FILES + 1);
    expect(afterTear.files).toEqual(good.files);

    // Same length, one byte of one entry's hash changed: the checksum refuses it.
    const whole = fs.readFileSync(cacheFile, 'utf8');
    const at = whole.indexOf('sha256:', whole.indexOf('\n')) + 7;
    fs.writeFileSync(
      cacheFile,
      whole.slice(0, at) + (whole[at] === '0' ? '1' : '0') + whole.slice(at + 1),
    );
    const afterFlip = restarted().scan({});
    expect(afterFlip.filesRead).toBe(FILES + 1);
    expect(afterFlip.files).toEqual(good.files);
    expect(restarted().scan({}).filesRead).toBe(0);
  });

  it('is not used for another folder, a replaced folder or another cap', () => {
    restarted().scan({});
    expect(restarted(1 << 10).scan({}).filesRead).toBe(FILES + 1);

    // The folder replaced by a copy with the same paths, sizes and times (new inodes).
    restarted().scan({});
    const copy = `${env.root}-copy`;
    fs.cpSync(env.root, copy, {
      recursive: true,
      preserveTimestamps: true,
      verbatimSymlinks: true,
    });
    fs.rmSync(env.root, { recursive: true });
    fs.renameSync(copy, env.root);
    expect(restarted().scan({}).filesRead).toBe(FILES + 1);
  });

  it('sweeps a temp file a crash mid-write left and keeps the intact cache', () => {
    restarted().scan({});
    const leftover = `${cacheFile}.${TEMP_PREFIX}123-abc`;
    fs.writeFileSync(leftover, '{"version":1,"rootReal":');
    expect(restarted().scan({}).filesRead).toBe(0);
    expect(fs.existsSync(leftover)).toBe(false);
  });

  it('is kept by a ProjectWorkspace beside its journal in the data dir, never in the folder', () => {
    const first = env.workspace().snapshot();
    const file = join(`${env.journalDir}.stat-cache`, 'p1.tsv');
    expect(fs.existsSync(file)).toBe(true);
    expect(fs.readdirSync(env.root).some((n) => n.includes('stat-cache'))).toBe(false);
    // A restarted workspace trusts it for the unchanged files and still sees the change.
    fs.writeFileSync(join(env.root, 's/4/4.txt'), 'changed\n');
    const second = env.workspace().snapshot();
    expect(second.contentHash).not.toBe(first.contentHash);
    expect(second.files.find((f) => f.path === 's/4/4.txt')?.contentHash).toBe(
      sha256Digest('changed\n'),
    );
    expect(second.files.filter((f) => f.path !== 's/4/4.txt')).toEqual(
      first.files.filter((f) => f.path !== 's/4/4.txt'),
    );
  });
});
