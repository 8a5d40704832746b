/**
 * Maps Leviath gateway state and frames to studio event drafts. Each Leviath run is a studio
 * session (one run per session, runId = the Leviath run_id).
 *
 * Accepts every dialect the gateway has spoken: the flat `/ws` frames (`type` tag, post-0.4.0),
 * the older wrapped `{"type":"world","event":{...}}` frames and bare raw `WorldEvent` JSON
 * (`event` tag), and both families of status words (engine: idle/active/waiting/...; run:
 * starting/running/waiting_input/...). Frames carry no ids or timestamps, so foreignIds are
 * derived from what is stable: interaction request ids, call ids, stage + iteration, run ids.
 * The full table is in docs/BRIDGES-MAPPING.md.
 */
import { MAX_MESSAGE_CONTENT_BYTES, MAX_SAFE_SUMMARY } from '../../../protocol/contract.ts';
import type {
  BudgetDimensionValue,
  EventDraft,
  QuestionValue,
  ToolDraft,
} from '../../engine/eventDrafts.ts';
import {
  approvalExpiresAt,
  approvalGenerationOf,
  approvalIdFor,
  budgetDimension,
  foreignEventDraft,
  isoAt,
  isRecord,
  logDraft,
  num,
  str,
} from '../bridgeSupport.ts';
import { boundArgumentHash, type ProposalDiffed } from '../proposedFileChanges.ts';
import { maskSecretText, redactForeignPayload, truncateText, truncateUtf8 } from '../redact.ts';

export const LEVIATH_SOURCE_ID = 'leviath';

export type LeviathFrame = Record<string, unknown>;

/** A run's metadata as `GET /api/runs` / `GET /api/agents/{id}` return it (snake_case). */
export type LeviathRunMeta = Record<string, unknown> & { run_id?: unknown };

/** Studio-side status family of a Leviath status word (both vocabularies). */
export type RunWord =
  'starting' | 'running' | 'waiting' | 'paused' | 'complete' | 'error' | 'cancelled';

const STATUS_WORDS: Record<string, RunWord> = {
  // run vocabulary (lev serve after 0.4.0, RunMeta)
  starting: 'starting',
  running: 'running',
  waiting_input: 'waiting',
  paused: 'paused',
  complete: 'complete',
  complete_interactive: 'complete',
  error: 'error',
  cancelled: 'cancelled',
  // engine vocabulary (AgentStatus::label(), gateways up to 0.4.0 and raw WorldEvent)
  idle: 'running',
  active: 'running',
  waiting: 'waiting',
};

export function runWordOf(status: unknown): RunWord | null {
  return typeof status === 'string' && Object.hasOwn(STATUS_WORDS, status)
    ? (STATUS_WORDS[status] ?? null)
    : null;
}

const TERMINAL: ReadonlySet<RunWord> = new Set(['complete', 'error', 'cancelled']);

/** WorldEvent `event` tag -> flat frame `type`. */
const WORLD_TO_FLAT: Record<string, string> = {
  spawned: 'agent_spawned',
  status: 'agent_status',
  renamed: 'run_renamed',
  tokens: 'tokens',
  context: 'context_update',
  interaction: 'interaction_needed',
  completed: 'agent_completed',
  stage_transition: 'stage_transition',
  tool_call_started: 'tool_call_started',
  tool_call_finished: 'tool_call_finished',
  log: 'log',
  spend: 'agent_spend',
};

/**
 * One frame in the flat dialect. A wrapped `world` frame or a raw WorldEvent is unwrapped and
 * renamed (spawned.parent_run_id -> parent_id); `original` keeps what came for unknown types.
 */
export function normalizeFrame(raw: LeviathFrame): {
  frame: LeviathFrame;
  original: LeviathFrame;
  dialect: 'flat' | 'world' | 'raw';
} {
  if (raw.type === 'world' && isRecord(raw.event))
    return { frame: fromWorldEvent(raw.event), original: raw, dialect: 'world' };
  if (typeof raw.type !== 'string' && typeof raw.event === 'string')
    return { frame: fromWorldEvent(raw), original: raw, dialect: 'raw' };
  return { frame: raw, original: raw, dialect: 'flat' };
}

function fromWorldEvent(event: Record<string, unknown>): LeviathFrame {
  const tag = typeof event.event === 'string' ? event.event : '';
  const { event: _tag, ...rest } = event;
  const type = WORLD_TO_FLAT[tag] ?? `world.${tag || 'unknown'}`;
  const frame: LeviathFrame = { ...rest, type };
  if (tag === 'spawned' && !('parent_id' in frame)) frame.parent_id = rest.parent_run_id ?? null;
  if (tag === 'completed' && !('result' in frame)) frame.result = null;
  return frame;
}

