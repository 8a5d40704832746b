/**
 * Maps Claude Managed Agents session events (beta `managed-agents-2026-04-01`) to studio event
 * drafts. Deterministic: the same event sequence always yields the same drafts with the same
 * foreignIds, so a restart that re-pages the whole history re-creates nothing (the engine skips
 * a draft whose foreignId it already stored). The full table is in docs/BRIDGES-MAPPING.md.
 *
 * foreignId rules: the first draft of an event carries the event id; further drafts of the same
 * event carry `<event id>/<suffix>`. Facts that can reach the stream twice under different ids
 * (a confirmation echoed on the primary and on a subagent thread, a tool result) are keyed by the
 * tool use they are about: `<tool_use_id>/confirmation`, `<tool_use_id>/result`.
 */
import type {
  BetaManagedAgentsSendSessionEvents,
  BetaManagedAgentsSessionEvent,
  BetaManagedAgentsStreamSessionEvents,
} from '@anthropic-ai/sdk/resources/beta/sessions/events';
import type { BetaManagedAgentsStreamSessionThreadEvents } from '@anthropic-ai/sdk/resources/beta/sessions/threads/threads';
import { MAX_MESSAGE_CONTENT_BYTES, MAX_SAFE_SUMMARY } from '../../../protocol/contract.ts';
import type {
  AgentErrorValue,
  BudgetDimensionValue,
  EventDraft,
  ToolDraft,
} from '../../engine/eventDrafts.ts';
import {
  approvalExpiresAt,
  approvalGenerationOf,
  approvalIdFor,
  budgetDimension,
  foreignEventDraft,
  isRecord,
  logDraft,
  num,
  str,
} from '../bridgeSupport.ts';
import {
  canonicalJson,
  foreignArgumentHash,
  maskSecretText,
  redactForeignPayload,
  truncateText,
  truncateUtf8,
} from '../redact.ts';

export const MANAGED_AGENTS_SOURCE_ID = 'managed-agents';

/**
 * Every event the official SDK (`@anthropic-ai/sdk`) types: session history items, session and
 * thread stream frames (with the live previews), and the events `events.send` returns.
 */
export type KnownManagedAgentsEvent =
  | BetaManagedAgentsSessionEvent
  | BetaManagedAgentsStreamSessionEvents
  | BetaManagedAgentsStreamSessionThreadEvents
  | NonNullable<BetaManagedAgentsSendSessionEvents['data']>[number];

/** Every event `type` the SDK knows. */
export type KnownManagedAgentsEventType = KnownManagedAgentsEvent['type'];

/**
 * An event of a type this SDK version does not know: the API's unions are open, so the bridge
 * keeps it as a foreign event instead of dropping it.
 */
export interface UnknownManagedAgentsEvent {
  type: string;
  id?: string;
  [key: string]: unknown;
}

/** A Managed Agents event as it arrives (history item or stream frame): the SDK's types, open. */
export type ManagedAgentsEvent = KnownManagedAgentsEvent | UnknownManagedAgentsEvent;

/**
 * How the mapper treats each type the SDK knows. A `Record` over the SDK's own union: an SDK
 * upgrade that adds an event type fails the type check here until the mapper handles it.
 */
export const MANAGED_AGENTS_EVENT_HANDLING: Record<
  KnownManagedAgentsEventType,
  'timeline' | 'row' | 'preview'
> = {
  'user.message': 'timeline',
  'user.interrupt': 'timeline',
  'user.tool_confirmation': 'timeline',
  'user.custom_tool_result': 'timeline',
  'user.tool_result': 'timeline',
  'user.define_outcome': 'row',
  'system.message': 'row',
  'agent.message': 'timeline',
  'agent.thinking': 'row',
  'agent.tool_use': 'timeline',
  'agent.mcp_tool_use': 'timeline',
  'agent.custom_tool_use': 'timeline',
  'agent.tool_result': 'timeline',
  'agent.mcp_tool_result': 'timeline',
  'agent.thread_context_compacted': 'row',
  'agent.thread_message_sent': 'row',
  'agent.thread_message_received': 'row',
  'session.status_running': 'timeline',
  'session.status_idle': 'timeline',
  'session.status_rescheduled': 'row',
  'session.status_terminated': 'timeline',
  'session.deleted': 'timeline',
  'session.error': 'timeline',
  'session.updated': 'row',
  'session.usage': 'timeline',
  'session.thread_created': 'row',
  'session.thread_status_running': 'row',
  'session.thread_status_idle': 'row',
  'session.thread_status_rescheduled': 'row',
  'session.thread_status_terminated': 'row',
  'span.model_request_start': 'row',
  'span.model_request_end': 'row',
  'span.outcome_evaluation_start': 'row',
  'span.outcome_evaluation_ongoing': 'row',
  'span.outcome_evaluation_end': 'row',
  'workflow_run.created': 'row',
  'workflow_run.status_running': 'row',
  'workflow_run.status_idle': 'row',
  'workflow_run.status_ended': 'row',
  'workflow_run.phase_started': 'row',
  'workflow_run.phase_ended': 'row',
  'workflow_run.error': 'row',
  event_start: 'preview',
  event_delta: 'preview',
};

/** The mapper reads every field defensively (open unions, older and newer API versions). */
export type EventRecord = Record<string, unknown> & { id?: unknown; type?: unknown };

/** An SDK-typed event as the record the mapper's defensive readers take. */
export function eventRecord(event: ManagedAgentsEvent): EventRecord {
  return event as unknown as EventRecord;
}

export type ToolKind = 'agent' | 'mcp' | 'custom';

/**
 * Where a foreign tool call stands, as far as the bridge knows.
 * - awaiting: `ask`, waiting for a user.tool_confirmation
 * - running: allowed (by policy or by a confirmation), result not seen
 * - client: a custom tool use, waiting for the client that owns the tool
 * - denied: denied (automatically or by a human)
 * - finished: its result arrived
 */
export type ToolPhase = 'awaiting' | 'running' | 'client' | 'denied' | 'finished';

export interface ToolState {
  toolUseId: string;
  name: string;
  kind: ToolKind;
  runId: string | null;
  argumentHash: string;
  safeSummary: string;
  askedBy: string | null;
  phase: ToolPhase;
  /** Generation of the newest approval requested for it (0 = never asked). */
  approvalGeneration: number;
  /** The runtime refused a confirmation for it (400 other than "does not match"). */
  notConfirmable: boolean;
}

