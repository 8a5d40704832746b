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

/** The entries stored at `path` for `identity`, or null when absent, torn, damaged or for another folder. */
export function readStatCache(
  path: string,
  identity: StatCacheIdentity,
): Map<string, StatCacheEntry> | null {
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
  return out.size === header.count ? out : null;
}

/** Replaces the file at `path` with `entries`; best effort (a failure only costs a re-read). */
export function writeStatCache(
  path: string,
  identity: StatCacheIdentity,
  entries: ReadonlyMap<string, StatCacheEntry>,
): boolean {
  const lines: string[] = [];
  for (const e of entries.values())
    lines.push(`${e.size}\t${e.mtimeMs}\t${e.ctimeMs}\t${e.ino}\t${e.mode}\t${e.canonical}\n`);
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
    return true;
  } catch {
    fs.rmSync(temp, { force: true });
    return false;
  }
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
