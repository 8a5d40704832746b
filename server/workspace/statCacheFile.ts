/**
 * The scan's stat cache on disk, so the first scan after a restart reads only what changed.
 *
 * One file per project in the data dir (never in the project folder), replaced whole by writing a
 * temp file and renaming it over the old one: a reader sees the old file or the new one. It is
 * not fsynced: a crash can leave it empty or torn, which the checksum catches, and a cache that is
 * lost or refused only means the next scan reads every file again. Format (text):
 *
 *     {"version":1,"rootReal":…,"rootDev":…,"rootIno":…,"maxFileBytes":…,"count":N,"sha256":…}
 *     size \t mtimeMs \t ctimeMs \t ino \t mode \t canonical entry JSON      (N lines)
 *
 * A scan that changed a few entries appends them to a log beside it (`<file>.log`) instead of
 * rewriting it: a header line naming the base file by the sha256 of its body, then one line per
 * change, each with its own checksum (`<16 hex> \t + \t <entry as above>` sets an entry,
 * `<16 hex> \t - \t <path JSON>` drops one). A reader applies the lines in order up to the
 * first torn or damaged one; a log naming another base is ignored. Once the log holds more than
 * a quarter of the entries (at least 1,024 lines) the next write rewrites the base and removes it.
 *
 * The header says which folder the entries describe: a file whose root is now another folder
 * (moved, replaced by a copy, another device) or was written under another per-file cap is
 * ignored whole. Each entry is trusted only while the file's own size, mtime, ctime, inode and
 * mode are unchanged (see TreeScanner), so a file edited while the studio was down is read again:
 * ctime cannot be set back by `touch` or `utimes`.
 */
import * as fs from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { TEMP_PREFIX, tempName } from './durableFs.ts';
import { DIGEST, canonicalEntry, validateRelativePath, type ManifestFile } from './manifest.ts';

const VERSION = 1;

export interface StatCacheEntry {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  mode: number;
  file: ManifestFile;
  canonical: string;
}

/** What the cache is valid for: the folder (by real path and identity) and the per-file cap. */
export interface StatCacheIdentity {
  rootReal: string;
  rootDev: number;
  rootIno: number;
  maxFileBytes: number;
}

interface Header extends StatCacheIdentity {
  version: number;
  count: number;
  sha256: string;
}

/** What is on disk: the base file's body checksum and how many lines its log holds. */
export interface StatCacheOnDisk {
  baseSha: string;
  logLines: number;
}

/**
 * The entries stored at `path` (and its log) for `identity`, or null when absent, torn, damaged
 * or for another folder.
 */
export function readStatCache(
  path: string,
  identity: StatCacheIdentity,
): { entries: Map<string, StatCacheEntry>; onDisk: StatCacheOnDisk } | null {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  const newline = text.indexOf('\n');
  if (newline < 0) return null;
  let header: Header;
  try {
    header = JSON.parse(text.slice(0, newline)) as Header;
  } catch {
    return null;
  }
  if (
    typeof header !== 'object' ||
    header === null ||
    header.version !== VERSION ||
    header.rootReal !== identity.rootReal ||
    header.rootDev !== identity.rootDev ||
    header.rootIno !== identity.rootIno ||
    header.maxFileBytes !== identity.maxFileBytes
  )
    return null;
  const body = text.slice(newline + 1);
  if (createHash('sha256').update(body).digest('hex') !== header.sha256) return null;
  const out = new Map<string, StatCacheEntry>();
  try {
    let at = 0;
    while (at < body.length) {
      const end = body.indexOf('\n', at);
      if (end < 0) return null;
      const entry = parseLine(body.slice(at, end));
      if (!entry) return null;
      out.set(entry.file.path, entry);
      at = end + 1;
    }
  } catch {
    return null;
  }
  if (out.size !== header.count) return null;
  return {
    entries: out,
    onDisk: { baseSha: header.sha256, logLines: applyLog(path, header.sha256, out) },
  };
}

/** Applies the log of the base `baseSha` to `entries`; returns how many lines it held. */
function applyLog(path: string, baseSha: string, entries: Map<string, StatCacheEntry>): number {
  let text: string;
  try {
    text = fs.readFileSync(`${path}.log`, 'utf8');
  } catch {
    return 0;
  }
  const lines = text.split('\n');
  if (lines[0] !== logHeader(baseSha)) return 0;
  let applied = 0;
  // The last element is what follows the final newline: empty, or a torn line.
  for (const line of lines.slice(1, -1)) {
    const tab = line.indexOf('\t');
    const rest = line.slice(tab + 1);
    if (tab !== 16 || line.slice(0, 16) !== lineSum(rest)) break;
    try {
      if (rest.startsWith('-\t')) {
        const rel = JSON.parse(rest.slice(2)) as unknown;
        if (typeof rel !== 'string') break;
        entries.delete(rel);
      } else if (rest.startsWith('+\t')) {
        const entry = parseLine(rest.slice(2));
        if (!entry) break;
        entries.set(entry.file.path, entry);
      } else break;
    } catch {
      break;
    }
    applied += 1;
  }
  return applied;
}

