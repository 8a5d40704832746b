/**
 * Raw HTTP + SSE client for the Claude Managed Agents sessions API (beta
 * `managed-agents-2026-04-01`), as the official SDK speaks it: `x-api-key`,
 * `anthropic-version: 2023-06-01`, `anthropic-beta: managed-agents-2026-04-01`, `?beta=true` on
 * every path. The API key travels only in the `x-api-key` header, never in a URL.
 */
import { isRecord } from '../bridgeSupport.ts';
import { readSseEvents } from './readSseEvents.ts';
import type { ManagedAgentsEvent } from './ManagedAgentsMapper.ts';

export const ANTHROPIC_VERSION = '2023-06-01';
export const MANAGED_AGENTS_BETA = 'managed-agents-2026-04-01';
export const DEFAULT_MANAGED_AGENTS_URL = 'https://api.anthropic.com';
/** The page size the SDK's own reconnect procedure uses. */
export const HISTORY_PAGE_LIMIT = 1000;
const REQUEST_TIMEOUT_MS = 30_000;

/** A non-2xx answer, with the API's error `type` and `message` when the body had them. */
export class ManagedAgentsHttpError extends Error {
  readonly status: number;
  readonly errorType: string | null;

  constructor(status: number, errorType: string | null, message: string) {
    super(message);
    this.name = 'ManagedAgentsHttpError';
    this.status = status;
    this.errorType = errorType;
  }

  /** 4xx other than 408/409/429: retrying the same request will not help. */
  get fatal(): boolean {
    return this.status >= 400 && this.status < 500 && ![408, 409, 429].includes(this.status);
  }
}

/** The stream sent `event: error`. */
export class ManagedAgentsStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManagedAgentsStreamError';
  }
}

export interface ManagedAgentsClientOptions {
  apiKey: string;
  baseUrl?: string;
  fetch?: typeof fetch;
}

export interface EventPage {
  data: ManagedAgentsEvent[];
  next_page: string | null;
}

