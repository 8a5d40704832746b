import { useQuery } from '@tanstack/react-query';
import { useStudioHttp } from '../../graphql/StudioHttpProvider.tsx';
import { useStudioQueryClient } from '../../graphql/studioQueries.ts';
import { healthKeys } from './healthKeys.ts';

/** How often the health report is read again while the tab is visible. */
export const HEALTH_REFETCH_MS = 15_000;

/**
 * The server's version, contract and source states from GET /healthz (outside GraphQL, so
 * TanStack Query holds it), read again every 15 s.
 */
export function useServerHealth() {
  const http = useStudioHttp();
  const queryClient = useStudioQueryClient();
  return useQuery(
    {
      queryKey: healthKeys.server(),
      queryFn: ({ signal }) => http.getHealth(signal),
      refetchInterval: HEALTH_REFETCH_MS,
      staleTime: HEALTH_REFETCH_MS,
    },
    queryClient,
  );
}
