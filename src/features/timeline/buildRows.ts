import type { EventOf, StudioEvent, ToolCallRowState } from '../../graphql/eventFragments.ts';
import { pageBounds } from '../../graphql/eventDocuments.ts';

/** The kinds of event a reader filters by (one per union member family). */
export type RowFamily =
  | 'lifecycle'
  | 'message'
  | 'run'
  | 'tool'
  | 'lease'
  | 'checkpoint'
  | 'budget'
  | 'stage'
  | 'log'
  | 'question'
  | 'thread'
  | 'foreign';

export const FAMILY_LABEL: Record<RowFamily, string> = {
  lifecycle: 'Session and client',
  message: 'Messages',
  run: 'Runs',
  tool: 'Tool calls and approvals',
  lease: 'Leases',
  checkpoint: 'Checkpoints',
  budget: 'Budgets',
  stage: 'Stages',
  log: 'Logs',
  question: 'Questions',
  thread: 'Threads',
  foreign: 'Foreign events',
};

const FAMILY_OF: Record<StudioEvent['__typename'], RowFamily> = {
  AgentLifecycleEvent: 'lifecycle',
  AgentMessageEvent: 'message',
  AgentRunEvent: 'run',
  AgentToolEvent: 'tool',
  AgentApprovalEvent: 'tool',
  AgentLeaseEvent: 'lease',
  AgentCheckpointEvent: 'checkpoint',
  AgentBudgetEvent: 'budget',
  StudioStageEvent: 'stage',
  StudioLogEvent: 'log',
  StudioQuestionEvent: 'question',
  StudioThreadEvent: 'thread',
  StudioForeignEvent: 'foreign',
};

interface RowCommon {
  /** Stable across rebuilds and page loads (the virtualizer's item key). */
  key: string;
  /** The first seq the row shows (its link target). */
  seq: string;
  /** Every seq folded into the row, ascending. */
  seqs: string[];
  family: RowFamily;
  /** Lower-cased text the search box matches against. */
  text: string;
  status: string | null;
  toolName: string | null;
  /** Changes whenever what the row shows changes (rows re-render only then). */
  version: string;
}

/** One event shown as it is. */
export interface EventRow extends RowCommon {
  kind: 'event';
  event: StudioEvent;
}

/** A user message, or an assistant message whose chunks stream into one bubble. */
export interface MessageRow extends RowCommon {
  kind: 'message';
  event: EventOf<'AgentMessageEvent'>;
  messageId: string;
  role: string;
  content: string;
  /** False while ASSISTANT_CHUNKs stream; true once ASSISTANT_MESSAGE (or a user message) landed. */
  final: boolean;
  createdAt: string;
}

/** Every TOOL_* and APPROVAL_* event of one toolCallId, shown as one card. */
export interface ToolCallRow extends RowCommon {
  kind: 'toolCall';
  toolCallId: string;
  toolCall: ToolCallRowState | null;
  events: StudioEvent[];
  createdAt: string;
}

/** A page of events that has not been loaded (it loads when scrolled into view). */
export interface GapRow {
  kind: 'gap';
  key: string;
  page: string;
  fromSeq: string;
  throughSeq: string;
  loading: boolean;
  error: string | null;
  version: string;
}

export type TimelineRow = EventRow | MessageRow | ToolCallRow | GapRow;
export type ContentRow = Exclude<TimelineRow, GapRow>;

/** A page slot in seq order: its events when loaded. */
export interface PageSlot {
  page: string;
  events: readonly StudioEvent[] | null;
  loading: boolean;
  error: string | null;
}

