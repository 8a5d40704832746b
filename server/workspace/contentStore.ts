import * as fs from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  constants as zlibConstants,
  createDeflateRaw,
  createInflateRaw,
  deflateRawSync,
  inflateRawSync,
} from 'node:zlib';
import { DIGEST, sha256Digest } from './manifest.ts';
import { errnoOf, fsyncDir, isErrno, tempName, writeFileDurably } from './durableFs.ts';
import { WorkspaceError } from './WorkspaceError.ts';

/** Where one blob lives inside a pack. */
interface PackEntry {
  pack: string;
  offset: number;
  storedLength: number;
  rawLength: number;
  /**
   * 0: stored as is, 1: raw deflate, 2: a delta against another blob (see {@link
   * ContentStore.putDelta}): the base's 32-byte digest, then the raw-deflated pieces.
   */
  method: 0 | 1 | 2;
}

/** One piece of a blob stored as a delta: a byte range of its base, or bytes of its own. */
export type DeltaPiece = { copy: number; length: number } | { bytes: Buffer };

interface OpenPack {
  id: string;
  fd: number;
  size: number;
  entries: { hex: string; entry: PackEntry }[];
}

export interface GcOptions {
  /** Every blob that must survive (`sha256:<hex>`). */
  live: ReadonlySet<string>;
  /** Packs and loose blobs younger than this are never touched (a writer may still need them). */
  graceMs: number;
  now?: number;
}

export interface GcResult {
  packsDeleted: number;
  packsRewritten: number;
  blobsRemoved: number;
  bytesFreed: number;
}

const IDX_MAGIC = 0x53494458; // "SIDX"
const IDX_VERSION = 1;
const IDX_ENTRY = 64;
/** Blobs smaller than this are stored as they are: deflate would not pay for its header. */
const MIN_COMPRESS = 64;
const SAMPLE = 16 * 1024;
/** Piece size of `writeTo`: larger raw blobs are copied through one buffer of this size. */
const COPY_CHUNK = 1024 * 1024;
/**
 * A delta is only written against a base this store sealed itself less than this long ago, so
 * the base's pack is far inside any GC grace period (an hour) when the delta comes to need it;
 * from then on the collector keeps every live delta's base (see collectGarbage).
 */
export const DELTA_BASE_MAX_AGE_MS = 10 * 60 * 1000;
const DELTA_COPY = 0;
const DELTA_BYTES = 1;

/**
 * Immutable file contents keyed by `sha256:<hex>`, compressed and written in packs.
 *
 * `put` appends new bytes (raw deflate at level 1, or as they are when they do not compress) to
 * the current pack file `packs/<id>.pack`; `flush` makes them durable: one fsync of the pack,
 * then its index `packs/<id>.idx` (hash, offset, lengths; checksummed) written to a temp file,
 * fsynced and renamed. Only blobs listed in an index exist: a crash before `flush` leaves a pack
 * without an index, which no reader trusts and `collectGarbage` removes. So a checkpoint of
 * 20,000 new files costs one fsync, not 20,000.
 *
 * A blob may instead be stored as a delta against a base blob (`putDelta`; the workspace does this
 * for a manifest that differs from the last one in a few entries): the base's digest, then the
 * pieces (ranges of the base, bytes of its own), deflated. Only one level deep (a base is never a
 * delta itself). `get` rebuilds the bytes from the base and checks them against the digest like
 * any other blob.
 *
 * `get` re-hashes what it reads, so damage on disk is reported as `HASH_MISMATCH` instead of being
 * restored into a project. Blobs of the older layout (`<2 hex>/<62 hex>`, uncompressed, one file
 * each) are still read, and garbage-collected like the rest.
 */
export class ContentStore {
  readonly dir: string;
  private readonly packDir: string;
  private readonly index = new Map<string, PackEntry>();
  /**
   * Digests (`sha256:<hex>`, the callers' own strings) `has` found in `index`: a scan asks for
   * every file, with the same strings each time, so this is one lookup of an already hashed key.
   * Cleared whenever blobs leave the index.
   */
  private readonly found = new Set<string>();
  private readonly readFds = new Map<string, number>();
  private removalCount = 0;
  private readonly knownIdx = new Set<string>();
  /** When this instance created each pack it wrote (ms), for the age rule of delta bases. */
  private readonly packCreated = new Map<string, number>();
  private open: OpenPack | null = null;

