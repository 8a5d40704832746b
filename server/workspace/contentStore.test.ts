import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContentStore } from './contentStore.ts';
import { WorkspaceError } from './WorkspaceError.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(join(os.tmpdir(), 'studio-blobs-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function errorOf(fn: () => unknown): WorkspaceError {
  try {
    fn();
  } catch (err) {
    if (err instanceof WorkspaceError) return err;
    throw err;
  }
  throw new Error('expected a WorkspaceError');
}

describe('ContentStore', () => {
  it('stores bytes under their sha256 digest and returns them exactly', () => {
    const store = new ContentStore(dir);
    const bytes = Buffer.from([0, 255, 10, 13, 0xe2, 0x82, 0xac]);
    const hash = store.put(bytes);
    expect(hash).toBe('sha256:' + createHash('sha256').update(bytes).digest('hex'));
    expect(store.has(hash)).toBe(true);
    expect(store.get(hash).equals(bytes)).toBe(true);
    const hex = hash.slice(7);
    expect(fs.existsSync(join(dir, hex.slice(0, 2), hex.slice(2)))).toBe(true);
  });

  it('hashes strings as UTF-8 and is idempotent, leaving no temp files', () => {
    const store = new ContentStore(dir);
    const a = store.put('héllo');
    const b = store.put(Buffer.from('héllo', 'utf8'));
    expect(a).toBe(b);
    const hex = a.slice(7);
    expect(fs.readdirSync(join(dir, hex.slice(0, 2)))).toEqual([hex.slice(2)]);
  });

  it('survives a fresh instance on the same directory', () => {
    const hash = new ContentStore(dir).put('kept');
    expect(new ContentStore(dir).get(hash).toString()).toBe('kept');
  });

  it('reports a missing or malformed hash as NOT_FOUND', () => {
    const store = new ContentStore(dir);
    const missing = 'sha256:' + '0'.repeat(64);
    expect(store.has(missing)).toBe(false);
    expect(errorOf(() => store.get(missing)).code).toBe('NOT_FOUND');
    expect(store.has('sha256:../../etc/passwd')).toBe(false);
    expect(errorOf(() => store.get('sha256:../../etc/passwd')).code).toBe('NOT_FOUND');
  });

  it('detects a damaged blob on read and repairs it on the next put', () => {
    const store = new ContentStore(dir);
    const hash = store.put('original');
    const hex = hash.slice(7);
    const file = join(dir, hex.slice(0, 2), hex.slice(2));
    fs.chmodSync(file, 0o644);
    fs.writeFileSync(file, 'tampered');
    expect(errorOf(() => store.get(hash)).code).toBe('HASH_MISMATCH');
    fs.writeFileSync(file, 'short');
    store.put('original');
    expect(store.get(hash).toString()).toBe('original');
  });
});