export interface LeviathMapperOptions {
  now: () => number;
  /** Studio session id of a run. */
  sessionIdFor: (runId: string) => string;
  secrets?: readonly string[];
  /** TTL of the approvals it requests (default and cap: the contract's 120 s). */
  approvalTtlMs?: number;
  /** True while or after the studio itself answered this interaction (the engine records that). */
  answeredInStudio?: (requestId: string) => boolean;
  /** A tool approval's write diff (write_file / edit_file in the workspace), bound into its hash. */
  proposalDiff?: (
    runId: string,
    toolCallId: string,
    toolName: string,
    input: unknown,
  ) => ProposalDiffed | null;
}

interface RunState {
  runId: string;
  started: boolean;
  ended: boolean;
  word: RunWord | null;
  stage: string | null;
  waitReason: string | null;
  tokens: { prompt: number; completion: number; cached: number; cacheWrite: number } | null;
  context: { total: number; max: number } | null;
  spend: { total: number; threshold: number } | null;
  workdir: string | null;
}

export type InteractionKindWord =
  'tool_approval' | 'free_text' | 'multiple_choice' | 'confirm' | 'edit_text' | string;

export interface InteractionState {
  requestId: string;
  runId: string;
  kind: InteractionKindWord;
  open: boolean;
  /** For tool approvals: the linked call id (`approve-{call_id}`). */
  toolCallId: string | null;
  approvalGeneration: number;
  question: QuestionValue | null;
}

interface ToolState {
  toolCallId: string;
  runId: string;
  name: string;
  argumentHash: string | null;
  safeSummary: string;
  phase: 'awaiting' | 'running' | 'finished' | 'closed';
  executionId: string | null;
}

export interface MappedFrame {
  runId: string | null;
  drafts: EventDraft[];
  /** The run's wait reason cleared: open interactions may have been answered elsewhere. */
  checkInteractions?: boolean;
  /** A tool call finished (for the workspace checkpoint hook). */
  toolFinished?: { toolCallId: string; toolName: string };
  /** A frame without a run (daemon_link, update_*, unknown): for the source's status and log. */
  gateway?: { type: string; payload: string };
}

const TOOL_VERSION = 'leviath';

export class LeviathMapper {
  private readonly options: LeviathMapperOptions;
  private readonly runs = new Map<string, RunState>();
  private readonly interactions = new Map<string, InteractionState>();
  private readonly tools = new Map<string, ToolState>();

  constructor(options: LeviathMapperOptions) {
    this.options = options;
  }

  hasRun(runId: string): boolean {
    return this.runs.has(runId);
  }

  run(runId: string): Readonly<RunState> | undefined {
    return this.runs.get(runId);
  }

  interaction(requestId: string): Readonly<InteractionState> | undefined {
    return this.interactions.get(requestId);
  }

  /** The open tool-approval interaction of a studio tool call. */
  approvalFor(toolCallId: string): Readonly<InteractionState> | undefined {
    return this.findApproval(toolCallId);
  }

  private findApproval(toolCallId: string): InteractionState | undefined {
    for (const interaction of this.interactions.values()) {
      if (interaction.kind === 'tool_approval' && interaction.toolCallId === toolCallId)
        return interaction;
    }
    return undefined;
  }

  tool(toolCallId: string): Readonly<ToolState> | undefined {
    return this.tools.get(toolCallId);
  }

  openInteractionsOf(runId: string): InteractionState[] {
    return [...this.interactions.values()].filter((i) => i.runId === runId && i.open);
  }

  /**
   * The run as `GET /api/runs` describes it at connect (or reconnect): the first time, its
   * start, stage, usage and end; later, only what changed.
   */
  applyRunMeta(meta: LeviathRunMeta): MappedFrame {
    const runId = String(meta.run_id);
    const known = this.runs.get(runId);
    const run = this.ensureRun(runId);
    if (typeof meta.workdir === 'string') run.workdir = meta.workdir;
    const drafts: EventDraft[] = [];
    const word = runWordOf(meta.status);
    drafts.push(...this.startIfNeeded(run));
    const stage = str(meta, 'current_stage');
    if (stage && stage !== run.stage) {
      const index = num(meta, 'stage_index');
      const total = num(meta, 'num_stages');
      drafts.push({
        type: 'STUDIO_STAGE_CHANGED',
        runId,
        fromStage: run.stage,
        toStage: stage,
        detail:
          index !== undefined && total !== undefined
            ? `Stage ${index + 1} of ${total} (at connect)`
            : 'At connect',
        ...(known
          ? {}
          : { foreignId: `${runId}/stage-at-connect/${stage}/${num(meta, 'iteration') ?? 0}` }),
      });
      run.stage = stage;
    }
    const tokens = {
      prompt: num(meta, 'prompt_tokens') ?? 0,
      completion: num(meta, 'completion_tokens') ?? 0,
      cached: num(meta, 'cached_tokens') ?? 0,
      cacheWrite: num(meta, 'cache_write_tokens') ?? 0,
    };
    if (!sameTokens(run.tokens, tokens) && Object.values(tokens).some((v) => v > 0)) {
      run.tokens = tokens;
      drafts.push(this.budget(run));
    }
    if (word) drafts.push(...this.statusChange(run, word, str(meta, 'error') ?? null, null));
    else if (meta.status !== undefined)
      drafts.push(this.foreignEvent(runId, 'run.status', { status: meta.status }));
    return { runId, drafts };
  }