function searchText(event: StudioEvent): string {
  const parts: (string | null | undefined)[] = [event.type];
  switch (event.__typename) {
    case 'AgentLifecycleEvent':
      parts.push(event.lifecycleMode, event.lifecycleReason, event.lifecycleContextVersion);
      break;
    case 'AgentMessageEvent':
      parts.push(event.messageContent);
      break;
    case 'AgentRunEvent':
      parts.push(
        event.runStatus,
        event.runCode,
        event.runReason,
        event.runError?.code,
        event.runError?.message,
      );
      break;
    case 'AgentToolEvent':
      parts.push(
        event.toolEventName,
        event.toolStatus,
        event.toolSafeSummary,
        event.toolError?.message,
      );
      break;
    case 'AgentApprovalEvent':
      parts.push(event.approvalStatus, event.approvalSafeSummary, ...event.approvalReasons);
      break;
    case 'AgentLeaseEvent':
      parts.push(
        event.leaseKind,
        event.leaseStatus,
        event.leaseHolder,
        event.leaseReason,
        ...event.leaseScopes,
      );
      break;
    case 'AgentCheckpointEvent':
      parts.push(
        event.checkpointReason,
        event.checkpointContentHash,
        ...event.checkpointFiles.map((f) => f.path),
      );
      break;
    case 'AgentBudgetEvent':
      parts.push(...event.budgetSnapshot.dimensions.map((d) => d.name));
      break;
    case 'StudioStageEvent':
      parts.push(event.stageFrom, event.stageTo, event.stageDetail);
      break;
    case 'StudioLogEvent':
      parts.push(event.logLevel, event.logMessage, event.logOrigin);
      break;
    case 'StudioQuestionEvent':
      parts.push(
        event.question.prompt,
        event.question.status,
        event.question.answerText,
        ...event.question.choices,
      );
      break;
    case 'StudioThreadEvent':
      parts.push(event.threadId, event.threadAgentName, event.threadStatus);
      break;
    case 'StudioForeignEvent':
      parts.push(event.foreignSource, event.foreignType, event.foreignPayloadJson);
      break;
  }
  return parts.filter(Boolean).join(' ').toLowerCase();
}

function statusOf(event: StudioEvent): string | null {
  switch (event.__typename) {
    case 'AgentRunEvent':
      return event.runStatus;
    case 'AgentLeaseEvent':
      return event.leaseStatus;
    case 'StudioQuestionEvent':
      return event.question.status;
    case 'StudioThreadEvent':
      return event.threadStatus;
    case 'StudioLogEvent':
      return event.logLevel;
    default:
      return null;
  }
}

function toolCallIdOf(event: StudioEvent): string | null {
  if (event.__typename === 'AgentToolEvent') return event.toolEventCallId;
  if (event.__typename === 'AgentApprovalEvent') return event.approvalToolCallId;
  return null;
}

function gapRow(slot: PageSlot): GapRow {
  const bounds = pageBounds(slot.page);
  return {
    kind: 'gap',
    key: `page:${slot.page}`,
    page: slot.page,
    fromSeq: bounds.fromSeq,
    throughSeq: bounds.throughSeq,
    loading: slot.loading,
    error: slot.error,
    version: `${slot.loading}:${slot.error ?? ''}`,
  };
}

/**
 * Folds the loaded pages into display rows, in seq order: assistant chunks merge into one
 * message per messageId (final once ASSISTANT_MESSAGE lands), every TOOL_* and APPROVAL_*
 * event of a toolCallId becomes one tool-call row at the call's first loaded event, and each
 * page not loaded yet becomes one gap row.
 */
