import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContentStore } from './contentStore.ts';
import { sha256Digest } from './manifest.ts';
import { WorkspaceError } from './WorkspaceError.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(join(os.tmpdir(), 'studio-blobs-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof WorkspaceError ? err.code : 'not a WorkspaceError';
  }
  return undefined;
}

const packFiles = () => fs.readdirSync(join(dir, 'packs')).sort();

describe('ContentStore', () => {
  it('stores bytes under their sha256 digest, compressed in one pack, and returns them exactly', () => {
    const store = new ContentStore(dir);
    const text = Buffer.from('const x = 1;\n'.repeat(1000));
    const binary = Buffer.from([0, 1, 2, 254, 255]);
    const a = store.put(text);
    const b = store.put(binary);
    expect(a).toBe(sha256Digest(text));
    expect(store.get(a).equals(text)).toBe(true);
    expect(store.get(b).equals(binary)).toBe(true);
    store.flush();
    const files = packFiles();
    expect(files.filter((f) => f.endsWith('.pack'))).toHaveLength(1);
    expect(files.filter((f) => f.endsWith('.idx'))).toHaveLength(1);
    // Text compresses: the pack holds far fewer bytes than went in.
    const pack = files.find((f) => f.endsWith('.pack'))!;
    expect(fs.statSync(join(dir, 'packs', pack)).size).toBeLessThan(text.length / 4);
  });

  it('is idempotent, and hashes strings as UTF-8', () => {
    const store = new ContentStore(dir);
    expect(store.put('héllo')).toBe(sha256Digest(Buffer.from('héllo', 'utf8')));
    store.put('héllo');
    store.flush();
    expect(store.get(sha256Digest('héllo')).toString('utf8')).toBe('héllo');
    expect(packFiles()).toHaveLength(2);
  });

  it('keeps only flushed blobs for a fresh instance (a crash before flush stores nothing)', () => {
    const store = new ContentStore(dir);
    const kept = store.put('kept');
    store.flush();
    const lost = store.put('lost before flush');
    const fresh = new ContentStore(dir);
    expect(fresh.get(kept).toString()).toBe('kept');
    expect(fresh.has(lost)).toBe(false);
    expect(codeOf(() => fresh.get(lost))).toBe('NOT_FOUND');
  });

  it('detects a damaged pack on read', () => {
    const store = new ContentStore(dir);
    const hash = store.put(Buffer.from('abcdefgh'.repeat(100)));
    store.flush();
    const pack = packFiles().find((f) => f.endsWith('.pack'))!;
    const fd = fs.openSync(join(dir, 'packs', pack), 'r+');
    fs.writeSync(fd, Buffer.from([0xff, 0xff, 0xff]), 0, 3, 2);
    fs.closeSync(fd);
    expect(codeOf(() => new ContentStore(dir).get(hash))).toBe('HASH_MISMATCH');
  });

  it('streams a large raw blob to a file exactly, and refuses a damaged one after copying', () => {
    const store = new ContentStore(dir);
    // Incompressible and over the 1 MiB copy piece: stored raw, copied in pieces.
    const big = randomBytes(3 * 1024 * 1024 + 17);
    const hash = store.put(big);
    store.flush();
    const out = join(dir, 'out.bin');
    const fd = fs.openSync(out, 'w');
    expect(store.writeTo(hash, fd)).toBe(big.length);
    fs.closeSync(fd);
    expect(fs.readFileSync(out).equals(big)).toBe(true);
    expect(store.rawLength(hash)).toBe(big.length);

    const pack = packFiles().find((f) => f.endsWith('.pack'))!;
    const packFd = fs.openSync(join(dir, 'packs', pack), 'r+');
    fs.writeSync(packFd, Buffer.from([0xee]), 0, 1, 2 * 1024 * 1024 + 5);
    fs.closeSync(packFd);
    const fd2 = fs.openSync(join(dir, 'out2.bin'), 'w');
    expect(codeOf(() => new ContentStore(dir).writeTo(hash, fd2))).toBe('HASH_MISMATCH');
    fs.closeSync(fd2);
  });

  it('writes deflated blobs exactly one after another, and refuses a damaged one without losing the next', () => {
    const store = new ContentStore(dir);
    const texts = [0, 1, 2].map((i) =>
      Buffer.from(`line ${i} of a compressible text\n`.repeat(400 + i)),
    );
    const hashes = texts.map((t) => store.put(t));
    store.flush();
    const writeOut = (s: ContentStore, hash: string, name: string): Buffer => {
      const fd = fs.openSync(join(dir, name), 'w');
      try {
        s.writeTo(hash, fd);
      } finally {
        fs.closeSync(fd);
      }
      return fs.readFileSync(join(dir, name));
    };
    texts.forEach((t, i) => expect(writeOut(store, hashes[i]!, `t${i}`).equals(t)).toBe(true));

    // Damage the middle blob's deflated bytes: that one is refused, the next still comes out.
    const pack = packFiles().find((f) => f.endsWith('.pack'))!;
    const packPath = join(dir, 'packs', pack);
    const packBytes = fs.readFileSync(packPath);
    const fresh = new ContentStore(dir);
    const firstLength = fs.statSync(join(dir, 't0')).size;
    expect(firstLength).toBe(texts[0]!.length);
    const packFd = fs.openSync(packPath, 'r+');
    // Every blob here deflates to well under a third of the pack: the middle third is blob 1's.
    const at = Math.floor(packBytes.length / 2);
    fs.writeSync(packFd, Buffer.alloc(24, 0xff), 0, 24, at);
    fs.closeSync(packFd);
    expect(codeOf(() => writeOut(fresh, hashes[1]!, 'bad'))).toBe('HASH_MISMATCH');
    expect(writeOut(fresh, hashes[2]!, 'after').equals(texts[2]!)).toBe(true);
    expect(writeOut(fresh, hashes[0]!, 'again').equals(texts[0]!)).toBe(true);
  });

  it('deflates each blob exactly as deflateRawSync at level 1 does, and keeps what does not shrink raw', () => {
    const store = new ContentStore(dir);
    const texts = [
      Buffer.from('short text that repeats, '.repeat(8)),
      Buffer.from(`${'a mid-sized line of source\n'.repeat(900)}`),
      // Over the 16 KiB sample: the sample decides, then the whole is deflated.
      Buffer.from(`${'const value = items.map((item) => item.index);\n'.repeat(2000)}`),
    ];
    // Incompressible: over the sample (refused by it) and under it (deflated, then kept raw).
    const noise = [randomBytes(40 * 1024), randomBytes(3000)];
    const hashes = [...texts, ...noise].map((b) => store.put(b));
    store.flush();
    const pack = fs.readFileSync(
      join(
        dir,
        'packs',
        packFiles().find((f) => f.endsWith('.pack'))!,
      ),
    );
    for (const t of texts)
      expect(pack.indexOf(deflateRawSync(t, { level: 1 }))).toBeGreaterThanOrEqual(0);
    for (const n of noise) expect(pack.indexOf(n)).toBeGreaterThanOrEqual(0);
    const fresh = new ContentStore(dir);
    [...texts, ...noise].forEach((b, i) => expect(fresh.get(hashes[i]!).equals(b)).toBe(true));
  });

  it('still reads a blob of the older loose layout', () => {
    const hash = sha256Digest('legacy');
    fs.mkdirSync(join(dir, hash.slice(7, 9)), { recursive: true });
    fs.writeFileSync(join(dir, hash.slice(7, 9), hash.slice(9)), 'legacy');
    const store = new ContentStore(dir);
    expect(store.has(hash)).toBe(true);
    expect(store.get(hash).toString()).toBe('legacy');
  });
});