  /** One gateway frame (any dialect). */
  mapFrame(raw: LeviathFrame): MappedFrame {
    const { frame, original } = normalizeFrame(raw);
    const type = typeof frame.type === 'string' ? frame.type : '';
    const runId = str(frame, 'run_id') ?? str(frame, 'agent_id') ?? null;
    if (!runId)
      return {
        runId: null,
        drafts: [],
        gateway: {
          type: type || '(no type)',
          payload: redactForeignPayload(original, { maxBytes: 1024, secrets: this.options.secrets })
            .payloadJson,
        },
      };
    const run = this.ensureRun(runId);
    switch (type) {
      case 'agent_spawned': {
        const blueprint = str(frame, 'blueprint');
        const parent = str(frame, 'parent_id');
        return {
          runId,
          drafts: [
            ...this.startIfNeeded(run),
            this.log(
              runId,
              'info',
              'agent_spawned',
              `Spawned${blueprint ? ` from blueprint ${blueprint}` : ''}${parent ? ` by run ${parent}` : ''}`,
              `${runId}/spawned`,
            ),
          ],
        };
      }
      case 'agent_status':
        return this.agentStatus(run, frame, original);
      case 'run_renamed':
        return {
          runId,
          drafts: [this.log(runId, 'info', 'run_renamed', `Renamed: ${str(frame, 'title') ?? ''}`)],
        };
      case 'tokens': {
        run.tokens = {
          prompt: num(frame, 'prompt_tokens') ?? run.tokens?.prompt ?? 0,
          completion: num(frame, 'completion_tokens') ?? run.tokens?.completion ?? 0,
          cached: num(frame, 'cached_tokens') ?? run.tokens?.cached ?? 0,
          cacheWrite: num(frame, 'cache_write_tokens') ?? run.tokens?.cacheWrite ?? 0,
        };
        return { runId, drafts: [this.budget(run)] };
      }
      case 'context_update':
        run.context = {
          total: num(frame, 'total_tokens') ?? 0,
          max: num(frame, 'max_tokens') ?? 0,
        };
        return { runId, drafts: [this.budget(run)] };
      case 'agent_spend':
        run.spend = {
          total: num(frame, 'total_usd') ?? 0,
          threshold: num(frame, 'threshold_usd') ?? 0,
        };
        return { runId, drafts: [this.budget(run)] };
      case 'stage_transition': {
        const to = str(frame, 'to') ?? '';
        const iteration = num(frame, 'iteration');
        const from = str(frame, 'from') ?? run.stage;
        run.stage = to;
        return {
          runId,
          drafts: [
            {
              type: 'STUDIO_STAGE_CHANGED',
              runId,
              fromStage: from ?? null,
              toStage: to,
              detail: iteration !== undefined ? `Iteration ${iteration}` : null,
              foreignId: `${runId}/stage/${to}/${iteration ?? 'n'}`,
            },
          ],
        };
      }
      case 'tool_call_started':
        return { runId, drafts: this.toolStarted(run, frame) };
      case 'tool_call_finished':
        return this.toolFinished(run, frame);
      case 'log': {
        const line = str(frame, 'line') ?? '';
        return { runId, drafts: [this.log(runId, logLevel(line), logOrigin(line), line)] };
      }
      case 'interaction_needed': {
        const request = frame.request;
        if (!isRecord(request))
          return { runId, drafts: [this.foreignEvent(runId, type, original)] };
        return { runId, drafts: this.interactionNeeded(run, request) };
      }
      case 'agent_completed':
        return { runId, drafts: this.completed(run, frame) };
      default:
        return { runId, drafts: [this.foreignEvent(runId, type || '(no type)', original)] };
    }
  }

  /** The interaction `GET /api/agents/{id}/interaction` returned (at connect nothing is replayed). */
  mapOpenInteraction(runId: string, request: Record<string, unknown>): EventDraft[] {
    return this.interactionNeeded(this.ensureRun(runId), request);
  }