  constructor(dir: string) {
    this.dir = dir;
    this.packDir = join(dir, 'packs');
    fs.mkdirSync(this.packDir, { recursive: true });
    this.loadIndexes();
  }

  /**
   * How many times blobs have left this instance's index (a GC, a failed flush). While it is
   * unchanged, a blob `has` found (or that was put) is still there, so a scan need not ask again.
   */
  get removals(): number {
    return this.removalCount;
  }

  private forget(): void {
    this.found.clear();
    this.removalCount += 1;
  }

  /** Stores the bytes (a string as UTF-8) and returns their digest; durable after `flush()`. */
  put(bytes: Buffer | string): string {
    const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    const hash = sha256Digest(buf);
    this.putHashed(hash, buf);
    return hash;
  }

  /** `put` for bytes whose digest the caller already computed (it is not checked again). */
  putHashed(hash: string, buf: Buffer): void {
    const hex = hash.slice(7);
    if (this.index.has(hex) || this.hasLoose(hex)) return;
    try {
      const pack = this.openPack();
      let stored = buf;
      let method: 0 | 1 = 0;
      if (buf.length >= MIN_COMPRESS && this.compressible(buf)) {
        // Into the store's reused output buffer, as long as the result is shorter than the
        // input (else it is stored raw): a first checkpoint deflates every file.
        let deflated = buf.length <= COPY_CHUNK ? this.deflateShort(buf, buf.length) : null;
        // One output buffer the size of the input (what pays off fits in it), not 16 KiB pieces.
        deflated ??= deflateRawSync(buf, { level: 1, chunkSize: outputChunk(buf.length) });
        if (deflated !== false && deflated.length < buf.length) {
          stored = deflated;
          method = 1;
        }
      }
      this.append(pack, hex, stored, buf.length, method);
    } catch (err) {
      throw new WorkspaceError('IO', `Could not store blob ${hash}: ${errnoOf(err)}`, {
        cause: err,
      });
    }
  }

  /**
   * Stores the blob `hash` (of `length` bytes) as a delta against `base`, whose bytes the caller
   * holds (`baseBytes`): the blob is the concatenation of `pieces`. The pieces are checked
   * against `hash` first (hashed through, never joined). Returns false, storing nothing, when a
   * delta is not allowed here: the base is not a full blob in a pack this instance sealed within
   * {@link DELTA_BASE_MAX_AGE_MS}, or the pieces do not give `hash`; the caller then `putHashed`s
   * the bytes whole. Durable after `flush()`, like `put`.
   */
  putDelta(
    hash: string,
    length: number,
    base: string,
    baseBytes: Buffer,
    pieces: readonly DeltaPiece[],
    now = Date.now(),
  ): boolean {
    const hex = hash.slice(7);
    if (this.index.has(hex) || this.hasLoose(hex)) return true;
    if (!DIGEST.test(base)) return false;
    const baseEntry = this.index.get(base.slice(7));
    const created = baseEntry ? this.packCreated.get(baseEntry.pack) : undefined;
    if (
      !baseEntry ||
      baseEntry.method === 2 ||
      !this.knownIdx.has(baseEntry.pack) ||
      created === undefined ||
      now - created > DELTA_BASE_MAX_AGE_MS ||
      baseEntry.rawLength !== baseBytes.length
    )
      return false;
    const digest = createHash('sha256');
    const parts: Buffer[] = [Buffer.from(base.slice(7), 'hex')];
    let total = 0;
    for (const piece of pieces) {
      if ('copy' in piece) {
        const end = piece.copy + piece.length;
        if (piece.copy < 0 || piece.length < 0 || end > baseBytes.length) return false;
        digest.update(baseBytes.subarray(piece.copy, end));
        const rec = Buffer.allocUnsafe(9);
        rec.writeUInt8(DELTA_COPY, 0);
        rec.writeUInt32BE(piece.copy, 1);
        rec.writeUInt32BE(piece.length, 5);
        parts.push(rec);
        total += piece.length;
      } else {
        digest.update(piece.bytes);
        const rec = Buffer.allocUnsafe(5);
        rec.writeUInt8(DELTA_BYTES, 0);
        rec.writeUInt32BE(piece.bytes.length, 1);
        parts.push(rec, piece.bytes);
        total += piece.bytes.length;
      }
    }
    if (total !== length || 'sha256:' + digest.digest('hex') !== hash) return false;
    // (The header, the base's digest, stays readable without inflating: the collector reads it.)
    const ops = deflateRawSync(Buffer.concat(parts.slice(1)), { level: 1 });
    try {
      this.append(this.openPack(), hex, Buffer.concat([parts[0]!, ops]), length, 2);
    } catch (err) {
      throw new WorkspaceError('IO', `Could not store blob ${hash}: ${errnoOf(err)}`, {
        cause: err,
      });
    }
    return true;
  }

