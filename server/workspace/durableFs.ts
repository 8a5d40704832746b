import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';

/** Prefix of every temp file the workspace layer creates; scans skip it and recovery sweeps it. */
export const TEMP_PREFIX = '.studio-tmp-';

export function tempName(): string {
  return `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`;
}

/** Writes `bytes` to a new file at `path` and fsyncs it before closing. */
export function writeFileDurably(path: string, bytes: Buffer | string, mode?: number): void {
  const fd = fs.openSync(path, 'wx', mode ?? 0o666);
  try {
    const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    let offset = 0;
    while (offset < buf.length) offset += fs.writeSync(fd, buf, offset, buf.length - offset);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Fsyncs a directory so a rename or unlink inside it survives power loss. Best effort: some
 * platforms (Windows) cannot open a directory for fsync, and there is nothing better to do there.
 */
export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Durability of the directory entry is an optimisation on such platforms, not a guarantee.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** `lstat`, or null when nothing is there (ENOENT, or a parent that is not a directory). */
export function lstatOrNull(path: string): fs.Stats | null {
  try {
    // ENOENT without an exception (a restore into an empty folder asks this for every file).
    return fs.lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch (err) {
    if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return null;
    throw err;
  }
}

export function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as NodeJS.ErrnoException).code === code;
}

export function errnoOf(err: unknown): string {
  return typeof err === 'object' &&
    err !== null &&
    typeof (err as NodeJS.ErrnoException).code === 'string'
    ? String((err as NodeJS.ErrnoException).code)
    : 'unknown error';
}