  /**
   * The gateway says which interaction of a run is open now (`null`: none). Every other open one
   * the bridge knows was settled outside the studio: it is closed (question ANSWERED_ELSEWHERE,
   * approval EXPIRED with automatic: true) unless the studio answered it itself.
   */
  reconcileInteractions(runId: string, openRequestId: string | null): EventDraft[] {
    const drafts: EventDraft[] = [];
    for (const interaction of this.openInteractionsOf(runId)) {
      if (interaction.requestId === openRequestId) continue;
      drafts.push(...this.close(interaction, 'elsewhere'));
    }
    return drafts;
  }

  /**
   * The studio cancelled the run (the engine records RUN_CANCELLED itself): the runtime's own
   * completion is not recorded again. Returns the row that says the cancel was sent; its foreignId
   * is the one the completion would have used, so a restart does not record it either.
   */
  endedInStudio(runId: string): EventDraft[] {
    const run = this.ensureRun(runId);
    run.ended = true;
    for (const interaction of this.openInteractionsOf(runId)) interaction.open = false;
    return [this.log(runId, 'info', 'studio', 'Cancel sent to Leviath', `${runId}/completed`)];
  }

  /** Tool approvals still open, with their call ids. */
  openApprovals(): Readonly<InteractionState>[] {
    return [...this.interactions.values()].filter(
      (i) => i.open && i.kind === 'tool_approval' && i.toolCallId !== null,
    );
  }

  /** Like the Managed Agents bridge: after a restart, follow the studio's newest approval and request a lapsed one again. */
  resumeApproval(toolCallId: string, newest: { approvalId: string; status: string }): EventDraft[] {
    const interaction = this.findApproval(toolCallId);
    if (!interaction || !interaction.open) return [];
    interaction.approvalGeneration = Math.max(
      interaction.approvalGeneration,
      approvalGenerationOf(interaction.requestId, newest.approvalId),
    );
    return newest.status === 'EXPIRED' ? this.reRequestApproval(toolCallId, newest.approvalId) : [];
  }

  /** The studio's answer reached Leviath (202): no later signal may close it as "elsewhere". */
  markAnswered(requestId: string, approved?: boolean): void {
    const interaction = this.interactions.get(requestId);
    if (!interaction) return;
    interaction.open = false;
    if (interaction.toolCallId) {
      const tool = this.tools.get(interaction.toolCallId);
      if (tool && tool.phase === 'awaiting') tool.phase = approved === false ? 'closed' : 'running';
    }
  }

  /** Leviath answered 404 to the studio's answer: close the card as answered elsewhere. */
  closedElsewhere(requestId: string): EventDraft[] {
    const interaction = this.interactions.get(requestId);
    if (!interaction || !interaction.open) return [];
    return this.close(interaction, 'elsewhere', true);
  }

  /** The engine expired the approval (120 s cap) while Leviath still waits: request it again. */
  reRequestApproval(toolCallId: string, expiredApprovalId?: string): EventDraft[] {
    const interaction = this.findApproval(toolCallId);
    if (!interaction || !interaction.open || this.options.answeredInStudio?.(interaction.requestId))
      return [];
    const tool = this.tools.get(toolCallId);
    if (!tool || tool.phase !== 'awaiting') return [];
    if (expiredApprovalId) {
      const generation = approvalGenerationOf(interaction.requestId, expiredApprovalId);
      if (generation > 0 && generation < interaction.approvalGeneration) return [];
      interaction.approvalGeneration = Math.max(interaction.approvalGeneration, generation);
    }
    interaction.approvalGeneration += 1;
    return [
      this.approvalRequested(interaction, tool, [
        'Requested again: Leviath still waits for a decision',
      ]),
    ];
  }

  private ensureRun(runId: string): RunState {
    let run = this.runs.get(runId);
    if (!run) {
      run = {
        runId,
        started: false,
        ended: false,
        word: null,
        stage: null,
        waitReason: null,
        tokens: null,
        context: null,
        spend: null,
        workdir: null,
      };
      this.runs.set(runId, run);
    }
    return run;
  }

  private startIfNeeded(run: RunState): EventDraft[] {
    if (run.started) return [];
    run.started = true;
    return [{ type: 'RUN_STARTED', runId: run.runId, foreignId: `${run.runId}/run-started` }];
  }