  private append(
    pack: OpenPack,
    hex: string,
    stored: Buffer,
    rawLength: number,
    method: 0 | 1 | 2,
  ): void {
    let written = 0;
    while (written < stored.length)
      written += fs.writeSync(
        pack.fd,
        stored,
        written,
        stored.length - written,
        pack.size + written,
      );
    const entry: PackEntry = {
      pack: pack.id,
      offset: pack.size,
      storedLength: stored.length,
      rawLength,
      method,
    };
    pack.size += stored.length;
    pack.entries.push({ hex, entry });
    this.index.set(hex, entry);
  }

  /** Makes every blob put so far durable (see the class comment). A no-op when nothing is new. */
  flush(): void {
    const pack = this.open;
    if (!pack) return;
    this.open = null;
    try {
      fs.fsyncSync(pack.fd);
      const idx = encodeIndex(pack.entries);
      const idxPath = join(this.packDir, `${pack.id}.idx`);
      const temp = join(this.packDir, tempName());
      writeFileDurably(temp, idx);
      fs.renameSync(temp, idxPath);
      fsyncDir(this.packDir);
      this.knownIdx.add(pack.id);
    } catch (err) {
      for (const { hex } of pack.entries) this.index.delete(hex);
      this.forget();
      throw new WorkspaceError('IO', `Could not seal a blob pack: ${errnoOf(err)}`, {
        cause: err,
      });
    }
  }

  /** The bytes of a blob; throws `NOT_FOUND` if absent, `HASH_MISMATCH` if damaged. */
  get(hash: string): Buffer {
    return this.read(hash, true);
  }

