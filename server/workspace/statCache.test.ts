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

/** Moves one file's mtime 10 s back (its ctime stays now). */
function age(path: string): void {
  const past = new Date(Date.now() - 10_000);
  fs.utimesSync(path, past, past);
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

  it('appends a scan that changed a few entries to a log instead of rewriting the file', () => {
    restarted().scan({});
    const base = fs.readFileSync(cacheFile, 'utf8');
    const edited = join(env.root, 's/5/5.txt');
    fs.writeFileSync(edited, 'edited, logged\n');
    age(edited);
    fs.rmSync(join(env.root, 's/6/6.txt'));
    const scan = restarted().scan({});
    expect(scan.filesRead).toBe(1);
    expect(fs.readFileSync(cacheFile, 'utf8')).toBe(base);
    const log = fs.readFileSync(`${cacheFile}.log`, 'utf8').split('\n');
    expect(log).toHaveLength(4); // header, one drop, one entry, and the final newline
    // A restarted scanner applies the log: nothing to read, the edit and the deletion known.
    const again = restarted().scan({});
    expect(again.filesRead).toBe(0);
    expect(again.files).toEqual(scan.files);
    expect(again.files.find((f) => f.path === 's/5/5.txt')?.contentHash).toBe(
      sha256Digest('edited, logged\n'),
    );
  });

  it('applies a log up to a torn line, and ignores a log of another base', () => {
    restarted().scan({});
    for (const i of [3, 4]) {
      fs.writeFileSync(join(env.root, `s/${i}/${i}.txt`), `edit ${i}\n`);
      age(join(env.root, `s/${i}/${i}.txt`));
    }
    const good = restarted().scan({});
    const logFile = `${cacheFile}.log`;
    const log = fs.readFileSync(logFile, 'utf8');
    // The last entry torn mid-line: the first still counts, the torn one is read again.
    fs.writeFileSync(logFile, log.slice(0, log.length - 20));
    const afterTear = restarted().scan({});
    expect(afterTear.filesRead).toBe(1);
    expect(afterTear.files).toEqual(good.files);
    // A log whose header names another base file: both edited files are read again, and a new
    // log for the base on disk replaces it.
    fs.writeFileSync(logFile, log.replace(/"base":"[0-9a-f]{4}/, '"base":"ffff'));
    const otherBase = restarted().scan({});
    expect(otherBase.filesRead).toBe(2);
    expect(otherBase.files).toEqual(good.files);
    expect(fs.readFileSync(logFile, 'utf8')).not.toContain('"base":"ffff');
    expect(restarted().scan({}).filesRead).toBe(0);
  });
});
