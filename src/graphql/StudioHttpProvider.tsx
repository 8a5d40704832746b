import type { QueryClient } from '@tanstack/react-query';
import { createContext, useContext, type ReactNode } from 'react';
import type { StudioHttp } from './studioHttp.ts';

const StudioHttpContext = createContext<StudioHttp | null>(null);

/** Provides the client for /healthz and /api/blobs (src/app makes it with the urql Client). */
export function StudioHttpProvider({
  value,
  children,
}: {
  value: StudioHttp;
  children: ReactNode;
}) {
  return <StudioHttpContext.Provider value={value}>{children}</StudioHttpContext.Provider>;
}

/** The studio's non-GraphQL client; throws when no StudioHttpProvider is above (a wiring bug). */
export function useStudioHttp(): StudioHttp {
  const http = useContext(StudioHttpContext);
  if (!http) throw new Error('useStudioHttp needs a StudioHttpProvider above it.');
  return http;
}

/**
 * The QueryClient holding one StudioHttp's results (/healthz, /api/blobs), one per boot like the
 * HTTP client itself. It is made by the first feature that reads through TanStack Query
 * (`useStudioQueryClient` in `studioQueries.ts`), so TanStack Query is not part of the first
 * paint's JavaScript (issue 13); a test may hand one in through `StudioProviders`.
 */
const queryClients = new WeakMap<StudioHttp, QueryClient>();

export function queryClientOf(http: StudioHttp): QueryClient | undefined {
  return queryClients.get(http);
}

export function setQueryClientOf(http: StudioHttp, client: QueryClient): void {
  queryClients.set(http, client);
}