  /** `get`; `deltaAllowed` is false for a delta's base (deltas are one level deep). */
  private read(hash: string, deltaAllowed: boolean): Buffer {
    if (!DIGEST.test(hash))
      throw new WorkspaceError(
        'NOT_FOUND',
        `Not a sha256 digest: ${JSON.stringify(hash.slice(0, 80))}`,
      );
    const hex = hash.slice(7);
    let entry = this.index.get(hex);
    if (!entry && !this.hasLoose(hex)) {
      // Another process (a crash-test child, a second studio on this data dir) may have sealed a pack.
      this.loadIndexes();
      entry = this.index.get(hex);
    }
    let bytes: Buffer;
    try {
      if (entry) {
        // A deflated blob is read through the store's reused 1 MiB buffer (inflate copies it out
        // at once; a restore reads one per file), the others into their own buffer.
        const stored =
          entry.method === 1 && entry.storedLength <= COPY_CHUNK
            ? this.copyBuffer().subarray(0, entry.storedLength)
            : Buffer.allocUnsafe(entry.storedLength);
        const fd = this.readFd(entry.pack);
        let read = 0;
        while (read < stored.length) {
          const n = fs.readSync(fd, stored, read, stored.length - read, entry.offset + read);
          if (n === 0) break;
          read += n;
        }
        if (read !== stored.length)
          throw new WorkspaceError('HASH_MISMATCH', `Stored content for ${hash} is truncated`);
        if (entry.method === 2) {
          if (!deltaAllowed || stored.length < 32)
            throw new WorkspaceError('HASH_MISMATCH', `Stored content for ${hash} is damaged`);
          const base = this.read(`sha256:${stored.toString('hex', 0, 32)}`, false);
          bytes = applyDelta(base, inflateRawSync(stored.subarray(32)), entry.rawLength, hash);
        } else if (entry.method === 1) {
          // One output buffer of the known size (one byte over, so zlib stops in it), not 16 KiB
          // pieces joined: a restore inflates every file it writes.
          bytes = inflateRawSync(stored, { chunkSize: outputChunk(entry.rawLength) });
        } else bytes = stored;
      } else {
        bytes = fs.readFileSync(this.loosePath(hex));
      }
    } catch (err) {
      if (err instanceof WorkspaceError) throw err;
      if (isErrno(err, 'ENOENT'))
        throw new WorkspaceError('NOT_FOUND', `No stored content for ${hash}`);
      if (typeof (err as { code?: unknown }).code === 'string' && !('syscall' in (err as object)))
        throw new WorkspaceError('HASH_MISMATCH', `Stored content for ${hash} is damaged`);
      throw new WorkspaceError('IO', `Could not read blob ${hash}: ${errnoOf(err)}`, {
        cause: err,
      });
    }
    if (sha256Digest(bytes) !== hash)
      throw new WorkspaceError('HASH_MISMATCH', `Stored content for ${hash} is damaged`);
    return bytes;
  }

  /**
   * Writes a blob's bytes to `fd` (at its current position) without holding a stored blob
   * whole: raw blobs are copied in 1 MiB pieces through one reused buffer, deflated ones are
   * inflated one at a time. The bytes are hashed on the way and `HASH_MISMATCH` is thrown at the
   * end if they are not the blob's, so write to a file that is not in place yet (a temp file).
   */
  writeTo(hash: string, fd: number): number {
    const entry = DIGEST.test(hash) ? this.index.get(hash.slice(7)) : undefined;
    if (entry?.method === 1 && entry.storedLength <= COPY_CHUNK && entry.rawLength <= COPY_CHUNK) {
      const out = this.inflateInto(entry, hash);
      if (out) {
        if (sha256Digest(out) !== hash)
          throw new WorkspaceError('HASH_MISMATCH', `Stored content for ${hash} is damaged`);
        writeAll(fd, out, out.length);
        return out.length;
      }
    }
    if (!entry || entry.method !== 0 || entry.storedLength <= COPY_CHUNK) {
      const bytes = this.get(hash);
      writeAll(fd, bytes, bytes.length);
      return bytes.length;
    }
    const digest = createHash('sha256');
    const buf = this.copyBuffer();
    let done = 0;
    try {
      const from = this.readFd(entry.pack);
      while (done < entry.storedLength) {
        const want = Math.min(COPY_CHUNK, entry.storedLength - done);
        const n = fs.readSync(from, buf, 0, want, entry.offset + done);
        if (n === 0) break;
        digest.update(buf.subarray(0, n));
        writeAll(fd, buf, n);
        done += n;
      }
    } catch (err) {
      throw new WorkspaceError('IO', `Could not copy blob ${hash}: ${errnoOf(err)}`, {
        cause: err,
      });
    }
    if (done !== entry.storedLength)
      throw new WorkspaceError('HASH_MISMATCH', `Stored content for ${hash} is truncated`);
    if ('sha256:' + digest.digest('hex') !== hash)
      throw new WorkspaceError('HASH_MISMATCH', `Stored content for ${hash} is damaged`);
    return done;
  }