export function buildRows(slots: readonly PageSlot[]): TimelineRow[] {
  const rows: TimelineRow[] = [];
  const messages = new Map<string, { row: MessageRow; chunks: string[] }>();
  const tools = new Map<string, ToolCallRow>();
  // One row per question: its card reads the StudioQuestion entity, which the answer updates.
  const questions = new Map<string, EventRow>();
  for (const slot of slots) {
    if (!slot.events) {
      rows.push(gapRow(slot));
      continue;
    }
    for (const event of slot.events) {
      const family = FAMILY_OF[event.__typename];
      if (event.__typename === 'AgentMessageEvent' && event.type !== 'USER_MESSAGE') {
        const known = messages.get(event.messageEventId);
        if (known) {
          known.row.seqs.push(event.seq);
          if (event.type === 'ASSISTANT_MESSAGE') {
            known.row.final = true;
            known.chunks = [event.messageContent];
          } else if (!known.row.final) {
            known.chunks.push(event.messageContent);
          }
          continue;
        }
        const row: MessageRow = {
          kind: 'message',
          key: `message:${event.messageEventId}`,
          seq: event.seq,
          seqs: [event.seq],
          family,
          text: '',
          status: null,
          toolName: null,
          version: '',
          event,
          messageId: event.messageEventId,
          role: event.messageRole,
          content: '',
          final: event.type === 'ASSISTANT_MESSAGE',
          createdAt: event.createdAt,
        };
        messages.set(event.messageEventId, { row, chunks: [event.messageContent] });
        rows.push(row);
        continue;
      }
      if (event.__typename === 'AgentMessageEvent') {
        rows.push({
          kind: 'message',
          key: event.eventId,
          seq: event.seq,
          seqs: [event.seq],
          family,
          text: searchText(event),
          status: null,
          toolName: null,
          version: event.eventId,
          event,
          messageId: event.messageEventId,
          role: event.messageRole,
          content: event.messageContent,
          final: true,
          createdAt: event.createdAt,
        });
        continue;
      }
      const toolCallId = toolCallIdOf(event);
      if (toolCallId !== null) {
        const call =
          event.__typename === 'AgentToolEvent' || event.__typename === 'AgentApprovalEvent'
            ? event.studioToolCall
            : null;
        const known = tools.get(toolCallId);
        if (known) {
          known.seqs.push(event.seq);
          known.events.push(event);
          if (call) known.toolCall = call;
          continue;
        }
        const row: ToolCallRow = {
          kind: 'toolCall',
          key: `tool:${toolCallId}`,
          seq: event.seq,
          seqs: [event.seq],
          family,
          text: '',
          status: null,
          toolName: null,
          version: '',
          toolCallId,
          toolCall: call ?? null,
          events: [event],
          createdAt: event.createdAt,
        };
        tools.set(toolCallId, row);
        rows.push(row);
        continue;
      }
      const questionId =
        event.__typename === 'StudioQuestionEvent' ? event.question.questionId : null;
      const asked = questionId === null ? undefined : questions.get(questionId);
      if (asked && event.__typename === 'StudioQuestionEvent') {
        asked.seqs.push(event.seq);
        asked.status = statusOf(event);
        asked.text = `${asked.text} ${searchText(event)}`;
        asked.version = `${asked.seqs.length}:${event.question.status}:${event.question.answeredAt ?? ''}`;
        continue;
      }
      const row: EventRow = {
        kind: 'event',
        key: event.eventId,
        seq: event.seq,
        seqs: [event.seq],
        family,
        text: searchText(event),
        status: statusOf(event),
        toolName: null,
        // A question's state lives in its StudioQuestion entity, which later events update.
        version:
          event.__typename === 'StudioQuestionEvent'
            ? `1:${event.question.status}:${event.question.answeredAt ?? ''}`
            : event.eventId,
        event,
      };
      if (questionId !== null) questions.set(questionId, row);
      rows.push(row);
    }
  }
  for (const { row, chunks } of messages.values()) {
    row.content = chunks.join('');
    row.text = `${row.event.type} ${row.content}`.toLowerCase();
    row.version = `${row.seqs.length}:${row.final}`;
  }
  for (const row of tools.values()) {
    const last = row.events[row.events.length - 1];
    const call = row.toolCall;
    const lastStatus =
      last?.__typename === 'AgentToolEvent'
        ? last.toolStatus
        : last?.__typename === 'AgentApprovalEvent'
          ? last.approvalStatus
          : null;
    row.status = call?.status ?? lastStatus;
    row.toolName =
      call?.toolName ??
      row.events.find((e): e is EventOf<'AgentToolEvent'> => e.__typename === 'AgentToolEvent')
        ?.toolEventName ??
      null;
    row.text = [
      row.toolName,
      row.status,
      call?.safeSummary,
      call?.approval?.status,
      ...row.events.map(searchText),
    ]
      .filter(Boolean)
      .join(' ')
      .toLowerCase();
    row.version = [row.seqs.length, call?.status, call?.updatedAt, call?.approval?.status].join(
      ':',
    );
  }
  return rows;
}
