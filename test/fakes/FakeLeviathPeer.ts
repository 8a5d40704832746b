/**
 * A local stand-in for a Leviath `lev serve` gateway, speaking the documented wire format
 * (research/leviath-wire.md section 6b and the addendum): `Authorization: Bearer <token>` on
 * every route (the WebSocket upgrade accepts `?token=` too, as the real gateway does for
 * browsers); `GET /api/config`; `GET /api/runs` ({items, next_cursor, total, server_time},
 * `limit`, `cursor`) or, in legacy mode, only `GET /api/agents`; `GET /api/agents/{id}`;
 * `GET|POST /api/agents/{id}/interaction` (bare request or 404 {"error":"No pending
 * interaction"}; 202 with an empty body, or 404 {"error":"No such open interaction"}); `POST
 * .../message`; `DELETE /api/agents/{id}`; `GET /ws` frames pushed by the test. Records every
 * request, WebSocket upgrades included.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { readBody, record, waitUntil, type RecordedRequest } from './recordedRequest.ts';

export type FakeRun = Record<string, unknown> & { run_id: string };
export type FakeInteraction = Record<string, unknown> & { id: string };

export interface FakeLeviathOptions {
  token: string;
  config?: Record<string, unknown> | null;
  runs?: FakeRun[];
  interactions?: Record<string, FakeInteraction>;
  /** An older gateway: no /api/runs (404), only the unbounded /api/agents. */
  legacyAgentsOnly?: boolean;
  runsPageSize?: number;
  /**
   * The daemon acting on an accepted answer before the 202 goes back (the test's stand-in for
   * what Leviath does next, such as running the approved command); the response waits for it.
   */
  onAccepted?: (answer: AcceptedAnswer) => void | Promise<void>;
}

export interface AcceptedAnswer {
  runId: string;
  body: Record<string, unknown>;
}

export class FakeLeviathPeer {
  readonly requests: RecordedRequest[] = [];
  readonly answers: AcceptedAnswer[] = [];
  private readonly server: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sockets = new Set<WebSocket>();
  private readonly options: FakeLeviathOptions;
  private readonly runs: FakeRun[];
  /** run id -> open interactions, oldest first */
  private readonly open = new Map<string, FakeInteraction[]>();

