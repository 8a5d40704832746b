/**
 * Result-shaped fixtures for web tests: complete selections of EventFields (with the contract's
 * aliases and __typename), so Graphcache writes them exactly as it writes server results.
 */
import type {
  ApprovalState,
  EventOf,
  StudioEvent,
  ToolCallState,
} from '../graphql/eventFragments.ts';
import { PAGE_SIZE } from '../graphql/eventDocuments.ts';

export const SESSION_ID = 'session-1';
const T0 = Date.parse('2026-11-30T09:00:00.000Z');

function at(seq: number): string {
  return new Date(T0 + seq * 1000).toISOString();
}

type Base<T extends StudioEvent['__typename']> = Pick<
  EventOf<T>,
  '__typename' | 'eventId' | 'sessionId' | 'seq' | 'type' | 'runId' | 'createdAt'
>;

function base<T extends StudioEvent['__typename']>(
  typename: T,
  seq: number,
  type: EventOf<T>['type'],
  sessionId = SESSION_ID,
): Base<T> {
  return {
    __typename: typename,
    eventId: `${sessionId}-e${seq}`,
    sessionId,
    seq: String(seq),
    type,
    runId: 'run-1',
    createdAt: at(seq),
  } as Base<T>;
}

export function lifecycleEvent(
  seq: number,
  type: EventOf<'AgentLifecycleEvent'>['type'] = 'SESSION_CREATED',
  over: Partial<EventOf<'AgentLifecycleEvent'>> = {},
): EventOf<'AgentLifecycleEvent'> {
  return {
    ...base('AgentLifecycleEvent', seq, type),
    runId: null,
    lifecycleMode: 'BUILD',
    lifecycleClientEpoch: null,
    lifecycleReplayAfterSeq: null,
    lifecycleReason: null,
    lifecycleContextVersion: null,
    ...over,
  };
}

export function messageEvent(
  seq: number,
  type: 'USER_MESSAGE' | 'ASSISTANT_CHUNK' | 'ASSISTANT_MESSAGE',
  content: string,
  messageId = `m-${seq}`,
): EventOf<'AgentMessageEvent'> {
  return {
    ...base('AgentMessageEvent', seq, type),
    messageEventId: messageId,
    messageRole: type === 'USER_MESSAGE' ? 'USER' : 'ASSISTANT',
    messageContent: content,
  };
}

export function runEvent(
  seq: number,
  type: EventOf<'AgentRunEvent'>['type'],
  runStatus: EventOf<'AgentRunEvent'>['runStatus'],
  over: Partial<EventOf<'AgentRunEvent'>> = {},
): EventOf<'AgentRunEvent'> {
  return {
    ...base('AgentRunEvent', seq, type),
    runStatus,
    runCode: null,
    runReason: null,
    runError: null,
    ...over,
  };
}

export function approval(over: Partial<ApprovalState> = {}): ApprovalState {
  return {
    __typename: 'AgentApproval',
    approvalId: 'approval-1',
    toolCallId: 'call-1',
    argumentHash: `sha256:${'a'.repeat(64)}`,
    status: 'PENDING',
    safeSummary: 'Write src/index.ts (12 lines)',
    clientEpoch: '1',
    expiresAt: new Date(T0 + 120_000).toISOString(),
    approved: false,
    rejected: false,
    studioSessionId: SESSION_ID,
    studioReasons: ['Writes to the project'],
    studioDecidedAt: null,
    studioDecisionReason: null,
    studioAutomatic: false,
    studioRuleId: null,
    studioRuleName: null,
    studioDecidedBy: null,
    studioRuleSuggestions: [],
    ...over,
  } as ApprovalState;
}

export function toolCall(over: Partial<ToolCallState> = {}): ToolCallState {
  return {
    __typename: 'StudioToolCall',
    toolCallId: 'call-1',
    sessionId: SESSION_ID,
    runId: 'run-1',
    toolName: 'workspace.file.patch',
    toolVersion: '1.0.0',
    executor: 'SERVER',
    status: 'PROPOSED',
    safeSummary: 'Write src/index.ts (12 lines)',
    argumentHash: `sha256:${'a'.repeat(64)}`,
    argumentsJson: '{"path":"src/index.ts"}',
    resultJson: null,
    error: null,
    approval: null,
    askedBy: null,
    studioCanAskAgain: false,
    studioDiff: null,
    proposedAt: at(1),
    updatedAt: at(1),
    steps: [],
    ...over,
  } as ToolCallState;
}

