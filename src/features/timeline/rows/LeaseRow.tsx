import type { EventOf } from '../../../graphql/eventFragments.ts';
import { SafeText } from '../../../ui/SafeText.tsx';
import { EVENT_LABEL, timeOfDay } from '../labels.ts';
import { RowHeader } from './RowHeader.tsx';

/** A workspace or play lease: who holds it, for what, until when, and why it ended. */
export function LeaseRow({ event, href }: { event: EventOf<'AgentLeaseEvent'>; href: string }) {
  return (
    <div>
      <RowHeader
        label={EVENT_LABEL[event.type]}
        seq={event.seq}
        createdAt={event.createdAt}
        href={href}
      >
        <span>
          {event.leaseKind.toLowerCase()} lease, {event.leaseStatus.toLowerCase()}
        </span>
      </RowHeader>
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
