import { useQuery } from '@tanstack/react-query';
import { useStudioHttp } from '../../graphql/StudioHttpProvider.tsx';
import { useStudioQueryClient } from '../../graphql/studioQueries.ts';
import { blobKeys } from './blobKeys.ts';

/**
 * The bytes of one file version, by content hash, through TanStack Query (blobs are outside
 * GraphQL). Content-addressed, so never stale: a hash fetched once is not fetched again while
 * cached. `contentHash: null` (no such side) or `enabled: false` fetches nothing.
 */
export function useBlobContent(contentHash: string | null, enabled = true) {
  const http = useStudioHttp();
  const queryClient = useStudioQueryClient();
  return useQuery(
    {
      queryKey: blobKeys.content(contentHash ?? ''),
      queryFn: ({ signal }) => http.getBlob(contentHash ?? '', signal),
      enabled: enabled && contentHash !== null,
      staleTime: Infinity,
    },
    queryClient,
  );
}