  private agentStatus(run: RunState, frame: LeviathFrame, original: LeviathFrame): MappedFrame {
    const runId = run.runId;
    const word = runWordOf(frame.status);
    if (!word) return { runId, drafts: [this.foreignEvent(runId, 'agent_status', original)] };
    const drafts: EventDraft[] = [...this.startIfNeeded(run)];
    const stage = str(frame, 'stage');
    if (stage && run.stage !== stage) {
      // Gateways before stage_transition frames (0.1.1) report a new stage only here.
      drafts.push({
        type: 'STUDIO_STAGE_CHANGED',
        runId,
        fromStage: run.stage,
        toStage: stage,
        detail: 'Reported by agent_status',
      });
      run.stage = stage;
    }
    const previousWord = run.word;
    const previousReason = run.waitReason;
    drafts.push(...this.statusChange(run, word, null, null));
    const wait = frame.wait_reason;
    const reason = isRecord(wait) ? (str(wait, 'reason') ?? 'unknown') : null;
    if (reason && reason !== previousReason) {
      drafts.push(
        this.log(
          runId,
          reason === 'needs_setup' ? 'warn' : 'info',
          'wait_reason',
          `Waiting: ${describeWait(wait as Record<string, unknown>)}`,
        ),
      );
    }
    run.waitReason = reason;
    // The run stopped waiting on a person (gateways before 0.3.9 have no wait_reason, only the
    // word): whatever it asked may have been answered elsewhere.
    const stoppedWaiting =
      (previousReason !== null &&
        PERSON_WAITS.has(previousReason) &&
        (reason === null || !PERSON_WAITS.has(reason))) ||
      (previousWord === 'waiting' && word !== 'waiting');
    return {
      runId,
      drafts,
      ...(stoppedWaiting && this.openInteractionsOf(runId).length > 0
        ? { checkInteractions: true }
        : {}),
    };
  }

  private statusChange(
    run: RunState,
    word: RunWord,
    error: string | null,
    finalOutput: unknown,
  ): EventDraft[] {
    const previous = run.word;
    if (run.ended) return [];
    if (TERMINAL.has(word)) return this.end(run, word, error, finalOutput);
    run.word = word;
    if (word === 'paused' && previous !== 'paused')
      return [{ type: 'RUN_PAUSED', runId: run.runId, reason: 'Paused in Leviath' }];
    if (previous === 'paused' && word !== 'paused')
      return [{ type: 'RUN_STARTED', runId: run.runId, reason: 'Resumed in Leviath' }];
    return [];
  }

  private end(
    run: RunState,
    word: RunWord,
    error: string | null,
    finalOutput: unknown,
  ): EventDraft[] {
    const drafts: EventDraft[] = [];
    drafts.push(...this.startIfNeeded(run));
    run.ended = true;
    run.word = word;
    if (isRecord(finalOutput) && typeof finalOutput.content === 'string') {
      drafts.push({
        type: 'ASSISTANT_MESSAGE',
        runId: run.runId,
        messageId: `${run.runId}/final-output`,
        role: 'ASSISTANT',
        content: truncateUtf8(finalOutput.content, MAX_MESSAGE_CONTENT_BYTES),
        foreignId: `${run.runId}/final-output`,
      });
    }
    for (const interaction of this.openInteractionsOf(run.runId))
      drafts.push(...this.close(interaction, 'run-ended'));
    const foreignId = `${run.runId}/completed`;
    if (word === 'complete')
      drafts.push({
        type: 'RUN_SUCCEEDED',
        runId: run.runId,
        reason: 'Completed in Leviath',
        foreignId,
      });
    else if (word === 'cancelled')
      drafts.push({
        type: 'RUN_CANCELLED',
        runId: run.runId,
        reason: 'Cancelled in Leviath',
        foreignId,
      });
    else {
      const message = error
        ? truncateText(maskSecretText(error, this.options.secrets), 500)
        : 'The run failed in Leviath';
      drafts.push({
        type: 'RUN_FAILED',
        runId: run.runId,
        code: 'LEVIATH_RUN_ERROR',
        reason: message,
        error: { code: 'LEVIATH_RUN_ERROR', message, retryable: false },
        foreignId,
      });
    }
    return drafts;
  }

  private completed(run: RunState, frame: LeviathFrame): EventDraft[] {
    const word = runWordOf(frame.status);
    const error = str(frame, 'result') ?? null;
    if (!word || !TERMINAL.has(word)) {
      // A terminal word the bridge does not know: end the run as failed and keep the word.
      const drafts = run.ended
        ? []
        : this.end(
            run,
            'error',
            `Unknown completion status ${JSON.stringify(frame.status)}${error ? `: ${error}` : ''}`,
            frame.final_output,
          );
      return [...drafts, this.foreignEvent(run.runId, 'agent_completed', frame)];
    }
    if (run.ended) return [];
    return this.end(run, word, error, frame.final_output);
  }

