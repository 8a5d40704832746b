import type { EventOf } from '../../../graphql/eventFragments.ts';
import { Link } from '../../../ui/router.tsx';
import { SafeText } from '../../../ui/SafeText.tsx';
import { EventRowHeader } from './RowHeader.tsx';

const REASON: Record<string, string> = {
  AGENT_WRITE: 'before an agent write',
  RESTORE_PREIMAGE: 'before a restore (undo point)',
  MANUAL: 'taken by hand',
  STUDIO_AFTER_TOOL: 'after a tool call',
};

/** A checkpoint taken or restored, linking to the checkpoint browser. */
export function CheckpointRow({
  event,
  href,
  checkpointsHref,
}: {
  event: EventOf<'AgentCheckpointEvent'>;
  href: string;
  checkpointsHref: string;
}) {
  const files = event.checkpointFiles.length;
  return (
    <div>
      <EventRowHeader event={event} href={href}>
        <span>
          <SafeText text={REASON[event.checkpointReason] ?? event.checkpointReason} />
        </span>
      </EventRowHeader>
      <p className="mt-1 text-sm text-slate-800 dark:text-slate-200">
        Project revision {event.checkpointProjectRevision}, {files} {files === 1 ? 'file' : 'files'}
        , hash{' '}
        <span className="font-mono" title={event.checkpointContentHash}>
          <SafeText text={event.checkpointContentHash.slice(0, 19)} />…
        </span>{' '}
        <Link
          to={checkpointsHref}
          className="text-blue-800 underline underline-offset-2 dark:text-blue-300"
        >
          Open in checkpoints
        </Link>
      </p>
    </div>
  );
}
