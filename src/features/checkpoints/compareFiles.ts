/** The file facts a checkpoint or project manifest carries (never the content). */
export interface ManifestFile {
  target: string;
  path: string;
  contentHash: string;
  byteLength: number;
}

export type FileChange = 'added' | 'removed' | 'changed' | 'unchanged';

export interface FileComparisonRow {
  key: string;
  target: string;
  path: string;
  change: FileChange;
  before: ManifestFile | null;
  after: ManifestFile | null;
}

export interface FileComparison {
  rows: FileComparisonRow[];
  counts: Record<FileChange, number>;
}

// Target and path together name a file: the same path can exist on SERVER and CLIENT.
const keyOf = (file: ManifestFile) => `${file.target}\u0000${file.path}`;

/**
 * Compares two manifests by file hash, from `before` to `after`: a file only in `after` is
 * added, only in `before` removed, in both with another contentHash changed. Rows are ordered
 * by path, then target.
 */
export function compareFiles(
  before: readonly ManifestFile[],
  after: readonly ManifestFile[],
): FileComparison {
  const old = new Map(before.map((file) => [keyOf(file), file]));
  const next = new Map(after.map((file) => [keyOf(file), file]));
  const rows: FileComparisonRow[] = [];
  for (const [key, file] of next) {
    const prior = old.get(key) ?? null;
    const change: FileChange =
      prior === null ? 'added' : prior.contentHash === file.contentHash ? 'unchanged' : 'changed';
    rows.push({ key, target: file.target, path: file.path, change, before: prior, after: file });
  }
  for (const [key, file] of old) {
    if (!next.has(key))
      rows.push({
        key,
        target: file.target,
        path: file.path,
        change: 'removed',
        before: file,
        after: null,
      });
  }
  rows.sort((a, b) =>
    a.path < b.path
      ? -1
      : a.path > b.path
        ? 1
        : a.target < b.target
          ? -1
          : a.target > b.target
            ? 1
            : 0,
  );
  const counts: Record<FileChange, number> = { added: 0, removed: 0, changed: 0, unchanged: 0 };
  for (const row of rows) counts[row.change] += 1;
  return { rows, counts };
}