export interface ManagedAgentsMapperOptions {
  /** The engine's clock (ms). */
  now: () => number;
  /** TTL of the approvals it requests (default and cap: the contract's 120 s). */
  approvalTtlMs?: number;
  /** Values masked wherever they occur in kept payloads (the API key). */
  secrets?: readonly string[];
  /**
   * True when the studio itself delivered (or is delivering) the confirmation for this tool use;
   * the engine records that decision, so the echo must not record it a second time.
   */
  decidedInStudio?: (toolUseId: string) => boolean;
  /** True when this user.interrupt event was sent by the studio's cancelRun (the engine ends that run itself). */
  interruptFromStudio?: (interruptEventId: string) => boolean;
}

const ANTHROPIC_TOOLSET_VERSION = 'agent_toolset_20260401';
const RESULT_MAX_BYTES = 16 * 1024;
const ARGUMENTS_MAX_BYTES = 32 * 1024;

// A tool use's approvals are keyed by its tool_use id (tests build the expected ids with them).
export { approvalGenerationOf, approvalIdFor };

export class ManagedAgentsMapper {
  private readonly options: ManagedAgentsMapperOptions;
  private readonly tools = new Map<string, ToolState>();
  private readonly threadNames = new Map<string, string>();
  /** Tool use ids an idle event listed before their own event arrived (the documented race). */
  private readonly listedBeforeArrival = new Set<string>();
  private readonly confirmed = new Set<string>();
  private readonly resulted = new Set<string>();
  private openRun: { runId: string; interrupted: boolean; endedInStudio: boolean } | null = null;
  /** Runs the studio cancelled: the engine recorded their end, so the runtime's end is only a row. */
  private readonly runsEndedInStudio = new Set<string>();
  private expectedStudioInterrupts = 0;
  private closed = false;
  private deleted = false;
  /** budget.max_list_cost in minor units, from the session resource, session.updated or session.usage. */
  private maxListCost: { minor: bigint; currency: string } | null = null;

  constructor(options: ManagedAgentsMapperOptions) {
    this.options = options;
  }

  /** The studio run the next event belongs to (null between turns). */
  get currentRunId(): string | null {
    return this.openRun?.runId ?? null;
  }

  /**
   * True once session.deleted was seen: the bridge stops reading. A terminated session is closed
   * in the studio but still read, because `session.deleted` can follow on the stream.
   */
  get sessionClosed(): boolean {
    return this.deleted;
  }

  /** The session's budget (`budget: {type: 'limit', max_list_cost}` or null), from the resource. */
  noteBudget(budget: unknown): void {
    if (budget === null) {
      this.maxListCost = null;
      return;
    }
    if (!isRecord(budget)) return;
    const cost = minorUnits(budget.max_list_cost);
    if (cost) this.maxListCost = cost;
  }

  tool(toolUseId: string): Readonly<ToolState> | undefined {
    return this.tools.get(toolUseId);
  }

  /** Tool uses that still wait for a confirmation. */
  awaitingTools(): Readonly<ToolState>[] {
    return [...this.tools.values()].filter(
      (t) => t.phase === 'awaiting' && !t.notConfirmable && !this.confirmed.has(t.toolUseId),
    );
  }

  /**
   * The studio's newest approval of a call (read after a restart): follow its generation, and
   * request it again if it lapsed while the runtime kept waiting.
   */
  resumeApproval(toolUseId: string, newest: { approvalId: string; status: string }): EventDraft[] {
    const tool = this.tools.get(toolUseId);
    if (!tool || tool.phase !== 'awaiting') return [];
    const generation = approvalGenerationOf(toolUseId, newest.approvalId);
    tool.approvalGeneration = Math.max(tool.approvalGeneration, generation);
    return newest.status === 'EXPIRED' ? this.reRequestApproval(toolUseId, newest.approvalId) : [];
  }

  /** Ids an idle event listed as requiring action whose tool-use event has not arrived yet. */
  pendingListedIds(): string[] {
    return [...this.listedBeforeArrival];
  }

  /** The studio sent user.interrupt: the turn's end (idle end_turn) is then a cancellation. */
  noteInterruptRequested(): void {
    if (this.openRun) this.openRun.interrupted = true;
  }

  /**
   * The studio cancelled this run (the engine records RUN_CANCELLED itself): later events still
   * belong to it until the turn ends, but its end is not recorded a second time, and a new
   * message starts a new run.
   */
  runEndedInStudio(runId: string): void {
    this.runsEndedInStudio.add(runId);
    if (this.openRun?.runId === runId) this.openRun.endedInStudio = true;
  }

  /** Whether the studio ended this run (its interrupt closes the run's pending calls). */
  isEndedInStudio(runId: string | null): boolean {
    return runId !== null && this.runsEndedInStudio.has(runId);
  }

  /** The studio sent an interrupt whose id the API did not return: the next id-less echo is it. */
  expectStudioInterrupt(): void {
    this.expectedStudioInterrupts += 1;
  }

  markNotConfirmable(toolUseId: string): void {
    const tool = this.tools.get(toolUseId);
    if (tool) tool.notConfirmable = true;
  }

  /**
   * The studio delivered a confirmation: returns the row that records the delivery. Its foreignId
   * `<tool_use_id>/confirmation` is what makes the echoes (and a later re-page) record nothing.
   */
  confirmationDelivered(toolUseId: string, allow: boolean): EventDraft[] {
    const tool = this.tools.get(toolUseId);
    this.confirmed.add(toolUseId);
    if (tool && tool.phase === 'awaiting') tool.phase = allow ? 'running' : 'denied';
    return [
      {
        type: 'STUDIO_LOG',
        runId: tool?.runId ?? null,
        level: 'info',
        origin: MANAGED_AGENTS_SOURCE_ID,
        message: `Sent user.tool_confirmation (${allow ? 'allow' : 'deny'}) for ${toolUseId}`,
        foreignId: `${toolUseId}/confirmation`,
      },
    ];
  }

  /** After the engine recorded a studio approval: the call now runs in the runtime. */
  dispatchedAfterApproval(toolUseId: string): EventDraft[] {
    const tool = this.tools.get(toolUseId);
    if (!tool || tool.phase === 'finished' || tool.phase === 'denied') return [];
    return [
      this.toolDraft(tool, 'TOOL_DISPATCHED', 'DISPATCHED', {
        foreignId: `${toolUseId}/dispatched`,
      }),
    ];
  }

