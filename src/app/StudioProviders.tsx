import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Provider, type Client } from 'urql';
import { retryUnlessRefused, type StudioHttp } from '../graphql/studioHttp.ts';
import { StudioHttpProvider } from '../graphql/StudioHttpProvider.tsx';

/**
 * The QueryClient for the studio's resources outside GraphQL (/healthz, /api/blobs). Graphcache
 * owns every GraphQL entity. Refusals (401, 404) are not retried; nothing refetches on focus,
 * because health polls on its own interval and blobs never change.
 */
export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: { queries: { refetchOnWindowFocus: false, retry: retryUnlessRefused } },
  });
}

/** Everything the features read from context: the urql Client, the QueryClient, the HTTP client. */
export function StudioProviders({
  client,
  queryClient,
  http,
  children,
}: {
  client: Client;
  queryClient: QueryClient;
  http: StudioHttp;
  children: ReactNode;
}) {
  return (
    <Provider value={client}>
      <QueryClientProvider client={queryClient}>
        <StudioHttpProvider value={http}>{children}</StudioHttpProvider>
      </QueryClientProvider>
    </Provider>
  );
}