  /**
   * A deflated blob of at most 1 MiB (either way) inflated into the store's reused output
   * buffer (a view valid until the next call), or null when this Node's zlib cannot (the caller
   * then takes `get`). Read through the reused read buffer, inflated by one long-lived raw
   * inflate handle that is reset after each blob. Why not `inflateRawSync`: Node 20 has no public
   * synchronous inflate into a caller's buffer, and each `inflateRawSync` builds a Transform
   * stream, a native handle and an output buffer of the blob's size; a whole-tree restore calls
   * it once per file (18,500 times in the bench), and that garbage (about 1 KB of stream objects
   * reaching the old generation and 8 KB of ArrayBuffer per file, measured) set the restore's
   * peak RSS. This is the call `inflateRawSync` itself makes on the same handle
   * (`handle.writeSync` and its `_writeState`); the bytes are hashed by the caller as always.
   */
  private inflateInto(entry: PackEntry, hash: string): Buffer | null {
    const inflater = this.zlibHandle('inflate');
    if (!inflater) return null;
    const stored = this.copyBuffer().subarray(0, entry.storedLength);
    const fd = this.readFd(entry.pack);
    let read = 0;
    try {
      while (read < stored.length) {
        const n = fs.readSync(fd, stored, read, stored.length - read, entry.offset + read);
        if (n === 0) break;
        read += n;
      }
    } catch (err) {
      throw new WorkspaceError('IO', `Could not read blob ${hash}: ${errnoOf(err)}`, {
        cause: err,
      });
    }
    if (read !== stored.length)
      throw new WorkspaceError('HASH_MISMATCH', `Stored content for ${hash} is truncated`);
    const out = (this.inflateBuf ??= Buffer.allocUnsafe(COPY_CHUNK + 1));
    inflater.error = null;
    const { handle, state } = inflater;
    handle.writeSync(zlibConstants.Z_FINISH, stored, 0, stored.length, out, 0, out.length);
    const failed = inflater.error !== null;
    // (state: [output bytes left, input bytes left]; a whole blob ends with input left 0.)
    const length = out.length - state[0]!;
    const inputLeft = state[1]!;
    handle.reset();
    if (failed || inputLeft !== 0 || length !== entry.rawLength)
      throw new WorkspaceError('HASH_MISMATCH', `Stored content for ${hash} is damaged`);
    return out.subarray(0, length);
  }

  /**
   * Deflate pays off: a sample of the start shrinks by a tenth at least (not media, not
   * archives). The sample deflates into the reused buffer: it shrank when its output fit in
   * `ceil(0.9 * SAMPLE)` bytes, i.e. is shorter than 0.9 of the sample.
   */
  private compressible(buf: Buffer): boolean {
    if (buf.length <= SAMPLE) return true;
    const sample = buf.subarray(0, SAMPLE);
    const short = this.deflateShort(sample, Math.ceil(SAMPLE * 0.9));
    if (short !== null) return short !== false;
    return (
      deflateRawSync(sample, { level: 1, chunkSize: outputChunk(SAMPLE) }).length <
      sample.length * 0.9
    );
  }

  /**
   * `input` raw-deflated at level 1 (the bytes `deflateRawSync(input, { level: 1 })` gives) into
   * the store's reused output buffer (a view valid until the next call) when that is shorter than
   * `limit` bytes (at most 1 MiB); false when it is not; null when this Node's zlib cannot (the
   * caller then takes `deflateRawSync`). One long-lived handle, reset after each input, as
   * {@link inflateInto} does and for the same reason: no stream, handle and output buffer per file.
   */
  private deflateShort(input: Buffer, limit: number): Buffer | false | null {
    const deflater = this.zlibHandle('deflate');
    if (!deflater || limit > COPY_CHUNK) return null;
    const out = (this.deflateBuf ??= Buffer.allocUnsafe(COPY_CHUNK));
    deflater.error = null;
    const { handle, state } = deflater;
    handle.writeSync(zlibConstants.Z_FINISH, input, 0, input.length, out, 0, limit);
    const outLeft = state[0]!;
    const inputLeft = state[1]!;
    handle.reset();
    if (deflater.error !== null)
      throw new WorkspaceError('IO', `Could not deflate a blob: ${deflater.error}`);
    // Output space left means the stream finished (Z_FINISH) inside the limit.
    if (outLeft === 0 || inputLeft !== 0) return false;
    return out.subarray(0, limit - outLeft);
  }

