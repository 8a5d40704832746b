import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ContentStore } from './contentStore.ts';
import type { ManifestFile } from './manifest.ts';
import { ProjectWorkspace, type WorkspaceChange } from './ProjectWorkspace.ts';
import { readTree, writeTree } from './testKit.ts';

/**
 * Real process death on a 2,000-file project: a child process (restoreCrashChild.ts) runs the
 * change and SIGKILLs itself at a named step; this process then recovers and compares the whole
 * folder (files, directories, stray temp files) with the tree before or after the change.
 *
 * Every step name is killed at: every phase step, and each per-file step (`file-deleted:`,
 * `file-staged:`, `file-renamed:`) at its first, middle and last file. Every per-file step of
 * every path is covered on the small tree in ProjectWorkspace.crash.test.ts; here one spawn per
 * step keeps the file at about 40 s on two cores (80 s under a load of 15).
 */
const CHILD = fileURLToPath(new URL('./restoreCrashChild.ts', import.meta.url));
const TRIAL_TIMEOUT = 60_000;

// A RAM-backed folder when there is one: the same rename/unlink semantics the crash protocol
// rests on, without the shared disk's ~1 ms per created file (2,000 files per trial). A SIGKILL
// is a process death, not a power cut, so no fsync matters here.
const tmpRoot = (() => {
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    return '/dev/shm';
  } catch {
    return os.tmpdir();
  }
})();
const base = fs.mkdtempSync(join(tmpRoot, 'studio-crash2000-'));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));
const storeDir = join(base, 'blobs');
const template = join(base, 'template');
let trials = 0;

const big = (round: string) => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 2000; i++) files[`src/d${i % 40}/f${i}.ts`] = `${round} ${i}\n`;
  return files;
};

const workspace = (root: string, journalDir: string, faultInjector?: (s: string) => void) =>
  new ProjectWorkspace({
    projectId: 'p1',
    root,
    contentStore: new ContentStore(storeDir),
    journalDir,
    faultInjector,
  });

/** A fresh copy of the tree before the change, with its own journal dir. */
function freshCopy(): { root: string; journalDir: string; dir: string } {
  const dir = join(base, `trial-${trials++}`);
  const root = join(dir, 'project');
  fs.cpSync(template, root, { recursive: true, verbatimSymlinks: true });
  return { root, journalDir: join(dir, 'journal'), dir };
}

// The checkpoint to restore: 1,000 files changed, 500 deleted, 500 added under new folders, an
// executable turned plain, a link added.
const restoreTarget: ManifestFile[] = (() => {
  const files = big('target');
  for (let i = 0; i < 500; i++) delete files[`src/d${i % 40}/f${i}.ts`];
  for (let i = 0; i < 500; i++) files[`added/g${i % 10}/n${i}.ts`] = `added ${i}\n`;
  for (let i = 1500; i < 2000; i++) files[`src/d${i % 40}/f${i}.ts`] = `current ${i}\n`;
  const root = join(base, 'target');
  writeTree(root, files);
  fs.symlinkSync('../src/d1/f1001.ts', join(root, 'added', 'link.ts'));
  return workspace(root, join(base, 'target-journal')).snapshot().files;
})();
writeTree(template, big('current'));
fs.chmodSync(join(template, 'src/d27/f1507.ts'), 0o755);

// A patch on the same 2,000-file tree: deletes (one emptying a folder), an edit, adds.
fs.mkdirSync(join(template, 'lonely'));
fs.writeFileSync(join(template, 'lonely', 'only.ts'), 'only\n');
const PATCH: WorkspaceChange[] = [
  { path: 'lonely/only.ts', content: null },
  { path: 'src/d3/f3.ts', content: null },
  { path: 'src/d4/f4.ts', content: 'edited 4\n' },
  { path: 'new/deep/n.ts', content: 'n\n', expectedContentHash: 'ABSENT' },
  { path: 'new/m.ts', content: 'm\n' },
];

type Kind = 'restore' | 'applyChanges';
const run = (kind: Kind, ws: ProjectWorkspace) =>
  kind === 'restore' ? ws.restore(restoreTarget) : ws.applyChanges(PATCH);

