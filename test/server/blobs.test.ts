/**
 * GET /api/blobs/<hash>: the stored bytes of one checkpointed file version, for file diffs.
 * Only with the token; only well-formed, stored hashes.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from './harness.ts';
import type { Harness } from './harness.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h.dispose();
});

const hashOf = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

describe('GET /api/blobs', () => {
  it('returns the exact bytes of a checkpointed file to a client with the token', async () => {
    const bytes = readFileSync(join(h.server.dataDir, 'projects', 'sample-app', 'README.md'));
    const res = await fetch(`${h.server.url}/api/blobs/${hashOf(bytes)}`, {
      headers: { authorization: `Bearer ${h.server.token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('refuses a request without the token', async () => {
    const bytes = readFileSync(join(h.server.dataDir, 'projects', 'sample-app', 'README.md'));
    const res = await fetch(`${h.server.url}/api/blobs/${hashOf(bytes)}`);
    expect(res.status).toBe(401);
  });

  it('answers 404 for an unknown or malformed hash', async () => {
    const headers = { authorization: `Bearer ${h.server.token}` };
    const unknown = await fetch(`${h.server.url}/api/blobs/sha256:${'0'.repeat(64)}`, { headers });
    expect(unknown.status).toBe(404);
    const malformed = await fetch(`${h.server.url}/api/blobs/..%2F..%2Fstudio.db`, { headers });
    expect(malformed.status).toBe(404);
  });
});
