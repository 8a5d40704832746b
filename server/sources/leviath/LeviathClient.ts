/**
 * HTTP + WebSocket client for the Leviath gateway (`lev serve`). The gateway token travels only
 * in `Authorization: Bearer <token>`, on REST and on the WebSocket upgrade alike (the `?token=`
 * form exists for browsers, which cannot set upgrade headers; URLs end up in logs).
 */
import WebSocket from 'ws';
import { isRecord } from '../bridgeSupport.ts';
import type { LeviathRunMeta } from './LeviathMapper.ts';

const REQUEST_TIMEOUT_MS = 15_000;
/** `GET /api/runs` accepts 1..200 per page. */
const RUNS_PAGE_LIMIT = 200;

/** A non-2xx answer; `error` is the gateway's `{"error": "..."}` text when it sent one. */
export class LeviathHttpError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = 'LeviathHttpError';
    this.status = status;
  }
}

/** The body of `POST /api/agents/{id}/interaction` (InteractionResponse). */
export interface InteractionAnswerBody {
  request_id: string;
  value?: string;
  choice_index?: number;
  approved?: boolean;
  scope?: 'once' | 'stage' | 'session';
}

export interface LeviathClientOptions {
  url: string;
  token: string;
  fetch?: typeof fetch;
}

export class LeviathClient {
  private readonly baseUrl: string;
  private readonly token: string;
  private readonly fetchImpl: typeof fetch;

  constructor(options: LeviathClientOptions) {
    const url = new URL(options.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new Error('the Leviath URL must be http(s)');
    if (url.username || url.password || url.search)
      throw new Error('the Leviath URL must not carry credentials or a query');
    this.baseUrl = url.toString().replace(/\/+$/, '');
    this.token = options.token;
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** `GET /api/config` (feature detection); null on gateways without it. */
  async getConfig(signal?: AbortSignal): Promise<Record<string, unknown> | null> {
    try {
      return (await this.json('GET', '/api/config', signal)) as Record<string, unknown>;
    } catch (error) {
      if (error instanceof LeviathHttpError && error.status === 404) return null;
      throw error;
    }
  }

  /**
   * Runs, newest first, at most `max`: `GET /api/runs` paged by `next_cursor`, or on gateways
   * without it (404) the older unbounded `GET /api/agents`.
   */
  async listRuns(max: number, signal?: AbortSignal): Promise<LeviathRunMeta[]> {
    const runs: LeviathRunMeta[] = [];
    let cursor: string | null = null;
    const cursors = new Set<string>();
    try {
      for (;;) {
        const query = new URLSearchParams({
          limit: String(Math.min(RUNS_PAGE_LIMIT, Math.max(1, max - runs.length))),
          sort: 'started_at',
          order: 'desc',
        });
        if (cursor) query.set('cursor', cursor);
        const page = (await this.json('GET', `/api/runs?${query.toString()}`, signal)) as {
          items?: unknown;
          next_cursor?: unknown;
        };
        const items = Array.isArray(page.items) ? page.items.filter(isRunMeta) : [];
        runs.push(...items);
        const next =
          typeof page.next_cursor === 'string' && page.next_cursor ? page.next_cursor : null;
        if (!next || runs.length >= max || cursors.has(next)) break;
        cursors.add(next);
        cursor = next;
      }
    } catch (error) {
      if (!(error instanceof LeviathHttpError && error.status === 404)) throw error;
      const all = await this.json('GET', '/api/agents', signal);
      return (Array.isArray(all) ? all.filter(isRunMeta) : []).slice(0, max);
    }
    return runs.slice(0, max);
  }

  /** `GET /api/agents/{id}`; null when the gateway does not know the run. */
  async getRun(runId: string, signal?: AbortSignal): Promise<LeviathRunMeta | null> {
    try {
      const run = await this.json('GET', `/api/agents/${encodeURIComponent(runId)}`, signal);
      return isRunMeta(run) ? run : null;
    } catch (error) {
      if (error instanceof LeviathHttpError && error.status === 404) return null;
      throw error;
    }
  }

  /** `GET /api/agents/{id}/interaction`: the open InteractionRequest, or null (404 "No pending interaction"). */
  async getInteraction(
    runId: string,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown> | null> {
    try {
      const request = await this.json(
        'GET',
        `/api/agents/${encodeURIComponent(runId)}/interaction`,
        signal,
      );
      return isRecord(request) && typeof request.id === 'string' ? request : null;
    } catch (error) {
      if (error instanceof LeviathHttpError && error.status === 404) return null;
      throw error;
    }
  }

  /** `POST /api/agents/{id}/interaction` → 202. A 404 ("No such open interaction") throws LeviathHttpError. */
  async answerInteraction(
    runId: string,
    body: InteractionAnswerBody,
    signal?: AbortSignal,
  ): Promise<void> {
    await this.request(
      'POST',
      `/api/agents/${encodeURIComponent(runId)}/interaction`,
      signal,
      body,
    );
  }

  /** `POST /api/agents/{id}/message` (steer the run). */
  async sendMessage(runId: string, message: string, signal?: AbortSignal): Promise<void> {
    await this.request('POST', `/api/agents/${encodeURIComponent(runId)}/message`, signal, {
      message,
    });
  }

  /** `DELETE /api/agents/{id}` (cancel the run). */
  async cancel(runId: string, signal?: AbortSignal): Promise<void> {
    await this.request('DELETE', `/api/agents/${encodeURIComponent(runId)}`, signal);
  }

  /** Opens `GET /ws` (all runs) with the token in the Authorization header. */
  openSocket(): WebSocket {
    const url = new URL(this.baseUrl + '/ws');
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    return new WebSocket(url.toString(), {
      headers: { authorization: `Bearer ${this.token}` },
      handshakeTimeout: REQUEST_TIMEOUT_MS,
    });
  }

  private async json(method: string, path: string, signal?: AbortSignal): Promise<unknown> {
    const response = await this.request(method, path, signal);
    const text = await response.text();
    return text ? (JSON.parse(text) as unknown) : null;
  }

  private async request(
    method: string,
    path: string,
    signal?: AbortSignal,
    body?: unknown,
  ): Promise<Response> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.token}`,
      accept: 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const signals = [signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)].filter(
      (s): s is AbortSignal => s !== undefined,
    );
    const response = await this.fetchImpl(this.baseUrl + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.any(signals),
    });
    if (!response.ok) {
      let message = `HTTP ${response.status}`;
      try {
        const parsed = JSON.parse(await response.text()) as { error?: unknown };
        if (typeof parsed.error === 'string') message = parsed.error;
      } catch {
        // Not the gateway's error JSON: the status says enough.
      }
      throw new LeviathHttpError(response.status, message);
    }
    return response;
  }
}

function isRunMeta(value: unknown): value is LeviathRunMeta {
  return isRecord(value) && typeof value.run_id === 'string' && value.run_id.length > 0;
}