  /**
   * The engine expired an approval while the runtime still waits: request it again (same call,
   * same argumentHash, next generation). Returns nothing when the call no longer waits.
   */
  reRequestApproval(toolUseId: string, expiredApprovalId?: string): EventDraft[] {
    const tool = this.tools.get(toolUseId);
    if (
      !tool ||
      tool.phase !== 'awaiting' ||
      tool.notConfirmable ||
      this.confirmed.has(toolUseId) ||
      this.closed
    )
      return [];
    if (expiredApprovalId) {
      const generation = approvalGenerationOf(toolUseId, expiredApprovalId);
      // Only the newest approval's expiry matters; an older one lapsing changes nothing.
      if (generation > 0 && generation < tool.approvalGeneration) return [];
      tool.approvalGeneration = Math.max(tool.approvalGeneration, generation);
    }
    tool.approvalGeneration += 1;
    return [
      this.approvalRequested(tool, ['Requested again: the runtime still waits for a decision']),
    ];
  }

  /** Remembers a subagent thread's agent name (from the thread list), for attribution. */
  noteThreadName(threadId: string, agentName: string): void {
    if (agentName) this.threadNames.set(threadId, agentName);
  }

  /**
   * Maps one event read from a subagent thread's own stream or history. Its tool calls are
   * attributed to the thread (askedBy "subagent <name>"); what drives the session's run state
   * (user messages, interrupts, session and thread status) is skipped, because the session stream
   * carries the condensed copy of it; the subagent's messages become attributed log rows, never
   * the studio's assistant messages. Returns null for a skipped event (it is not consumed: its
   * session-stream copy, which may share its id, must still be mapped).
   */
  mapThreadEvent(input: ManagedAgentsEvent, threadId: string): EventDraft[] | null {
    const event = eventRecord(input);
    const type = typeof event.type === 'string' ? event.type : '';
    if (THREAD_SKIPPED_TYPES.has(type) || type.startsWith('session.')) return null;
    const attributed: EventRecord =
      typeof event.session_thread_id === 'string' && event.session_thread_id
        ? event
        : { ...event, session_thread_id: threadId };
    if (type === 'agent.message') {
      const id = eventIdOf(event);
      return [
        this.log(
          id,
          'info',
          type,
          `Subagent ${this.threadLabel(threadId)}: ${blocksText(event.content)}`,
        ),
      ];
    }
    return this.map(attributed as unknown as ManagedAgentsEvent);
  }

  /** Maps one event. Events without an id that are previews (event_start / event_delta) map to nothing. */
  map(input: ManagedAgentsEvent): EventDraft[] {
    const event = eventRecord(input);
    const type = typeof event.type === 'string' ? event.type : '';
    const id = eventIdOf(event);
    switch (type) {
      case 'user.message':
        return this.userMessage(event, id);
      case 'user.interrupt':
        return this.userInterrupt(event, id);
      case 'user.tool_confirmation':
        return this.toolConfirmation(event, id);
      case 'user.custom_tool_result':
        return this.toolResult(str(event, 'custom_tool_use_id'), event, id);
      case 'user.tool_result':
        return this.toolResult(str(event, 'tool_use_id'), event, id);
      case 'user.define_outcome':
        return [
          this.log(id, 'info', type, `Outcome defined: ${str(event, 'description') ?? ''}`.trim()),
        ];
      case 'system.message':
        return [this.log(id, 'info', type, blocksText(event.content))];
      case 'agent.message':
        return [
          {
            type: 'ASSISTANT_MESSAGE',
            runId: this.currentRunId,
            messageId: id ?? `assistant-${this.options.now()}`,
            role: 'ASSISTANT',
            content: boundMessage(blocksText(event.content)),
            ...foreign(id),
          },
        ];
      case 'agent.thinking':
        return [this.log(id, 'debug', type, 'Thinking')];
      case 'agent.tool_use':
      case 'agent.mcp_tool_use':
      case 'agent.custom_tool_use':
        return this.toolUse(
          event,
          id,
          type === 'agent.tool_use' ? 'agent' : type === 'agent.mcp_tool_use' ? 'mcp' : 'custom',
        );
      case 'agent.tool_result':
        return this.toolResult(str(event, 'tool_use_id'), event, id);
      case 'agent.mcp_tool_result':
        return this.toolResult(str(event, 'mcp_tool_use_id'), event, id);
      case 'agent.thread_context_compacted':
        return [this.log(id, 'info', type, 'Context compacted')];
      case 'agent.thread_message_sent': {
        const to = str(event, 'to_agent_name') ?? str(event, 'to_session_thread_id') ?? 'a thread';
        return [this.log(id, 'info', type, `To ${to}: ${blocksText(event.content)}`)];
      }
      case 'agent.thread_message_received': {
        const from =
          str(event, 'from_agent_name') ?? str(event, 'from_session_thread_id') ?? 'a thread';
        return [this.log(id, 'info', type, `From ${from}: ${blocksText(event.content)}`)];
      }
      case 'session.status_running':
        return this.statusRunning(id);
      case 'session.status_idle':
        return this.statusIdle(event, id);
      case 'session.status_rescheduled':
        return [
          this.log(id, 'warn', type, 'Rescheduled after a transient error; the runtime retries'),
        ];
      case 'session.status_terminated':
        return this.sessionEnded(id, 'terminated', 'RUN_FAILED');
      case 'session.deleted':
        return this.sessionEnded(id, 'deleted', 'RUN_CANCELLED');
      case 'session.error':
        return this.sessionError(event, id);
      case 'session.updated': {
        if ('budget' in event) this.noteBudget(event.budget);
        const changed = Object.keys(event).filter(
          (k) => !['id', 'type', 'processed_at'].includes(k),
        );
        const title = str(event, 'title');
        return [
          this.log(
            id,
            'info',
            type,
            `Session updated: ${changed.join(', ') || 'nothing'}${title ? ` (title: ${title})` : ''}`,
          ),
        ];
      }
      case 'session.usage':
        return this.usage(event, id);
      case 'session.thread_created':
      case 'session.thread_status_running':
      case 'session.thread_status_idle':
      case 'session.thread_status_rescheduled':
      case 'session.thread_status_terminated':
        return this.thread(event, id, type);
      case 'span.model_request_start':
        return [this.log(id, 'debug', type, 'Model request started')];
      case 'span.model_request_end': {
        const usage = obj(event, 'model_usage');
        const tokens = usage
          ? ` (input ${num(usage, 'input_tokens') ?? 0}, output ${num(usage, 'output_tokens') ?? 0} tokens)`
          : '';
        const failed = event.is_error === true;
        return [
          this.log(
            id,
            failed ? 'warn' : 'debug',
            type,
            `Model request ${failed ? 'failed' : 'finished'}${tokens}`,
          ),
        ];
      }
      case 'span.outcome_evaluation_start':
      case 'span.outcome_evaluation_ongoing':
      case 'span.outcome_evaluation_end': {
        const iteration = num(event, 'iteration');
        const step = type.slice('span.outcome_evaluation_'.length);
        const result = str(event, 'result');
        const explanation = str(event, 'explanation');
        return [
          this.log(
            id,
            'info',
            type,
            `Outcome evaluation ${step}${iteration !== undefined ? ` (iteration ${iteration})` : ''}` +
              (result ? `: ${result}` : '') +
              (explanation ? ` (${explanation})` : ''),
          ),
        ];
      }
      case 'workflow_run.created':
      case 'workflow_run.status_running':
      case 'workflow_run.status_idle':
      case 'workflow_run.status_ended':
      case 'workflow_run.phase_started':
      case 'workflow_run.phase_ended':
      case 'workflow_run.error':
        return [this.workflow(event, id, type)];
      case 'event_start':
      case 'event_delta':
        // Live previews, never persisted and not replayed; the bridge does not request them.
        return [];
      default:
        return [this.foreignEvent(event, id, type || '(no type)')];
    }
  }

