/**
 * The real StudioHttp client (makeStudioHttp) over a scripted fetch that answers /healthz and
 * /api/blobs like the server does, recording every request, plus the providers a component
 * needs to use it (urql Client, a QueryClient without retries, the StudioHttp context).
 */
import { QueryClient } from '@tanstack/react-query';
import { StudioProviders } from '../app/StudioProviders.tsx';
import { makeStudioHttp, type StudioHealth, type StudioHttp } from '../graphql/studioHttp.ts';

export const TEST_ENDPOINT = 'http://studio.test/graphql';
export const TEST_TOKEN = 'test-token-123';

export interface RecordedRequest {
  url: string;
  authorization: string | null;
}

export interface FakeStudioHttp {
  http: StudioHttp;
  requests: RecordedRequest[];
  /** Stored bytes by content hash; a missing hash answers 404. Mutable mid-test. */
  blobs: Map<string, Uint8Array>;
  /** The next /healthz body (without sources when `sources` is undefined). Mutable mid-test. */
  health: { current: Omit<StudioHealth, 'sources'> & { sources?: unknown } };
  /** Forces a status for every request while set (401, 500 ...). */
  forceStatus: { current: number | null };
}

export function makeFakeStudioHttp(
  blobs: Record<string, Uint8Array | string> = {},
): FakeStudioHttp {
  const requests: RecordedRequest[] = [];
  const store = new Map<string, Uint8Array>(
    Object.entries(blobs).map(([hash, value]) => [
      hash,
      typeof value === 'string' ? new TextEncoder().encode(value) : value,
    ]),
  );
  const health: FakeStudioHttp['health'] = {
    current: {
      ok: true,
      contract: 'crowdy.studio-agent/1',
      version: '0.1.0',
      sources: [{ sourceId: 'demo', kind: 'demo', status: 'LIVE', detail: null }],
    },
  };
  const forceStatus: FakeStudioHttp['forceStatus'] = { current: null };
  const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    requests.push({
      url: url.toString(),
      authorization: new Headers(init?.headers).get('Authorization'),
    });
    const authorized = new Headers(init?.headers).get('Authorization') === `Bearer ${TEST_TOKEN}`;
    if (forceStatus.current !== null) {
      return new Response(JSON.stringify({ error: 'forced' }), { status: forceStatus.current });
    }
    if (url.pathname === '/healthz') {
      return Response.json(authorized ? health.current : { ...health.current, sources: undefined });
    }
    if (url.pathname.startsWith('/api/blobs/')) {
      if (!authorized) return new Response('{}', { status: 401 });
      const bytes = store.get(url.pathname.slice('/api/blobs/'.length));
      if (!bytes) return new Response('{}', { status: 404 });
      return new Response(bytes.slice().buffer, {
        headers: { 'content-type': 'application/octet-stream' },
      });
    }
    return new Response('{}', { status: 404 });
  };
  return {
    http: makeStudioHttp({ endpoint: TEST_ENDPOINT, token: TEST_TOKEN, fetchImpl }),
    requests,
    blobs: store,
    health,
    forceStatus,
  };
}

/** A QueryClient for one test: no retries, so a refusal shows at once. */
export function makeTestQueryClient(): QueryClient {
  return new QueryClient({ defaultOptions: { queries: { retry: false, gcTime: Infinity } } });
}

/** The providers a feature component reads: the app's own (urql, TanStack Query, StudioHttp). */
export const TestProviders = StudioProviders;