/**
 * Appends changed and dropped entries to the log of the base `onDisk` names (starting the log
 * when it has none); false when it could not (the caller then rewrites the base).
 */
export function appendStatCacheLog(
  path: string,
  onDisk: StatCacheOnDisk,
  set: readonly StatCacheEntry[],
  dropped: readonly string[],
): boolean {
  const out: string[] = [];
  if (onDisk.logLines === 0) out.push(logHeader(onDisk.baseSha) + '\n');
  for (const rel of dropped) {
    const rest = `-\t${JSON.stringify(rel)}`;
    out.push(`${lineSum(rest)}\t${rest}\n`);
  }
  for (const e of set) {
    const rest = `+\t${entryLine(e)}`;
    out.push(`${lineSum(rest)}\t${rest}\n`);
  }
  try {
    // A new log replaces whatever an older base left under the name.
    fs.writeFileSync(`${path}.log`, out.join(''), { flag: onDisk.logLines === 0 ? 'w' : 'a' });
    return true;
  } catch {
    return false;
  }
}

function logHeader(baseSha: string): string {
  return JSON.stringify({ version: VERSION, log: true, base: baseSha });
}

function lineSum(rest: string): string {
  return createHash('sha256').update(rest).digest('hex').slice(0, 16);
}

function entryLine(e: StatCacheEntry): string {
  return `${e.size}\t${e.mtimeMs}\t${e.ctimeMs}\t${e.ino}\t${e.mode}\t${e.canonical}`;
}

/**
 * Replaces the file at `path` with `entries` and drops its log; best effort (a failure only
 * costs a re-read). Returns what is on disk now, or null when it could not write.
 */
export function writeStatCache(
  path: string,
  identity: StatCacheIdentity,
  entries: ReadonlyMap<string, StatCacheEntry>,
): StatCacheOnDisk | null {
  const lines: string[] = [];
  for (const e of entries.values()) lines.push(entryLine(e) + '\n');
  const body = lines.join('');
  const header: Header = {
    version: VERSION,
    ...identity,
    count: entries.size,
    sha256: createHash('sha256').update(body).digest('hex'),
  };
  const temp = join(dirname(path), `${basename(path)}.${tempName()}`);
  try {
    fs.mkdirSync(dirname(path), { recursive: true });
    fs.writeFileSync(temp, `${JSON.stringify(header)}\n${body}`, { flag: 'wx' });
    fs.renameSync(temp, path);
  } catch {
    fs.rmSync(temp, { force: true });
    return null;
  }
  // The log named the old base; a crash before this leaves it ignored, never applied.
  try {
    fs.rmSync(`${path}.log`, { force: true });
  } catch {
    return null;
  }
  return { baseSha: header.sha256, logLines: 0 };
}

/** Removes temp files a crash mid-write left beside `path`. */
export function sweepStatCacheTemps(path: string): void {
  const prefix = `${basename(path)}.${TEMP_PREFIX}`;
  let names: string[];
  try {
    names = fs.readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const name of names)
    if (name.startsWith(prefix)) fs.rmSync(join(dirname(path), name), { force: true });
}

function parseLine(line: string): StatCacheEntry | null {
  const parts = line.split('\t', 5);
  if (parts.length !== 5) return null;
  const canonical = line.slice(parts.join('\t').length + 1);
  const [size, mtimeMs, ctimeMs, ino, mode] = parts.map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  if (![size, mtimeMs, ctimeMs, ino, mode].every(Number.isFinite)) return null;
  const raw = JSON.parse(canonical) as Record<string, unknown>;
  if (
    raw.target !== 'SERVER' ||
    typeof raw.path !== 'string' ||
    typeof raw.contentHash !== 'string' ||
    !DIGEST.test(raw.contentHash) ||
    !Number.isSafeInteger(raw.byteLength) ||
    (raw.kind !== undefined && raw.kind !== 'SYMLINK') ||
    (raw.executable !== undefined && raw.executable !== true) ||
    (raw.notCaptured !== undefined && raw.notCaptured !== 'OVER_CAP')
  )
    return null;
  validateRelativePath(raw.path);
  const file: ManifestFile = {
    target: 'SERVER',
    path: raw.path,
    contentHash: raw.contentHash,
    byteLength: raw.byteLength as number,
    ...(raw.kind === 'SYMLINK' ? { kind: 'SYMLINK' as const } : {}),
    ...(raw.executable === true ? { executable: true as const } : {}),
    ...(raw.notCaptured === 'OVER_CAP' ? { notCaptured: 'OVER_CAP' as const } : {}),
  };
  // The manifest hash is built from these strings: only the exact canonical form is accepted.
  if (canonicalEntry(file) !== canonical) return null;
  return { size, mtimeMs, ctimeMs, ino, mode, file, canonical };
}