  private userMessage(event: EventRecord, id: string | undefined): EventDraft[] {
    const drafts: EventDraft[] = [];
    let started: EventDraft | null = null;
    if (!this.openRun || this.openRun.endedInStudio) {
      this.openRun = {
        runId: `run-${id ?? this.options.now()}`,
        interrupted: false,
        endedInStudio: false,
      };
      started = { type: 'RUN_STARTED', runId: this.openRun.runId, ...foreign(id, 'run') };
    }
    drafts.push({
      type: 'USER_MESSAGE',
      runId: this.openRun.runId,
      messageId: id ?? `user-${this.options.now()}`,
      role: 'USER',
      content: boundMessage(blocksText(event.content)),
      ...foreign(id),
    });
    if (started) drafts.push(started);
    return drafts;
  }

  private userInterrupt(event: EventRecord, id: string | undefined): EventDraft[] {
    const thread = str(event, 'session_thread_id');
    const hasOwnId = typeof event.id === 'string' && event.id.length > 0;
    let fromStudio = id !== undefined && (this.options.interruptFromStudio?.(id) ?? false);
    if (!fromStudio && !hasOwnId && this.expectedStudioInterrupts > 0) {
      this.expectedStudioInterrupts -= 1;
      fromStudio = true;
    }
    if (fromStudio && this.openRun) this.runEndedInStudio(this.openRun.runId);
    else if (!thread) this.noteInterruptRequested();
    const target = thread ? `thread ${this.threadLabel(thread)}` : 'every thread';
    return [
      this.log(
        id,
        'info',
        'user.interrupt',
        `Interrupt requested for ${target}${fromStudio ? ' (from the studio)' : ''}`,
        fromStudio && id ? `${id}/studio-cancel` : undefined,
      ),
    ];
  }

  private toolUse(event: EventRecord, id: string | undefined, kind: ToolKind): EventDraft[] {
    if (!id) return [this.foreignEvent(event, id, String(event.type))];
    if (this.tools.has(id)) return [];
    this.listedBeforeArrival.delete(id);
    const rawName = str(event, 'name') ?? 'unknown';
    const server = str(event, 'mcp_server_name');
    const name = kind === 'mcp' && server ? `${server}.${rawName}` : rawName;
    const input = event.input ?? {};
    const thread = str(event, 'session_thread_id');
    const askedBy = thread ? `subagent ${this.threadLabel(thread)}` : null;
    const tool: ToolState = {
      toolUseId: id,
      name,
      kind,
      runId: this.currentRunId,
      argumentHash: foreignArgumentHash(name, input),
      safeSummary: this.summarizeToolUse(name, rawName, input),
      askedBy,
      phase: 'running',
      approvalGeneration: 0,
      notConfirmable: false,
    };
    this.tools.set(id, tool);
    const argumentsJson = redactForeignPayload(input, {
      maxBytes: ARGUMENTS_MAX_BYTES,
      secrets: this.options.secrets,
    }).payloadJson;

    if (kind === 'custom') {
      // Custom tools are never under a permission policy: the client that defined them answers.
      tool.phase = 'client';
      return [this.toolDraft(tool, 'TOOL_PROPOSED', 'PROPOSED', { foreignId: id, argumentsJson })];
    }

    const verdict = evaluate(event);
    // An evaluation variant the bridge does not know is kept as it came, next to the call.
    const kept = verdict.unknown
      ? [this.foreignEvent(event, `${id}/unknown-evaluation`, String(event.type))]
      : [];
    if (verdict.kind === 'allow') {
      return [
        this.toolDraft(tool, 'TOOL_PROPOSED', 'PROPOSED', { foreignId: id, argumentsJson }),
        ...kept,
        this.toolDraft(tool, 'TOOL_DISPATCHED', 'DISPATCHED', { foreignId: `${id}/dispatched` }),
      ];
    }
    if (verdict.kind === 'deny') {
      tool.phase = 'denied';
      return [
        this.toolDraft(tool, 'TOOL_PROPOSED', 'PROPOSED', { foreignId: id, argumentsJson }),
        ...kept,
        {
          type: 'APPROVAL_DENIED',
          runId: tool.runId,
          approvalId: approvalIdFor(id, 1),
          toolCallId: id,
          argumentHash: tool.argumentHash,
          status: 'DENIED',
          safeSummary: tool.safeSummary,
          reasons: verdict.reasons,
          expiresAt: new Date(this.options.now()).toISOString(),
          automatic: true,
          decisionReason: verdict.decisionReason,
          foreignId: `${id}/approval`,
        },
        this.toolDraft(tool, 'TOOL_DENIED', 'DENIED', {
          foreignId: `${id}/denied`,
          error: {
            code: 'AGENT_APPROVAL_DENIED',
            message: verdict.decisionReason,
            retryable: false,
          },
        }),
      ];
    }
    tool.phase = 'awaiting';
    tool.approvalGeneration = 1;
    return [
      this.toolDraft(tool, 'TOOL_PROPOSED', 'WAITING_FOR_APPROVAL', {
        foreignId: id,
        argumentsJson,
      }),
      ...kept,
      this.approvalRequested(tool, verdict.reasons),
    ];
  }

