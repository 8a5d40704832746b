import type { QueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Provider, type Client } from 'urql';
import type { StudioHttp } from '../graphql/studioHttp.ts';
import { setQueryClientOf, StudioHttpProvider } from '../graphql/StudioHttpProvider.tsx';

/**
 * Everything the features read from context: the urql Client and the HTTP client for /healthz
 * and /api/blobs. TanStack Query's QueryClient belongs to that HTTP client and is made by the
 * first feature that needs it (`graphql/studioQueries.ts`); `queryClient` hands one in (tests).
 */
export function StudioProviders({
  client,
  queryClient,
  http,
  children,
}: {
  client: Client;
  queryClient?: QueryClient;
  http: StudioHttp;
  children: ReactNode;
}) {
  if (queryClient) setQueryClientOf(http, queryClient);
  return (
    <Provider value={client}>
      <StudioHttpProvider value={http}>{children}</StudioHttpProvider>
    </Provider>
  );
}
