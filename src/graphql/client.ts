import {
  Client,
  fetchExchange,
  mapExchange,
  subscriptionExchange,
  type CombinedError,
  type ExecutionResult,
  type Operation,
} from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { createClient, type Client as WsClient } from 'graphql-ws';
import { ErrorCode, HISTORY_PAGE_MAX } from '../../protocol/contract.ts';
import { attachmentStoreFor, errorCode } from './attachment.ts';
import { makeCacheConfig } from './cache.ts';
import type { ConnectionStatus } from './connectionStore.ts';
import { EventHistoryQuery } from './eventDocuments.ts';
import { isEventBatchRequest, resumableEventBatches, type FetchHistoryFn } from './eventStream.ts';
import { nextFrame } from './frame.ts';

export interface StudioClientOptions {
  /** The GraphQL endpoint over HTTP(S); the WebSocket URL is derived from it. */
  endpoint: string;
  /** Sent as `Authorization: Bearer` on HTTP and in graphql-ws connectionParams; never in a URL. */
  token: string;
  /** Called whenever the live link changes state (drives the connection badge). */
  onConnection?: (status: ConnectionStatus, detail?: string | null) => void;
  /** Called when the server answers 401: the token is wrong or was rotated. */
  onUnauthorized?: () => void;
  /** A WebSocket implementation for Node (`ws`); browsers use their own. */
  webSocketImpl?: unknown;
  /** graphql-ws keepAlive ping period (ms). */
  keepAlive?: number;
  /** The fetch queries and mutations go out through (default: the global one). */
  fetch?: typeof fetch;
}

export interface StudioClient {
  client: Client;
  wsClient: WsClient;
  dispose(): Promise<void>;
}

/** ws(s)://host/path for an http(s) endpoint. */
export function toWebSocketUrl(endpoint: string): string {
  const url = new URL(endpoint);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

const PONG_TIMEOUT_MS = 5_000;

function sessionIdOf(operation: Operation): string | null {
  const variables = operation.variables as Record<string, unknown> | undefined;
  const input = variables?.input as Record<string, unknown> | undefined;
  if (input && typeof input.sessionId === 'string') return input.sessionId;
  return typeof variables?.sessionId === 'string' ? variables.sessionId : null;
}

function epochOf(operation: Operation): string | null {
  const input = (operation.variables as Record<string, unknown> | undefined)?.input as
    Record<string, unknown> | undefined;
  return typeof input?.clientEpoch === 'string' ? input.clientEpoch : null;
}

/**
 * The app's one urql Client and one graphql-ws client. Exchanges: an error watcher (fencing and
 * 401), Graphcache with the production config, subscriptions over graphql-ws (event batches
 * resume from the last applied seq), and fetch for queries and mutations.
 */
export function makeStudioClient(options: StudioClientOptions): StudioClient {
  const { endpoint, token, onConnection, onUnauthorized } = options;
  const authorization = `Bearer ${token}`;
  let everConnected = false;
  let pongTimer: ReturnType<typeof setTimeout> | null = null;

  const wsClient: WsClient = createClient({
    url: toWebSocketUrl(endpoint),
    connectionParams: () => ({ Authorization: authorization }),
    lazy: true,
    lazyCloseTimeout: 3_000,
    keepAlive: options.keepAlive ?? 10_000,
    retryAttempts: Number.MAX_SAFE_INTEGER,
    shouldRetry: () => true,
    ...(options.webSocketImpl ? { webSocketImpl: options.webSocketImpl } : {}),
    on: {
      connecting: () => {
        if (everConnected) onConnection?.('reconnecting', null);
        else onConnection?.('connecting', null);
      },
      connected: () => {
        everConnected = true;
        onConnection?.('live', null);
      },
      ping: (received) => {
        // A ping we sent that gets no pong means a half-open socket: drop it and reconnect.
        if (received) return;
        if (pongTimer) clearTimeout(pongTimer);
        pongTimer = setTimeout(() => wsClient.terminate(), PONG_TIMEOUT_MS);
      },
      pong: (received) => {
        if (received && pongTimer) {
          clearTimeout(pongTimer);
          pongTimer = null;
        }
      },
      closed: (event) => {
        if (pongTimer) clearTimeout(pongTimer);
        pongTimer = null;
        const code = (event as { code?: number } | undefined)?.code;
        // 1000 is the lazy close after the last subscription ended: nothing is lost.
        if (code === 1000) return;
        const offline = typeof navigator !== 'undefined' && navigator.onLine === false;
        onConnection?.(
          offline ? 'offline' : 'reconnecting',
          code ? `Socket closed (${code})` : 'Socket closed',
        );
        if (code === 4401 || code === 4403) onUnauthorized?.();
      },
    },
  });

  const fetchHistory: FetchHistoryFn = async (sessionId, afterSeq, first) => {
    const result = await client
      .query(
        EventHistoryQuery,
        { sessionId, afterSeq, first: Math.min(first, HISTORY_PAGE_MAX) },
        { requestPolicy: 'network-only' },
      )
      .toPromise();
    const page = result.data?.crowdyStudioAgentHistory;
    if (!page) throw result.error ?? new Error('History returned no data.');
    return {
      events: page.events as Record<string, unknown>[],
      hasMore: page.hasMore,
      studioToolCalls: page.studioToolCalls as Record<string, unknown>[],
    };
  };

  const subscribe = (
    payload: { query: string; variables?: unknown; operationName?: string; extensions?: unknown },
    sink: { next(value: ExecutionResult): void; error(error: unknown): void; complete(): void },
  ) =>
    wsClient.subscribe(payload as Parameters<WsClient['subscribe']>[0], {
      next: (value) => sink.next(value as ExecutionResult),
      error: (error) => sink.error(error),
      complete: () => sink.complete(),
    });

  const onError = (error: CombinedError, operation: Operation) => {
    const code = errorCode(error);
    if (
      code === ErrorCode.UNAUTHENTICATED &&
      (error.response as { status?: number } | undefined)?.status === 401
    ) {
      onUnauthorized?.();
    }
    if (code === ErrorCode.CLIENT_EPOCH_STALE) {
      const sessionId = sessionIdOf(operation);
      if (sessionId) attachmentStoreFor(client).reportStaleEpoch(sessionId, epochOf(operation));
    }
  };

  const client: Client = new Client({
    url: endpoint,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    fetchOptions: () => ({ headers: { Authorization: authorization } }),
    exchanges: [
      mapExchange({ onError }),
      cacheExchange(makeCacheConfig()),
      subscriptionExchange({
        forwardSubscription(request) {
          if (isEventBatchRequest(request))
            return resumableEventBatches(request, subscribe, fetchHistory, { schedule: nextFrame });
          return {
            subscribe(sink) {
              const dispose = subscribe({ ...request, query: request.query ?? '' }, sink);
              return { unsubscribe: dispose };
            },
          };
        },
      }),
      fetchExchange,
    ],
  });

  let onlineListeners: (() => void) | null = null;
  if (typeof window !== 'undefined') {
    const goOffline = () => onConnection?.('offline', 'The browser is offline');
    const goOnline = () => onConnection?.('reconnecting', null);
    window.addEventListener('offline', goOffline);
    window.addEventListener('online', goOnline);
    onlineListeners = () => {
      window.removeEventListener('offline', goOffline);
      window.removeEventListener('online', goOnline);
    };
  }

  return {
    client,
    wsClient,
    async dispose() {
      onlineListeners?.();
      if (pongTimer) clearTimeout(pongTimer);
      attachmentStoreFor(client).dispose();
      await wsClient.dispose();
    },
  };
}
