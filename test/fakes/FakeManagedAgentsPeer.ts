/**
 * A local stand-in for the Claude Managed Agents sessions API (beta managed-agents-2026-04-01),
 * accepting exactly what the official `@anthropic-ai/sdk` 1.10.0 sends (its `client.beta.sessions`
 * resources, checked in test/server/bridges/managedAgentsSdkFake.test.ts): the credential as
 * `Authorization: Bearer <key>` (or an explicit `X-Api-Key`, which the SDK also accepts),
 * `anthropic-version: 2026-10-21`, `anthropic-beta` naming managed-agents-2026-04-01, and only the
 * query parameters the SDK's params types declare (so `?beta=true` is a 400). Streams are served
 * whatever the Accept header says (the SDK sends `application/json` on every request); `GET /v1/sessions/{id}`; the paged
 * `GET .../events` ({data, next_page}, `page` cursor, `limit`); the SSE `GET .../events/stream`
 * (`event: <type>` + `data: <json>`, a `ping` first, only events emitted after it opened);
 * `POST .../events` ({"events":[...]} -> {data:[sent events with ids]}) with the confirmation
 * rules (400 "does not match any agent.tool_use event" for an unknown id, 400 for a call that is
 * not `ask`, no `session_thread_id` param) and echoes (a subagent's confirmation comes back twice
 * with different ids). Threads (session-threads docs): `GET .../threads` (`limit`, `page`,
 * `statuses[]`; {data, next_page}; the primary thread listed first with `parent_thread_id: null`),
 * `GET .../threads/{tid}`, the paged `GET .../threads/{tid}/events` (`limit`, `page` only) and the
 * SSE `GET .../threads/{tid}/stream` (not `/events/stream`, which is a 404). A subagent thread
 * exists once a `session.thread_created` naming it is in the history; what it emits reaches the
 * session stream only when the test cross-posts it. Records every request it receives.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody, record, waitUntil, type RecordedRequest } from './recordedRequest.ts';

export type FakeEvent = Record<string, unknown> & { id?: string; type: string };

export interface FakeManagedAgentsOptions {
  apiKey: string;
  sessions: Record<
    string,
    {
      session: Record<string, unknown>;
      history: FakeEvent[];
      /** Subagent threads' own histories (the thread is created by its session.thread_created). */
      threadHistories?: Record<string, FakeEvent[]>;
    }
  >;
  /** Page size of the history list (the API caps `limit` at 1000). */
  pageSize?: number;
}

interface FakeSessionState {
  session: Record<string, unknown>;
  history: FakeEvent[];
  streams: Set<ServerResponse>;
  confirmed: Set<string>;
  threads: Map<string, FakeThreadState>;
}

interface FakeThreadState {
  thread: Record<string, unknown>;
  history: FakeEvent[];
  streams: Set<ServerResponse>;
}

export const BETA = 'managed-agents-2026-04-01';
export const VERSION = '2026-10-21';

/** The query parameters each endpoint's SDK params type declares. */
const LIST_EVENT_QUERY = new Set([
  'limit',
  'page',
  'order',
  'types[]',
  'created_at[gt]',
  'created_at[gte]',
  'created_at[lt]',
  'created_at[lte]',
]);
const STREAM_QUERY = new Set(['event_deltas[]']);
const PAGE_QUERY = new Set(['limit', 'page']);
const THREAD_LIST_QUERY = new Set(['limit', 'page', 'statuses[]']);
const NO_QUERY = new Set<string>();

export class FakeManagedAgentsPeer {
  readonly requests: RecordedRequest[] = [];
  /** Called after the fake handled a POST of events (after echoing them): tests push what the runtime does next. */
  onEventsSent: ((sessionId: string, sent: FakeEvent[]) => void) | null = null;
  private readonly server: Server;
  private readonly options: FakeManagedAgentsOptions;
  private readonly sessions = new Map<string, FakeSessionState>();
  private readonly failOnce = new Map<string, { status: number; type: string; message: string }>();
  private counter = 0;
  private clock = Date.parse('2026-11-30T12:00:00Z');