export function toolEvent(
  seq: number,
  type: EventOf<'AgentToolEvent'>['type'],
  call: ToolCallState,
  over: Partial<EventOf<'AgentToolEvent'>> = {},
): EventOf<'AgentToolEvent'> {
  return {
    ...base('AgentToolEvent', seq, type),
    toolEventCallId: call.toolCallId,
    toolEventName: call.toolName,
    toolStatus: call.status,
    toolSafeSummary: call.safeSummary,
    toolError: null,
    studioToolCall: call,
    ...over,
  } as EventOf<'AgentToolEvent'>;
}

export function approvalEvent(
  seq: number,
  type: EventOf<'AgentApprovalEvent'>['type'],
  call: ToolCallState,
  state: ApprovalState,
): EventOf<'AgentApprovalEvent'> {
  return {
    ...base('AgentApprovalEvent', seq, type),
    approvalEventId: state.approvalId,
    approvalToolCallId: state.toolCallId,
    approvalStatus: state.status,
    approvalSafeSummary: state.safeSummary,
    approvalReasons: state.studioReasons,
    studioToolCall: call,
  } as EventOf<'AgentApprovalEvent'>;
}

export function leaseEvent(
  seq: number,
  type: EventOf<'AgentLeaseEvent'>['type'],
): EventOf<'AgentLeaseEvent'> {
  return {
    ...base('AgentLeaseEvent', seq, type),
    leaseKind: 'WORKSPACE',
    leaseStatus:
      type === 'LEASE_GRANTED' ? 'ACTIVE' : type === 'LEASE_REVOKED' ? 'REVOKED' : 'EXPIRED',
    leaseClientEpoch: '1',
    leaseScopes: ['workspace.write'],
    leaseHolder: 'agent',
    leaseExpectedProjectRevision: '7',
    leaseExpiresAt: at(seq + 30),
    leaseReason: type === 'LEASE_REVOKED' ? 'HUMAN_EDIT' : null,
  } as EventOf<'AgentLeaseEvent'>;
}

export function checkpointEvent(
  seq: number,
  type: EventOf<'AgentCheckpointEvent'>['type'] = 'CHECKPOINT_CREATED',
  over: Partial<EventOf<'AgentCheckpointEvent'>> = {},
): EventOf<'AgentCheckpointEvent'> {
  return {
    ...base('AgentCheckpointEvent', seq, type),
    checkpointEventId: 'checkpoint-1',
    checkpointProjectRevision: '7',
    checkpointContentHash: `sha256:${'c'.repeat(64)}`,
    checkpointReason: 'AGENT_WRITE',
    checkpointFiles: [
      {
        __typename: 'AgentCheckpointFile',
        target: 'SERVER',
        path: 'src/index.ts',
        contentHash: `sha256:${'d'.repeat(64)}`,
        byteLength: 120,
      },
    ],
    checkpointRestoredAt: type === 'CHECKPOINT_RESTORED' ? at(seq) : null,
    ...over,
  } as unknown as EventOf<'AgentCheckpointEvent'>;
}

export function budgetEvent(seq: number): EventOf<'AgentBudgetEvent'> {
  return {
    ...base('AgentBudgetEvent', seq, 'BUDGET_UPDATED'),
    budgetSnapshot: {
      __typename: 'AgentBudget',
      dimensions: [
        {
          __typename: 'AgentBudgetDimension',
          name: 'INPUT_TOKENS',
          scope: 'SESSION',
          limit: '200000',
          reserved: '0',
          consumed: '50000',
          remaining: '150000',
          unit: 'tokens',
        },
        {
          __typename: 'AgentBudgetDimension',
          name: 'TOOL_CALLS',
          scope: 'TURN',
          limit: '20',
          reserved: '1',
          consumed: '19',
          remaining: '0',
          unit: 'calls',
        },
      ],
      resetAt: null,
      platformFunded: false,
      payer: 'USER',
    },
  } as unknown as EventOf<'AgentBudgetEvent'>;
}

export function stageEvent(seq: number): EventOf<'StudioStageEvent'> {
  return {
    ...base('StudioStageEvent', seq, 'STUDIO_STAGE_CHANGED'),
    stageFrom: 'plan',
    stageTo: 'implement',
    stageDetail: 'tests written',
  };
}

export function logEvent(
  seq: number,
  message = 'compiling 12 files',
  level = 'INFO',
): EventOf<'StudioLogEvent'> {
  return {
    ...base('StudioLogEvent', seq, 'STUDIO_LOG'),
    logLevel: level,
    logMessage: message,
    logOrigin: 'builder',
  };
}

