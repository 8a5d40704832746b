import * as fs from 'node:fs';
import { join } from 'node:path';
import { DIGEST, sha256Digest } from './manifest.ts';
import { errnoOf, fsyncDir, isErrno, tempName, writeFileDurably } from './durableFs.ts';
import { WorkspaceError } from './WorkspaceError.ts';

/**
 * Immutable file contents keyed by `sha256:<hex>`, stored as `dir/<first 2 hex>/<other 62 hex>`.
 *
 * `put` is idempotent and atomic (temp file, fsync, rename), so a crash leaves either no blob or
 * a whole one. `get` re-hashes what it reads, so a blob damaged on disk is reported as
 * `HASH_MISMATCH` instead of being restored into a project.
 */
export class ContentStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
    fs.mkdirSync(dir, { recursive: true });
  }

  /** Stores the bytes (a string as UTF-8) and returns their `sha256:<hex>` digest. */
  put(bytes: Buffer | string): string {
    const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    const hash = sha256Digest(buf);
    const target = this.pathOf(hash);
    try {
      const existing = fs.statSync(target, { throwIfNoEntry: false });
      // A blob of the right size was written whole (rename is atomic); a wrong size is damage to repair.
      if (existing?.isFile() && existing.size === buf.length) return hash;
      const dir = join(this.dir, hash.slice(7, 9));
      fs.mkdirSync(dir, { recursive: true });
      const temp = join(dir, tempName());
      writeFileDurably(temp, buf);
      fs.renameSync(temp, target);
      fsyncDir(dir);
    } catch (err) {
      throw new WorkspaceError('IO', `Could not store blob ${hash}: ${errnoOf(err)}`, {
        cause: err,
      });
    }
    return hash;
  }

  /** The bytes of a blob; throws `NOT_FOUND` if absent, `HASH_MISMATCH` if damaged. */
  get(hash: string): Buffer {
    if (!DIGEST.test(hash))
      throw new WorkspaceError(
        'NOT_FOUND',
        `Not a sha256 digest: ${JSON.stringify(hash.slice(0, 80))}`,
      );
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(this.pathOf(hash));
    } catch (err) {
      if (isErrno(err, 'ENOENT'))
        throw new WorkspaceError('NOT_FOUND', `No stored content for ${hash}`);
      throw new WorkspaceError('IO', `Could not read blob ${hash}: ${errnoOf(err)}`, {
        cause: err,
      });
    }
    if (sha256Digest(bytes) !== hash)
      throw new WorkspaceError('HASH_MISMATCH', `Stored content for ${hash} is damaged`);
    return bytes;
  }

  has(hash: string): boolean {
    return (
      DIGEST.test(hash) &&
      fs.statSync(this.pathOf(hash), { throwIfNoEntry: false })?.isFile() === true
    );
  }

  private pathOf(hash: string): string {
    const hex = hash.slice(7);
    return join(this.dir, hex.slice(0, 2), hex.slice(2));
  }
}