  private toolStarted(run: RunState, frame: LeviathFrame): EventDraft[] {
    const callId = str(frame, 'call_id') ?? `call-${this.options.now()}`;
    const name = str(frame, 'tool') ?? 'unknown';
    const executionId = str(frame, 'execution_id') ?? null;
    let tool = this.tools.get(callId);
    let toolCallId = callId;
    if (tool && tool.phase === 'finished' && executionId && tool.executionId !== executionId) {
      // Providers may reuse a call id across retries; the execution id tells the runs apart.
      toolCallId = `${callId}#${executionId}`;
      tool = this.tools.get(toolCallId);
    }
    const drafts: EventDraft[] = [];
    if (!tool) {
      tool = this.trackRunningTool(run, toolCallId, name, executionId, drafts);
    } else {
      tool.executionId ??= executionId;
      const interaction = this.findApproval(toolCallId);
      if (
        interaction &&
        interaction.open &&
        !this.options.answeredInStudio?.(interaction.requestId)
      ) {
        interaction.open = false;
        drafts.push({
          type: 'APPROVAL_GRANTED',
          status: 'GRANTED',
          runId: run.runId,
          approvalId: approvalIdFor(
            interaction.requestId,
            Math.max(1, interaction.approvalGeneration),
          ),
          toolCallId,
          argumentHash: tool.argumentHash ?? '',
          safeSummary: tool.safeSummary,
          reasons: ['Decided outside the studio'],
          expiresAt: isoAt(this.options.now()),
          decisionReason: 'Allowed outside the studio',
          foreignId: `interaction:${interaction.requestId}/settled`,
        });
      }
      tool.phase = 'running';
    }
    drafts.push(this.toolDraft(tool, 'TOOL_DISPATCHED', 'RUNNING', `tool:${toolCallId}/started`));
    return drafts;
  }

  /** A call first heard of once it runs: tracked as running and recorded as proposed. */
  private trackRunningTool(
    run: RunState,
    toolCallId: string,
    name: string,
    executionId: string | null,
    drafts: EventDraft[],
  ): ToolState {
    const tool: ToolState = {
      toolCallId,
      runId: run.runId,
      name,
      argumentHash: null,
      safeSummary: name,
      phase: 'running',
      executionId,
    };
    this.tools.set(toolCallId, tool);
    drafts.push(this.toolDraft(tool, 'TOOL_PROPOSED', 'PROPOSED', `tool:${toolCallId}`));
    return tool;
  }

  private toolFinished(run: RunState, frame: LeviathFrame): MappedFrame {
    const callId = str(frame, 'call_id') ?? `call-${this.options.now()}`;
    const name = str(frame, 'tool') ?? 'unknown';
    const executionId = str(frame, 'execution_id') ?? null;
    let toolCallId = callId;
    const candidate = this.tools.get(`${callId}#${executionId}`);
    if (executionId && candidate) toolCallId = candidate.toolCallId;
    const drafts: EventDraft[] = [];
    const tool =
      this.tools.get(toolCallId) ??
      this.trackRunningTool(run, toolCallId, name, executionId, drafts);
    if (tool.phase === 'finished') return { runId: run.runId, drafts: [] };
    tool.phase = 'finished';
    const ok = frame.ok === true;
    const summary = maskSecretText(str(frame, 'summary') ?? '', this.options.secrets);
    const resultJson = redactForeignPayload(
      { ok, summary },
      { maxBytes: 16 * 1024, secrets: this.options.secrets },
    ).payloadJson;
    drafts.push({
      ...this.toolDraft(
        tool,
        ok ? 'TOOL_SUCCEEDED' : 'TOOL_FAILED',
        ok ? 'SUCCEEDED' : 'FAILED',
        `tool:${toolCallId}/finished`,
      ),
      resultJson,
      ...(ok
        ? {}
        : {
            error: {
              code: 'AGENT_TOOL_FAILED',
              message: truncateText(summary, 512) || 'Tool failed',
              retryable: false,
            },
          }),
    });
    return { runId: run.runId, drafts, toolFinished: { toolCallId, toolName: tool.name } };
  }