export function questionEvent(seq: number): EventOf<'StudioQuestionEvent'> {
  return {
    ...base('StudioQuestionEvent', seq, 'STUDIO_QUESTION_ASKED'),
    question: {
      __typename: 'StudioQuestion',
      questionId: 'q-1',
      sessionId: SESSION_ID,
      kind: 'MULTIPLE_CHOICE',
      prompt: 'Which database should I use?',
      choices: ['SQLite', 'Postgres'],
      initialText: null,
      status: 'OPEN',
      answerText: null,
      answerChoiceIndex: null,
      answerApproved: null,
      askedBy: 'subagent planner',
      askedAt: at(seq),
      answeredAt: null,
    },
  } as EventOf<'StudioQuestionEvent'>;
}

export function threadEvent(seq: number): EventOf<'StudioThreadEvent'> {
  return {
    ...base('StudioThreadEvent', seq, 'STUDIO_THREAD_CHANGED'),
    threadId: 'thread-9',
    threadAgentName: 'reviewer',
    threadStatus: 'STARTED',
  };
}

export function foreignEvent(seq: number): EventOf<'StudioForeignEvent'> {
  return {
    ...base('StudioForeignEvent', seq, 'STUDIO_FOREIGN_EVENT'),
    foreignSource: 'leviath',
    foreignType: 'memory.compacted',
    foreignPayloadJson: '{"kept":12}',
    foreignTruncated: false,
  };
}

/** A page result (studioEventPage) holding the given events. */
export function eventPage(page: number, events: StudioEvent[], sessionId = SESSION_ID) {
  return {
    __typename: 'StudioEventPage' as const,
    sessionId,
    page: String(page),
    size: PAGE_SIZE,
    fromSeq: String(page * PAGE_SIZE + 1),
    throughSeq: String((page + 1) * PAGE_SIZE),
    complete: events.length === PAGE_SIZE,
    events,
  };
}

/** The first seq of a page (the client's page size, PAGE_SIZE). */
export function firstSeqOf(page: number): number {
  return page * PAGE_SIZE + 1;
}

/** The last seq of a page. */
export function lastSeqOf(page: number): number {
  return (page + 1) * PAGE_SIZE;
}

/** A full page of log events. */
export function pageOfLogEvents(page: number): EventOf<'StudioLogEvent'>[] {
  return logEvents(firstSeqOf(page), lastSeqOf(page));
}

/** Events 1..n as simple log lines (cheap filler for page tests). */
export function logEvents(from: number, through: number): EventOf<'StudioLogEvent'>[] {
  const out: EventOf<'StudioLogEvent'>[] = [];
  for (let seq = from; seq <= through; seq += 1) out.push(logEvent(seq, `line ${seq}`));
  return out;
}

export function session(over: Record<string, unknown> = {}) {
  return {
    __typename: 'AgentSession' as const,
    sessionId: SESSION_ID,
    lastEventSeq: '0',
    currentClientEpoch: '0',
    studioControlledBy: null,
    studioControlledSince: null,
    ...over,
  };
}

type Row = Record<string, unknown>;

/**
 * The tool calls `events` embed (fixtures give each tool and approval event its call), once
 * each, in order of first mention, each at the last state an event gave it: what the server's
 * `studioToolCalls` holds for them (it sends every call's current state).
 */
export function namedToolCalls(events: readonly unknown[]): Row[] {
  const calls = new Map<string, Row>();
  for (const event of events as Row[]) {
    const call = event?.studioToolCall as Row | null | undefined;
    if (call && typeof call.toolCallId === 'string') calls.set(call.toolCallId, call);
  }
  return [...calls.values()];
}

/**
 * A batch (or history page) as the server sends it: tool and approval events link their call by
 * key only, and `studioToolCalls` carries each named call once (namedToolCalls). One that has
 * `studioToolCalls` already is the wire shape and is returned unchanged.
 */
export function asSent<T extends { events?: unknown }>(page: T): T & { studioToolCalls: Row[] } {
  const given = page as T & { studioToolCalls?: Row[] };
  if (Array.isArray(given.studioToolCalls) || !Array.isArray(page.events))
    return given as T & { studioToolCalls: Row[] };
  const events = (page.events as Row[]).map((event) => {
    const call = event.studioToolCall as Row | null | undefined;
    return call
      ? { ...event, studioToolCall: { __typename: 'StudioToolCall', toolCallId: call.toolCallId } }
      : event;
  });
  return { ...page, events, studioToolCalls: namedToolCalls(page.events as Row[]) };
}
