/**
 * Checkpoint content rules the engine applies around the workspace: what a checkpoint event
 * lists (bounded, never the whole project), how manifests are paged, and which stored content
 * the retention rule keeps.
 */
import { MAX_CHECKPOINT_FILES } from '../../protocol/contract.ts';
import type { CheckpointRecord } from '../store/records.ts';
import {
  GRAPHQL_INT_MAX,
  compareCodeUnits,
  diffManifests,
  sortManifest,
  type ManifestFile,
} from '../workspace/manifest.ts';

/** What a CHECKPOINT_* event says about its files (see docs/EVENTS.md, "Checkpoint events"). */
export interface EventFiles {
  /** Added or changed files against the previous state, at most 128, sorted by path. */
  files: { target: 'SERVER' | 'CLIENT'; path: string; contentHash: string; byteLength: number }[];
  /**
   * Added or changed files not listed: the list is cut at 128, and a file whose size a GraphQL
   * `Int` cannot hold (over 2 GiB - 1, recorded over the cap) is never listed.
   */
  studioFilesOmitted: number;
  /** Files the previous state had and this one has not. */
  studioFilesRemoved: number;
  /** Files in the whole manifest. */
  studioFileCount: number;
  /** Sum of byteLength over the whole manifest (decimal string). */
  studioTotalBytes: string;
}

/** The event's file fields for a state `next` following `previous` (empty for a first checkpoint). */
export function eventFilesFor(
  previous: readonly ManifestFile[],
  next: readonly ManifestFile[],
): EventFiles {
  const diff = diffManifests(previous, next);
  const touched = sortManifest([...diff.added, ...diff.changed.map((c) => c.to)]);
  // AgentCheckpointFile.byteLength is a contract Int: a larger size is left out, not clamped.
  const listable = touched.filter((f) => f.byteLength <= GRAPHQL_INT_MAX);
  return {
    files: listable.slice(0, MAX_CHECKPOINT_FILES).map((f) => ({
      target: f.target,
      path: f.path,
      contentHash: f.contentHash,
      byteLength: f.byteLength,
    })),
    studioFilesOmitted: touched.length - Math.min(listable.length, MAX_CHECKPOINT_FILES),
    studioFilesRemoved: diff.removed.length,
    studioFileCount: next.length,
    studioTotalBytes: String(totalBytes(next)),
  };
}

export function totalBytes(files: readonly ManifestFile[]): number {
  let sum = 0;
  for (const f of files) sum += f.byteLength;
  return sum;
}

export interface FilePage<T> {
  items: T[];
  /** Cursor of each item (its path). */
  cursors: string[];
  hasNextPage: boolean;
  totalCount: number;
}

/**
 * One page of a path-sorted list: the items after the path `after` whose path starts with
 * `pathPrefix`, at most `first`. Binary search, so a page of a 20,000-file manifest costs
 * O(log n + first). The cursor is the path itself, so it stays valid across states.
 */
export function pageByPath<T extends { path: string }>(
  sorted: readonly T[],
  options: { first: number; after: string | null; pathPrefix: string | null },
): FilePage<T> {
  const prefix = options.pathPrefix ?? '';
  const lower = lowerBound(sorted, prefix);
  // Every path with the prefix sorts before prefix + U+FFFF.
  const upper = prefix ? lowerBound(sorted, prefix + '\uffff') : sorted.length;
  let start = lower;
  if (options.after !== null) {
    start = Math.max(lower, lowerBound(sorted, options.after));
    if (sorted[start]?.path === options.after) start += 1;
  }
  const end = Math.min(upper, start + options.first);
  const items = sorted.slice(start, end);
  return {
    items,
    cursors: items.map((i) => i.path),
    hasNextPage: end < upper,
    totalCount: upper - lower,
  };
}

function lowerBound<T extends { path: string }>(sorted: readonly T[], path: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareCodeUnits(sorted[mid]!.path, path) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Days a checkpoint's content is kept (RESTORE_PREIMAGE checkpoints are kept always). */
export const RETENTION_DAYS = 30;
/** Content younger than this is never collected, whatever refers to it (a writer may still need it). */
export const GC_GRACE_MS = 60 * 60 * 1000;

/**
 * The retention rule: a checkpoint's content is kept when it is a RESTORE_PREIMAGE, or was created
 * within the last 30 days, or was restored within them, or is the newest checkpoint of its project.
 */
export function isRetained(
  checkpoint: CheckpointRecord,
  newestOfProject: boolean,
  nowMs: number,
): boolean {
  const cutoff = nowMs - RETENTION_DAYS * 24 * 60 * 60 * 1000;
  return (
    checkpoint.reason === 'RESTORE_PREIMAGE' ||
    newestOfProject ||
    Date.parse(checkpoint.createdAt) >= cutoff ||
    (checkpoint.restoredAt !== null && Date.parse(checkpoint.restoredAt) >= cutoff)
  );
}
