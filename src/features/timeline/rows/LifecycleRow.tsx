import type { EventOf } from '../../../graphql/eventFragments.ts';
import { SafeText } from '../../../ui/SafeText.tsx';
import { EventRowHeader } from './RowHeader.tsx';

/** Session, client, mode and context facts: one compact line each. */
export function LifecycleRow({
  event,
  href,
}: {
  event: EventOf<'AgentLifecycleEvent'>;
  href: string;
}) {
  const facts: { term: string; value: string }[] = [];
  if (event.lifecycleMode) facts.push({ term: 'mode', value: event.lifecycleMode });
  if (event.lifecycleClientEpoch)
    facts.push({ term: 'client epoch', value: event.lifecycleClientEpoch });
  if (event.lifecycleReplayAfterSeq)
    facts.push({ term: 'replay after', value: `#${event.lifecycleReplayAfterSeq}` });
  if (event.lifecycleContextVersion)
    facts.push({ term: 'context', value: event.lifecycleContextVersion });
  if (event.lifecycleReason) facts.push({ term: 'reason', value: event.lifecycleReason });
  return (
    <EventRowHeader event={event} href={href}>
      {facts.map((fact) => (
        <span key={fact.term}>
          {fact.term}{' '}
          <SafeText text={fact.value} className="font-medium text-slate-800 dark:text-slate-100" />
        </span>
      ))}
    </EventRowHeader>
  );
}
