import { DIGEST_PATTERN } from '../../protocol/contract.ts';

/**
 * The studio server's two resources outside GraphQL (docs/EVENTS.md, "Outside GraphQL"):
 * `GET /healthz` and `GET /api/blobs/sha256:<hex>`. They live on the GraphQL endpoint's origin and
 * take the same bearer token, always in the Authorization header and never in the URL.
 * TanStack Query caches what these return; nothing Graphcache holds is fetched here.
 */
export interface StudioHttp {
  /** The exact bytes of one stored file version (immutable: content-addressed). */
  getBlob(contentHash: string, signal?: AbortSignal): Promise<Uint8Array>;
  /** Server version, contract and, because the token is sent, the state of every source. */
  getHealth(signal?: AbortSignal): Promise<StudioHealth>;
}

/** One agent source as /healthz reports it (status is the server's SourceStatus word). */
export interface StudioHealthSource {
  sourceId: string;
  kind: string;
  status: string;
  detail: string | null;
}

export interface StudioHealth {
  ok: boolean;
  contract: string;
  version: string;
  /** Null when the server did not include sources (it only does for a valid token). */
  sources: StudioHealthSource[] | null;
}

export type StudioHttpErrorKind = 'unauthorized' | 'notFound' | 'badHash' | 'http' | 'badBody';

/** A refused or unusable answer from a non-GraphQL endpoint; `status` is 0 when none came. */
export class StudioHttpError extends Error {
  readonly kind: StudioHttpErrorKind;
  readonly status: number;

  constructor(kind: StudioHttpErrorKind, status: number, message: string) {
    super(message);
    this.name = 'StudioHttpError';
    this.kind = kind;
    this.status = status;
  }
}

/**
 * A TanStack Query `retry` policy: refusals (401, 404, a malformed hash or body) are answers, not
 * glitches, so only network failures and 5xx are tried again, at most twice.
 */
export function retryUnlessRefused(failureCount: number, error: Error): boolean {
  if (error instanceof StudioHttpError && error.kind !== 'http') return false;
  if (error instanceof StudioHttpError && error.status >= 400 && error.status < 500) return false;
  return failureCount < 2;
}

function errorFor(response: Response, what: string): StudioHttpError {
  if (response.status === 401 || response.status === 403) {
    return new StudioHttpError(
      'unauthorized',
      response.status,
      `The server did not accept this tab's token for ${what} (${response.status}).`,
    );
  }
  if (response.status === 404) {
    return new StudioHttpError('notFound', 404, `The server has no ${what} (404).`);
  }
  const statusText = response.statusText ? ` ${response.statusText}` : '';
  return new StudioHttpError(
    'http',
    response.status,
    `The server answered ${response.status}${statusText} for ${what}.`,
  );
}

function parseSources(value: unknown): StudioHealthSource[] | null {
  if (!Array.isArray(value)) return null;
  return value.flatMap((item): StudioHealthSource[] => {
    const row = item as Record<string, unknown> | null;
    if (!row || typeof row.sourceId !== 'string' || typeof row.status !== 'string') return [];
    return [
      {
        sourceId: row.sourceId,
        kind: typeof row.kind === 'string' ? row.kind : row.sourceId,
        status: row.status,
        detail: typeof row.detail === 'string' ? row.detail : null,
      },
    ];
  });
}

/**
 * Builds the client for /healthz and /api/blobs from what bootstrap found: the GraphQL endpoint
 * (whose origin serves both) and this tab's token.
 */
export function makeStudioHttp({
  endpoint,
  token,
  fetchImpl,
}: {
  endpoint: string;
  token: string;
  fetchImpl?: typeof fetch;
}): StudioHttp {
  const origin = new URL(endpoint).origin;
  const authorization = `Bearer ${token}`;
  // Called as a plain function: a window.fetch called as a method of another object throws.
  const doFetch: typeof fetch = fetchImpl ?? ((input, init) => fetch(input, init));

  return {
    async getBlob(contentHash, signal) {
      if (!DIGEST_PATTERN.test(contentHash)) {
        throw new StudioHttpError('badHash', 0, `Not a content hash: ${contentHash.slice(0, 80)}`);
      }
      // The hash is checked above, so it goes into the path as is (the server matches the colon).
      const response = await doFetch(new URL(`/api/blobs/${contentHash}`, origin), {
        headers: { Authorization: authorization },
        signal,
      });
      if (!response.ok) throw errorFor(response, `stored content ${contentHash.slice(0, 19)}…`);
      return new Uint8Array(await response.arrayBuffer());
    },

    async getHealth(signal) {
      const response = await doFetch(new URL('/healthz', origin), {
        headers: { Authorization: authorization, accept: 'application/json' },
        cache: 'no-store',
        signal,
      });
      if (!response.ok) throw errorFor(response, 'health report');
      let body: Record<string, unknown>;
      try {
        body = (await response.json()) as Record<string, unknown>;
      } catch {
        throw new StudioHttpError('badBody', response.status, '/healthz did not answer JSON.');
      }
      if (!body || typeof body.contract !== 'string' || typeof body.version !== 'string') {
        throw new StudioHttpError(
          'badBody',
          response.status,
          '/healthz answered without contract and version.',
        );
      }
      return {
        ok: body.ok === true,
        contract: body.contract,
        version: body.version,
        sources: parseSources(body.sources),
      };
    },
  };
}
