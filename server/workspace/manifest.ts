import { createHash } from 'node:crypto';
import { canonicalJson } from './canonicalJson.ts';
import { WorkspaceError } from './WorkspaceError.ts';

export { canonicalJson } from './canonicalJson.ts';

/** One file of a checkpoint or of the live project: never its source, only its identity. */
export interface ManifestFile {
  target: 'SERVER' | 'CLIENT';
  /** Relative, `/`-separated, at most 256 characters, see {@link validateRelativePath}. */
  path: string;
  /** `sha256:` + 64 lowercase hex digits of the file's bytes. */
  contentHash: string;
  byteLength: number;
}

export interface ManifestChange {
  path: string;
  target: ManifestFile['target'];
  from: ManifestFile;
  to: ManifestFile;
}

export interface ManifestDiff {
  added: ManifestFile[];
  removed: ManifestFile[];
  changed: ManifestChange[];
  unchanged: ManifestFile[];
}

export const MAX_PATH_LENGTH = 256;
export const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** `sha256:<hex>` of the given bytes (a string is hashed as UTF-8). */
export function sha256Digest(bytes: Buffer | string): string {
  return 'sha256:' + createHash('sha256').update(bytes).digest('hex');
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareFiles(a: ManifestFile, b: ManifestFile): number {
  return compareCodeUnits(a.target, b.target) || compareCodeUnits(a.path, b.path);
}

function keyOf(file: { target: string; path: string }): string {
  return `${file.target}\u0000${file.path}`;
}

/** A sorted copy: by `target`, then by `path`, both in UTF-16 code-unit order (not locale order). */
export function sortManifest(files: readonly ManifestFile[]): ManifestFile[] {
  return [...files].sort(compareFiles);
}

/**
 * The `contentHash` of a checkpoint or of the live project.
 *
 * Recipe (stable; clients may recompute it):
 * 1. Keep exactly four fields of each file: `byteLength` (integer), `contentHash`
 *    (`sha256:<64 lowercase hex>` of the bytes), `path` (relative, `/`-separated) and `target`
 *    (`SERVER` or `CLIENT`). Extra fields such as `__typename` are dropped.
 * 2. Sort the files by `target`, then by `path`, comparing UTF-16 code units.
 * 3. Serialize `{"files":[...]}` as canonical JSON: object keys sorted, no whitespace, strings
 *    escaped as JSON.stringify does, integers in decimal. One file reads
 *    `{"byteLength":12,"contentHash":"sha256:…","path":"src/a.ts","target":"SERVER"}`.
 * 4. The hash is `sha256:` + the lowercase hex SHA-256 of that text's UTF-8 bytes.
 *
 * The empty project hashes `{"files":[]}`.
 */
export function canonicalManifestHash(files: readonly ManifestFile[]): string {
  const normalized = sortManifest(files).map((f) => ({
    byteLength: f.byteLength,
    contentHash: f.contentHash,
    path: f.path,
    target: f.target,
  }));
  return sha256Digest(canonicalJson({ files: normalized }));
}

/**
 * What changes between two manifests, matching files by `target` + `path`. A file is `changed`
 * when its `contentHash` or `byteLength` differs. Every list is sorted like {@link sortManifest}.
 */
export function diffManifests(
  from: readonly ManifestFile[],
  to: readonly ManifestFile[],
): ManifestDiff {
  const before = new Map(from.map((f) => [keyOf(f), f]));
  const after = new Map(to.map((f) => [keyOf(f), f]));
  const diff: ManifestDiff = { added: [], removed: [], changed: [], unchanged: [] };
  for (const f of sortManifest(to)) {
    const old = before.get(keyOf(f));
    if (!old) diff.added.push(f);
    else if (old.contentHash !== f.contentHash || old.byteLength !== f.byteLength)
      diff.changed.push({ path: f.path, target: f.target, from: old, to: f });
    else diff.unchanged.push(f);
  }
  for (const f of sortManifest(from)) if (!after.has(keyOf(f))) diff.removed.push(f);
  return diff;
}

/** The path made printable for an error message (control characters escaped, long paths cut). */
export function describePath(path: string): string {
  const shown = path.length > 80 ? path.slice(0, 80) + '…' : path;
  return JSON.stringify(shown);
}

/**
 * Returns `path` unchanged when it is a safe project-relative file path, else throws
 * `WorkspaceError('PATH_INVALID')`. Refused: empty or longer than 256 UTF-16 units, a leading
 * `/`, a Windows drive (`C:`), any `\`, NUL or control character, and empty, `.` or `..`
 * segments (so `a//b`, `a/`, `./a` and `a/../b` are refused rather than normalized, and every
 * file has exactly one spelling).
 */
export function validateRelativePath(path: string): string {
  const refuse = (why: string): never => {
    throw new WorkspaceError('PATH_INVALID', `Invalid path ${describePath(String(path))}: ${why}`, {
      path: String(path),
    });
  };
  if (typeof path !== 'string' || path.length === 0) return refuse('empty');
  if (path.length > MAX_PATH_LENGTH) return refuse(`longer than ${MAX_PATH_LENGTH} characters`);
  // Control characters include NUL and DEL.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) return refuse('control character');
  if (path.includes('\\')) return refuse('backslash');
  if (path.startsWith('/')) return refuse('absolute');
  if (/^[A-Za-z]:/.test(path)) return refuse('drive letter');
  for (const segment of path.split('/')) {
    if (segment === '') return refuse('empty segment');
    if (segment === '.' || segment === '..') return refuse(`"${segment}" segment`);
  }
  return path;
}
