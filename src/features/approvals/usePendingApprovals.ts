import { useMemo } from 'react';
import { useQuery } from 'urql';
import { LOCAL_APP_ID } from '../../../protocol/contract.ts';
import type { ResultOf } from '../../graphql/graphql.ts';
import { useCacheSubscription } from '../../graphql/useCacheSubscription.ts';
import { InboxSessionUpdatesSubscription, PendingApprovalsQuery } from './documents.ts';

export type PendingApprovalItem = ResultOf<
  typeof PendingApprovalsQuery
>['studioPendingApprovals'][number];

function expiresAtMs(item: PendingApprovalItem): number {
  const at = Date.parse(item.approval.expiresAt);
  return Number.isNaN(at) ? Number.POSITIVE_INFINITY : at;
}

/**
 * Every pending approval of the app, soonest to expire first, kept live by
 * studioSessionUpdates. `loaded` turns true once the first answer arrived.
 */
export function usePendingApprovals(): {
  items: PendingApprovalItem[];
  loaded: boolean;
  error: string | null;
} {
  const variables = { appId: LOCAL_APP_ID };
  const [{ data, error }] = useQuery({ query: PendingApprovalsQuery, variables });
  useCacheSubscription(InboxSessionUpdatesSubscription, variables);
  const list = data?.studioPendingApprovals;
  const items = useMemo(
    () =>
      [...(list ?? [])]
        .filter((item) => item.approval.status === 'PENDING')
        .sort((a, b) => expiresAtMs(a) - expiresAtMs(b)),
    [list],
  );
  return { items, loaded: data !== undefined, error: error ? error.message : null };
}
