import { createContext, useContext, type ReactNode } from 'react';
import type { EventType } from '../../../../protocol/events.ts';
import { CopyButton } from '../../../ui/CopyButton.tsx';
import { Link } from '../../../ui/router.tsx';
import { EVENT_LABEL } from '../labels.ts';
import { timeOfDay } from '../../../ui/timeOfDay.ts';

export interface RowHeaderProps {
  label: ReactNode;
  seq: string;
  createdAt: string;
  /** The in-app path of this event (`/sessions/:id/events/:seq`). */
  href: string;
  children?: ReactNode;
}

/**
 * Whether the row around a header is hovered or holds focus. The timeline provides it per row,
 * so a header's copy-link button (its state, effect and nodes) exists only while the reader
 * points at or tabs into that row; elsewhere (no provider) it is always there.
 */
export const RowActiveContext = createContext(true);

/** The first line of every row: what happened, when, its seq as a link, and a copy-link button. */
export function RowHeader({ label, seq, createdAt, href, children }: RowHeaderProps) {
  const active = useContext(RowActiveContext);
  return (
    <div className="flex flex-wrap items-center gap-x-2 gap-y-1 text-xs text-slate-600 dark:text-slate-300">
      <span className="font-semibold text-slate-900 dark:text-slate-50">{label}</span>
      {children}
      {/* No group element around the time and link (a row is rendered per event while
          streaming): the time takes the free space before it, the link and copy button follow. */}
      <time dateTime={createdAt} className="ml-auto">
        {timeOfDay(createdAt)}
      </time>
      <Link
        to={href}
        className="font-mono underline-offset-2 hover:underline"
        aria-label={`Event ${seq}`}
      >
        {`#${seq}`}
      </Link>
      {active ? (
        <CopyButton
          text={
            typeof window === 'undefined' ? href : new URL(href, window.location.origin).toString()
          }
          label={`link to event ${seq}`}
        />
      ) : null}
    </div>
  );
}

/** The header of one event's row, labelled by its type. */
export function EventRowHeader({
  event,
  href,
  children,
}: {
  event: { type: EventType; seq: string; createdAt: string };
  href: string;
  children?: ReactNode;
}) {
  return (
    <RowHeader
      label={EVENT_LABEL[event.type]}
      seq={event.seq}
      createdAt={event.createdAt}
      href={href}
    >
      {children}
    </RowHeader>
  );
}