  private deflateBuf: Buffer | null = null;
  private deflaterState: ZlibHandle | null | undefined;
  private inflaterState: ZlibHandle | null | undefined;
  private inflateBuf: Buffer | null = null;
  /** The long-lived raw inflate or deflate handle (null when this Node's zlib lacks it). */
  private zlibHandle(kind: 'inflate' | 'deflate'): ZlibHandle | null {
    const known = kind === 'inflate' ? this.inflaterState : this.deflaterState;
    if (known !== undefined) return known;
    const stream = (kind === 'inflate'
      ? createInflateRaw()
      : createDeflateRaw({ level: 1 })) as unknown as {
      _handle?: unknown;
      _writeState?: unknown;
    };
    const handle = stream._handle as Partial<ZlibHandle['handle']> | undefined;
    const state = stream._writeState;
    let made: ZlibHandle | null = null;
    if (
      handle &&
      typeof handle.writeSync === 'function' &&
      typeof handle.reset === 'function' &&
      state instanceof Uint32Array &&
      state.length === 2
    ) {
      const z: ZlibHandle = { handle: handle as ZlibHandle['handle'], state, error: null };
      // Errors come back through this callback, synchronously, instead of destroying the stream.
      (handle as { onerror?: unknown }).onerror = (message: unknown) => {
        z.error = typeof message === 'string' && message ? message : 'zlib error';
      };
      made = z;
    }
    if (kind === 'inflate') this.inflaterState = made;
    else this.deflaterState = made;
    return made;
  }

  private copyBuf: Buffer | null = null;
  private copyBuffer(): Buffer {
    this.copyBuf ??= Buffer.allocUnsafe(COPY_CHUNK);
    return this.copyBuf;
  }

  /** The stored size of a blob's bytes (its byteLength), or null when it is not stored. */
  rawLength(hash: string): number | null {
    if (!this.has(hash)) return null;
    const entry = this.index.get(hash.slice(7));
    return entry ? entry.rawLength : fs.statSync(this.loosePath(hash.slice(7))).size;
  }

  has(hash: string): boolean {
    // A packed blob is one map lookup (a scan asks this for every file); the regex and the
    // stat of the older loose layout only for the rest.
    if (this.found.has(hash)) return true;
    // (Index keys are 64 lowercase hex digits, so a hit is a valid digest.)
    if (hash.length === 71 && hash.startsWith('sha256:') && this.index.has(hash.slice(7))) {
      this.found.add(hash);
      return true;
    }
    if (!DIGEST.test(hash)) return false;
    return this.hasLoose(hash.slice(7));
  }

