/**
 * The Managed Agents sessions API, spoken through the official `@anthropic-ai/sdk`
 * (`client.beta.sessions`): the SDK owns URLs, headers (`Authorization: Bearer`,
 * `anthropic-version`, `anthropic-beta: managed-agents-2026-04-01`), paging cursors and SSE framing.
 * What the SDK does not do (stream before history, skipping seen ids, reconnect with backoff,
 * thread follows, the confirmation race retry) stays in ManagedAgentsSource.
 *
 * Every option that the SDK would otherwise read from the environment is set here explicitly
 * (apiKey, no auth token, baseURL, retries, timeout, log level and logger), so what the bridge sends
 * does not depend on stray variables such as ANTHROPIC_AUTH_TOKEN or ANTHROPIC_LOG.
 */
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import type { Logger } from '../../logger.ts';
import type { ManagedAgentsEvent } from './ManagedAgentsMapper.ts';

export const DEFAULT_MANAGED_AGENTS_URL = 'https://api.anthropic.com';
/** The page size the SDK's own reconnect procedure (SessionToolRunner) uses. */
export const HISTORY_PAGE_LIMIT = 1000;

export interface SessionsApiOptions {
  apiKey: string;
  baseUrl?: string | undefined;
  /** SDK retries of one request (408/409/429/5xx, connection errors); default 2. */
  maxRetries?: number;
  /** Per-request timeout until the response headers arrive; default 30 s. */
  timeoutMs?: number;
  logger: Logger;
  fetch?: typeof fetch | undefined;
}

/** The official SDK client, configured explicitly. */
export function makeAnthropicClient(options: SessionsApiOptions): Anthropic {
  const logger = options.logger;
  return new Anthropic({
    apiKey: options.apiKey,
    authToken: null,
    webhookKey: null,
    baseURL: (options.baseUrl ?? DEFAULT_MANAGED_AGENTS_URL).replace(/\/+$/, ''),
    maxRetries: options.maxRetries ?? 2,
    timeout: options.timeoutMs ?? 30_000,
    logLevel: 'warn',
    logger: {
      error: (message: string) => logger.error(`anthropic-sdk: ${String(message)}`),
      warn: (message: string) => logger.warn(`anthropic-sdk: ${String(message)}`),
      info: () => {},
      debug: () => {},
    },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** 4xx other than 408/409/429: retrying the same request will not help. */
export function isFatalApiError(error: unknown): error is APIError {
  return (
    error instanceof APIError &&
    typeof error.status === 'number' &&
    error.status >= 400 &&
    error.status < 500 &&
    ![408, 409, 429].includes(error.status)
  );
}

export function apiStatus(error: unknown): number | null {
  return error instanceof APIError && typeof error.status === 'number' ? error.status : null;
}

/** The API's own error message (without the SDK's status prefix) when it sent one. */
export function apiMessage(error: unknown): string {
  if (error instanceof APIError) return error.apiMessage ?? error.message;
  return error instanceof Error ? error.message : String(error);
}

/** The calls the bridge makes, each a `client.beta.sessions` method. */
export class SessionsApi {
  readonly client: Anthropic;

  constructor(options: SessionsApiOptions) {
    this.client = makeAnthropicClient(options);
  }

  retrieveSession(sessionId: string, signal?: AbortSignal) {
    return this.client.beta.sessions.retrieve(sessionId, {}, { signal });
  }

  /**
   * Opens the session stream; resolves once the API accepted it (so the caller can page the
   * history knowing nothing newer is missed). The SDK drops `ping` frames and throws on `error`.
   */
  async openStream(
    sessionId: string,
    signal: AbortSignal,
  ): Promise<AsyncIterable<ManagedAgentsEvent>> {
    return this.client.beta.sessions.events.stream(sessionId, {}, { signal, maxRetries: 0 });
  }

  async openThreadStream(
    sessionId: string,
    threadId: string,
    signal: AbortSignal,
  ): Promise<AsyncIterable<ManagedAgentsEvent>> {
    return this.client.beta.sessions.threads.events.stream(
      threadId,
      { session_id: sessionId },
      { signal, maxRetries: 0 },
    );
  }

  /** Every page of the history, in order (ascending by processed_at, the default). */
  listAllEvents(sessionId: string, signal?: AbortSignal): Promise<ManagedAgentsEvent[]> {
    return collectPages(
      this.client.beta.sessions.events.list(sessionId, { limit: HISTORY_PAGE_LIMIT }, { signal }),
    );
  }

  listAllThreadEvents(
    sessionId: string,
    threadId: string,
    signal?: AbortSignal,
  ): Promise<ManagedAgentsEvent[]> {
    return collectPages(
      this.client.beta.sessions.threads.events.list(
        threadId,
        { session_id: sessionId, limit: HISTORY_PAGE_LIMIT },
        { signal },
      ),
    );
  }

  listAllThreads(sessionId: string, signal?: AbortSignal) {
    return collectPages(
      this.client.beta.sessions.threads.list(sessionId, { limit: HISTORY_PAGE_LIMIT }, { signal }),
    );
  }

  /** Posts events; returns the sent events with their server ids (the API may omit them). */
  async sendEvents(
    sessionId: string,
    events: Anthropic.Beta.Sessions.BetaManagedAgentsEventParams[],
    signal?: AbortSignal,
  ): Promise<ManagedAgentsEvent[]> {
    const sent = await this.client.beta.sessions.events.send(sessionId, { events }, { signal });
    return sent?.data ?? [];
  }
}

interface CursorPage<T> {
  data: T[];
  next_page: string | null;
  hasNextPage(): boolean;
  getNextPage(): Promise<CursorPage<T>>;
}

/** Every page of a cursor list; stops when a cursor repeats (a server that loops would not end). */
async function collectPages<T>(first: PromiseLike<CursorPage<T>>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let page = await first;
  for (;;) {
    items.push(...page.data);
    const next = page.next_page;
    if (!page.hasNextPage() || !next || seen.has(next)) return items;
    seen.add(next);
    page = await page.getNextPage();
  }
}
