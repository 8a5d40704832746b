import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalManifestHash, type ManifestFile } from './manifest.ts';
import type { ProjectWorkspace, WorkspaceChange } from './ProjectWorkspace.ts';
import { makeTempEnv, readTree, writeTree, type TempEnv } from './testKit.ts';

/** Thrown by the fault injector: stands for the process dying at that step. */
class Crash extends Error {}

const INITIAL = {
  'package.json': '{"name":"demo"}\n',
  'keep.md': 'unchanged\n',
  'src/a.ts': 'a1\n',
  'src/b.ts': 'b1\n',
  'lib/x.ts': 'x\n',
  'lib/y.ts': 'y\n',
  'old/deep/z.md': 'z\n',
};

/** A checkpoint that edits, deletes (emptying two directories), adds under new directories and turns `lib/` into a file. */
const CHECKPOINT = {
  'package.json': '{"name":"demo","version":"2.0.0"}\n',
  'keep.md': 'unchanged\n',
  'src/a.ts': 'a2\n',
  lib: 'lib is a file now\n',
  'new/deep/n.ts': 'n\n',
  'new/m.ts': 'm\n',
};

const CHANGES: WorkspaceChange[] = [
  { path: 'src/a.ts', content: 'a2\n' },
  { path: 'src/b.ts', content: null },
  { path: 'old/deep/z.md', content: null },
  { path: 'new/deep/n.ts', content: 'n\n', expectedContentHash: 'ABSENT' },
  { path: 'lib/x.ts', content: 'x2\n' },
];

let env: TempEnv;
beforeEach(() => {
  env = makeTempEnv();
});
afterEach(() => env.dispose());

type Operation = (ws: ProjectWorkspace) => unknown;

/** Sets up INITIAL (with CHECKPOINT's blobs stored) and returns the operation to crash. */
function prepare(kind: 'restore' | 'applyChanges'): Operation {
  if (kind === 'applyChanges') {
    writeTree(env.root, INITIAL);
    return (ws) => ws.applyChanges(CHANGES);
  }
  writeTree(env.root, CHECKPOINT);
  const checkpoint = env.workspace().snapshot();
  fs.rmSync(env.root, { recursive: true });
  writeTree(env.root, INITIAL);
  return (ws) => ws.restore(checkpoint.files);
}

function stepsOf(kind: 'restore' | 'applyChanges'): string[] {
  const steps: string[] = [];
  const op = prepare(kind);
  op(env.workspace((step) => steps.push(step)));
  env.dispose();
  env = makeTempEnv();
  return steps;
}

/** The folder before and after an uninterrupted run. */
function referenceTrees(kind: 'restore' | 'applyChanges') {
  const op = prepare(kind);
  const before = readTree(env.root);
  const beforeHash = scanHash(env.workspace());
  op(env.workspace());
  const after = readTree(env.root);
  const afterHash = scanHash(env.workspace());
  env.dispose();
  env = makeTempEnv();
  return { before, after, beforeHash, afterHash };
}

function scanHash(ws: ProjectWorkspace): string {
  return canonicalManifestHash(ws.scan());
}

const journalEntries = () => (fs.existsSync(env.journalDir) ? fs.readdirSync(env.journalDir) : []);

describe.each(['restore', 'applyChanges'] as const)('a crash during %s', (kind) => {
  const steps = (() => {
    const local = makeTempEnv();
    const saved = env;
    env = local;
    try {
      return stepsOf(kind);
    } finally {
      env.dispose();
      env = saved;
    }
  })();

  it('passes through every named step', () => {
    expect(steps[0]).toBe('validated');
    expect(steps).toContain('journal-written');
    expect(steps.filter((s) => s.startsWith('file-renamed:')).length).toBeGreaterThanOrEqual(3);
    expect(steps.filter((s) => s.startsWith('file-deleted:')).length).toBeGreaterThanOrEqual(2);
    expect(steps.at(-1)).toBe('journal-deleted');
  });

  it.each(steps.map((step, index) => [index, step] as const))(
    'at step %i (%s) recovers to wholly before or wholly after',
    (index, step) => {
      const { before, after, beforeHash, afterHash } = referenceTrees(kind);
      expect(afterHash).not.toBe(beforeHash);
      const op = prepare(kind);
      let crashed = false;
      const crashing = env.workspace((s) => {
        if (!crashed && s === step) {
          crashed = true;
          throw new Crash(s);
        }
      });
      expect(() => op(crashing)).toThrow(Crash);

      const fresh = env.workspace();
      const committed = index >= steps.indexOf('journal-written');
      const journalGone = step === 'journal-deleted';
      expect(fresh.hasPendingJournal()).toBe(committed && !journalGone);
      expect(fresh.recover()).toEqual({ rolledForward: committed && !journalGone });
      expect(fresh.hasPendingJournal()).toBe(false);

      expect(scanHash(fresh)).toBe(committed ? afterHash : beforeHash);
      // Stronger than the hash: directories and stray temp files count too.
      expect(readTree(env.root)).toEqual(committed ? after : before);
      expect(journalEntries()).toEqual([]);
    },
  );

  it('recovers even when recovery itself is interrupted at any of its steps', () => {
    const { after } = referenceTrees(kind);
    const firstRename = steps.find((s) => s.startsWith('file-renamed:'));
    const recoverySteps: string[] = [];
    {
      const op = prepare(kind);
      expect(() =>
        op(
          env.workspace((s) => {
            if (s === firstRename) throw new Crash(s);
          }),
        ),
      ).toThrow(Crash);
      env.workspace((s) => recoverySteps.push(s)).recover();
      env.dispose();
      env = makeTempEnv();
    }
    expect(recoverySteps.length).toBeGreaterThan(3);

    for (const step of recoverySteps) {
      const op = prepare(kind);
      expect(() =>
        op(
          env.workspace((s) => {
            if (s === firstRename) throw new Crash(s);
          }),
        ),
      ).toThrow(Crash);
      expect(() =>
        env
          .workspace((s) => {
            if (s === step) throw new Crash(s);
          })
          .recover(),
      ).toThrow(Crash);
      env.workspace().recover();
      expect(readTree(env.root), `interrupted recovery at ${step}`).toEqual(after);
      env.dispose();
      env = makeTempEnv();
    }
  });
});

