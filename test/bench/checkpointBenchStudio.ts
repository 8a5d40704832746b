/**
 * The studio side of `npm run bench:checkpoints`, in its own process so its peak RSS is its own.
 * argv[2]: a JSON file `{ tree: BenchTree, dataDir }`. Prints one JSON line `{ ms, peakRssMb }`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ContentStore } from '../../server/workspace/contentStore.ts';
import { ProjectWorkspace } from '../../server/workspace/ProjectWorkspace.ts';
import { changeFiles, wipeTracked, type BenchTree } from './checkpointBenchTree.ts';

const { tree, dataDir } = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as {
  tree: BenchTree;
  dataDir: string;
};

const ws = new ProjectWorkspace({
  projectId: 'bench',
  root: tree.root,
  contentStore: new ContentStore(join(dataDir, 'blobs')),
  journalDir: join(dataDir, 'journal'),
});

/** Peak RSS (MB) after each step, so a miss says which step set it. */
const rssAfter: Record<string, number> = {};
function timed<T>(step: string, fn: () => T): { ms: number; value: T } {
  const started = performance.now();
  const value = fn();
  const ms = performance.now() - started;
  rssAfter[step] = Math.round(process.resourceUsage().maxRSS / 1024);
  return { ms, value };
}

const first = timed('first', () => ws.snapshot());
changeFiles(tree, 1, 1);
const one = timed('one', () => ws.snapshot());
changeFiles(tree, 1000, 2);
const thousand = timed('thousand', () => ws.snapshot());
changeFiles(tree, 1, 3);
const restoreOne = timed('restoreOne', () => ws.restore(ws.manifest(thousand.value.contentHash)));
if (restoreOne.value.contentHash !== thousand.value.contentHash)
  throw new Error('restore of one file did not give back the checkpoint');
wipeTracked(tree);
const restoreAll = timed('restoreAll', () => ws.restore(ws.manifest(first.value.contentHash)));
if (restoreAll.value.contentHash !== first.value.contentHash)
  throw new Error('restore of the whole tree did not give back the checkpoint');

console.log(
  JSON.stringify({
    ms: {
      first: first.ms,
      one: one.ms,
      thousand: thousand.ms,
      restoreOne: restoreOne.ms,
      restoreAll: restoreAll.ms,
    },
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    rssAfter,
    files: first.value.files.length,
  }),
);
