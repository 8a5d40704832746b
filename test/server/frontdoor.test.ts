/**
 * The front door (issue 7) over real sockets: no request target crashes the server, expensive
 * documents and oversized bodies or frames are refused while /healthz keeps answering, foreign
 * Hosts and Origins are refused, CORS answers only listed origins, inputs are capped, and the
 * built app is served by sirv (ETag, precompressed files, no source maps unless asked).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import {
  MALFORMED_TARGETS,
  aliasedQuery,
  eventPageField,
  nestedApprovalQuery,
  probeHealth,
  projectField,
  rawGet,
  rawRequest,
} from '../bench/frontdoorAttacks.ts';
import { ensureBuilt, ROOT } from '../e2e/harness.ts';
import { REQUEST_LIMITS } from '../../server/limits.ts';
import { Projects } from '../../server/engine/projects.ts';
import { appendMany, attach, createSession, makeClient, startHarness } from './harness.ts';
import type { Harness } from './harness.ts';

const ALLOWED_ORIGIN = 'https://studio.example.com';
let h: Harness;
let port: number;
let liveSession: string;
let projectSession: string;

beforeAll(async () => {
  ensureBuilt();
  h = await startHarness({
    staticDir: join(ROOT, 'dist'),
    allowedOrigins: [ALLOWED_ORIGIN],
    allowedHosts: ['studio.example.com'],
  });
  port = h.server.port;
  const c = makeClient(h);
  const session = await createSession(c, 'BUILD', 'sample-app');
  projectSession = session.sessionId;
  liveSession = session.sessionId;
  await appendMany(h, liveSession, 1_200, 'frontdoor');
});

afterAll(async () => {
  await h.dispose();
});

interface GqlAnswer {
  status: number;
  headers: Headers;
  body: {
    data?: Record<string, unknown> | null;
    errors?: { message: string; extensions?: { code?: string; field?: string } }[];
  };
}

async function gql(
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<GqlAnswer> {
  const res = await fetch(h.httpUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${h.token}`,
      ...headers,
    },
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as GqlAnswer['body'] };
}

/** Runs `attack` with a /healthz probe beside it; the probe must have been answered every time. */
async function withHealthProbe<T>(attack: () => Promise<T>): Promise<T> {
  const probe = probeHealth(port);
  const out = await attack();
  const health = await probe.stop();
  expect(health.failed).toBe(0);
  expect(health.answered).toBeGreaterThan(0);
  return out;
}

async function healthy(): Promise<void> {
  const res = await fetch(`${h.server.url}/healthz`);
  expect(res.status).toBe(200);
  expect(((await res.json()) as { ok: boolean }).ok).toBe(true);
}

describe('malformed request targets', () => {
  it('has a table of at least 20', () => {
    expect(MALFORMED_TARGETS.length).toBeGreaterThanOrEqual(20);
  });

  for (const target of MALFORMED_TARGETS)
    it(`answers ${JSON.stringify(target.slice(0, 40))} and keeps serving`, async () => {
      const res = await rawGet(port, target);
      expect(res.status).toBeGreaterThanOrEqual(200);
      expect(res.status).toBeLessThan(500);
      // Nothing outside dist/ is ever served.
      expect(res.body).not.toContain('"name": "agent-studio"');
      expect(res.body).not.toContain('root:x:0');
      await healthy();
    });

  it('answers a request line that is not HTTP with 400', async () => {
    const res = await rawRequest(port, 'GET /\u0000 HTTP/1.1\r\nHost: 127.0.0.1');
    expect(res.status).toBe(400);
    await healthy();
  });
});