  /** Bytes on disk under `dir` (packs, indexes and loose blobs). */
  diskBytes(): number {
    let total = 0;
    const visit = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const abs = join(dir, e.name);
        if (e.isDirectory()) visit(abs);
        else if (e.isFile()) total += fs.statSync(abs).size;
      }
    };
    visit(this.dir);
    return total;
  }

  /**
   * Removes every blob not in `live`. A pack with no live blob is deleted; a pack that is less
   * than half live is rewritten (its live blobs copied into a new sealed pack first). Packs,
   * unsealed packs and loose blobs younger than `graceMs` are left alone, so bytes a concurrent
   * checkpoint has just written (and not yet referenced) survive.
   */
  collectGarbage(options: GcOptions): GcResult {
    const now = options.now ?? Date.now();
    const result: GcResult = { packsDeleted: 0, packsRewritten: 0, blobsRemoved: 0, bytesFreed: 0 };
    this.flush();
    this.loadIndexes();
    // A live delta keeps its base alive (whatever the base's own checkpoints' retention).
    const live = new Set(options.live);
    for (const hash of options.live) {
      const entry = DIGEST.test(hash) ? this.index.get(hash.slice(7)) : undefined;
      if (entry?.method !== 2) continue;
      const head = Buffer.alloc(32);
      fs.readSync(this.readFd(entry.pack), head, 0, 32, entry.offset);
      live.add(`sha256:${head.toString('hex')}`);
    }
    const old = (path: string): boolean => {
      const st = fs.statSync(path, { throwIfNoEntry: false });
      return st !== undefined && now - st.mtimeMs >= options.graceMs;
    };
    const byPack = new Map<string, { hex: string; entry: PackEntry }[]>();
    for (const [hex, entry] of this.index) {
      const list = byPack.get(entry.pack) ?? [];
      list.push({ hex, entry });
      byPack.set(entry.pack, list);
    }
    for (const name of fs.readdirSync(this.packDir)) {
      if (!name.endsWith('.pack')) continue;
      const id = name.slice(0, -5);
      const packPath = join(this.packDir, name);
      if (!old(packPath)) continue;
      const entries = byPack.get(id);
      if (!entries) {
        // A pack that was never sealed: nothing refers to it.
        result.bytesFreed += fs.statSync(packPath).size;
        this.dropPack(id);
        result.packsDeleted += 1;
        continue;
      }
      const kept = entries.filter((e) => live.has(`sha256:${e.hex}`));
      if (kept.length === entries.length) continue;
      const liveBytes = kept.reduce((s, e) => s + e.entry.storedLength, 0);
      const allBytes = entries.reduce((s, e) => s + e.entry.storedLength, 0);
      if (kept.length > 0 && liveBytes * 2 >= allBytes) continue;
      // A delta is copied whole (its base may be in this very pack).
      const copies = kept.map((e) => ({ hex: e.hex, bytes: this.get(`sha256:${e.hex}`) }));
      for (const { hex } of entries) this.index.delete(hex);
      this.forget();
      for (const c of copies) this.putHashed(`sha256:${c.hex}`, c.bytes);
      this.flush();
      result.bytesFreed += fs.statSync(packPath).size;
      this.dropPack(id);
      result.blobsRemoved += entries.length - kept.length;
      if (kept.length > 0) result.packsRewritten += 1;
      else result.packsDeleted += 1;
    }
    for (const sub of fs.readdirSync(this.dir)) {
      if (!/^[0-9a-f]{2}$/.test(sub)) continue;
      for (const rest of fs.readdirSync(join(this.dir, sub))) {
        const abs = join(this.dir, sub, rest);
        if (live.has(`sha256:${sub}${rest}`) || !old(abs)) continue;
        result.bytesFreed += fs.statSync(abs).size;
        fs.rmSync(abs, { force: true });
        result.blobsRemoved += 1;
      }
    }
    return result;
  }

  private dropPack(id: string): void {
    this.forget();
    const fd = this.readFds.get(id);
    if (fd !== undefined) fs.closeSync(fd);
    this.readFds.delete(id);
    this.knownIdx.delete(id);
    this.packCreated.delete(id);
    fs.rmSync(join(this.packDir, `${id}.idx`), { force: true });
    fs.rmSync(join(this.packDir, `${id}.pack`), { force: true });
    fsyncDir(this.packDir);
  }

  private openPack(): OpenPack {
    if (this.open) return this.open;
    const id = `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`;
    const fd = fs.openSync(join(this.packDir, `${id}.pack`), 'wx+');
    this.readFds.set(id, fd);
    this.packCreated.set(id, Date.now());
    this.open = { id, fd, size: 0, entries: [] };
    return this.open;
  }

  private readFd(pack: string): number {
    let fd = this.readFds.get(pack);
    if (fd === undefined) {
      fd = fs.openSync(join(this.packDir, `${pack}.pack`), 'r');
      this.readFds.set(pack, fd);
    }
    return fd;
  }

  private loadIndexes(): void {
    for (const name of fs.readdirSync(this.packDir)) {
      if (!name.endsWith('.idx')) continue;
      const id = name.slice(0, -4);
      if (this.knownIdx.has(id)) continue;
      const entries = decodeIndex(id, fs.readFileSync(join(this.packDir, name)));
      if (!entries) continue;
      for (const { hex, entry } of entries) if (!this.index.has(hex)) this.index.set(hex, entry);
      this.knownIdx.add(id);
    }
  }

  private loosePath(hex: string): string {
    return join(this.dir, hex.slice(0, 2), hex.slice(2));
  }

  private hasLoose(hex: string): boolean {
    return fs.statSync(this.loosePath(hex), { throwIfNoEntry: false })?.isFile() === true;
  }
}