  private interactionNeeded(run: RunState, request: Record<string, unknown>): EventDraft[] {
    const requestId = str(request, 'id');
    if (!requestId) return [this.foreignEvent(run.runId, 'interaction_needed', { request })];
    // Emitted once per request id, but a reconnect's GET can return it again.
    if (this.interactions.has(requestId)) return [];
    const kind = str(request, 'kind') ?? 'unknown';
    const prompt = maskSecretText(str(request, 'prompt') ?? '', this.options.secrets);
    const body = str(request, 'body');
    const options = Array.isArray(request.options)
      ? request.options.filter((o): o is string => typeof o === 'string')
      : [];
    const stageName = str(request, 'stage_name');
    const drafts: EventDraft[] = [...this.startIfNeeded(run)];

    if (kind === 'tool_approval') {
      const toolCallId = requestId.startsWith('approve-')
        ? requestId.slice('approve-'.length)
        : requestId;
      const name = str(request, 'tool_name') ?? 'unknown';
      const input = request.tool_arguments ?? null;
      const diffed = this.options.proposalDiff?.(run.runId, toolCallId, name, input) ?? null;
      const interaction: InteractionState = {
        requestId,
        runId: run.runId,
        kind,
        open: true,
        toolCallId,
        approvalGeneration: 1,
        question: null,
      };
      this.interactions.set(requestId, interaction);
      const tool: ToolState = {
        toolCallId,
        runId: run.runId,
        name,
        argumentHash: boundArgumentHash(name, input, diffed?.targets),
        safeSummary: truncateText(prompt || name, MAX_SAFE_SUMMARY),
        phase: 'awaiting',
        executionId: null,
      };
      this.tools.set(toolCallId, tool);
      const reasons = [`Leviath asks before running ${name}`];
      if (stageName) reasons.push(`Stage: ${stageName}`);
      if (options.length > 0) reasons.push(`Leviath offers: ${options.join(' / ')}`);
      drafts.push(
        {
          ...this.toolDraft(
            tool,
            'TOOL_PROPOSED',
            'WAITING_FOR_APPROVAL',
            `interaction:${requestId}`,
          ),
          argumentsJson: redactForeignPayload(input ?? {}, {
            maxBytes: 32 * 1024,
            secrets: this.options.secrets,
          }).payloadJson,
          ...(diffed ? { studioDiff: diffed.diff } : {}),
        },
        this.approvalRequested(interaction, tool, reasons),
      );
      return drafts;
    }

    const questionKind = QUESTION_KINDS[kind] ?? kind;
    const withBody =
      body && kind !== 'edit_text'
        ? `${prompt}\n\n${maskSecretText(body, this.options.secrets)}`
        : prompt;
    const question: QuestionValue = {
      questionId: requestId,
      sessionId: this.options.sessionIdFor(run.runId),
      kind: questionKind,
      prompt: truncateUtf8(withBody, MAX_MESSAGE_CONTENT_BYTES),
      choices: options,
      initialText:
        kind === 'edit_text' && body !== undefined
          ? truncateUtf8(body, MAX_MESSAGE_CONTENT_BYTES)
          : null,
      status: 'OPEN',
      answerText: null,
      answerChoiceIndex: null,
      answerApproved: null,
      askedBy: stageName === 'taint_gate' ? 'taint gate' : stageName ? `stage ${stageName}` : null,
      askedAt: isoAt(this.options.now()),
      answeredAt: null,
    };
    this.interactions.set(requestId, {
      requestId,
      runId: run.runId,
      kind,
      open: true,
      toolCallId: null,
      approvalGeneration: 0,
      question,
    });
    drafts.push({
      type: 'STUDIO_QUESTION_ASKED',
      runId: run.runId,
      question,
      foreignId: `interaction:${requestId}`,
    });
    return drafts;
  }

  private close(
    interaction: InteractionState,
    why: 'elsewhere' | 'run-ended',
    force = false,
  ): EventDraft[] {
    if (!force && this.options.answeredInStudio?.(interaction.requestId)) {
      interaction.open = false;
      return [];
    }
    interaction.open = false;
    const now = isoAt(this.options.now());
    if (interaction.question) {
      const question: QuestionValue = {
        ...interaction.question,
        status: why === 'run-ended' ? 'EXPIRED' : 'ANSWERED_ELSEWHERE',
        answeredAt: now,
      };
      interaction.question = question;
      return [
        {
          type: 'STUDIO_QUESTION_ANSWERED',
          runId: interaction.runId,
          question,
          foreignId: `interaction:${interaction.requestId}/closed`,
        },
      ];
    }
    if (!interaction.toolCallId) return [];
    const tool = this.tools.get(interaction.toolCallId);
    if (!tool || tool.phase !== 'awaiting') return [];
    tool.phase = 'closed';
    const reason =
      why === 'run-ended'
        ? 'The run ended before a decision'
        : 'No longer pending in Leviath (answered elsewhere or timed out)';
    return [
      {
        type: 'APPROVAL_EXPIRED',
        status: 'EXPIRED',
        runId: interaction.runId,
        approvalId: approvalIdFor(
          interaction.requestId,
          Math.max(1, interaction.approvalGeneration),
        ),
        toolCallId: tool.toolCallId,
        argumentHash: tool.argumentHash ?? '',
        safeSummary: tool.safeSummary,
        reasons: [reason],
        expiresAt: now,
        automatic: true,
        decisionReason: reason,
        foreignId: `interaction:${interaction.requestId}/closed`,
      },
      {
        ...this.toolDraft(
          tool,
          'TOOL_OUTCOME_UNKNOWN',
          'OUTCOME_UNKNOWN',
          `interaction:${interaction.requestId}/outcome`,
        ),
        error: { code: 'AGENT_APPROVAL_EXPIRED', message: reason, retryable: false },
      },
    ];
  }

