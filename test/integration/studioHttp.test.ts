/**
 * The web app's client for the resources outside GraphQL (src/graphql/studioHttp.ts) against
 * the real server on port 0: /healthz with its sources, /api/blobs bytes, and the refusals the
 * checkpoint browser and the connection badge explain (401, 404, a malformed hash).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_VERSION } from '../../protocol/contract.ts';
import { makeStudioHttp, StudioHttpError } from '../../src/graphql/studioHttp.ts';
import { startHarness, type Harness } from '../server/harness.ts';

let h: Harness;
const seen: string[] = [];
const recordingFetch: typeof fetch = (input, init) => {
  seen.push(String(input));
  return fetch(input, init);
};

beforeAll(async () => {
  h = await startHarness();
});

afterAll(async () => {
  await h.dispose();
});

const hashOf = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

describe('makeStudioHttp against the real server', () => {
  it('reads the health report with version, contract and the source states', async () => {
    const http = makeStudioHttp({ endpoint: h.httpUrl, token: h.token });
    const health = await http.getHealth();
    expect(health.ok).toBe(true);
    expect(health.contract).toBe(CONTRACT_VERSION);
    expect(health.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(health.sources?.map((s) => s.sourceId)).toContain('demo');
    expect(health.sources?.every((s) => typeof s.status === 'string')).toBe(true);
  });

  it('gets no sources with a wrong token, since the server lists them only for the token', async () => {
    const http = makeStudioHttp({ endpoint: h.httpUrl, token: 'wrong' });
    expect((await http.getHealth()).sources).toBeNull();
  });

  it('fetches the exact bytes of a stored file version, never putting the token in the URL', async () => {
    const bytes = readFileSync(join(h.server.dataDir, 'projects', 'sample-app', 'README.md'));
    const http = makeStudioHttp({ endpoint: h.httpUrl, token: h.token, fetchImpl: recordingFetch });
    const blob = await http.getBlob(hashOf(bytes));
    expect(Buffer.from(blob).equals(bytes)).toBe(true);
    expect(seen.some((url) => url.includes(h.token))).toBe(false);
    expect(seen.at(-1)).toBe(`${new URL(h.httpUrl).origin}/api/blobs/${hashOf(bytes)}`);
  });

  it('reports 401, 404 and a malformed hash as refusals of their own kind', async () => {
    const bytes = readFileSync(join(h.server.dataDir, 'projects', 'sample-app', 'README.md'));
    const wrong = makeStudioHttp({ endpoint: h.httpUrl, token: 'wrong' });
    await expect(wrong.getBlob(hashOf(bytes))).rejects.toMatchObject({
      kind: 'unauthorized',
      status: 401,
    });
    const http = makeStudioHttp({ endpoint: h.httpUrl, token: h.token });
    await expect(http.getBlob(`sha256:${'0'.repeat(64)}`)).rejects.toMatchObject({
      kind: 'notFound',
      status: 404,
    });
    const malformed = http.getBlob('../../studio.db');
    await expect(malformed).rejects.toBeInstanceOf(StudioHttpError);
    await expect(malformed).rejects.toMatchObject({ kind: 'badHash' });
  });
});