  private approvalRequested(tool: ToolState, reasons: string[]): EventDraft {
    const generation = Math.max(1, tool.approvalGeneration);
    return {
      type: 'APPROVAL_REQUESTED',
      runId: tool.runId,
      approvalId: approvalIdFor(tool.toolUseId, generation),
      toolCallId: tool.toolUseId,
      argumentHash: tool.argumentHash,
      status: 'PENDING',
      safeSummary: tool.safeSummary,
      reasons: tool.askedBy ? [...reasons, `Asked by ${tool.askedBy}`] : reasons,
      expiresAt: approvalExpiresAt(this.options.now(), this.options.approvalTtlMs),
      foreignId:
        generation === 1
          ? `${tool.toolUseId}/approval`
          : `${tool.toolUseId}/approval/${generation}`,
    };
  }

  private toolConfirmation(event: EventRecord, id: string | undefined): EventDraft[] {
    const toolUseId = str(event, 'tool_use_id');
    if (!toolUseId) return [this.foreignEvent(event, id, 'user.tool_confirmation')];
    // The same confirmation can come back on the primary and on a subagent thread with different ids.
    if (this.confirmed.has(toolUseId)) return [];
    this.confirmed.add(toolUseId);
    const tool = this.tools.get(toolUseId);
    const result = str(event, 'result');
    if (this.options.decidedInStudio?.(toolUseId)) {
      if (tool && tool.phase === 'awaiting') tool.phase = result === 'deny' ? 'denied' : 'running';
      return [];
    }
    if (!tool || tool.phase !== 'awaiting') {
      return [
        this.log(
          id,
          'info',
          'user.tool_confirmation',
          `Confirmation (${result ?? 'unknown'}) for ${toolUseId}`,
          `${toolUseId}/confirmation`,
        ),
      ];
    }
    const approvalId = approvalIdFor(toolUseId, Math.max(1, tool.approvalGeneration));
    const base = {
      runId: tool.runId,
      approvalId,
      toolCallId: toolUseId,
      argumentHash: tool.argumentHash,
      safeSummary: tool.safeSummary,
      reasons: ['Decided outside the studio'],
      expiresAt: new Date(this.options.now()).toISOString(),
    };
    if (result === 'allow') {
      tool.phase = 'running';
      return [
        {
          type: 'APPROVAL_GRANTED',
          status: 'GRANTED',
          decisionReason: 'Allowed outside the studio',
          foreignId: `${toolUseId}/confirmation`,
          ...base,
        },
        this.toolDraft(tool, 'TOOL_DISPATCHED', 'DISPATCHED', {
          foreignId: `${toolUseId}/dispatched`,
        }),
      ];
    }
    if (result === 'deny') {
      tool.phase = 'denied';
      const message = str(event, 'deny_message');
      const reason = message
        ? `Denied outside the studio: ${truncateText(maskSecretText(message, this.options.secrets), 400)}`
        : 'Denied outside the studio';
      return [
        {
          type: 'APPROVAL_DENIED',
          status: 'DENIED',
          decisionReason: reason,
          foreignId: `${toolUseId}/confirmation`,
          ...base,
        },
        this.toolDraft(tool, 'TOOL_DENIED', 'DENIED', {
          foreignId: `${toolUseId}/denied`,
          error: { code: 'AGENT_APPROVAL_DENIED', message: reason, retryable: false },
        }),
      ];
    }
    // A result word the bridge does not know: keep the event; the approval stays open.
    this.confirmed.delete(toolUseId);
    return [this.foreignEvent(event, id, 'user.tool_confirmation')];
  }

  private toolResult(
    toolUseId: string | undefined,
    event: EventRecord,
    id: string | undefined,
  ): EventDraft[] {
    const type = String(event.type);
    if (!toolUseId) return [this.foreignEvent(event, id, type)];
    if (this.resulted.has(toolUseId)) return [];
    this.resulted.add(toolUseId);
    const isError = event.is_error === true;
    const text = blocksText(event.content ?? []);
    const tool = this.tools.get(toolUseId);
    if (
      !tool ||
      tool.phase === 'denied' ||
      tool.phase === 'finished' ||
      (tool.runId !== null && this.runsEndedInStudio.has(tool.runId))
    ) {
      // A denied call's rejection result, or a result for a call from before the history began.
      return [
        this.log(
          id,
          isError ? 'warn' : 'info',
          type,
          `Result for ${toolUseId}: ${truncateText(text, 500)}`,
          `${toolUseId}/result`,
        ),
      ];
    }
    const drafts: EventDraft[] = [];
    if (tool.phase === 'awaiting' && !this.options.decidedInStudio?.(toolUseId)) {
      // The runtime settled the call without a confirmation (an interrupt closes pending calls
      // with an error result): the studio's approval closes with it.
      const approvalBase = {
        runId: tool.runId,
        approvalId: approvalIdFor(toolUseId, Math.max(1, tool.approvalGeneration)),
        toolCallId: toolUseId,
        argumentHash: tool.argumentHash,
        safeSummary: tool.safeSummary,
        reasons: ['Settled by the runtime without a studio decision'],
        expiresAt: new Date(this.options.now()).toISOString(),
        automatic: true,
        foreignId: `${toolUseId}/settled`,
      };
      drafts.push(
        isError
          ? {
              type: 'APPROVAL_EXPIRED',
              status: 'EXPIRED',
              decisionReason: `Closed by the runtime: ${truncateText(text, 300)}`,
              ...approvalBase,
            }
          : {
              type: 'APPROVAL_GRANTED',
              status: 'GRANTED',
              decisionReason: 'Allowed by the runtime',
              ...approvalBase,
            },
      );
    }
    tool.phase = 'finished';
    const resultJson = redactForeignPayload(
      { content: event.content ?? [], is_error: isError },
      { maxBytes: RESULT_MAX_BYTES, secrets: this.options.secrets },
    ).payloadJson;
    const error: AgentErrorValue | null = isError
      ? {
          code: 'AGENT_TOOL_FAILED',
          message: truncateText(maskSecretText(text, this.options.secrets), 512) || 'Tool failed',
          retryable: false,
        }
      : null;
    drafts.push(
      this.toolDraft(
        tool,
        isError ? 'TOOL_FAILED' : 'TOOL_SUCCEEDED',
        isError ? 'FAILED' : 'SUCCEEDED',
        {
          foreignId: `${toolUseId}/result`,
          resultJson,
          error,
          safeSummary: tool.safeSummary,
        },
      ),
    );
    return drafts;
  }

