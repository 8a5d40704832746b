/**
 * The studio side of `npm run bench:checkpoints`, in its own process so its peak RSS is its own.
 * argv[2]: a JSON file `{ tree: BenchTree, dataDir }`. Driven one step at a time (so the parent
 * can interleave it with git's same step): each stdin line names a step and its run (`one 2`),
 * which is prepared (the tree changed as for git, untimed), timed, and answered with one JSON
 * line `{ step, ms, scan }` (`scan`: the workspace's report of the step's last scan: which path
 * it took, watcher or full scan, and where its time went);
 * `done` answers `{ peakRssMb, rssAfter }` and exits.
 *
 * The workspace watches the folder, as the server's do (Projects.registerProject), and the
 * checkpoints are `syncedSnapshot()`, as the server takes them: each waits for the watcher's
 * cookie (that wait is in the figure) and re-stats only what events named when the watcher is
 * trusted, else scans in full.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ContentStore } from '../../server/workspace/contentStore.ts';
import { ProjectWorkspace, type WorkspaceState } from '../../server/workspace/ProjectWorkspace.ts';
import { changeFiles, roundOf, wipeTracked, type BenchTree } from './checkpointBenchTree.ts';

const { tree, dataDir } = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  tree: BenchTree;
  dataDir: string;
};

/**
 * BENCH_MEMTRACE=1: the process's memory (RSS, V8 heap used and reserved, ArrayBuffers) on
 * stderr at each named step of a change and every 2,000 files it writes, to see where a
 * restore's memory goes (the steps are the crash test's, ProjectWorkspace's class comment).
 */
const memtrace = process.env.BENCH_MEMTRACE === '1';
let written = 0;
function traceMemory(what: string): void {
  const m = process.memoryUsage();
  const mib = (n: number): number => Math.round(n / 1048576);
  process.stderr.write(
    `memtrace ${what}: rss ${mib(m.rss)} (peak ${Math.round(process.resourceUsage().maxRSS / 1024)}) ` +
      `heap ${mib(m.heapUsed)}/${mib(m.heapTotal)} arrayBuffers ${mib(m.arrayBuffers)} MiB\n`,
  );
}

const ws = new ProjectWorkspace({
  projectId: 'bench',
  root: tree.root,
  contentStore: new ContentStore(join(dataDir, 'blobs')),
  journalDir: join(dataDir, 'journal'),
  ...(memtrace
    ? {
        faultInjector: (step: string) => {
          if (step.startsWith('file-renamed:')) {
            if (++written % 2000 === 0) traceMemory(`${written} files written`);
          } else if (!step.startsWith('file-') && !step.startsWith('watch:')) traceMemory(step);
        },
      }
    : {}),
});
// BENCH_WATCH=0: no watcher (every checkpoint a full stat-cache scan), for comparison.
if (process.env.BENCH_WATCH !== '0') ws.startWatching();

/** Peak RSS (MiB) after each step, so a miss says which step set it. */
const rssAfter: Record<string, number> = {};
const states: Record<string, WorkspaceState> = {};

function expectState(got: WorkspaceState, want: WorkspaceState, what: string): void {
  if (got.contentHash !== want.contentHash)
    throw new Error(`${what} did not give back the checkpoint`);
}

/** Prepares the tree as checkpointBench.ts does for git, then returns the timed step. */
const steps: Record<string, (rep: number) => () => WorkspaceState | Promise<WorkspaceState>> = {
  first: () => async () => (states.first = await ws.syncedSnapshot()),
  one: (rep) => {
    changeFiles(tree, 1, roundOf('one', rep));
    return () => ws.syncedSnapshot();
  },
  thousand: () => {
    changeFiles(tree, 1000, 2);
    return async () => (states.thousand = await ws.syncedSnapshot());
  },
  restoreOne: (rep) => {
    changeFiles(tree, 1, roundOf('restoreOne', rep));
    return () => {
      const done = ws.restore(ws.manifest(states.thousand!.contentHash));
      expectState(done, states.thousand!, 'restore of one file');
      return done;
    };
  },
  restoreAll: () => {
    wipeTracked(tree);
    return () => {
      const done = ws.restore(ws.manifest(states.first!.contentHash));
      expectState(done, states.first!, 'restore of the whole tree');
      return done;
    };
  },
};

for await (const line of createInterface({ input: process.stdin })) {
  const [step = '', rep = '0'] = line.trim().split(' ');
  if (step === 'done') {
    console.log(JSON.stringify({ peakRssMb: process.resourceUsage().maxRSS / 1024, rssAfter }));
    process.exit(0);
  }
  const prepare = steps[step];
  if (!prepare) throw new Error(`unknown step ${JSON.stringify(step)}`);
  const run = prepare(Number(rep));
  if (memtrace) traceMemory(`before ${step} ${rep}`);
  written = 0;
  const started = performance.now();
  await run();
  const ms = performance.now() - started;
  rssAfter[step] = Math.round(process.resourceUsage().maxRSS / 1024);
  if (memtrace) traceMemory(`after ${step} ${rep}`);
  console.log(JSON.stringify({ step, ms, scan: ws.lastScan }));
}