describe('a crash in the middle of writing a file created in place', () => {
  it('leaves a torn file that recovery finds not applied and replaces', () => {
    const { after } = referenceTrees('restore');
    const op = prepare('restore');
    // new/deep/n.ts did not exist: it is written under its final name, not staged and renamed.
    expect(() =>
      op(
        env.workspace((s) => {
          if (s === 'file-staged:new/deep/n.ts') throw new Crash(s);
        }),
      ),
    ).toThrow(Crash);
    expect(readTree(env.root)['new/deep/n.ts']).toBe('n\n');
    // As if the process had died halfway through the write (and before the execute bit).
    fs.writeFileSync(`${env.root}/new/deep/n.ts`, '');
    const fresh = env.workspace();
    expect(fresh.recover()).toEqual({ rolledForward: true });
    expect(readTree(env.root)).toEqual(after);
  });
});

describe('a real process death (SIGKILL) during restore', () => {
  const child = fileURLToPath(new URL('./restoreCrashChild.ts', import.meta.url));

  it.each([
    ['journal-temp-written', 'before'],
    ['file-renamed:new/deep/n.ts', 'after'],
    ['before-journal-delete', 'after'],
  ] as const)('killed at %s recovers to wholly %s', (step, expected) => {
    const { before, after } = referenceTrees('restore');
    writeTree(env.root, CHECKPOINT);
    const files: ManifestFile[] = env.workspace().snapshot().files;
    fs.rmSync(env.root, { recursive: true });
    writeTree(env.root, INITIAL);

    const job = {
      root: env.root,
      journalDir: env.journalDir,
      storeDir: env.store.dir,
      step,
      restore: files,
    };
    const result = spawnSync(process.execPath, ['--import', 'tsx', child, JSON.stringify(job)], {
      cwd: process.cwd(),
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.signal).toBe('SIGKILL');

    const fresh = env.workspace();
    expect(fresh.recover()).toEqual({ rolledForward: expected === 'after' });
    expect(readTree(env.root)).toEqual(expected === 'after' ? after : before);
  });
});

describe('recovery never follows a swapped directory symlink', () => {
  /** Commits a journal (crash right after the commit point) that deletes and writes under src/. */
  function crashAfterCommit(): void {
    writeTree(env.root, { 'src/a.ts': 'a1\n', 'src/b.ts': 'b1\n', 'keep.md': 'k\n' });
    const ws = env.workspace((s) => {
      if (s === 'journal-written') throw new Crash(s);
    });
    expect(() =>
      ws.applyChanges([
        { path: 'src/a.ts', content: null },
        { path: 'src/b.ts', content: 'b2\n' },
        { path: 'src/new/c.ts', content: 'c\n' },
      ]),
    ).toThrow(Crash);
    expect(env.workspace().hasPendingJournal()).toBe(true);
  }

  it('refuses to delete, rename or write through src/ once it points outside, and keeps the journal', () => {
    crashAfterCommit();
    const outside = `${env.base}/victim`;
    writeTree(outside, { 'a.ts': 'precious a\n', 'b.ts': 'precious b\n' });
    fs.rmSync(`${env.root}/src`, { recursive: true });
    fs.symlinkSync(outside, `${env.root}/src`);
    const before = readTree(outside);

    const fresh = env.workspace();
    expect(() => fresh.recover()).toThrow(/symbolic link/);
    expect(readTree(outside)).toEqual(before);
    expect(fs.existsSync(`${outside}/new`)).toBe(false);
    expect(fresh.hasPendingJournal()).toBe(true);
  });

  it('refuses a crafted journal for a project folder that was swapped for a link elsewhere', () => {
    crashAfterCommit();
    const elsewhere = `${env.base}/elsewhere`;
    writeTree(elsewhere, { 'src/a.ts': 'not the project\n' });
    fs.rmSync(env.root, { recursive: true });
    fs.symlinkSync(elsewhere, env.root);
    expect(() => env.workspace().recover()).toThrow(/not the one/);
    expect(readTree(elsewhere)).toEqual({ src: '<dir>', 'src/a.ts': 'not the project\n' });
  });
});

// The 2,000-file tree, killed with a real SIGKILL: ProjectWorkspace.crash2000.test.ts.
