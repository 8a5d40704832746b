/**
 * `npm run bench:checkpoints`: the studio's checkpoints against a shadow git repository (issue 8).
 *
 * Builds two identical trees in a temp dir (20,000 files, about 300 MB: source-like text, some
 * binaries, a node_modules folder that .gitignore excludes, symlinks, an executable), then runs,
 * on one tree, the studio's ProjectWorkspace in a child process (checkpointBenchStudio.ts, bundled
 * by esbuild and run by plain node, as `npm start` runs the server) and,
 * on the other, the git CLI with a separate git dir (`git add -A && git commit`, `git checkout`),
 * the way Cline and Roo keep their shadow repositories. Both do the same steps: first
 * checkpoint, checkpoint after one file changed, after 1,000 files changed, restore of one file,
 * restore of the whole tree; then store size on disk and peak RSS. Figures are printed side by
 * side with the targets (every figure at most 1.5x git's, the one-file checkpoint under 100 ms,
 * RSS under 200 MB). A miss is printed, never an exit code: this is a benchmark, not a test.
 * The two sides run step by step, alternating which goes first, each step after a `sync`: both
 * meet the same load on a shared machine, and neither pays for the other's dirty pages.
 *
 * The one-file steps (checkpoint after one file changed, restore of one file) are run
 * BENCH_REPEAT times (default 3, a different file each time, the sides alternating on every
 * run) and their median is the figure: one measurement of a 100-300 ms step moves by 2x on
 * the shared machine.
 *
 * The studio side watches its folder and checkpoints through `syncedSnapshot()` (the server's
 * way): below the table, every checkpoint run says which path it took (the watcher's dirty paths
 * or a full scan, and why) and how its time split (cookie wait, tree walk, the rest: manifest
 * text and hash, delta and durable write).
 *
 * Env: BENCH_FILES (default 20000), BENCH_MB (default 300), BENCH_KEEP=1 keeps the temp dir,
 * BENCH_PROFILE=<dir> writes a CPU profile of the studio side there (`node --cpu-prof`),
 * BENCH_WATCH=0 runs the studio side without its folder watcher (every checkpoint a full scan),
 * BENCH_MEMTRACE=1 has the studio side print its memory (RSS, V8 heap, ArrayBuffers) to stderr
 * before and after each step, at each named step of a restore and every 2,000 files it writes.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import {
  buildBenchTree,
  changeFiles,
  roundOf,
  wipeTracked,
  type BenchTree,
} from './checkpointBenchTree.ts';

const FILES = Number(process.env.BENCH_FILES ?? 20000);
const MB = Number(process.env.BENCH_MB ?? 300);
const REPEAT = Math.max(1, Number(process.env.BENCH_REPEAT ?? 3));
/** Steps that are run REPEAT times (each on another file); the others run once. */
const REPEATED = new Set<string>(['one', 'restoreOne']);

type Step = 'first' | 'one' | 'thousand' | 'restoreOne' | 'restoreAll';
const STEPS: { step: Step; label: string }[] = [
  { step: 'first', label: 'first checkpoint' },
  { step: 'one', label: 'checkpoint, 1 file changed' },
  { step: 'thousand', label: 'checkpoint, 1,000 files changed' },
  { step: 'restoreOne', label: 'restore of one file' },
  { step: 'restoreAll', label: 'restore of the whole tree' },
];

/** The studio's report of a step's last scan (ProjectWorkspace.lastScan). */
interface ScanReport {
  path: 'WATCHER' | 'FULL';
  distrust: string | null;
  syncMs: number;
  walkMs: number;
  filesStatted: number;
  filesRead: number;
}

interface SideResult {
  /** Each step's figure: the median of its runs. */
  ms: Record<Step, number>;
  /** Every run of each step, in order. */
  runs: Record<Step, number[]>;
  storeBytes: number;
  peakRssMb: number;
  /** The studio side's peak RSS (MiB) after each step. */
  rssAfter?: Record<Step, number>;
  /** The studio side's scan report of each run, parallel to `runs`. */
  scans?: Record<Step, (ScanReport | null)[]>;
}