  private constructor(options: FakeManagedAgentsOptions) {
    this.options = options;
    for (const [id, s] of Object.entries(options.sessions)) {
      const state: FakeSessionState = {
        session: s.session,
        history: [],
        streams: new Set(),
        confirmed: new Set(),
        threads: new Map(),
      };
      this.sessions.set(id, state);
      this.appendToHistory(id, s.history);
      for (const [threadId, events] of Object.entries(s.threadHistories ?? {}))
        this.thread(id, threadId).history.push(...events);
    }
    this.server = createServer((request, response) => {
      void readBody(request).then((body) => {
        const recorded = record(request, body);
        this.requests.push(recorded);
        this.handle(recorded, response);
      });
    });
  }

  static async start(options: FakeManagedAgentsOptions): Promise<FakeManagedAgentsPeer> {
    const peer = new FakeManagedAgentsPeer(options);
    await new Promise<void>((resolve) => peer.server.listen(0, '127.0.0.1', resolve));
    return peer;
  }

  get url(): string {
    const address = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${address.port}`;
  }

  /** The runtime emits events: appended to the history and written to every open stream. */
  emit(sessionId: string, events: FakeEvent[]): void {
    const state = this.state(sessionId);
    for (const event of events) {
      this.record(sessionId, event);
      for (const stream of state.streams) writeSse(stream, event);
    }
  }

  /** Events that happen while no stream is open (or that a dropped stream missed): history only. */
  appendToHistory(sessionId: string, events: FakeEvent[]): void {
    for (const event of events) this.record(sessionId, event);
  }

  /**
   * A subagent thread emits events: appended to its history and written to its open streams;
   * with `crossPost` the same events (same ids) also reach the session stream and history.
   */
  emitThread(
    sessionId: string,
    threadId: string,
    events: FakeEvent[],
    options: { crossPost?: boolean } = {},
  ): void {
    const thread = this.thread(sessionId, threadId);
    for (const event of events) {
      thread.history.push(event);
      for (const stream of thread.streams) writeSse(stream, event);
    }
    if (options.crossPost) this.emit(sessionId, events);
  }

  /** Thread events no open thread stream saw (a dropped stream missed them): thread history only. */
  appendToThreadHistory(sessionId: string, threadId: string, events: FakeEvent[]): void {
    this.thread(sessionId, threadId).history.push(...events);
  }

  /** Ends every open stream of the thread mid-way (the connection is destroyed). */
  dropThreadStreams(sessionId: string, threadId: string): void {
    const thread = this.thread(sessionId, threadId);
    for (const stream of thread.streams) stream.destroy();
    thread.streams.clear();
  }

  openThreadStreams(sessionId: string, threadId: string): number {
    return this.state(sessionId).threads.get(threadId)?.streams.size ?? 0;
  }

  async waitForThreadStreams(sessionId: string, threadId: string, count: number): Promise<void> {
    await waitUntil(
      () => this.openThreadStreams(sessionId, threadId) >= count,
      5000,
      `${count} open stream(s) on ${sessionId}/${threadId}`,
    );
  }

  /** Requests the fake received for one thread path suffix (e.g. `/stream`). */
  threadRequests(sessionId: string, threadId: string, suffix: string): RecordedRequest[] {
    const path = `/v1/sessions/${sessionId}/threads/${threadId}${suffix}`;
    return this.requests.filter((r) => r.pathname === path);
  }

  /** Ends every open stream of the session mid-way (the connection is destroyed, not closed cleanly). */
  dropStreams(sessionId: string): void {
    const state = this.state(sessionId);
    for (const stream of state.streams) stream.destroy();
    state.streams.clear();
  }

  /** Ends every open stream with an in-band `event: error`. */
  errorStreams(sessionId: string): void {
    const state = this.state(sessionId);
    for (const stream of state.streams) {
      stream.write(
        `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`,
      );
      stream.end();
    }
    state.streams.clear();
  }

  /** The next confirmation for this tool use gets this error once (e.g. the 400 "does not match" race). */
  failNextConfirmation(
    toolUseId: string,
    status = 400,
    type = 'invalid_request_error',
    message?: string,
  ): void {
    this.failOnce.set(toolUseId, {
      status,
      type,
      message: message ?? `tool_use_id ${toolUseId} does not match any agent.tool_use event`,
    });
  }

  openStreams(sessionId: string): number {
    return this.state(sessionId).streams.size;
  }

  async waitForStreams(sessionId: string, count: number): Promise<void> {
    await waitUntil(
      () => this.openStreams(sessionId) >= count,
      5000,
      `${count} open stream(s) on ${sessionId}`,
    );
  }

  history(sessionId: string): FakeEvent[] {
    return [...this.state(sessionId).history];
  }

  /** POST bodies the fake accepted, as parsed JSON. */
  postedEvents(sessionId: string): Record<string, unknown>[] {
    return this.requests
      .filter((r) => r.method === 'POST' && r.pathname === `/v1/sessions/${sessionId}/events`)
      .flatMap((r) => (r.json as { events?: Record<string, unknown>[] } | undefined)?.events ?? []);
  }

  async close(): Promise<void> {
    for (const state of this.sessions.values())
      for (const stream of state.streams) stream.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Appends to the session history; thread lifecycle events create and update the thread resource. */
  private record(sessionId: string, event: FakeEvent): void {
    this.state(sessionId).history.push(event);
    const threadId = typeof event.session_thread_id === 'string' ? event.session_thread_id : null;
    if (!threadId || !event.type.startsWith('session.thread_')) return;
    const thread = this.thread(sessionId, threadId).thread;
    if (typeof event.agent_name === 'string') {
      thread.agent_name = event.agent_name;
      thread.agent = { ...(thread.agent as object), name: event.agent_name };
    }
    const status = event.type.replace(/^session\.thread_(status_)?/, '');
    if (['running', 'idle', 'rescheduling', 'terminated'].includes(status)) thread.status = status;
    if (status === 'rescheduled') thread.status = 'rescheduling';
  }

  private thread(sessionId: string, threadId: string): FakeThreadState {
    const state = this.state(sessionId);
    let thread = state.threads.get(threadId);
    if (!thread) {
      thread = {
        thread: {
          type: 'session_thread',
          id: threadId,
          session_id: sessionId,
          parent_thread_id: `sthr_primary_${sessionId}`,
          agent: { type: 'agent', name: null },
          status: 'running',
          archived_at: null,
          created_at: '2026-11-30T12:00:00Z',
        },
        history: [],
        streams: new Set(),
      };
      state.threads.set(threadId, thread);
    }
    return thread;
  }

  private state(sessionId: string): FakeSessionState {
    const state = this.sessions.get(sessionId);
    if (!state) throw new Error(`the fake has no session ${sessionId}`);
    return state;
  }

  private handle(request: RecordedRequest, response: ServerResponse): void {
    const bearer = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    const credential = bearer ?? request.headers['x-api-key'];
    if (credential !== this.options.apiKey)
      return sendError(response, 401, 'authentication_error', 'invalid authentication credentials');
    if (request.headers['anthropic-version'] !== VERSION)
      return sendError(
        response,
        400,
        'invalid_request_error',
        'anthropic-version header is required',
      );
    const betas = String(request.headers['anthropic-beta'] ?? '')
      .split(',')
      .map((s) => s.trim());
    if (!betas.includes(BETA))
      return sendError(
        response,
        400,
        'invalid_request_error',
        `this endpoint needs the ${BETA} beta`,
      );

    const threadMatch = /^\/v1\/sessions\/([^/]+)\/threads(?:\/([^/]+)(\/events|\/stream)?)?$/.exec(
      request.pathname,
    );
    if (threadMatch) return this.handleThreads(threadMatch, request, response);
    const match = /^\/v1\/sessions\/([^/]+)(\/events(\/stream)?)?$/.exec(request.pathname);
    if (!match) return sendError(response, 404, 'not_found_error', 'no such endpoint');
    const sessionId = decodeURIComponent(match[1] ?? '');
    const state = this.sessions.get(sessionId);
    if (!state)
      return sendError(response, 404, 'not_found_error', `session ${sessionId} not found`);

    const allowed = !match[2]
      ? NO_QUERY
      : match[3]
        ? STREAM_QUERY
        : request.method === 'GET'
          ? LIST_EVENT_QUERY
          : NO_QUERY;
    const unknownQuery = unknownParameter(request, allowed);
    if (unknownQuery) return sendError(response, 400, 'invalid_request_error', unknownQuery);
    if (!match[2] && request.method === 'GET') return sendJson(response, 200, state.session);
    if (match[3] && request.method === 'GET') return this.stream(state.streams, request, response);
    if (match[2] && request.method === 'GET') return this.list(state.history, request, response);
    if (match[2] && request.method === 'POST')
      return this.post(sessionId, state, request, response);
    return sendError(response, 405, 'invalid_request_error', 'method not allowed');
  }

  private handleThreads(
    match: RegExpExecArray,
    request: RecordedRequest,
    response: ServerResponse,
  ): void {
    const sessionId = decodeURIComponent(match[1] ?? '');
    const state = this.sessions.get(sessionId);
    if (!state)
      return sendError(response, 404, 'not_found_error', `session ${sessionId} not found`);
    if (request.method !== 'GET')
      return sendError(response, 405, 'invalid_request_error', 'method not allowed');
    const unknownQuery = unknownParameter(
      request,
      match[2] === undefined
        ? THREAD_LIST_QUERY
        : match[3] === '/events'
          ? PAGE_QUERY
          : match[3] === '/stream'
            ? STREAM_QUERY
            : NO_QUERY,
    );
    if (unknownQuery) return sendError(response, 400, 'invalid_request_error', unknownQuery);
    if (match[2] === undefined) {
      const statuses = request.query['statuses[]'];
      const primary: Record<string, unknown> = {
        type: 'session_thread',
        id: `sthr_primary_${sessionId}`,
        session_id: sessionId,
        parent_thread_id: null,
        agent: state.session.agent ?? null,
        status: state.session.status ?? 'running',
        archived_at: null,
      };
      const all = [primary, ...[...state.threads.values()].map((t) => t.thread)].filter(
        (t) => !statuses || statuses.includes(String(t.status)),
      );
      return this.list(all, request, response);
    }
    const threadId = decodeURIComponent(match[2]);
    const thread = state.threads.get(threadId);
    if (!thread) return sendError(response, 404, 'not_found_error', `thread ${threadId} not found`);
    if (match[3] === '/events') return this.list(thread.history, request, response);
    if (match[3] === '/stream') return this.stream(thread.streams, request, response);
    return sendJson(response, 200, thread.thread);
  }

  private list(items: unknown[], request: RecordedRequest, response: ServerResponse): void {
    const limit = Math.min(
      Number(request.query.limit?.[0] ?? 1000) || 1000,
      1000,
      this.options.pageSize ?? 1000,
    );
    const page = request.query.page?.[0];
    let offset = 0;
    if (page !== undefined) {
      const parsed = /^page_(\d+)$/.exec(page);
      if (!parsed) return sendError(response, 400, 'invalid_request_error', 'invalid page cursor');
      offset = Number(parsed[1]);
    }
    const data = items.slice(offset, offset + limit);
    const next = offset + limit < items.length ? `page_${offset + limit}` : null;
    sendJson(response, 200, { data, next_page: next });
  }

  private stream(
    streams: Set<ServerResponse>,
    _request: RecordedRequest,
    response: ServerResponse,
  ): void {
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    response.write(`event: ping\ndata: ${JSON.stringify({ type: 'ping' })}\n\n`);
    streams.add(response);
    response.on('close', () => streams.delete(response));
  }

  private post(
    sessionId: string,
    state: FakeSessionState,
    request: RecordedRequest,
    response: ServerResponse,
  ): void {
    if (request.headers['content-type'] !== 'application/json')
      return sendError(
        response,
        400,
        'invalid_request_error',
        'content-type must be application/json',
      );
    const events = (request.json as { events?: unknown } | undefined)?.events;
    if (!Array.isArray(events) || events.length === 0)
      return sendError(
        response,
        400,
        'invalid_request_error',
        'events: at least one event is required',
      );
    const sent: FakeEvent[] = [];
    const echoes: FakeEvent[] = [];
    for (const raw of events as Record<string, unknown>[]) {
      const type = raw.type;
      if (type === 'user.tool_confirmation') {
        const error = this.checkConfirmation(state, raw);
        if (error) return sendError(response, 400, 'invalid_request_error', error);
        const toolUseId = String(raw.tool_use_id);
        const failure = this.failOnce.get(toolUseId);
        if (failure) {
          this.failOnce.delete(toolUseId);
          return sendError(response, failure.status, failure.type, failure.message);
        }
        state.confirmed.add(toolUseId);
        const event = this.stamp({ ...raw, type: 'user.tool_confirmation' }, true);
        sent.push(event);
        const toolUse = state.history.find((e) => e.id === toolUseId);
        const thread =
          typeof toolUse?.session_thread_id === 'string' ? toolUse.session_thread_id : null;
        // Routed to the subagent's thread: the echo carries the thread id, and a second copy with
        // another id comes from the thread itself.
        if (thread)
          echoes.push(
            { ...event, session_thread_id: thread },
            this.stamp({ ...raw, type: 'user.tool_confirmation', session_thread_id: thread }, true),
          );
        else echoes.push(event);
      } else if (type === 'user.message') {
        if (!Array.isArray(raw.content) || raw.content.length === 0)
          return sendError(response, 400, 'invalid_request_error', 'user.message needs content');
        const event = this.stamp({ ...raw, type: 'user.message' }, false);
        sent.push(event);
        echoes.push({ ...event, processed_at: this.now() });
      } else if (type === 'user.interrupt') {
        const event = this.stamp({ ...raw, type: 'user.interrupt' }, false);
        sent.push(event);
        echoes.push({ ...event, processed_at: this.now() });
      } else {
        return sendError(
          response,
          400,
          'invalid_request_error',
          `unsupported event type ${String(type)}`,
        );
      }
    }
    sendJson(response, 200, { data: sent });
    this.emit(sessionId, echoes);
    this.onEventsSent?.(sessionId, sent);
  }

  private checkConfirmation(state: FakeSessionState, raw: Record<string, unknown>): string | null {
    const allowed = new Set(['type', 'tool_use_id', 'result', 'deny_message']);
    for (const key of Object.keys(raw))
      if (!allowed.has(key)) return `${key}: Extra inputs are not permitted`;
    const toolUseId = raw.tool_use_id;
    if (typeof toolUseId !== 'string' || toolUseId.length === 0 || toolUseId.length > 128)
      return 'tool_use_id: must be 1-128 characters';
    if (raw.result !== 'allow' && raw.result !== 'deny') return "result: must be 'allow' or 'deny'";
    if (
      raw.deny_message !== undefined &&
      raw.deny_message !== null &&
      (raw.result !== 'deny' ||
        typeof raw.deny_message !== 'string' ||
        raw.deny_message.length > 10_000)
    ) {
      return 'deny_message: only with result deny, at most 10000 characters';
    }
    const toolUse = state.history.find(
      (e) => e.id === toolUseId && (e.type === 'agent.tool_use' || e.type === 'agent.mcp_tool_use'),
    );
    if (!toolUse) return `tool_use_id ${toolUseId} does not match any agent.tool_use event`;
    if (toolUse.evaluated_permission !== 'ask')
      return `tool_use_id ${toolUseId} is not awaiting confirmation`;
    if (state.confirmed.has(toolUseId))
      return `tool_use_id ${toolUseId} has already been confirmed`;
    return null;
  }

  private stamp(event: Record<string, unknown>, processed: boolean): FakeEvent {
    this.counter += 1;
    return {
      ...event,
      type: String(event.type),
      id: `sevt_F${String(this.counter).padStart(4, '0')}`,
      processed_at: processed ? this.now() : null,
    };
  }

  private now(): string {
    this.clock += 1000;
    return new Date(this.clock).toISOString();
  }
}

/** The first query parameter the endpoint does not declare, as the API's 400 message. */
function unknownParameter(request: RecordedRequest, allowed: ReadonlySet<string>): string | null {
  const extra = Object.keys(request.query).find((key) => !allowed.has(key));
  return extra === undefined ? null : `${extra}: Extra inputs are not permitted`;
}

function writeSse(stream: ServerResponse, event: FakeEvent): void {
  stream.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function sendError(response: ServerResponse, status: number, type: string, message: string): void {
  sendJson(response, status, { type: 'error', error: { type, message } });
}
