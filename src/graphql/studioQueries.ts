import { QueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { retryUnlessRefused } from './studioHttp.ts';
import { queryClientOf, setQueryClientOf, useStudioHttp } from './StudioHttpProvider.tsx';

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

/**
 * The QueryClient of this boot's StudioHttp, made on first use. Hooks pass it to `useQuery` as
 * its client (TanStack Query v5's second argument) instead of reading a QueryClientProvider, so
 * only the chunks that read through TanStack Query load it. Mounted while a reader is mounted
 * (what QueryClientProvider would do: online and focus listeners).
 */
export function useStudioQueryClient(): QueryClient {
  const http = useStudioHttp();
  let client = queryClientOf(http);
  if (!client) {
    client = makeQueryClient();
    setQueryClientOf(http, client);
  }
  useEffect(() => {
    client.mount();
    return () => client.unmount();
  }, [client]);
  return client;
}