  private constructor(options: FakeLeviathOptions) {
    this.options = options;
    this.runs = [...(options.runs ?? [])];
    for (const [runId, request] of Object.entries(options.interactions ?? {}))
      this.openInteraction(runId, request);
    this.server = createServer((request, response) => {
      void readBody(request).then((body) => {
        const recorded = record(request, body);
        this.requests.push(recorded);
        this.handle(recorded, response);
      });
    });
    this.server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.upgrade(request, socket, head),
    );
  }

  static async start(options: FakeLeviathOptions): Promise<FakeLeviathPeer> {
    const peer = new FakeLeviathPeer(options);
    await new Promise<void>((resolve) => peer.server.listen(0, '127.0.0.1', resolve));
    return peer;
  }

  get url(): string {
    const address = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${address.port}`;
  }

  /** Pushes frames to every connected `/ws` client, as the gateway serializes them (one JSON text message each). */
  send(...frames: Record<string, unknown>[]): void {
    for (const frame of frames) this.sendRaw(JSON.stringify(frame));
  }

  sendRaw(text: string): void {
    for (const socket of this.sockets) socket.send(text);
  }

  addRun(run: FakeRun): void {
    this.runs.unshift(run);
  }

  updateRun(runId: string, patch: Record<string, unknown>): void {
    const run = this.runs.find((r) => r.run_id === runId);
    if (run) Object.assign(run, patch);
  }

  /** The daemon asks something (GET .../interaction now returns it; POST accepts an answer once). */
  openInteraction(runId: string, request: FakeInteraction): void {
    const list = this.open.get(runId) ?? [];
    list.push(request);
    this.open.set(runId, list);
  }

  /** The interaction was answered elsewhere (another console) or timed out: a POST now gets 404. */
  closeInteraction(requestId: string): void {
    for (const [runId, list] of this.open)
      this.open.set(
        runId,
        list.filter((r) => r.id !== requestId),
      );
  }

  /** Drops every WebSocket connection (terminate: no close handshake). */
  dropSockets(): void {
    for (const socket of this.sockets) socket.terminate();
    this.sockets.clear();
  }

  socketCount(): number {
    return this.sockets.size;
  }

  async waitForSockets(count: number): Promise<void> {
    await waitUntil(() => this.sockets.size >= count, 5000, `${count} WebSocket client(s)`);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private authorized(headers: IncomingMessage['headers'], url: URL, allowQuery: boolean): boolean {
    if (headers.authorization === `Bearer ${this.options.token}`) return true;
    return allowQuery && url.searchParams.get('token') === this.options.token;
  }

  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(request.url ?? '/', 'http://fake.local');
    this.requests.push(record(request, ''));
    if (!this.authorized(request.headers, url, true)) {
      socket.end(
        'HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n\r\n{"error":"Unauthorized"}',
      );
      return;
    }
    if (url.pathname !== '/ws' && !/^\/ws\/agents\/[^/]+$/.test(url.pathname)) {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      this.sockets.add(ws);
      ws.on('close', () => this.sockets.delete(ws));
    });
  }

  private handle(request: RecordedRequest, response: ServerResponse): void {
    const url = new URL(request.url, 'http://fake.local');
    if (!this.authorized(request.headers, url, false))
      return send(response, 401, { error: 'Unauthorized' });
    const path = request.pathname;
    if (request.method === 'GET' && path === '/api/config') {
      return this.options.config === null
        ? send(response, 404, { error: 'Not found' })
        : send(response, 200, this.options.config ?? { api_version: '1', capabilities: [] });
    }
    if (request.method === 'GET' && path === '/api/runs') {
      if (this.options.legacyAgentsOnly) return send(response, 404, { error: 'Not found' });
      return this.listRuns(request, response);
    }
    if (request.method === 'GET' && path === '/api/agents') return send(response, 200, this.runs);
    const agent = /^\/api\/agents\/([^/]+)(\/(interaction|message))?$/.exec(path);
    if (!agent) return send(response, 404, { error: 'Not found' });
    const runId = decodeURIComponent(agent[1] ?? '');
    const run = this.runs.find((r) => r.run_id === runId);
    const sub = agent[3];
    if (!sub && request.method === 'GET')
      return run ? send(response, 200, run) : send(response, 404, { error: 'No such agent' });
    if (!sub && request.method === 'DELETE')
      return run ? send(response, 202, null) : send(response, 404, { error: 'No such agent' });
    if (sub === 'interaction' && request.method === 'GET') {
      const first = this.open.get(runId)?.[0];
      return first
        ? send(response, 200, first)
        : send(response, 404, { error: 'No pending interaction' });
    }
    if (sub === 'interaction' && request.method === 'POST')
      return this.answer(runId, request, response);
    if (sub === 'message' && request.method === 'POST') {
      const body = request.json as { message?: unknown } | undefined;
      if (typeof body?.message !== 'string')
        return send(response, 400, { error: 'message is required' });
      return run ? send(response, 202, null) : send(response, 404, { error: 'No such agent' });
    }
    return send(response, 405, { error: 'Method not allowed' });
  }

  private listRuns(request: RecordedRequest, response: ServerResponse): void {
    const limit = Math.min(
      Math.max(Number(request.query.limit?.[0] ?? 50) || 50, 1),
      200,
      this.options.runsPageSize ?? 200,
    );
    const cursor = request.query.cursor?.[0];
    const offset = cursor ? Number(/^c(\d+)$/.exec(cursor)?.[1] ?? 0) : 0;
    const items = this.runs.slice(offset, offset + limit);
    const next = offset + limit < this.runs.length ? `c${offset + limit}` : null;
    send(response, 200, {
      items,
      next_cursor: next,
      total: this.runs.length,
      server_time: 1786410000,
    });
  }

  private answer(runId: string, request: RecordedRequest, response: ServerResponse): void {
    if (request.headers['content-type'] !== 'application/json')
      return send(response, 415, { error: 'content-type must be application/json' });
    const body = request.json;
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return send(response, 400, { error: 'invalid body' });
    const b = body as Record<string, unknown>;
    const valid =
      typeof b.request_id === 'string' &&
      (b.value === undefined || typeof b.value === 'string') &&
      (b.choice_index === undefined ||
        (Number.isInteger(b.choice_index) && (b.choice_index as number) >= 0)) &&
      (b.approved === undefined || typeof b.approved === 'boolean') &&
      (b.scope === undefined || ['once', 'stage', 'session', 'run'].includes(String(b.scope))) &&
      Object.keys(b).every((k) =>
        ['request_id', 'value', 'choice_index', 'approved', 'scope', 'feedback'].includes(k),
      );
    if (!valid) return send(response, 400, { error: 'invalid body' });
    // `{id}` is not used for matching: request ids are globally unique.
    const owner = [...this.open.entries()].find(([, list]) =>
      list.some((r) => r.id === b.request_id),
    );
    if (!owner) return send(response, 404, { error: 'No such open interaction' });
    this.closeInteraction(String(b.request_id));
    const accepted = { runId, body: b };
    this.answers.push(accepted);
    void Promise.resolve(this.options.onAccepted?.(accepted)).then(
      () => send(response, 202, null),
      (error: unknown) => send(response, 500, { error: String(error) }),
    );
  }
}

function send(response: ServerResponse, status: number, body: unknown): void {
  if (body === null) {
    response.writeHead(status);
    response.end();
    return;
  }
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