  private approvalRequested(
    interaction: InteractionState,
    tool: ToolState,
    reasons: string[],
  ): EventDraft {
    const generation = Math.max(1, interaction.approvalGeneration);
    return {
      type: 'APPROVAL_REQUESTED',
      runId: interaction.runId,
      approvalId: approvalIdFor(interaction.requestId, generation),
      toolCallId: tool.toolCallId,
      argumentHash: tool.argumentHash ?? '',
      status: 'PENDING',
      safeSummary: tool.safeSummary,
      reasons,
      expiresAt: approvalExpiresAt(this.options.now(), this.options.approvalTtlMs),
      foreignId:
        generation === 1
          ? `interaction:${interaction.requestId}/approval`
          : `interaction:${interaction.requestId}/approval/${generation}`,
    };
  }

  private budget(run: RunState): EventDraft {
    const dimensions: BudgetDimensionValue[] = [];
    if (run.tokens) {
      dimensions.push(
        budgetDimension('INPUT_TOKENS', run.tokens.prompt, null, 'tokens'),
        budgetDimension('OUTPUT_TOKENS', run.tokens.completion, null, 'tokens'),
        budgetDimension('CACHE_READ_TOKENS', run.tokens.cached, null, 'tokens'),
        budgetDimension('CACHE_WRITE_TOKENS', run.tokens.cacheWrite, null, 'tokens'),
      );
    }
    if (run.context)
      dimensions.push(
        budgetDimension('CONTEXT_TOKENS', run.context.total, run.context.max, 'tokens'),
      );
    if (run.spend)
      dimensions.push(
        budgetDimension(
          'PROVIDER_COST',
          run.spend.total * 1_000_000,
          run.spend.threshold > 0 ? run.spend.threshold * 1_000_000 : null,
          'micro-USD',
        ),
      );
    return {
      type: 'BUDGET_UPDATED',
      runId: run.runId,
      budget: { dimensions, resetAt: null, platformFunded: false, payer: 'USER' },
    };
  }

  private toolDraft(
    tool: ToolState,
    type: ToolDraft['type'],
    status: ToolDraft['status'],
    foreignId: string,
  ): ToolDraft {
    return {
      type,
      runId: tool.runId,
      toolCallId: tool.toolCallId,
      toolName: tool.name,
      toolVersion: TOOL_VERSION,
      status,
      safeSummary: tool.safeSummary,
      argumentHash: tool.argumentHash,
      executor: null,
      foreignId,
    };
  }

  private log(
    runId: string,
    level: string,
    origin: string,
    message: string,
    foreignId?: string,
  ): EventDraft {
    return logDraft({ runId, level, origin, message }, this.options.secrets, foreignId);
  }

  private foreignEvent(runId: string, foreignType: string, payload: unknown): EventDraft {
    return foreignEventDraft(
      { source: LEVIATH_SOURCE_ID, runId, foreignType, payload },
      this.options.secrets,
    );
  }
}

const QUESTION_KINDS: Record<string, string> = {
  free_text: 'FREE_TEXT',
  multiple_choice: 'MULTIPLE_CHOICE',
  confirm: 'CONFIRM',
  edit_text: 'EDIT_TEXT',
};

/** Wait reasons that need a person (WaitReason::needs_a_person is false only for workers/children). */
const PERSON_WAITS = new Set([
  'tool_approval',
  'user_prompt',
  'taint_gate',
  'interaction_point',
  'needs_setup',
]);

function describeWait(wait: Record<string, unknown>): string {
  const reason = str(wait, 'reason') ?? 'unknown';
  switch (reason) {
    case 'tool_approval':
      return 'tool approval';
    case 'user_prompt':
      return 'user prompt';
    case 'taint_gate':
      return 'taint gate';
    case 'interaction_point':
      return 'checkpoint (interaction point)';
    case 'fan_out_workers':
      return `workers (${num(wait, 'outstanding') ?? '?'})`;
    case 'children':
      return `children (${num(wait, 'outstanding') ?? '?'})`;
    case 'needs_setup':
      return `needs ${str(wait, 'blocker') ?? 'setup'}${str(wait, 'remedy') ? `: ${str(wait, 'remedy')}` : ''}`;
    default:
      return reason;
  }
}

function logLevel(line: string): string {
  if (line.startsWith('[error]')) return 'error';
  if (line.startsWith('[Tokens:')) return 'debug';
  return 'info';
}

function logOrigin(line: string): string {
  if (line.startsWith('[tool]')) return 'tool';
  if (line.startsWith('[error]')) return 'error';
  if (line.startsWith('[Tokens:')) return 'tokens';
  return 'output';
}

function sameTokens(a: RunState['tokens'], b: NonNullable<RunState['tokens']>): boolean {
  return (
    a !== null &&
    a.prompt === b.prompt &&
    a.completion === b.completion &&
    a.cached === b.cached &&
    a.cacheWrite === b.cacheWrite
  );
}
