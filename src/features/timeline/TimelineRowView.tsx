import { memo, useState, type ReactNode } from 'react';
import type { EventOf, StudioEvent, ToolCallRowState } from '../../graphql/eventFragments.ts';
import type { ContentRow, ToolCallRow } from './buildRows.ts';
import { assertNever, EVENT_LABEL } from './labels.ts';
import { BudgetRow } from './rows/BudgetRow.tsx';
import { CheckpointRow } from './rows/CheckpointRow.tsx';
import { LeaseRow } from './rows/LeaseRow.tsx';
import { LifecycleRow } from './rows/LifecycleRow.tsx';
import { MessageBubble } from './rows/MessageBubble.tsx';
import { EventRowHeader, RowHeader } from './rows/RowHeader.tsx';
import { RunRow } from './rows/RunRow.tsx';
import { ForeignRow, LogRow, QuestionText, StageRow, ThreadRow } from './rows/StudioEventRows.tsx';
import { ToolCallCompact, needsFullCard } from './rows/ToolCallCompact.tsx';
import { ToolCallSummary } from './rows/ToolCallSummary.tsx';

export interface ToolCallSlotProps {
  toolCallId: string;
  sessionId: string;
  /** The call's current state as the timeline's page query read it (may lag the card's own read). */
  toolCall: ToolCallRowState | null;
}

export interface QuestionSlotProps {
  questionId: string;
  sessionId: string;
  question: EventOf<'StudioQuestionEvent'>['question'];
}

/** How the app renders cards that live in other features (the timeline never imports them). */
export interface RowRenderers {
  renderToolCall?: (props: ToolCallSlotProps) => ReactNode;
  renderQuestion?: (props: QuestionSlotProps) => ReactNode;
}

export interface TimelineRowViewProps extends RowRenderers {
  row: ContentRow;
  sessionId: string;
  eventHref: (seq: string) => string;
  checkpointsHref: string;
}

function ToolCallRowView({
  row,
  sessionId,
  eventHref,
  renderToolCall,
}: TimelineRowViewProps & { row: ToolCallRow }) {
  // The full card (its own query, descriptor read, timers, key listener and layout) mounts only
  // for a call waiting on a decision or one the reader opened; once mounted it stays while the
  // row does, so a card the reader just approved keeps showing what happened next.
  const needed = needsFullCard(row);
  const [open, setOpen] = useState(needed);
  if (needed && !open) setOpen(true);
  return (
    <div>
      <RowHeader
        label="Tool call"
        seq={row.seq}
        createdAt={row.createdAt}
        href={eventHref(row.seq)}
      >
        {row.seqs.length > 1 ? <span>{row.seqs.length} events</span> : null}
        {renderToolCall && open && !needed ? (
          <button
            type="button"
            aria-expanded={true}
            onClick={() => setOpen(false)}
            className="text-blue-700 underline-offset-2 hover:underline dark:text-blue-300"
          >
            Hide details
          </button>
        ) : null}
      </RowHeader>
      {renderToolCall ? (
        open ? (
          <div className="mt-1">
            {renderToolCall({ toolCallId: row.toolCallId, sessionId, toolCall: row.toolCall })}
          </div>
        ) : (
          <ToolCallCompact row={row} onOpen={() => setOpen(true)} />
        )
      ) : (
        <div className="mt-1">
          <ToolCallSummary row={row} />
        </div>
      )}
    </div>
  );
}

function EventView({
  event,
  props,
}: {
  event: Exclude<
    StudioEvent,
    { __typename: 'AgentMessageEvent' | 'AgentToolEvent' | 'AgentApprovalEvent' }
  >;
  props: TimelineRowViewProps;
}) {
  const href = props.eventHref(event.seq);
  switch (event.__typename) {
    case 'AgentLifecycleEvent':
      return <LifecycleRow event={event} href={href} />;
    case 'AgentRunEvent':
      return <RunRow event={event} href={href} />;
    case 'AgentLeaseEvent':
      return <LeaseRow event={event} href={href} />;
    case 'AgentCheckpointEvent':
      return <CheckpointRow event={event} href={href} checkpointsHref={props.checkpointsHref} />;
    case 'AgentBudgetEvent':
      return <BudgetRow event={event} href={href} />;
    case 'StudioStageEvent':
      return <StageRow event={event} href={href} />;
    case 'StudioLogEvent':
      return <LogRow event={event} href={href} />;
    case 'StudioQuestionEvent':
      return (
        <div>
          <EventRowHeader event={event} href={href} />
          {props.renderQuestion ? (
            props.renderQuestion({
              questionId: event.question.questionId,
              sessionId: props.sessionId,
              question: event.question,
            })
          ) : (
            <QuestionText event={event} />
          )}
        </div>
      );
    case 'StudioThreadEvent':
      return <ThreadRow event={event} href={href} />;
    case 'StudioForeignEvent':
      return <ForeignRow event={event} href={href} />;
    default:
      return assertNever(event);
  }
}

/** One timeline row, whatever it holds; re-renders only when the row's content changes. */
export const TimelineRowView = memo(
  function TimelineRowView(props: TimelineRowViewProps) {
    const { row } = props;
    switch (row.kind) {
      case 'message':
        return <MessageBubble row={row} href={props.eventHref(row.seq)} />;
      case 'toolCall':
        return <ToolCallRowView {...props} row={row} />;
      case 'event': {
        const event = row.event;
        if (
          event.__typename === 'AgentMessageEvent' ||
          event.__typename === 'AgentToolEvent' ||
          event.__typename === 'AgentApprovalEvent'
        ) {
          return null;
        }
        return <EventView event={event} props={props} />;
      }
      default:
        return assertNever(row);
    }
  },
  (a, b) =>
    a.row.key === b.row.key &&
    a.row.version === b.row.version &&
    a.sessionId === b.sessionId &&
    a.eventHref === b.eventHref &&
    a.checkpointsHref === b.checkpointsHref &&
    a.renderToolCall === b.renderToolCall &&
    a.renderQuestion === b.renderQuestion,
);

/** A short accessible name for a row (its article's label). */
export function rowLabel(row: ContentRow): string {
  switch (row.kind) {
    case 'message':
      return `${row.role === 'USER' ? 'User message' : 'Assistant message'}${row.final ? '' : ', streaming'}, event ${row.seq}`;
    case 'toolCall':
      return `Tool call ${row.toolName ?? row.toolCallId}, ${row.status ?? 'unknown'}, event ${row.seq}`;
    case 'event':
      return `${EVENT_LABEL[row.event.type]}, event ${row.seq}`;
    default:
      return assertNever(row);
  }
}