  private statusRunning(id: string | undefined): EventDraft[] {
    if (!this.openRun) {
      this.openRun = {
        runId: `run-${id ?? this.options.now()}`,
        interrupted: false,
        endedInStudio: false,
      };
      return [{ type: 'RUN_STARTED', runId: this.openRun.runId, ...foreign(id) }];
    }
    return [this.log(id, 'debug', 'session.status_running', 'Running')];
  }

  private statusIdle(event: EventRecord, id: string | undefined): EventDraft[] {
    const stop = obj(event, 'stop_reason');
    const reason = stop ? str(stop, 'type') : undefined;
    const run = this.openRun;
    switch (reason) {
      case 'requires_action': {
        const ids = Array.isArray(stop?.event_ids)
          ? stop.event_ids.filter((x): x is string => typeof x === 'string')
          : [];
        for (const listed of ids) if (!this.tools.has(listed)) this.listedBeforeArrival.add(listed);
        return [
          this.log(
            id,
            'info',
            'session.status_idle',
            `Waiting for action on ${ids.length} call${ids.length === 1 ? '' : 's'}: ${ids.join(', ')}`,
          ),
        ];
      }
      case 'end_turn': {
        if (!run) return [this.log(id, 'info', 'session.status_idle', 'Idle (end of turn)')];
        this.openRun = null;
        if (run.endedInStudio)
          return [this.log(id, 'info', 'session.status_idle', 'The cancelled turn ended')];
        if (run.interrupted)
          return [
            { type: 'RUN_CANCELLED', runId: run.runId, reason: 'Interrupted', ...foreign(id) },
          ];
        return [{ type: 'RUN_SUCCEEDED', runId: run.runId, reason: 'end_turn', ...foreign(id) }];
      }
      case 'retries_exhausted':
      case 'budget_reached':
      case 'refusal': {
        const details = obj(event, 'stop_details');
        const category = details ? str(details, 'category') : undefined;
        const explanation = details ? str(details, 'explanation') : undefined;
        const message =
          reason === 'refusal'
            ? `Refused${category ? ` (${category})` : ''}${explanation ? `: ${explanation}` : ''}`
            : reason === 'budget_reached'
              ? 'The session budget was reached'
              : 'The runtime gave up after retries';
        if (!run || run.endedInStudio) {
          this.openRun = null;
          return [this.log(id, 'warn', 'session.status_idle', message)];
        }
        this.openRun = null;
        return [
          {
            type: 'RUN_FAILED',
            runId: run.runId,
            code: reason,
            reason: message,
            error: { code: reason, message, retryable: false },
            ...foreign(id),
          },
        ];
      }
      default:
        // A stop reason the bridge does not know decides nothing: keep it as it came.
        return [this.foreignEvent(event, id, 'session.status_idle')];
    }
  }

  private sessionEnded(
    id: string | undefined,
    reason: string,
    runEnd: 'RUN_FAILED' | 'RUN_CANCELLED',
  ): EventDraft[] {
    const drafts: EventDraft[] = [];
    const run = this.openRun;
    this.openRun = null;
    if (run && !run.endedInStudio) {
      drafts.push({
        type: runEnd,
        runId: run.runId,
        reason: `Session ${reason}`,
        ...(runEnd === 'RUN_FAILED' ? { code: reason } : {}),
        ...foreign(id, 'run'),
      });
    }
    if (reason === 'deleted') this.deleted = true;
    if (!this.closed) {
      this.closed = true;
      drafts.push({
        type: 'SESSION_CLOSED',
        reason: `Managed Agents session ${reason}`,
        ...foreign(id),
      });
    } else if (drafts.length === 0) {
      drafts.push(this.log(id, 'info', `session.${reason}`, `Session ${reason}`));
    }
    return drafts;
  }

  private sessionError(event: EventRecord, id: string | undefined): EventDraft[] {
    const error = obj(event, 'error') ?? {};
    const errorType = str(error, 'type') ?? 'unknown_error';
    const message = maskSecretText(str(error, 'message') ?? errorType, this.options.secrets);
    const retry = obj(error, 'retry_status');
    const retryStatus = (retry ? str(retry, 'type') : str(error, 'retry_status')) ?? 'unknown';
    const drafts: EventDraft[] = [
      this.log(
        id,
        'error',
        'session.error',
        `${errorType}: ${message} (retry status: ${retryStatus})`,
      ),
    ];
    if (
      (retryStatus === 'exhausted' || retryStatus === 'terminal') &&
      this.openRun &&
      !this.openRun.endedInStudio
    ) {
      const run = this.openRun;
      this.openRun = null;
      drafts.push({
        type: 'RUN_FAILED',
        runId: run.runId,
        code: errorType,
        reason: truncateText(message, 500),
        error: { code: errorType, message: truncateText(message, 500), retryable: false },
        ...foreign(id, 'run'),
      });
    }
    return drafts;
  }

  private usage(event: EventRecord, id: string | undefined): EventDraft[] {
    const usage = obj(event, 'usage') ?? {};
    const dimensions: BudgetDimensionValue[] = [];
    const add = (name: string, consumed: number | undefined, unit: string) => {
      if (consumed === undefined) return;
      dimensions.push(budgetDimension(name, consumed, null, unit));
    };
    add('INPUT_TOKENS', num(usage, 'input_tokens'), 'tokens');
    add('OUTPUT_TOKENS', num(usage, 'output_tokens'), 'tokens');
    add('CACHE_READ_TOKENS', num(usage, 'cache_read_input_tokens'), 'tokens');
    const creation = usage.cache_creation;
    const creationTotal =
      typeof creation === 'number'
        ? creation
        : isRecord(creation)
          ? Object.values(creation).reduce<number>(
              (sum, v) => sum + (typeof v === 'number' ? v : 0),
              0,
            )
          : undefined;
    add('CACHE_WRITE_TOKENS', creationTotal, 'tokens');
    const seconds = num(usage, 'active_seconds');
    add('WALL_CLOCK_MS', seconds === undefined ? undefined : seconds * 1000, 'ms');
    if ('budget' in event) this.noteBudget(event.budget);
    // list_cost.amount is an integer string of minor units ("137" is $1.37): converted exactly
    // (BigInt) to the studio's money unit, micro-units of the currency, with the budget's
    // max_list_cost as the limit.
    const cost = minorUnits(usage.list_cost);
    const limit =
      this.maxListCost && (!cost || this.maxListCost.currency === cost.currency)
        ? this.maxListCost
        : null;
    if (cost || limit) {
      const currency = (cost ?? limit)?.currency ?? 'USD';
      dimensions.push(
        exactDimension(
          'PROVIDER_COST',
          microUnits(cost?.minor ?? 0n, currency),
          limit ? microUnits(limit.minor, currency) : null,
          `micro-${currency}`,
        ),
      );
    }
    if (dimensions.length === 0) return [this.foreignEvent(event, id, 'session.usage')];
    return [
      {
        type: 'BUDGET_UPDATED',
        runId: this.currentRunId,
        budget: { dimensions, resetAt: null, platformFunded: false, payer: 'USER' },
        ...foreign(id),
      },
    ];
  }