/** Every step of an uninterrupted run, and the folder before and after it. */
function reference(kind: Kind) {
  const copy = freshCopy();
  const steps: string[] = [];
  const before = readTree(copy.root);
  run(
    kind,
    workspace(copy.root, copy.journalDir, (s) => steps.push(s)),
  );
  const after = readTree(copy.root);
  fs.rmSync(copy.dir, { recursive: true });
  return { steps, before, after };
}

/** Phase steps, and each per-file step name at its first, middle and last path. */
function chosen(steps: readonly string[]): string[] {
  const out = steps.filter((s) => !s.includes(':'));
  for (const prefix of ['file-deleted:', 'file-staged:', 'file-renamed:']) {
    const of = steps.filter((s) => s.startsWith(prefix));
    for (const s of new Set([of[0], of[Math.floor(of.length / 2)], of.at(-1)]))
      if (s !== undefined) out.push(s);
  }
  return out;
}

/** Runs `job` in a child that SIGKILLs itself at `step`; fails if the step was never reached. */
function killAt(step: string, job: Record<string, unknown>, dir: string): void {
  const jobFile = join(dir, `job-${step.replace(/[^a-z0-9]+/gi, '_')}.json`);
  fs.writeFileSync(jobFile, JSON.stringify({ ...job, storeDir, step }));
  const result = spawnSync(process.execPath, ['--import', 'tsx', CHILD, `@${jobFile}`], {
    cwd: process.cwd(),
    encoding: 'utf8',
  });
  expect(result.stderr).toBe('');
  expect(result.signal, `the child reached ${step}`).toBe('SIGKILL');
}

describe.each(['restore', 'applyChanges'] as const)(
  'a real SIGKILL during a %s on 2,000 files',
  (kind) => {
    const { steps, before, after } = reference(kind);
    const picked = kind === 'restore' ? chosen(steps) : steps;

    it('passes through every phase, with per-file steps for thousands of files', () => {
      expect(before).not.toEqual(after);
      expect(steps[0]).toBe('validated');
      expect(steps).toEqual(
        expect.arrayContaining(['journal-written', 'dirs-removed', 'flushed', 'journal-deleted']),
      );
      if (kind === 'restore') {
        expect(steps.filter((s) => s.startsWith('file-deleted:'))).toHaveLength(501);
        expect(steps.filter((s) => s.startsWith('file-renamed:')).length).toBeGreaterThan(1500);
      }
    });

    it.each(picked)(
      'killed at %s recovers to wholly before or wholly after',
      (step) => {
        const copy = freshCopy();
        const job = kind === 'restore' ? { restore: restoreTarget } : { changes: PATCH };
        killAt(step, { root: copy.root, journalDir: copy.journalDir, ...job }, copy.dir);

        const committed = steps.indexOf(step) >= steps.indexOf('journal-written');
        const journalLeft = committed && step !== 'journal-deleted';
        const fresh = workspace(copy.root, copy.journalDir);
        expect(fresh.hasPendingJournal()).toBe(journalLeft);
        expect(fresh.recover()).toEqual({ rolledForward: journalLeft });
        expect(readTree(copy.root)).toEqual(committed ? after : before);
        expect(fs.existsSync(copy.journalDir) ? fs.readdirSync(copy.journalDir) : []).toEqual([]);
        fs.rmSync(copy.dir, { recursive: true });
      },
      TRIAL_TIMEOUT,
    );
  },
);

describe('a real SIGKILL during recovery of a 2,000-file restore', () => {
  const { steps, after } = reference('restore');
  const interruptedAt = steps.filter((s) => s.startsWith('file-renamed:'))[700] ?? '';

  it.each([
    steps.filter((s) => s.startsWith('file-deleted:'))[250] ?? '',
    steps.filter((s) => s.startsWith('file-renamed:'))[1200] ?? '',
    'flushed',
  ])(
    'a recovery killed at %s is finished by the next one',
    (recoveryStep) => {
      const copy = freshCopy();
      const paths = { root: copy.root, journalDir: copy.journalDir };
      killAt(interruptedAt, { ...paths, restore: restoreTarget }, copy.dir);
      killAt(recoveryStep, { ...paths, recover: true }, copy.dir);
      const fresh = workspace(copy.root, copy.journalDir);
      expect(fresh.recover()).toEqual({ rolledForward: true });
      expect(readTree(copy.root)).toEqual(after);
      fs.rmSync(copy.dir, { recursive: true });
    },
    TRIAL_TIMEOUT,
  );
});
