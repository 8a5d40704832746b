import type { EventOf } from '../../../graphql/eventFragments.ts';
import { SafeText } from '../../../ui/SafeText.tsx';
import { timeOfDay } from '../../../ui/timeOfDay.ts';
import { EventRowHeader } from './RowHeader.tsx';

/** A workspace or play lease: who holds it, for what, until when, and why it ended. */
export function LeaseRow({ event, href }: { event: EventOf<'AgentLeaseEvent'>; href: string }) {
  return (
    <div>
      <EventRowHeader event={event} href={href}>
        <span>
          {event.leaseKind.toLowerCase()} lease, {event.leaseStatus.toLowerCase()}
        </span>
      </EventRowHeader>
      <p className="mt-1 text-sm text-slate-800 dark:text-slate-200">
        Held by <SafeText text={event.leaseHolder} /> (epoch {event.leaseClientEpoch}) until{' '}
        <time dateTime={event.leaseExpiresAt}>{timeOfDay(event.leaseExpiresAt)}</time>
        {event.leaseScopes.length > 0 ? (
          <>
            ; scopes <SafeText text={event.leaseScopes.join(', ')} />
          </>
        ) : null}
        {event.leaseExpectedProjectRevision ? (
          <>; project revision {event.leaseExpectedProjectRevision}</>
        ) : null}
        {event.leaseReason ? (
          <>
            ; reason <SafeText text={event.leaseReason} />
          </>
        ) : null}
      </p>
    </div>
  );
}