export class ManagedAgentsClient {
  private readonly apiKey: string;
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ManagedAgentsClientOptions) {
    this.apiKey = options.apiKey;
    this.baseUrl = (options.baseUrl ?? DEFAULT_MANAGED_AGENTS_URL).replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** `GET /v1/sessions/{id}`. */
  async getSession(sessionId: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const response = await this.request('GET', this.sessionPath(sessionId), { signal });
    return (await readJson(response)) as Record<string, unknown>;
  }

  /** One page of `GET /v1/sessions/{id}/events` (ascending by processed_at, the default order). */
  async listEvents(
    sessionId: string,
    page: string | null,
    signal?: AbortSignal,
  ): Promise<EventPage> {
    return this.listPage(`${this.sessionPath(sessionId)}/events`, page, signal);
  }

  /** Every page of the history, in order. */
  async listAllEvents(sessionId: string, signal?: AbortSignal): Promise<ManagedAgentsEvent[]> {
    return this.listAll(`${this.sessionPath(sessionId)}/events`, signal);
  }

  /** Every page of `GET /v1/sessions/{id}/threads` (the primary thread, if listed, has `parent_thread_id: null`). */
  async listAllThreads(
    sessionId: string,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>[]> {
    return this.listAll(`${this.sessionPath(sessionId)}/threads`, signal);
  }

  /** Every page of a thread's history, `GET /v1/sessions/{sid}/threads/{tid}/events` (`limit`, `page` only). */
  async listAllThreadEvents(
    sessionId: string,
    threadId: string,
    signal?: AbortSignal,
  ): Promise<ManagedAgentsEvent[]> {
    return this.listAll(`${this.threadPath(sessionId, threadId)}/events`, signal);
  }

  /**
   * Opens a thread's stream, `GET /v1/sessions/{sid}/threads/{tid}/stream` (not `/events/stream`),
   * with the same framing and rules as openStream.
   */
  async openThreadStream(
    sessionId: string,
    threadId: string,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<ManagedAgentsEvent>> {
    return this.openSse(`${this.threadPath(sessionId, threadId)}/stream`, signal);
  }

  private async listPage(
    path: string,
    page: string | null,
    signal?: AbortSignal,
  ): Promise<EventPage> {
    const query = new URLSearchParams({ limit: String(HISTORY_PAGE_LIMIT) });
    if (page) query.set('page', page);
    const response = await this.request('GET', path, { signal, query });
    const body = (await readJson(response)) as Partial<EventPage>;
    const data = Array.isArray(body.data) ? body.data.filter(isRecord) : [];
    return {
      data,
      next_page:
        typeof body.next_page === 'string' && body.next_page.length > 0 ? body.next_page : null,
    };
  }

  private async listAll(path: string, signal?: AbortSignal): Promise<ManagedAgentsEvent[]> {
    const items: ManagedAgentsEvent[] = [];
    const seenCursors = new Set<string>();
    let page: string | null = null;
    for (;;) {
      const result = await this.listPage(path, page, signal);
      items.push(...result.data);
      if (!result.next_page || seenCursors.has(result.next_page)) return items;
      seenCursors.add(result.next_page);
      page = result.next_page;
    }
  }

  /**
   * Opens `GET /v1/sessions/{id}/events/stream`. Resolves once the server accepted the stream
   * (so the caller can list the history knowing nothing newer is missed) with the events it
   * carries; `ping` frames are skipped and an `error` frame throws ManagedAgentsStreamError.
   */
  async openStream(
    sessionId: string,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<ManagedAgentsEvent>> {
    return this.openSse(`${this.sessionPath(sessionId)}/events/stream`, signal);
  }

  private async openSse(
    path: string,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<ManagedAgentsEvent>> {
    const response = await this.request('GET', path, {
      signal,
      accept: 'text/event-stream',
      timeout: false,
    });
    if (!response.body) throw new ManagedAgentsStreamError('the stream has no body');
    const body = response.body as unknown as AsyncIterable<Uint8Array>;
    return (async function* () {
      for await (const message of readSseEvents(body)) {
        if (message.event === 'ping') continue;
        if (message.event === 'error')
          throw new ManagedAgentsStreamError(`stream error: ${message.data.slice(0, 500)}`);
        let parsed: unknown;
        try {
          parsed = JSON.parse(message.data);
        } catch {
          yield {
            type: 'sse.unparseable',
            event: message.event,
            data: message.data.slice(0, 2048),
          };
          continue;
        }
        if (!isRecord(parsed)) continue;
        // Key on the JSON `type`, never on a whitelist of event names; fall back to the SSE name.
        yield typeof parsed.type === 'string' ? parsed : { ...parsed, type: message.event };
      }
    })();
  }

  /** `POST /v1/sessions/{id}/events` with `{"events": [...]}`; returns the sent events with their server ids. */
  async sendEvents(
    sessionId: string,
    events: Record<string, unknown>[],
    signal?: AbortSignal,
  ): Promise<ManagedAgentsEvent[]> {
    const response = await this.request('POST', `${this.sessionPath(sessionId)}/events`, {
      signal,
      body: { events },
    });
    if (response.status === 204) return [];
    const text = await response.text();
    if (!text) return [];
    try {
      const body = JSON.parse(text) as { data?: unknown };
      return Array.isArray(body.data) ? body.data.filter(isRecord) : [];
    } catch {
      return [];
    }
  }

  private sessionPath(sessionId: string): string {
    return `/v1/sessions/${encodeURIComponent(sessionId)}`;
  }

  private threadPath(sessionId: string, threadId: string): string {
    return `${this.sessionPath(sessionId)}/threads/${encodeURIComponent(threadId)}`;
  }

  private async request(
    method: 'GET' | 'POST',
    path: string,
    options: {
      signal?: AbortSignal;
      query?: URLSearchParams;
      body?: unknown;
      accept?: string;
      timeout?: boolean;
    },
  ): Promise<Response> {
    const query = new URLSearchParams({ beta: 'true' });
    for (const [key, value] of options.query ?? []) query.append(key, value);
    const headers: Record<string, string> = {
      'x-api-key': this.apiKey,
      'anthropic-version': ANTHROPIC_VERSION,
      'anthropic-beta': MANAGED_AGENTS_BETA,
      accept: options.accept ?? 'application/json',
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const signals = [
      options.signal,
      options.timeout === false ? undefined : AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    ].filter((s): s is AbortSignal => s !== undefined);
    const response = await this.fetchImpl(`${this.baseUrl}${path}?${query.toString()}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: signals.length > 0 ? AbortSignal.any(signals) : undefined,
    });
    if (!response.ok) throw await httpError(response);
    return response;
  }
}

async function httpError(response: Response): Promise<ManagedAgentsHttpError> {
  let errorType: string | null = null;
  let message = `HTTP ${response.status}`;
  try {
    const text = await response.text();
    const body = JSON.parse(text) as { error?: { type?: unknown; message?: unknown } };
    if (typeof body.error?.type === 'string') errorType = body.error.type;
    if (typeof body.error?.message === 'string') message = body.error.message;
  } catch {
    // A body that is not the API's error JSON: the status says enough.
  }
  return new ManagedAgentsHttpError(response.status, errorType, message);
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  return text ? (JSON.parse(text) as unknown) : {};
}