function git(
  gitDir: string,
  tree: string,
  args: string[],
): { ms: number; rssKb: number; out: string } {
  const started = performance.now();
  const r = spawnSync(
    '/usr/bin/time',
    [
      '-f',
      '%M',
      'git',
      '-c',
      'gc.auto=0',
      '-c',
      'maintenance.auto=false',
      `--git-dir=${gitDir}`,
      `--work-tree=${tree}`,
      ...args,
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
  const lines = r.stderr.trim().split('\n');
  return { ms, rssKb: Number(lines.at(-1)), out: r.stdout.trim() };
}

function dirBytes(dir: string): number {
  const out = execFileSync('du', ['-sb', dir], { encoding: 'utf8' });
  return Number(out.split('\t')[0]);
}

/** One side of the bench, driven step by step so the two sides alternate under the same load. */
interface Side {
  /** Prepares the step's run `rep` (changes the tree, untimed) and runs it; returns its ms. */
  step(step: Step, rep: number): Promise<number>;
  finish(): Promise<SideResult>;
}

function gitSide(tree: BenchTree, gitDir: string): Side {
  // No background gc or maintenance: they would run outside the measured commands.
  const env = ['-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid'];
  git(gitDir, tree.root, ['init', '-q']);
  let peak = 0;
  const runs = {} as Record<Step, number[]>;
  const shas: Partial<Record<Step, string>> = {};
  const checkpoint = (): { ms: number; sha: string } => {
    const add = git(gitDir, tree.root, ['add', '-A']);
    const commit = git(gitDir, tree.root, [...env, 'commit', '-q', '--allow-empty', '-m', 'cp']);
    const sha = git(gitDir, tree.root, ['rev-parse', 'HEAD']);
    peak = Math.max(peak, add.rssKb, commit.rssKb);
    return { ms: add.ms + commit.ms, sha: sha.out };
  };
  const checkout = (sha: string): number => {
    const r = git(gitDir, tree.root, ['checkout', '-q', '-f', sha, '--', '.']);
    peak = Math.max(peak, r.rssKb);
    return r.ms;
  };
  const run: Record<Step, (rep: number) => number> = {
    first: () => {
      const r = checkpoint();
      shas.first = r.sha;
      return r.ms;
    },
    one: (rep) => {
      changeFiles(tree, 1, roundOf('one', rep));
      return checkpoint().ms;
    },
    thousand: () => {
      changeFiles(tree, 1000, 2);
      const r = checkpoint();
      shas.thousand = r.sha;
      return r.ms;
    },
    restoreOne: (rep) => {
      changeFiles(tree, 1, roundOf('restoreOne', rep));
      return checkout(shas.thousand!);
    },
    restoreAll: () => {
      wipeTracked(tree);
      return checkout(shas.first!);
    },
  };
  return {
    step: (step, rep) => {
      const ms = run[step](rep);
      (runs[step] ??= []).push(ms);
      return Promise.resolve(ms);
    },
    finish: () =>
      Promise.resolve({
        ms: medians(runs),
        runs,
        storeBytes: dirBytes(gitDir),
        peakRssMb: peak / 1024,
      }),
  };
}

/**
 * The studio side compiled the way `npm start` runs the server (scripts/build-server.mjs: one
 * esbuild bundle run by plain node), so its RSS is the workspace's, not the tsx loader's (about
 * 40 MB of its own). Here the bundle also holds its packages, so it can live in the temp dir.
 */
async function bundleStudioChild(outDir: string): Promise<string> {
  const outfile = join(outDir, 'checkpointBenchStudio.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL('./checkpointBenchStudio.ts', import.meta.url))],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    legalComments: 'none',
    logLevel: 'warning',
  });
  return outfile;
}

function studioSide(tree: BenchTree, dataDir: string, child: string): Side {
  // The tree's file list is too long for one argv string (128 KiB): pass it in a file.
  const jobFile = join(dataDir, '..', 'studio-job.json');
  fs.writeFileSync(jobFile, JSON.stringify({ tree, dataDir }));
  const profile = process.env.BENCH_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${resolve(process.env.BENCH_PROFILE)}`]
    : [];
  const proc = spawn(process.execPath, [...profile, child, jobFile], {
    stdio: ['pipe', 'pipe', 'inherit'],
    cwd: process.cwd(),
  });
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const ask = async (line: string): Promise<Record<string, unknown>> => {
    proc.stdin.write(`${line}\n`);
    const next = await lines.next();
    if (next.done) throw new Error(`studio side exited during ${line}`);
    return JSON.parse(next.value) as Record<string, unknown>;
  };
  const runs = {} as Record<Step, number[]>;
  const scans = {} as Record<Step, (ScanReport | null)[]>;
  return {
    step: async (step, rep) => {
      const answer = await ask(`${step} ${rep}`);
      const ms = answer.ms as number;
      (runs[step] ??= []).push(ms);
      (scans[step] ??= []).push((answer.scan as ScanReport | null) ?? null);
      return ms;
    },
    finish: async () => {
      const end = (await ask('done')) as { peakRssMb: number; rssAfter: Record<Step, number> };
      return {
        ms: medians(runs),
        runs,
        storeBytes: dirBytes(dataDir),
        peakRssMb: end.peakRssMb,
        rssAfter: end.rssAfter,
        scans,
      };
    },
  };
}

function medians(runs: Record<Step, number[]>): Record<Step, number> {
  const out = {} as Record<Step, number>;
  for (const [step, list] of Object.entries(runs) as [Step, number[]][]) {
    const sorted = [...list].sort((a, b) => a - b);
    out[step] = sorted[sorted.length >> 1]!;
  }
  return out;
}

function fmtMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;
}

/** Writes back every dirty page first, so neither side pays for the other's (or the build's) writes. */
function settle(): void {
  spawnSync('sync', { stdio: 'ignore' });
}

async function main(): Promise<void> {
  const base = fs.mkdtempSync(join(tmpdir(), 'bench-checkpoints-'));
  try {
    console.log(`uptime: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
    console.log(
      `machine: ${cpus().length} cores, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} (shared with other work: figures are noisy)`,
    );
    const t0 = performance.now();
    const studioTree = buildBenchTree(join(base, 'studio-tree'), FILES, MB);
    const gitTree = buildBenchTree(join(base, 'git-tree'), FILES, MB);
    console.log(
      `tree: ${studioTree.fileCount} files (${studioTree.ignoredCount} in an ignored node_modules), ` +
        `${(studioTree.bytes / 1e6).toFixed(0)} MB, ${studioTree.links} symlinks, 1 executable; ` +
        `built twice in ${fmtMs(performance.now() - t0)}`,
    );
    const child = await bundleStudioChild(base);
    const sides = {
      studio: studioSide(studioTree, join(base, 'studio-data'), child),
      git: gitSide(gitTree, join(base, 'shadow.git')),
    };
    // Step by step, alternating which side goes first, each after a sync: both sides meet the
    // same load (the machine is shared) and neither pays for the other's dirty pages.
    let turn = 0;
    for (const { step } of STEPS) {
      for (let rep = 0; rep < (REPEATED.has(step) ? REPEAT : 1); rep++, turn++) {
        for (const name of turn % 2 === 0
          ? (['studio', 'git'] as const)
          : (['git', 'studio'] as const)) {
          settle();
          await sides[name].step(step, rep);
        }
      }
    }
    const studio = await sides.studio.finish();
    const shadow = await sides.git.finish();

    const rows: [string, string, string, string, string][] = [];
    for (const { step, label } of STEPS) {
      const ratio = studio.ms[step] / shadow.ms[step];
      const limit = step === 'one' ? ratio <= 1.5 && studio.ms[step] < 100 : ratio <= 1.5;
      rows.push([
        label,
        fmtMs(studio.ms[step]),
        fmtMs(shadow.ms[step]),
        `${ratio.toFixed(2)}x`,
        limit ? 'ok' : 'MISS',
      ]);
    }
    const storeRatio = studio.storeBytes / shadow.storeBytes;
    rows.push([
      'store size on disk',
      `${(studio.storeBytes / 1e6).toFixed(1)} MB`,
      `${(shadow.storeBytes / 1e6).toFixed(1)} MB`,
      `${storeRatio.toFixed(2)}x`,
      storeRatio <= 1.5 ? 'ok' : 'MISS',
    ]);
    rows.push([
      'peak RSS',
      `${studio.peakRssMb.toFixed(0)} MB`,
      `${shadow.peakRssMb.toFixed(0)} MB (largest git process)`,
      `${(studio.peakRssMb / shadow.peakRssMb).toFixed(2)}x`,
      studio.peakRssMb < 200 ? 'ok (< 200 MB)' : 'MISS (>= 200 MB)',
    ]);
    const header: [string, string, string, string, string] = [
      '',
      'studio',
      'git',
      'ratio',
      'target',
    ];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    for (const r of [header, ...rows])
      console.log(
        r
          .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
          .join('  '),
      );
    for (const { step, label } of STEPS)
      if (REPEATED.has(step))
        console.log(
          `${label}, every run (median above): studio ${studio.runs[step].map(fmtMs).join(', ')}; ` +
            `git ${shadow.runs[step].map(fmtMs).join(', ')}`,
        );
    // Which path each studio checkpoint took, so the figures say what they measured.
    for (const { step, label } of STEPS) {
      if (step !== 'first' && step !== 'one' && step !== 'thousand') continue;
      const reports = studio.scans?.[step] ?? [];
      const parts = reports.map((r, i) => {
        const ms = studio.runs[step][i]!;
        if (!r) return `${fmtMs(ms)} (no report)`;
        const how = r.path === 'WATCHER' ? 'watcher' : `full scan (${r.distrust ?? '?'})`;
        const rest = ms - r.syncMs - r.walkMs;
        return (
          `${fmtMs(ms)} by ${how}: cookie ${fmtMs(r.syncMs)}, walk ${fmtMs(r.walkMs)} ` +
          `(${r.filesStatted} lstat, ${r.filesRead} read), manifest + store ${fmtMs(rest)}`
        );
      });
      console.log(`studio ${label}: ${parts.join('; ')}`);
    }
    if (studio.rssAfter)
      console.log(
        `studio peak RSS after each step (MiB): ${STEPS.map(({ step }) => `${step} ${studio.rssAfter![step]}`).join(', ')}`,
      );
    console.log(`uptime: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
  } finally {
    if (process.env.BENCH_KEEP === '1') console.log(`kept ${resolve(base)}`);
    else fs.rmSync(base, { recursive: true, force: true, maxRetries: 5 });
  }
}

await main();
