import { useNow } from '../../ui/Countdown.tsx';
import { usePendingApprovals } from './usePendingApprovals.ts';

/** How many approvals wait for a decision right now (ones past their expiry are not counted). */
export function useInboxCount(): number {
  const { items } = usePendingApprovals();
  const now = useNow(1000, items.length > 0);
  return items.filter((item) => Date.parse(item.approval.expiresAt) > now).length;
}