/** The native handle of a raw inflate or deflate stream (see ContentStore.inflateInto). */
interface ZlibHandle {
  handle: {
    writeSync(
      flush: number,
      input: Buffer,
      inOff: number,
      inLen: number,
      out: Buffer,
      outOff: number,
      outLen: number,
    ): void;
    reset(): void;
  };
  /** [output bytes left, input bytes left] after each writeSync. */
  state: Uint32Array;
  /** The zlib error code of the last write, if it failed. */
  error: string | null;
}

/** A zlib output chunk for `length` bytes: one byte over it (so zlib ends inside it), capped. */
function outputChunk(length: number): number {
  return Math.min(Math.max(64, length + 1), 64 * 1024 * 1024);
}

/** Rebuilds a delta's bytes from its base and its inflated pieces (see putDelta). */
function applyDelta(base: Buffer, ops: Buffer, length: number, hash: string): Buffer {
  const damaged = (): never => {
    throw new WorkspaceError('HASH_MISMATCH', `Stored content for ${hash} is damaged`);
  };
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  let i = 0;
  while (i < ops.length) {
    const kind = ops.readUInt8(i);
    if (kind === DELTA_COPY && i + 9 <= ops.length) {
      const from = ops.readUInt32BE(i + 1);
      const n = ops.readUInt32BE(i + 5);
      if (from + n > base.length || at + n > length) damaged();
      base.copy(out, at, from, from + n);
      at += n;
      i += 9;
    } else if (kind === DELTA_BYTES && i + 5 <= ops.length) {
      const n = ops.readUInt32BE(i + 1);
      if (i + 5 + n > ops.length || at + n > length) damaged();
      ops.copy(out, at, i + 5, i + 5 + n);
      at += n;
      i += 5 + n;
    } else damaged();
  }
  if (at !== length) damaged();
  return out;
}

function writeAll(fd: number, buf: Buffer, length: number): void {
  let offset = 0;
  while (offset < length) offset += fs.writeSync(fd, buf, offset, length - offset);
}

function encodeIndex(entries: readonly { hex: string; entry: PackEntry }[]): Buffer {
  const body = Buffer.alloc(16 + entries.length * IDX_ENTRY);
  body.writeUInt32BE(IDX_MAGIC, 0);
  body.writeUInt32BE(IDX_VERSION, 4);
  body.writeUInt32BE(entries.length, 8);
  entries.forEach(({ hex, entry }, i) => {
    const at = 16 + i * IDX_ENTRY;
    body.write(hex, at, 32, 'hex');
    body.writeDoubleBE(entry.offset, at + 32);
    body.writeDoubleBE(entry.storedLength, at + 40);
    body.writeDoubleBE(entry.rawLength, at + 48);
    body.writeUInt8(entry.method, at + 56);
  });
  const checksum = Buffer.from(sha256Digest(body).slice(7), 'hex');
  return Buffer.concat([body, checksum]);
}

function decodeIndex(id: string, buf: Buffer): { hex: string; entry: PackEntry }[] | null {
  if (buf.length < 48) return null;
  const body = buf.subarray(0, buf.length - 32);
  if (sha256Digest(body).slice(7) !== buf.subarray(buf.length - 32).toString('hex')) return null;
  if (body.readUInt32BE(0) !== IDX_MAGIC || body.readUInt32BE(4) !== IDX_VERSION) return null;
  const count = body.readUInt32BE(8);
  if (body.length !== 16 + count * IDX_ENTRY) return null;
  const out: { hex: string; entry: PackEntry }[] = [];
  for (let i = 0; i < count; i++) {
    const at = 16 + i * IDX_ENTRY;
    const method = body.readUInt8(at + 56);
    out.push({
      hex: body.toString('hex', at, at + 32),
      entry: {
        pack: id,
        offset: body.readDoubleBE(at + 32),
        storedLength: body.readDoubleBE(at + 40),
        rawLength: body.readDoubleBE(at + 48),
        method: method === 1 || method === 2 ? method : 0,
      },
    });
  }
  return out;
}
