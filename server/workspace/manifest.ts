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
  /** Set for a symbolic link: `contentHash`/`byteLength` then describe the link's target text. */
  kind?: 'SYMLINK';
  /** Set when the owner's execute bit is on (regular files only). */
  executable?: true;
  /** Set when the bytes were not stored (a file over the per-file cap): restore cannot put it back. */
  notCaptured?: 'OVER_CAP';
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
/**
 * The largest GraphQL `Int` (a signed 32-bit integer). A file's `byteLength` may exceed it (a
 * file over the cap is recorded with its real size): where a schema field is an `Int`, the
 * exact size travels beside it as a `BigInt` decimal string (see docs/EVENTS.md).
 */
export const GRAPHQL_INT_MAX = 2_147_483_647;

/** `sha256:<hex>` of the given bytes (a string is hashed as UTF-8). */
export function sha256Digest(bytes: Buffer | string): string {
  return 'sha256:' + createHash('sha256').update(bytes).digest('hex');
}

export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareFiles(a: ManifestFile, b: ManifestFile): number {
  return compareCodeUnits(a.target, b.target) || compareCodeUnits(a.path, b.path);
}

/** Lists known to be sorted like {@link sortManifest} and never mutated: see markSorted. */
const knownSorted = new WeakSet<readonly ManifestFile[]>();

/**
 * Records that `files` is sorted and will never be mutated (a scan's list, a checked manifest),
 * so diffManifests takes it as it is instead of checking its order again.
 */
export function markSorted<T extends readonly ManifestFile[]>(files: T): T {
  knownSorted.add(files);
  return files;
}

/** `files` itself when it is sorted, else a sorted copy (for reading only). */
function sortedView(files: readonly ManifestFile[]): readonly ManifestFile[] {
  if (knownSorted.has(files)) return files;
  for (let i = 1; i < files.length; i++)
    if (compareFiles(files[i - 1]!, files[i]!) > 0) return [...files].sort(compareFiles);
  return files;
}

/** A sorted copy: by `target`, then by `path`, both in UTF-16 code-unit order (not locale order). */
export function sortManifest(files: readonly ManifestFile[]): ManifestFile[] {
  let sorted = true;
  for (let i = 1; i < files.length && sorted; i++)
    if (compareFiles(files[i - 1]!, files[i]!) > 0) sorted = false;
  return sorted ? [...files] : [...files].sort(compareFiles);
}

/**
 * The `contentHash` of a checkpoint or of the live project.
 *
 * Recipe (stable; clients may recompute it):
 * 1. Keep these fields of each file: `byteLength` (integer), `contentHash`
 *    (`sha256:<64 lowercase hex>` of the bytes; of the link text for a symlink), `path`
 *    (relative, `/`-separated) and `target` (`SERVER` or `CLIENT`), plus, only when they apply,
 *    `executable: true`, `kind: "SYMLINK"` and `notCaptured: "OVER_CAP"`. Extra fields such as
 *    `__typename` are dropped. (A tree of plain files hashes exactly as before these were added.)
 * 2. Sort the files by `target`, then by `path`, comparing UTF-16 code units.
 * 3. Serialize `{"files":[...]}` as canonical JSON: object keys sorted, no whitespace, strings
 *    escaped as JSON.stringify does, integers in decimal. One file reads
 *    `{"byteLength":12,"contentHash":"sha256:…","path":"src/a.ts","target":"SERVER"}`.
 * 4. The hash is `sha256:` + the lowercase hex SHA-256 of that text's UTF-8 bytes.
 *
 * The empty project hashes `{"files":[]}`.
 */
export function canonicalManifestHash(files: readonly ManifestFile[]): string {
  return sha256Digest(canonicalManifestText(sortManifest(files)));
}

/** The canonical text of step 3, for files already sorted by {@link sortManifest}. */
export function canonicalManifestText(sorted: readonly ManifestFile[]): string {
  return '{"files":[' + sorted.map(canonicalEntry).join(',') + ']}';
}

/** One file's canonical JSON (step 1 and 3 of the recipe), with keys in sorted order. */
export function canonicalEntry(f: ManifestFile): string {
  // One JSON.stringify of an object whose keys are inserted in sorted order (it runs for every
  // file of every manifest hashed): the same text as canonicalJson of that object, which
  // manifest.test.ts checks, and one flat string, where concatenation would leave a tree of
  // pieces that stat cache entries keep for good (about 2.5x the bytes).
  if (!Number.isSafeInteger(f.byteLength))
    throw new TypeError(`canonicalJson: $.byteLength is not a safe integer (${f.byteLength})`);
  const o: Record<string, unknown> = { byteLength: f.byteLength, contentHash: f.contentHash };
  if (f.executable) o.executable = true;
  if (f.kind === 'SYMLINK') o.kind = 'SYMLINK';
  if (f.notCaptured) o.notCaptured = f.notCaptured;
  o.path = f.path;
  o.target = f.target;
  return JSON.stringify(o);
}

/** canonicalEntry the slow, generic way (the reference its fast form must equal). */
export function canonicalEntryReference(f: ManifestFile): string {
  return canonicalJson({
    byteLength: f.byteLength,
    contentHash: f.contentHash,
    ...(f.executable ? { executable: true } : {}),
    ...(f.kind === 'SYMLINK' ? { kind: 'SYMLINK' } : {}),
    ...(f.notCaptured ? { notCaptured: f.notCaptured } : {}),
    path: f.path,
    target: f.target,
  });
}

/** The identity of a file in the sense of the recipe: same text, same file. */
export function sameFile(a: ManifestFile, b: ManifestFile): boolean {
  return (
    a.contentHash === b.contentHash &&
    a.byteLength === b.byteLength &&
    (a.kind ?? null) === (b.kind ?? null) &&
    (a.executable ?? false) === (b.executable ?? false) &&
    (a.notCaptured ?? null) === (b.notCaptured ?? null)
  );
}

/**
 * What changes between two manifests, matching files by `target` + `path`. A file is `changed`
 * when its `contentHash`, `byteLength`, kind,
 * executable bit or capture state differs. Every list is sorted like {@link sortManifest}.
 */
export function diffManifests(
  from: readonly ManifestFile[],
  to: readonly ManifestFile[],
): ManifestDiff {
  // A merge of two sorted lists: linear, and cheap when both come sorted from a scan.
  const a = sortedView(from);
  const b = sortedView(to);
  const diff: ManifestDiff = { added: [], removed: [], changed: [], unchanged: [] };
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    // The same entry object (a scan and a manifest it shares the stat cache's entries with).
    if (x !== undefined && x === y) {
      diff.unchanged.push(y);
      i += 1;
      j += 1;
      continue;
    }
    const order = x === undefined ? 1 : y === undefined ? -1 : compareFiles(x, y);
    if (order < 0) {
      diff.removed.push(x!);
      i += 1;
    } else if (order > 0) {
      diff.added.push(y!);
      j += 1;
    } else {
      if (sameFile(x!, y!)) diff.unchanged.push(y!);
      else diff.changed.push({ path: y!.path, target: y!.target, from: x!, to: y! });
      i += 1;
      j += 1;
    }
  }
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