describe('what a request may cost', () => {
  it('refuses a depth-500 nested query as bad input while /healthz answers', async () => {
    const out = await withHealthProbe(() => gql(nestedApprovalQuery(500)));
    expect(out.body.data ?? null).toBeNull();
    expect(out.body.errors?.[0]?.message).toMatch(/depth/i);
    expect(out.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('still answers a nested query within the depth limit', async () => {
    const out = await gql(nestedApprovalQuery(REQUEST_LIMITS.depth - 1));
    expect(out.body.errors).toBeUndefined();
    expect(Array.isArray(out.body.data?.studioPendingApprovals)).toBe(true);
  });

  it('refuses 1000 aliases of studioEventPage(size: 1000) while /healthz answers', async () => {
    const out = await withHealthProbe(() => gql(aliasedQuery(1000, eventPageField(liveSession))));
    expect(out.body.data ?? null).toBeNull();
    expect(out.body.errors?.[0]?.message).toMatch(/alias|token|rows/i);
  });

  it('refuses a few full event pages in one request past the per-request event budget', async () => {
    const count = Math.floor(REQUEST_LIMITS.rowsPerRequest / 1000) + 1;
    const out = await gql(aliasedQuery(count, eventPageField(liveSession)));
    expect(out.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(out.body.errors?.[0]?.message).toMatch(/more than 5000 rows/);
  });

  it('refuses 1000 aliases of studioProject while /healthz answers', async () => {
    const out = await withHealthProbe(() => gql(aliasedQuery(1000, projectField(projectSession))));
    expect(out.body.data ?? null).toBeNull();
    expect(out.body.errors?.[0]?.message).toMatch(/alias|token|rows/i);
  });

  it('scans the project folder once for every studioProject field of one request', async () => {
    // Every scan is a Projects.syncProject (projects.ts), whoever asks for it.
    const scans = vi.spyOn(Projects.prototype, 'syncProject');
    try {
      const out = await gql(aliasedQuery(50, projectField(projectSession)));
      expect(out.body.errors).toBeUndefined();
      expect(Object.keys(out.body.data ?? {})).toHaveLength(50);
      expect(scans).toHaveBeenCalledTimes(1);
    } finally {
      scans.mockRestore();
    }
  });

  it('answers a 10 MB body with 413 while /healthz answers', async () => {
    const body = JSON.stringify({
      query: 'query ($pad: String) { studioSources { sourceId } }',
      variables: { pad: 'x'.repeat(10 * 1024 * 1024) },
    });
    const res = await withHealthProbe(() =>
      rawRequest(
        port,
        [
          'POST /graphql HTTP/1.1',
          `Host: 127.0.0.1:${port}`,
          `Authorization: Bearer ${h.token}`,
          'Content-Type: application/json',
          `Content-Length: ${Buffer.byteLength(body)}`,
        ].join('\r\n'),
        body,
      ),
    );
    expect(res.status).toBe(413);
  });

  it('answers a chunked body that grows past the limit with 413', async () => {
    const chunk = 'x'.repeat(256 * 1024);
    const chunks = Array.from({ length: 6 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    const res = await rawRequest(
      port,
      [
        'POST /graphql HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        `Authorization: Bearer ${h.token}`,
        'Content-Type: application/json',
        'Transfer-Encoding: chunked',
      ].join('\r\n'),
      chunks.join('') + '0\r\n\r\n',
    );
    expect(res.status).toBe(413);
    await healthy();
  });

  it('refuses a document over the token cap', async () => {
    const fields = Array.from({ length: REQUEST_LIMITS.documentTokens }, () => '__typename').join(
      ' ',
    );
    const out = await gql(`{ ${fields} }`);
    expect(out.body.data ?? null).toBeNull();
    expect(out.body.errors?.[0]?.message).toMatch(/token/i);
  });
});

/** Opens a raw graphql-ws socket, sends `frame`, and resolves with the close code. */
function closeCodeAfter(frame: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(h.wsUrl, 'graphql-transport-ws', { headers });
    ws.on('open', () => ws.send(frame));
    ws.on('close', (code) => resolve(code));
    ws.on('error', () => {});
    ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
}

describe('WebSocket frames', () => {
  it('closes a socket whose connection_init is over the pre-auth frame limit with 1009', async () => {
    const frame = JSON.stringify({
      type: 'connection_init',
      payload: { pad: 'x'.repeat(REQUEST_LIMITS.wsFrameBytesBeforeAck * 2) },
    });
    await withHealthProbe(async () => {
      const codes = await Promise.all([0, 1, 2, 3].map(() => closeCodeAfter(frame)));
      expect(codes).toEqual([1009, 1009, 1009, 1009]);
    });
  });

  it('closes a 50 MB connection_init at its header, without reading it', async () => {
    const frame = JSON.stringify({
      type: 'connection_init',
      payload: { pad: 'x'.repeat(50 * 1024 * 1024) },
    });
    expect(await closeCodeAfter(frame)).toBe(1009);
    await healthy();
  });

  it('takes frames up to the post-auth limit once connection_init is accepted', async () => {
    const ws = new WebSocket(h.wsUrl, 'graphql-transport-ws');
    const messages: { type: string; payload?: unknown }[] = [];
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve) => ws.on('open', () => resolve()));
    ws.on('message', (data) => messages.push(JSON.parse(String(data)) as never));
    ws.send(
      JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${h.token}` } }),
    );
    await new Promise<void>((resolve) => {
      const check = () =>
        messages.some((m) => m.type === 'connection_ack') ? resolve() : setTimeout(check, 10);
      check();
    });
    // 64 KiB: over the pre-auth limit, well under the post-auth one.
    const padding = '#'.repeat(64 * 1024);
    ws.send(
      JSON.stringify({
        id: '1',
        type: 'subscribe',
        payload: { query: `${padding}\nquery { studioSources { sourceId } }` },
      }),
    );
    await new Promise<void>((resolve) => {
      const check = () =>
        messages.some((m) => m.type === 'complete' || m.type === 'error')
          ? resolve()
          : setTimeout(check, 10);
      check();
    });
    expect(messages.some((m) => m.type === 'next')).toBe(true);
    ws.close();
    expect(await closed).toBe(1005);
  });

  it('answers an over-cap document on a socket with an error message, and keeps the socket', async () => {
    const c = makeClient(h);
    const fields = Array.from({ length: REQUEST_LIMITS.documentTokens }, () => '__typename').join(
      ' ',
    );
    const errors = await new Promise<unknown[]>((resolve) => {
      c.ws.subscribe(
        { query: `{ ${fields} }` },
        { next: () => {}, error: (e) => resolve(e as unknown[]), complete: () => resolve([]) },
      );
    });
    expect(JSON.stringify(errors)).toMatch(/token/i);
    const ok = await new Promise<unknown>((resolve) => {
      c.ws.subscribe(
        { query: '{ studioSources { sourceId } }' },
        { next: (v) => resolve(v), error: (e) => resolve(e), complete: () => {} },
      );
    });
    expect(JSON.stringify(ok)).toContain('sourceId');
  });
});

describe('Host and Origin', () => {
  it('refuses a foreign Host (DNS rebinding) on every route', async () => {
    for (const target of ['/healthz', '/graphql', '/', '/api/blobs/x']) {
      const res = await rawGet(port, target, { Host: 'evil.example' });
      expect(res.status).toBe(403);
      expect(res.body).toContain('not allowed');
    }
  });

  it('answers a Host listed with --allowed-host', async () => {
    const res = await rawGet(port, '/healthz', { Host: 'studio.example.com' });
    expect(res.status).toBe(200);
  });

  it('refuses a foreign Origin with the right token, and echoes no Origin', async () => {
    const out = await gql('{ studioSources { sourceId } }', {}, { origin: 'http://evil.example' });
    expect(out.status).toBe(403);
    expect(out.headers.get('access-control-allow-origin')).toBeNull();
    expect(out.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('refuses Origin: null', async () => {
    const out = await gql('{ studioSources { sourceId } }', {}, { origin: 'null' });
    expect(out.status).toBe(403);
  });

  it('answers its own origin without CORS headers', async () => {
    const out = await gql('{ studioSources { sourceId } }', {}, { origin: h.server.url });
    expect(out.status).toBe(200);
    expect(out.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('gives a listed origin CORS for its own value, never credentials', async () => {
    const preflight = await fetch(h.httpUrl, {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
    const out = await gql('{ studioSources { sourceId } }', {}, { origin: ALLOWED_ORIGIN });
    expect(out.status).toBe(200);
    expect(out.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(out.headers.get('vary')).toContain('Origin');
  });

  it('refuses a WebSocket upgrade from a foreign Origin before it reads a frame', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(h.wsUrl, 'graphql-transport-ws', { origin: 'http://evil.example' });
      ws.on('open', () => reject(new Error('upgraded')));
      ws.on('error', () => {});
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    });
    expect(status).toBe(403);
  });

  it('refuses a WebSocket upgrade with a foreign Host', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(h.wsUrl, 'graphql-transport-ws', {
        headers: { host: 'evil.example' },
      });
      ws.on('open', () => reject(new Error('upgraded')));
      ws.on('error', () => {});
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    });
    expect(status).toBe(403);
  });
});

describe('inputs', () => {
  const ATTACH_DOC =
    'mutation ($i: AttachAgentClientInput!) { crowdyStudioAgentAttachClient(input: $i) { clientEpoch } }';

  it('refuses a clientInstanceId over 128 characters and stores nothing', async () => {
    const out = await gql(ATTACH_DOC, {
      i: {
        idempotencyKey: 'k-long-id',
        sessionId: liveSession,
        clientInstanceId: 'c'.repeat(200_000),
      },
    });
    expect(out.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(out.body.errors?.[0]?.extensions?.field).toBe(
      'crowdyStudioAgentAttachClient.input.clientInstanceId',
    );
    expect(out.body.errors?.[0]?.message).toMatch(/at most 128/);
  });

  it('refuses a sessionId of 129 characters and takes one of 128', async () => {
    const long = await gql(
      `{ crowdyStudioAgentSession(sessionId: "${'s'.repeat(129)}") { sessionId } }`,
    );
    expect(long.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const max = await gql(
      `{ crowdyStudioAgentSession(sessionId: "${'s'.repeat(128)}") { sessionId } }`,
    );
    expect(max.body.errors?.[0]?.extensions?.code).toBe('AGENT_SESSION_NOT_FOUND');
  });

  it('refuses a studioEventPage page past int64, and one whose last seq would be, as bad input', async () => {
    for (const page of ['1180591620717411303424', '9223372036854775807']) {
      const out = await gql(
        `{ studioEventPage(sessionId: ${JSON.stringify(liveSession)}, page: "${page}") { size } }`,
      );
      expect(out.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
  });

  it('range-checks maxBatch on the batch subscription', async () => {
    const c = makeClient(h);
    const errors = await new Promise<unknown>((resolve) => {
      c.ws.subscribe(
        {
          query: `subscription { studioAgentEventBatches(sessionId: ${JSON.stringify(liveSession)}, afterSeq: "0", maxBatch: 1000000) { throughSeq } }`,
        },
        { next: (v) => resolve(v), error: (e) => resolve(e), complete: () => {} },
      );
    });
    expect(JSON.stringify(errors)).toContain('BAD_USER_INPUT');
  });

  it('refuses crowdyStudioAgentSetMode with a projectId that is not the session’s project', async () => {
    const c = makeClient(h);
    const a = await attach(c, projectSession);
    for (const projectId of ['../../../../etc', 'cleanup-app']) {
      const out = await gql(
        'mutation ($i: SetAgentModeInput!) { crowdyStudioAgentSetMode(input: $i) { projectId } }',
        {
          i: {
            idempotencyKey: `k-mode-${projectId}`,
            sessionId: projectSession,
            clientEpoch: a.clientEpoch,
            mode: 'ASK',
            projectId,
          },
        },
      );
      expect(out.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(out.body.errors?.[0]?.extensions?.field).toBe('projectId');
    }
  });
});

describe('the built web app', () => {
  const indexHtml = () => readFileSync(join(ROOT, 'dist', 'index.html'), 'utf8');
  const script = () => /src="(\/assets\/[^"]+\.js)"/.exec(indexHtml())![1]!;

  it('answers If-None-Match with 304', async () => {
    const first = await fetch(`${h.server.url}${script()}`);
    const etag = first.headers.get('etag');
    expect(first.status).toBe(200);
    expect(etag).toBeTruthy();
    await first.arrayBuffer();
    const again = await fetch(`${h.server.url}${script()}`, {
      headers: { 'if-none-match': etag! },
    });
    expect(again.status).toBe(304);
  });

  it('serves the precompressed file to a client that accepts brotli', async () => {
    expect(existsSync(join(ROOT, 'dist', `${script()}.br`))).toBe(true);
    const res = await rawGet(port, script(), { 'Accept-Encoding': 'br' });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('br');
    expect(Number(res.headers['content-length'])).toBeLessThan(
      readFileSync(join(ROOT, 'dist', script())).length,
    );
  });

  it('serves the app shell for a client-side route and 404 for a missing asset', async () => {
    const route = await fetch(`${h.server.url}/sessions/abc`);
    expect(route.status).toBe(200);
    expect(await route.text()).toContain('<div id="root"');
    const missing = await fetch(`${h.server.url}/assets/nope.js`);
    expect(missing.status).toBe(404);
  });

  it('does not serve source maps unless asked, and does with serveSourceMaps', async () => {
    const map = `${script()}.map`;
    expect(existsSync(join(ROOT, 'dist', map))).toBe(true);
    expect((await fetch(`${h.server.url}${map}`)).status).toBe(404);
    const withMaps = await startHarness({
      staticDir: join(ROOT, 'dist'),
      serveSourceMaps: true,
      demo: false,
    });
    try {
      expect((await fetch(`${withMaps.server.url}${map}`)).status).toBe(200);
    } finally {
      await withMaps.dispose();
    }
  });
});