describe('ContentStore.collectGarbage', () => {
  it('removes unreferenced blobs, rewrites half-dead packs and keeps live ones', () => {
    const store = new ContentStore(dir);
    const live = store.put('live one');
    const dead = [store.put('dead one'), store.put('dead two'), store.put('dead three')];
    store.flush();
    const deadPack = store.put('all dead');
    store.flush();
    const result = store.collectGarbage({ live: new Set([live]), graceMs: 0 });
    expect(result.blobsRemoved).toBe(4);
    expect(result.packsRewritten).toBe(1);
    expect(result.packsDeleted).toBe(1);
    const fresh = new ContentStore(dir);
    expect(fresh.get(live).toString()).toBe('live one');
    for (const h of [...dead, deadPack]) expect(fresh.has(h)).toBe(false);
  });

  it('never removes content younger than the grace period (a checkpoint still being written)', () => {
    const store = new ContentStore(dir);
    const fresh = store.put('written by a checkpoint that has not committed yet');
    store.flush();
    const result = store.collectGarbage({ live: new Set(), graceMs: 60_000 });
    expect(result.blobsRemoved).toBe(0);
    expect(store.get(fresh)).toBeTruthy();
    expect(store.collectGarbage({ live: new Set(), graceMs: 0 }).blobsRemoved).toBe(1);
  });
});