  private thread(event: EventRecord, id: string | undefined, type: string): EventDraft[] {
    const threadId = str(event, 'session_thread_id');
    if (!threadId) return [this.foreignEvent(event, id, type)];
    const agentName = str(event, 'agent_name');
    if (agentName) this.threadNames.set(threadId, agentName);
    let status = type.slice('session.thread_'.length).replace(/^status_/, '');
    if (type === 'session.thread_status_idle') {
      const stop = obj(event, 'stop_reason');
      const reason = stop ? str(stop, 'type') : undefined;
      if (reason === 'requires_action') {
        status = 'requires_action';
        const ids = Array.isArray(stop?.event_ids)
          ? stop.event_ids.filter((x): x is string => typeof x === 'string')
          : [];
        for (const listed of ids) if (!this.tools.has(listed)) this.listedBeforeArrival.add(listed);
      } else if (reason && reason !== 'end_turn') status = `idle:${reason}`;
    }
    return [
      {
        type: 'STUDIO_THREAD_CHANGED',
        runId: this.currentRunId,
        threadId,
        agentName: agentName ?? this.threadNames.get(threadId) ?? null,
        status,
        ...foreign(id),
      },
    ];
  }

  private workflow(event: EventRecord, id: string | undefined, type: string): EventDraft {
    const runName = str(event, 'name');
    const workflowRunId = str(event, 'workflow_run_id') ?? 'workflow';
    const label = runName ? `Workflow "${runName}"` : `Workflow ${workflowRunId}`;
    switch (type) {
      case 'workflow_run.created': {
        const phases = Array.isArray(event.phases) ? event.phases.length : 0;
        return this.log(
          id,
          'info',
          type,
          `${label} created (${phases} phase${phases === 1 ? '' : 's'})`,
        );
      }
      case 'workflow_run.status_ended': {
        const result = obj(event, 'result');
        return this.log(
          id,
          'info',
          type,
          `${label} ended: ${result ? (str(result, 'type') ?? 'unknown') : 'unknown'}`,
        );
      }
      case 'workflow_run.phase_started':
      case 'workflow_run.phase_ended':
        return this.log(
          id,
          'info',
          type,
          `${label} phase ${str(event, 'workflow_run_phase_id') ?? ''} ${type.endsWith('started') ? 'started' : 'ended'}`,
        );
      case 'workflow_run.error': {
        const error = obj(event, 'error');
        return this.log(
          id,
          'error',
          type,
          `${label} error: ${error ? `${str(error, 'type') ?? 'unknown_error'} ${str(error, 'message') ?? ''}`.trim() : 'unknown_error'}`,
        );
      }
      default:
        return this.log(id, 'info', type, `${label} ${type.slice('workflow_run.status_'.length)}`);
    }
  }

  private toolDraft(
    tool: ToolState,
    type: ToolDraft['type'],
    status: ToolDraft['status'],
    extra: Partial<ToolDraft> & { foreignId: string },
  ): ToolDraft {
    return {
      type,
      runId: tool.runId,
      toolCallId: tool.toolUseId,
      toolName: tool.name,
      toolVersion: tool.kind === 'agent' ? ANTHROPIC_TOOLSET_VERSION : tool.kind,
      status,
      safeSummary: tool.safeSummary,
      argumentHash: tool.argumentHash,
      executor: null,
      askedBy: tool.askedBy,
      ...extra,
    };
  }

  private log(
    id: string | undefined,
    level: string,
    origin: string,
    message: string,
    foreignId?: string,
  ): EventDraft {
    return logDraft(
      { runId: this.currentRunId, level, origin, message },
      this.options.secrets,
      foreignId ?? id,
    );
  }

  private foreignEvent(
    event: EventRecord,
    foreignId: string | undefined,
    foreignType: string,
  ): EventDraft {
    return foreignEventDraft(
      { source: MANAGED_AGENTS_SOURCE_ID, runId: this.currentRunId, foreignType, payload: event },
      this.options.secrets,
      foreignId,
    );
  }

  private threadLabel(threadId: string): string {
    return this.threadNames.get(threadId) ?? threadId;
  }

  private summarizeToolUse(name: string, rawName: string, input: unknown): string {
    const record = isRecord(input) ? input : {};
    const pick = (...keys: string[]) => {
      for (const key of keys) {
        const value = record[key];
        if (typeof value === 'string' && value.length > 0) return value;
      }
      return undefined;
    };
    let detail: string | undefined;
    switch (rawName) {
      case 'bash':
        detail = pick('command') ?? (record.restart === true ? '(restart the shell)' : undefined);
        break;
      case 'read':
      case 'write':
      case 'edit':
        detail = pick('file_path');
        if (rawName === 'write' && typeof record.content === 'string')
          detail = `${detail ?? ''} (${Buffer.byteLength(record.content)} bytes)`;
        break;
      case 'glob':
      case 'grep':
        detail = [pick('pattern'), pick('path')].filter(Boolean).join(' in ');
        break;
      case 'web_fetch':
        detail = pick('url');
        break;
      case 'web_search':
        detail = pick('query');
        break;
    }
    if (!detail)
      detail = redactForeignPayload(input ?? {}, {
        maxBytes: 1024,
        secrets: this.options.secrets,
      }).payloadJson;
    return truncateText(
      maskSecretText(`${name}: ${detail}`, this.options.secrets),
      MAX_SAFE_SUMMARY,
    );
  }
}

interface Verdict {
  kind: 'allow' | 'ask' | 'deny';
  reasons: string[];
  decisionReason: string;
  /** The permission or evaluation was a variant the bridge does not know. */
  unknown: boolean;
}

/**
 * Reads `evaluated_permission` and `evaluation` (both open unions). Anything unknown fails
 * closed: it needs a human.
 */
