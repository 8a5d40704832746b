/**
 * The attacks of issue 7 as reusable pieces, shared by the front-door test
 * (test/server/frontdoor.test.ts) and `npm run bench:frontdoor`: raw-socket HTTP (fetch would
 * normalise the malformed URLs), a /healthz probe that runs while an attack does, and builders
 * for the expensive GraphQL documents.
 */
import { connect } from 'node:net';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `head` (request line and headers, without the final blank line) plus `body` over a new TCP
 * connection and reads the answer until the server closes it (`Connection: close` is added).
 * Resolves with status 0 when the connection ends without a status line (a crashed server).
 */
export function rawRequest(
  port: number,
  head: string,
  body: Buffer | string = '',
  host = '127.0.0.1',
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer to ${head.split('\r\n')[0]}`));
    }, 20_000);
    socket.on('connect', () => {
      socket.write(`${head}\r\nConnection: close\r\n\r\n`);
      if (body.length) socket.write(body);
    });
    socket.on('data', (chunk) => chunks.push(chunk));
    // A server that answers before reading a whole body resets the connection: the answer is in.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const [headText = '', ...rest] = text.split('\r\n\r\n');
      const lines = headText.split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const at = line.indexOf(':');
        if (at > 0) headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
      }
      resolve({ status, headers, body: rest.join('\r\n\r\n') });
    });
  });
}

/** `GET <target>` with a Host header, over a raw socket. */
export function rawGet(
  port: number,
  target: string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const lines = [`GET ${target} HTTP/1.1`];
  if (!('host' in lowerKeys(headers))) lines.push(`Host: 127.0.0.1:${port}`);
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return rawRequest(port, lines.join('\r\n'));
}

function lowerKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

/** Request targets that broke (or could break) a hand-written decoder or `new URL`. */
export const MALFORMED_TARGETS: string[] = [
  '/%E0%A4%A',
  '/%',
  '//',
  '/%%',
  '/%zz',
  '/%C0%AF',
  '/%ED%A0%80',
  '/%FF%FE',
  '/assets/%',
  '/assets/%E0%A4%A.js',
  '/sessions/%E0%A4%A',
  '/graphql/%',
  '/healthz%',
  '/api/blobs/%',
  '/api/blobs/sha256:%E0%A4%A',
  '/..%2F..%2Fetc%2Fpasswd',
  '/%2e%2e/%2e%2e/package.json',
  '/..\\..\\package.json',
  '///etc/passwd',
  '//evil.example/x',
  '/?%E0%A4%A',
  '/index.html?a=%',
  '/' + 'a'.repeat(8_000),
  '/%00',
  '/%0d%0aSet-Cookie:%20x=1',
  'http://[::1',
  '*',
];

/**
 * `{ studioPendingApprovals { approval { studioToolCall { approval … approvalId } } } }`, its leaf
 * at `depth` (odd) or `depth - 1` (even): the approval ↔ tool call cycle.
 */
export function nestedApprovalQuery(depth: number): string {
  let inner = 'approvalId';
  // Root, approval and the leaf are three levels; each step adds studioToolCall and approval.
  for (let level = 3; level + 2 <= depth; level += 2)
    inner = `studioToolCall { approval { ${inner} } }`;
  return `{ studioPendingApprovals(appId: "1") { approval { ${inner} } } }`;
}

/** `count` aliases of one field, `{ a0: field … a1: field … }`. */
export function aliasedQuery(count: number, field: string): string {
  const parts: string[] = [];
  for (let i = 0; i < count; i++) parts.push(`a${i}: ${field}`);
  return `{ ${parts.join(' ')} }`;
}

export const eventPageField = (sessionId: string, size = 1000) =>
  `studioEventPage(sessionId: ${JSON.stringify(sessionId)}, page: "0", size: ${size}) { size events { ... on AgentEventBase { seq eventId } } }`;

export const projectField = (sessionId: string) =>
  `studioProject(sessionId: ${JSON.stringify(sessionId)}) { contentHash }`;

export interface HealthProbe {
  /** Resolves once the probe has answered once (warm), where the probe supports it. */
  ready?: Promise<void>;
  /** Stops probing and resolves with every answered probe's latency (ms) and failures. */
  stop(): Promise<{ answered: number; failed: number; maxMs: number; latencies: number[] }>;
}

/**
 * GET /healthz over a fresh connection, one after another, until stopped: how long the server
 * keeps a trivial request waiting while something else runs.
 */
export function probeHealth(port: number, host = '127.0.0.1'): HealthProbe {
  let running = true;
  const latencies: number[] = [];
  let failed = 0;
  const once = () =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const req = request(
        { host, port, path: '/healthz', agent: false, timeout: 30_000 },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) latencies.push(performance.now() - started);
            else failed++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        failed++;
        resolve();
      });
      req.on('timeout', () => req.destroy());
      req.end();
    });
  const loop = (async () => {
    while (running) {
      await once();
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { answered: latencies.length, failed, maxMs: Math.max(0, ...latencies), latencies };
    },
  };
}

/** The probe loop as plain JavaScript, for a worker thread (the attacker's own work cannot delay it). */
const PROBE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { request } = require('node:http');
const { performance } = require('node:perf_hooks');
let running = true;
const latencies = [];
let failed = 0;
parentPort.on('message', () => { running = false; });
const once = () => new Promise((resolve) => {
  const started = performance.now();
  const req = request({ host: workerData.host, port: workerData.port, path: '/healthz', agent: false, timeout: 30000 }, (res) => {
    res.resume();
    res.on('end', () => { if (res.statusCode === 200) latencies.push(performance.now() - started); else failed++; resolve(); });
  });
  req.on('error', () => { failed++; resolve(); });
  req.on('timeout', () => req.destroy());
  req.end();
});
(async () => {
  // The first probe pays for the worker's and the connection's warm-up: it is not counted.
  await once();
  latencies.length = 0;
  failed = 0;
  parentPort.postMessage('ready');
  while (running) { await once(); await new Promise((r) => setTimeout(r, 5)); }
  parentPort.postMessage({ answered: latencies.length, failed, maxMs: Math.max(0, ...latencies), latencies });
})();
`;

/**
 * probeHealth in a worker thread: its latencies measure the server alone, even while the calling
 * thread builds and sends a 50 MB frame.
 */
export function probeHealthInWorker(port: number, host = '127.0.0.1'): HealthProbe {
  const worker = new Worker(PROBE_WORKER, { eval: true, workerData: { port, host } });
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const result = new Promise<Awaited<ReturnType<HealthProbe['stop']>>>((resolve, reject) => {
    worker.on('message', (value) => (value === 'ready' ? onReady() : resolve(value as never)));
    worker.once('error', reject);
  });
  return {
    ready,
    stop: async () => {
      worker.postMessage('stop');
      const out = await result;
      await worker.terminate();
      return out;
    },
  };
}