describe('ContentStore.putDelta', () => {
  const baseText = Buffer.from(
    Array.from({ length: 400 }, (_, i) => `line ${i} ${sha256Digest(String(i))}\n`).join(''),
  );
  const edited = Buffer.concat([
    baseText.subarray(0, 1000),
    Buffer.from('an edit of its own\n'),
    baseText.subarray(1200),
  ]);
  const pieces = [
    { copy: 0, length: 1000 },
    { bytes: Buffer.from('an edit of its own\n') },
    { copy: 1200, length: baseText.length - 1200 },
  ];

  it('stores a blob as pieces of a base and gives back its exact bytes, also to a fresh instance', () => {
    const store = new ContentStore(dir);
    const base = store.put(baseText);
    store.flush();
    const hash = sha256Digest(edited);
    expect(store.putDelta(hash, edited.length, base, baseText, pieces)).toBe(true);
    store.flush();
    expect(store.get(hash).equals(edited)).toBe(true);
    expect(store.rawLength(hash)).toBe(edited.length);
    const fresh = new ContentStore(dir);
    expect(fresh.get(hash).equals(edited)).toBe(true);
    const out = join(dir, 'out.txt');
    const fd = fs.openSync(out, 'w');
    fresh.writeTo(hash, fd);
    fs.closeSync(fd);
    expect(fs.readFileSync(out).equals(edited)).toBe(true);
    // The delta's pack holds the base's digest and a few pieces, not the blob.
    const deltaPack = packFiles()
      .filter((f) => f.endsWith('.pack'))
      .map((f) => fs.statSync(join(dir, 'packs', f)).size)
      .sort((a, b) => a - b)[0]!;
    expect(deltaPack).toBeLessThan(100);
  });

  it('stores nothing when the pieces do not give the hash, or the base is not a fresh full blob of its own', () => {
    const store = new ContentStore(dir);
    const base = store.put(baseText);
    const hash = sha256Digest(edited);
    // Not sealed yet.
    expect(store.putDelta(hash, edited.length, base, baseText, pieces)).toBe(false);
    store.flush();
    expect(store.putDelta(hash, edited.length, base, baseText, pieces.slice(0, 2))).toBe(false);
    expect(store.putDelta(sha256Digest('other'), edited.length, base, baseText, pieces)).toBe(
      false,
    );
    // A base sealed more than ten minutes ago, or by another instance, is not used.
    expect(
      store.putDelta(hash, edited.length, base, baseText, pieces, Date.now() + 11 * 60_000),
    ).toBe(false);
    expect(new ContentStore(dir).putDelta(hash, edited.length, base, baseText, pieces)).toBe(false);
    expect(store.has(hash)).toBe(false);
    // A delta is never the base of another.
    expect(store.putDelta(hash, edited.length, base, baseText, pieces)).toBe(true);
    store.flush();
    const again = Buffer.concat([edited, Buffer.from('more\n')]);
    expect(
      store.putDelta(sha256Digest(again), again.length, hash, edited, [
        { copy: 0, length: edited.length },
        { bytes: Buffer.from('more\n') },
      ]),
    ).toBe(false);
  });

  it('reports a damaged delta as HASH_MISMATCH', () => {
    const store = new ContentStore(dir);
    const base = store.put(baseText);
    store.flush();
    const hash = sha256Digest(edited);
    store.putDelta(hash, edited.length, base, baseText, pieces);
    store.flush();
    const pack = packFiles()
      .filter((f) => f.endsWith('.pack'))
      .find((f) => fs.statSync(join(dir, 'packs', f)).size < 100)!;
    const fd = fs.openSync(join(dir, 'packs', pack), 'r+');
    fs.writeSync(fd, Buffer.from([0x00, 0x01]), 0, 2, 40);
    fs.closeSync(fd);
    expect(codeOf(() => new ContentStore(dir).get(hash))).toBe('HASH_MISMATCH');
  });

  it('keeps the base of a live delta through a GC, and lets both go once the delta is dead', () => {
    const store = new ContentStore(dir);
    const base = store.put(baseText);
    store.flush();
    const hash = sha256Digest(edited);
    store.putDelta(hash, edited.length, base, baseText, pieces);
    store.flush();
    expect(store.collectGarbage({ live: new Set([hash]), graceMs: 0 }).blobsRemoved).toBe(0);
    expect(new ContentStore(dir).get(hash).equals(edited)).toBe(true);
    expect(store.collectGarbage({ live: new Set(), graceMs: 0 }).blobsRemoved).toBe(2);
    expect(new ContentStore(dir).has(base)).toBe(false);
  });
});