export function evaluate(event: EventRecord): Verdict {
  const evaluation = obj(event, 'evaluation');
  const evaluationType = evaluation ? str(evaluation, 'type') : undefined;
  const nested = evaluation ? evaluation.evaluated_permission : undefined;
  const nestedType = isRecord(nested)
    ? str(nested, 'type')
    : typeof nested === 'string'
      ? nested
      : undefined;
  const reasonCode = isRecord(nested) ? str(nested, 'reason_code') : undefined;
  const top = event.evaluated_permission;
  let permission = typeof top === 'string' ? top : isRecord(top) ? str(top, 'type') : undefined;
  if (permission === undefined) permission = nestedType;
  if (permission === undefined && evaluationType === 'always_allow') permission = 'allow';
  if (permission === undefined && evaluationType === 'always_ask') permission = 'ask';

  const policy =
    evaluationType === 'auto'
      ? `auto${nestedType ? ` (${nestedType}${reasonCode ? `: ${reasonCode}` : ''})` : ''}`
      : (evaluationType ?? 'no evaluation');
  const knownEvaluation =
    evaluation === undefined ||
    evaluationType === 'always_allow' ||
    evaluationType === 'always_ask' ||
    (evaluationType === 'auto' &&
      (nestedType === 'allow' || nestedType === 'ask' || nestedType === 'deny'));

  const note = knownEvaluation
    ? []
    : [`Unknown evaluation ${truncateText(canonicalJson(evaluation ?? null), 200)}`];
  if (permission === 'allow') {
    return {
      kind: 'allow',
      reasons: [`Policy: ${policy}`, ...note],
      decisionReason: 'Allowed by policy',
      unknown: !knownEvaluation,
    };
  }
  if (permission === 'deny') {
    const code = evaluationType === undefined ? 'tool_not_enabled' : (reasonCode ?? evaluationType);
    const why =
      evaluationType === undefined
        ? 'The tool is not enabled in the session'
        : `Denied by policy ${policy}`;
    return {
      kind: 'deny',
      reasons: [`Policy: ${policy}`, `Reason code: ${code}`, ...note],
      decisionReason: `${why} (${code})`,
      unknown: !knownEvaluation,
    };
  }
  if (permission === 'ask') {
    const reasons = [`Policy: ${policy}`];
    if (reasonCode) reasons.push(`Reason code: ${reasonCode}`);
    return {
      kind: 'ask',
      reasons: [...reasons, ...note],
      decisionReason: '',
      unknown: !knownEvaluation,
    };
  }
  // An evaluated_permission the bridge does not know fails closed: a human decides.
  const shown = permission === undefined ? 'missing' : `"${truncateText(String(permission), 64)}"`;
  return {
    kind: 'ask',
    reasons: [`Unknown permission ${shown}: a human decides`, `Policy: ${policy}`, ...note],
    decisionReason: '',
    unknown: true,
  };
}

/** The event's id, or for the id-less user.interrupt the documented fallback type@processed_at. */
/** Thread-stream events that belong to the session stream's condensed view (see mapThreadEvent). */
const THREAD_SKIPPED_TYPES = new Set(['user.message', 'user.interrupt', 'user.define_outcome']);

export function eventIdOf(input: ManagedAgentsEvent | EventRecord): string | undefined {
  const event = input as EventRecord;
  if (typeof event.id === 'string' && event.id.length > 0) return event.id;
  if (typeof event.processed_at === 'string' && typeof event.type === 'string')
    return `${event.type}@${event.processed_at}`;
  return undefined;
}

/** Text of content blocks: text as is, other blocks as a bracketed placeholder. */
export function blocksText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: unknown) => {
      if (!isRecord(block)) return '';
      const type = str(block, 'type');
      switch (type) {
        case 'text':
          return str(block, 'text') ?? '';
        case 'image':
          return '[image]';
        case 'document': {
          const title = str(block, 'title');
          return title ? `[document: ${title}]` : '[document]';
        }
        case 'search_result': {
          const title = str(block, 'title');
          return title ? `[search result: ${title}]` : '[search result]';
        }
        case 'redacted':
          return '[withheld by model policy]';
        default:
          return `[${type ?? 'block'}]`;
      }
    })
    .filter((s) => s.length > 0)
    .join('\n');
}

function boundMessage(text: string): string {
  return truncateUtf8(text, MAX_MESSAGE_CONTENT_BYTES);
}

function foreign(id: string | undefined, suffix?: string): { foreignId?: string } {
  if (!id) return {};
  return { foreignId: suffix ? `${id}/${suffix}` : id };
}

/**
 * A `BetaMonetaryAmount` ({amount: integer decimal string of minor units, currency}) as an exact
 * BigInt; null for anything else (a float, a negative, a missing currency).
 */
export function minorUnits(value: unknown): { minor: bigint; currency: string } | null {
  if (!isRecord(value)) return null;
  const amount = value.amount;
  const currency = str(value, 'currency') ?? 'USD';
  if (typeof amount === 'string' && /^(0|[1-9][0-9]{0,30})$/.test(amount))
    return { minor: BigInt(amount), currency: currency.slice(0, 8) };
  if (typeof amount === 'number' && Number.isSafeInteger(amount) && amount >= 0)
    return { minor: BigInt(amount), currency: currency.slice(0, 8) };
  return null;
}

/** ISO 4217 currencies whose minor unit is not 1/100 (the API prices in USD only today). */
const MINOR_UNIT_DIGITS: Record<string, number> = { JPY: 0, KRW: 0, BHD: 3, KWD: 3, OMR: 3 };

/** Minor units (cents for USD) as micro-units (10^-6 of the currency), exactly. */
export function microUnits(minor: bigint, currency: string): bigint {
  const digits = MINOR_UNIT_DIGITS[currency] ?? 2;
  return minor * 10n ** BigInt(6 - digits);
}

function exactDimension(
  name: string,
  consumed: bigint,
  limit: bigint | null,
  unit: string,
): BudgetDimensionValue {
  const remaining = limit === null ? 0n : limit > consumed ? limit - consumed : 0n;
  return {
    name,
    scope: 'SESSION',
    limit: (limit ?? 0n).toString(),
    reserved: '0',
    consumed: consumed.toString(),
    remaining: remaining.toString(),
    unit,
  };
}

function obj(record: Record<string, unknown>, key: string): Record<string, unknown> | undefined {
  const value = record[key];
  return isRecord(value) ? value : undefined;
}
