/**
 * The Leviath bridge: follows every run of a `lev serve` gateway (each run is a studio session)
 * and routes approvals, question answers, messages and cancellations back.
 *
 * Connect cycle: open `/ws` and buffer its frames, read the current state over REST
 * (`/api/runs`, then `/api/agents/{id}/interaction` for waiting runs, since nothing is replayed),
 * then apply the buffered and live frames in order. On a drop: back off and do it again; the
 * mapper only emits what changed.
 */
import { createHash, randomUUID } from 'node:crypto';
import type WebSocket from 'ws';
import { ErrorCode } from '../../../protocol/contract.ts';
import { StudioError } from '../../engine/StudioError.ts';
import type { EventDraft, QuestionValue } from '../../engine/eventDrafts.ts';
import type { Logger } from '../../logger.ts';
import { SlicedIngest, SocketBackpressure, type SlicedIngestOptions } from '../slicedIngest.ts';
import { ProposalDiffs, leviathFileChanges } from '../proposedFileChanges.ts';
import {
  SILENT_LOGGER,
  appendSafely,
  backoffDelay,
  DEFAULT_BACKOFF,
  errorMessage,
  isoAt,
  safeErrorMessage,
  sleep,
  type BackoffOptions,
} from '../bridgeSupport.ts';
import type {
  QuestionAnswer,
  SessionInfo,
  SessionSpec,
  Source,
  SourceHost,
  ToolDecision,
} from '../Source.ts';
import { LeviathClient, LeviathHttpError, type InteractionAnswerBody } from './LeviathClient.ts';
import {
  LeviathMapper,
  LEVIATH_SOURCE_ID,
  runWordOf,
  type LeviathFrame,
  type LeviathRunMeta,
  type MappedFrame,
} from './LeviathMapper.ts';

/** What the checkpoint hooks learn about the tool call they run for. */
export interface LeviathToolContext {
  sessionId: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  /** The run's working folder as Leviath reports it (RunMeta.workdir), when known. */
  runWorkdir: string | null;
  /** The folder given with --leviath-workspace. */
  workspaceDir: string | null;
}

/**
 * Hooks the engine wires for `--leviath-workspace DIR`: checkpoint the folder before the studio
 * answers an approval (an exact pre-image; a throw refuses the decision) and after every finished
 * tool call (a throw is logged).
 */
export interface LeviathCheckpointHooks {
  beforeDecision?(context: LeviathToolContext & { approved: boolean }): Promise<void>;
  afterToolFinished?(context: LeviathToolContext): Promise<void>;
}

/** What a new session of a run needs from the engine (for example its project, for checkpoints). */
export interface LeviathRunInfo {
  runId: string;
  title: string;
  workdir: string | null;
}

export interface LeviathSourceOptions {
  /** Gateway base URL, e.g. http://127.0.0.1:3000. */
  url: string;
  /** LEVIATH_TOKEN: sent only in the Authorization header. */
  token: string;
  /** The folder Leviath's runs work in (--leviath-workspace); enables checkpoints. */
  workspaceDir?: string;
  /** Where the bridge logs (default: the engine's logger, given at start). */
  logger?: Logger;
  hooks?: LeviathCheckpointHooks;
  /** The studio project of a run's session (needed for checkpoint events); default none. */
  projectIdFor?: (run: LeviathRunInfo) => string | null;
  /** At most this many runs (newest first) are read at connect (default 100). */
  maxRuns?: number;
  /** Reconnect backoff (default 500 ms doubling to 10 s). */
  backoff?: BackoffOptions;
  /** How long after a run stops waiting the bridge asks whether its prompt was answered elsewhere (default 1000 ms). */
  settleMs?: number;
  /** Ingest slice bounds (default 2,000 frames or 25 ms per slice, one group commit each). */
  slice?: Pick<SlicedIngestOptions<unknown>, 'maxItems' | 'maxMs'>;
  /** TTL of the approvals the bridge requests (default and cap 120 s; they are requested again while Leviath waits). */
  approvalTtlMs?: number;
  fetch?: typeof fetch;
}

/** The studio session id of a Leviath run. */
export function leviathStudioSessionId(runId: string): string {
  const id = `leviath-${runId}`;
  if (id.length <= 128 && /^[\x21-\x7e]+$/.test(id)) return id;
  return `leviath-${createHash('sha256').update(runId).digest('hex').slice(0, 40)}`;
}

export class LeviathSource implements Source {
  readonly sourceId = LEVIATH_SOURCE_ID;
  /** A message to a Leviath run steers the run while it is active. */
  readonly steersActiveRun = true;
  readonly checkpointsSupported: boolean;
  readonly checkpointsUnsupportedReason?: string;

  private options: LeviathSourceOptions;
  private readonly client: LeviathClient;
  private logger: Logger;
  private readonly abort = new AbortController();
  private readonly mapper: LeviathMapper;
  /** studio session id -> run id */
  private readonly runsBySession = new Map<string, string>();
  private readonly workdirs = new Map<string, string>();
  private readonly inFlight = new Set<string>();
  private readonly answered = new Set<string>();
  /**
   * One ordered inbox for gateway frames and REST tasks (state reads, settle checks), applied in
   * bounded slices with group commit (slicedIngest.ts), so a burst never starves the server.
   */
  private ingest: SlicedIngest<IngestItem> | null = null;
  private loop: Promise<void> | null = null;
  private socket: WebSocket | null = null;
  private host: SourceHost | null = null;
  /** write_file / edit_file approvals: the diff shown and bound into the hash, once per call. */
  private readonly writeDiffs = new ProposalDiffs();

  constructor(options: LeviathSourceOptions) {
    if (!options.token) throw new Error('Leviath needs a gateway token (LEVIATH_TOKEN)');
    this.options = options;
    this.logger = options.logger ?? SILENT_LOGGER;
    this.logger.addSecret(options.token);
    this.client = new LeviathClient({
      url: options.url,
      token: options.token,
      fetch: options.fetch,
    });
    this.checkpointsSupported = Boolean(options.workspaceDir);
    if (!this.checkpointsSupported) {
      this.checkpointsUnsupportedReason =
        'Leviath has no checkpoints of its own; start the studio with --leviath-workspace DIR to checkpoint the folder its runs work in.';
    }
    this.mapper = new LeviathMapper({
      now: () => this.host?.now() ?? Date.now(),
      sessionIdFor: leviathStudioSessionId,
      secrets: [options.token],
      ...(options.approvalTtlMs !== undefined ? { approvalTtlMs: options.approvalTtlMs } : {}),
      answeredInStudio: (requestId) => this.inFlight.has(requestId) || this.answered.has(requestId),
      proposalDiff: (runId, toolCallId, toolName, input) => {
        const root = this.options.workspaceDir;
        if (!root) return null;
        return this.writeDiffs.of(this.host, leviathStudioSessionId(runId), toolCallId, () =>
          leviathFileChanges(root, this.workdirs.get(runId) ?? null, toolName, input),
        );
      },
    });
  }

  /**
   * Wires the workspace checkpointing after construction (the engine exists only once the server
   * starts); call before the engine starts the source.
   */
  configureWorkspace(config: {
    hooks?: LeviathCheckpointHooks;
    projectIdFor?: (run: LeviathRunInfo) => string | null;
  }): void {
    this.options = { ...this.options, ...config };
  }

  /** Resolves after the first connect attempt read the gateway's state (or failed); following goes on. */
  async start(host: SourceHost): Promise<void> {
    this.host = host;
    this.ingest = new SlicedIngest<IngestItem>({
      host,
      prepare: (item) => {
        if ('task' in item) return item.task;
        const frame = this.frameOf(item);
        return frame ? this.prepareFrame(frame) : null;
      },
      apply: async (item) => {
        if ('task' in item) return undefined;
        const frame = this.frameOf(item);
        return frame ? this.applyFrame(frame) : undefined;
      },
      onError: (error) =>
        this.logger.warn('leviath: applying gateway state failed', {
          error: this.safeMessage(error),
        }),
      ...(this.options.slice ?? {}),
    });
    // Inside an ingest slice, appends through this host are gathered into few engine appends.
    this.host = this.ingest.host;
    host.logger.addSecret(this.options.token);
    this.logger = this.options.logger ?? host.logger;
    this.logger.addSecret(this.options.token);
    host.setStatus('CONNECTING', null);
    let markReady!: () => void;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    this.loop = this.follow(markReady);
    await ready;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.socket?.terminate();
    await this.loop;
    await this.ingest?.idle();
    this.ingest?.stop();
    this.host?.setStatus('STOPPED', null);
  }

  async sendMessage(session: SessionInfo, content: string): Promise<{ runId: string }> {
    const runId = this.runFor(session.sessionId);
    const run = this.mapper.run(runId);
    if (run?.ended)
      throw new StudioError(
        ErrorCode.RUN_NOT_ACTIVE,
        'This Leviath run has finished; a finished run cannot take messages',
      );
    await this.call(() => this.client.sendMessage(runId, content, this.abort.signal), 'message');
    // Leviath does not echo steering messages; the studio records its own.
    await appendSafely(
      this.requireHost(),
      session.sessionId,
      [
        {
          type: 'USER_MESSAGE',
          runId,
          messageId: `message-${randomUUID()}`,
          role: 'USER',
          content,
        },
      ],
      [this.options.token],
    );
    return { runId };
  }

  /** `DELETE /api/agents/{id}`. The engine records RUN_CANCELLED itself once this resolves. */
  async cancelRun(session: SessionInfo, _runId: string): Promise<void> {
    const runId = this.runFor(session.sessionId);
    await this.call(() => this.client.cancel(runId, this.abort.signal), 'cancellation');
    await this.appendNew(session.sessionId, this.mapper.endedInStudio(runId));
  }

  /**
   * The checkpoint hook (an exact pre-image of the workspace), run by the engine before
   * `deliverDecision` and committed on its own (Source.prepareDecision), so the pre-image is
   * durable before the answer can leave. A failing hook refuses the decision: nothing is sent.
   */
  async prepareDecision(decision: ToolDecision): Promise<void> {
    const { runId, tool } = this.openApproval(decision);
    const hook = this.options.hooks?.beforeDecision;
    if (!hook) return;
    try {
      await hook({
        ...this.toolContext(decision.sessionId, runId, tool.toolCallId, tool.name),
        approved: decision.approved,
      });
    } catch (error) {
      throw error instanceof StudioError
        ? error
        : new StudioError(
            ErrorCode.HOST_UNAVAILABLE,
            `Could not checkpoint the workspace before answering: ${errorMessage(error)}`,
            { retryable: true },
          );
    }
  }

  /** The open approval a decision answers, or the refusal the engine records. */
  private openApproval(decision: ToolDecision) {
    const runId = this.runFor(decision.sessionId);
    const interaction = this.mapper.approvalFor(decision.toolCallId);
    const tool = this.mapper.tool(decision.toolCallId);
    if (!interaction || !tool)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'Leviath has not asked about this tool call',
      );
    if (
      !interaction.open ||
      this.inFlight.has(interaction.requestId) ||
      this.answered.has(interaction.requestId)
    ) {
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'Leviath no longer waits for a decision on this call',
      );
    }
    if (tool.argumentHash !== decision.argumentHash)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'The argument hash does not match the call',
      );
    return { runId, interaction, tool };
  }

  /**
   * `POST /api/agents/{id}/interaction` with `{request_id, approved, scope: "once"}`: the studio
   * decides this one call (never a stage- or run-wide grant). The engine ran prepareDecision
   * (the checkpoint) first.
   */
  async deliverDecision(decision: ToolDecision): Promise<void> {
    const { runId, interaction } = this.openApproval(decision);
    const requestId = interaction.requestId;
    this.inFlight.add(requestId);
    try {
      const body: InteractionAnswerBody = {
        request_id: requestId,
        approved: decision.approved,
        scope: 'once',
      };
      try {
        await this.client.answerInteraction(runId, body, this.abort.signal);
      } catch (error) {
        if (error instanceof LeviathHttpError && error.status === 404) {
          await appendSafely(
            this.requireHost(),
            decision.sessionId,
            this.mapper.closedElsewhere(requestId),
            [this.options.token],
          );
          throw new StudioError(
            ErrorCode.APPROVAL_REVOKED,
            'Leviath no longer waits for this approval: it was answered elsewhere or timed out',
            {
              remediation: 'Nothing to do: the card now shows the call as closed.',
            },
          );
        }
        throw this.studioError(error, 'decision');
      }
      this.answered.add(requestId);
      this.mapper.markAnswered(requestId, decision.approved);
    } finally {
      this.inFlight.delete(requestId);
    }
  }

  /**
   * The studio revoked an approval Leviath still waits on (the session was paused or closed, the
   * kill switch, a target file changed): Leviath is answered `approved: false` for this one call,
   * so the daemon stops waiting, as Claude Code is denied. A run the studio cancelled was closed
   * already (endedInStudio) and is not answered. The revoke is what is durable: after a restart,
   * resumeApprovals answers a still-open interaction whose newest approval is REVOKED the same way.
   */
  onApprovalRevoked(decision: Omit<ToolDecision, 'approved' | 'reason'>): void {
    void this.denyRevoked(decision.sessionId, decision.toolCallId);
  }

  private async denyRevoked(sessionId: string, toolCallId: string): Promise<void> {
    const interaction = this.mapper.approvalFor(toolCallId);
    const runId = this.runsBySession.get(sessionId);
    if (!interaction || !interaction.open || !runId) return;
    const requestId = interaction.requestId;
    if (this.inFlight.has(requestId) || this.answered.has(requestId)) return;
    this.inFlight.add(requestId);
    try {
      await this.client.answerInteraction(
        runId,
        { request_id: requestId, approved: false, scope: 'once' },
        this.abort.signal,
      );
      this.answered.add(requestId);
      this.mapper.markAnswered(requestId, false);
    } catch (error) {
      // 404: Leviath no longer waits (answered elsewhere, timed out); the card is revoked already.
      if (error instanceof LeviathHttpError && error.status === 404)
        this.mapper.markAnswered(requestId, false);
      else
        this.logger.warn('leviath: could not tell Leviath that an approval was revoked', {
          error: this.safeMessage(error),
        });
    } finally {
      this.inFlight.delete(requestId);
    }
  }

  /** The engine expired an approval (120 s cap) while Leviath still waits: request it again. */
  onApprovalExpired(decision: Omit<ToolDecision, 'approved' | 'reason'>): void {
    const drafts = this.mapper.reRequestApproval(decision.toolCallId, decision.approvalId);
    this.appendNew(decision.sessionId, drafts).catch((error: unknown) =>
      this.logger.warn('leviath: could not request an approval again', {
        error: this.safeMessage(error),
      }),
    );
  }

  /**
   * Answers a question card with the shape its kind needs: free_text / edit_text `{request_id,
   * value}`; multiple_choice `{request_id, choice_index}`; confirm `{request_id, approved,
   * choice_index}` (0 = yes, 1 = no; ask_user_confirm reads `approved`, interaction points read
   * the index). A 404 means it was answered elsewhere: the card closes as ANSWERED_ELSEWHERE and
   * the answer is refused with STUDIO_QUESTION_CLOSED.
   */
  async deliverAnswer(answer: QuestionAnswer): Promise<void> {
    const runId = this.runFor(answer.sessionId);
    const requestId = answer.question.questionId;
    const interaction = this.mapper.interaction(requestId);
    if (!interaction || interaction.kind === 'tool_approval')
      throw new StudioError(ErrorCode.BAD_REQUEST, 'Leviath has not asked this question');
    if (!interaction.open || this.answered.has(requestId) || this.inFlight.has(requestId)) {
      throw new StudioError(ErrorCode.STUDIO_QUESTION_CLOSED, 'This question is no longer open');
    }
    const body = answerBody(interaction.kind, requestId, answer);
    this.inFlight.add(requestId);
    try {
      try {
        await this.client.answerInteraction(runId, body, this.abort.signal);
      } catch (error) {
        if (error instanceof LeviathHttpError && error.status === 404) {
          await this.closeQuestionElsewhere(answer.sessionId, requestId, answer.question);
          throw new StudioError(
            ErrorCode.STUDIO_QUESTION_CLOSED,
            'This question was answered elsewhere or is no longer open in Leviath',
            {
              remediation: 'Nothing to do: the card now says it was answered elsewhere.',
            },
          );
        }
        throw this.studioError(error, 'answer');
      }
      this.answered.add(requestId);
      this.mapper.markAnswered(requestId);
    } finally {
      this.inFlight.delete(requestId);
    }
  }

  private async closeQuestionElsewhere(
    sessionId: string,
    requestId: string,
    fallback: QuestionValue,
  ): Promise<void> {
    const drafts = this.mapper.closedElsewhere(requestId);
    if (drafts.length > 0) {
      await appendSafely(this.requireHost(), sessionId, drafts, [this.options.token]);
      return;
    }
    // The mapper had already let go of it (a restart): close it from the studio's own copy.
    const current = (await this.requireHost().findQuestion(sessionId, requestId)) ?? fallback;
    if (current.status !== 'OPEN') return;
    await appendSafely(
      this.requireHost(),
      sessionId,
      [
        {
          type: 'STUDIO_QUESTION_ANSWERED',
          runId: this.runsBySession.get(sessionId) ?? null,
          question: {
            ...current,
            status: 'ANSWERED_ELSEWHERE',
            answeredAt: isoAt(this.requireHost().now()),
          },
          foreignId: `interaction:${requestId}/closed`,
        },
      ],
      [this.options.token],
    );
  }

  private async follow(markReady: () => void): Promise<void> {
    const signal = this.abort.signal;
    let attempt = 0;
    while (!signal.aborted) {
      try {
        const { closed } = await this.connectOnce(signal);
        attempt = 0;
        markReady();
        const reason = await closed;
        if (signal.aborted) break;
        this.logger.warn('leviath: gateway socket closed; reconnecting', { reason });
        this.requireHost().setStatus('RECONNECTING', `socket closed (${reason})`);
      } catch (error) {
        if (signal.aborted) break;
        const message = this.safeMessage(error);
        if (error instanceof LeviathHttpError && (error.status === 401 || error.status === 403)) {
          this.logger.error('leviath: the gateway refused the token; giving up', {
            status: error.status,
          });
          this.requireHost().setStatus(
            'FAILED',
            `the gateway refused the token (HTTP ${error.status}); check LEVIATH_TOKEN`,
          );
          markReady();
          return;
        }
        this.logger.warn('leviath: connection failed; retrying', { error: message });
        this.requireHost().setStatus('RECONNECTING', message);
        markReady();
      }
      await sleep(backoffDelay(attempt, this.options.backoff ?? DEFAULT_BACKOFF), signal);
      attempt += 1;
    }
  }

  /** Opens the socket, reads the state, applies the buffered frames; `closed` settles when the socket closes. */
  private async connectOnce(signal: AbortSignal): Promise<{ closed: Promise<string> }> {
    const socket = this.client.openSocket();
    this.socket = socket;
    const ingest = this.requireIngest();
    const buffered: FrameItem[] = [];
    let caughtUp = false;
    const backpressure = new SocketBackpressure(ingest, socket);
    let resolveClosed!: (reason: string) => void;
    const closed = new Promise<string>((resolve) => (resolveClosed = resolve));
    // A frame is kept as it came and parsed in its slice (whose time bound then counts it);
    // the socket is read only as fast as the frames are applied (SocketBackpressure).
    socket.on('message', (data: WebSocket.RawData) => {
      const item: FrameItem = { raw: data };
      if (caughtUp) void ingest.push(item);
      else buffered.push(item);
      backpressure.check(buffered.length);
    });
    socket.on('close', (code: number) => resolveClosed(`code ${code}`));
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(new Error('stopped'));
      signal.addEventListener('abort', onAbort, { once: true });
      socket.once('open', () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
      socket.once('unexpected-response', (_request, response) => {
        signal.removeEventListener('abort', onAbort);
        reject(
          new LeviathHttpError(
            response.statusCode ?? 0,
            `WebSocket upgrade refused (HTTP ${response.statusCode})`,
          ),
        );
        response.resume();
      });
      socket.once('error', (error: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      });
    });
    socket.on('error', (error: Error) =>
      this.logger.warn('leviath: socket error', { error: this.safeMessage(error) }),
    );
    try {
      await this.enqueue(() => this.readState(signal));
    } catch (error) {
      socket.terminate();
      throw error;
    }
    caughtUp = true;
    const applied = ingest.push(...buffered.splice(0));
    backpressure.handedOver();
    await applied;
    this.requireHost().setStatus(
      'LIVE',
      `${this.runsBySession.size} run${this.runsBySession.size === 1 ? '' : 's'}`,
    );
    // Wrapped: an async function returning a bare promise would wait for the socket to close.
    return { closed };
  }

  private async readState(signal: AbortSignal): Promise<void> {
    const config = await this.client.getConfig(signal);
    if (config && typeof config.api_version !== 'undefined')
      this.logger.info('leviath: gateway api', { apiVersion: config.api_version });
    const runs = await this.client.listRuns(this.options.maxRuns ?? 100, signal);
    // Oldest first, so sessions appear in the order the runs began.
    for (const meta of runs.reverse()) {
      const runId = String(meta.run_id);
      await this.ensureSession(runId, meta);
      await this.appendMapped(this.mapper.applyRunMeta(meta));
      const word = runWordOf(meta.status);
      if (word === 'waiting' || this.mapper.openInteractionsOf(runId).length > 0)
        await this.syncInteraction(runId, signal);
    }
    await this.resumeApprovals();
  }

  /**
   * After a (re)connect: approvals that lapsed while the studio was down are requested again, and
   * ones the studio revoked (the answer may not have reached Leviath) are answered no.
   */
  private async resumeApprovals(): Promise<void> {
    const host = this.requireHost();
    if (!host.findApproval) return;
    for (const interaction of this.mapper.openApprovals()) {
      const sessionId = leviathStudioSessionId(interaction.runId);
      const newest = interaction.toolCallId
        ? await host.findApproval(sessionId, interaction.toolCallId)
        : null;
      if (!newest || !interaction.toolCallId) continue;
      if (newest.status === 'REVOKED') await this.denyRevoked(sessionId, interaction.toolCallId);
      else
        await this.appendNew(sessionId, this.mapper.resumeApproval(interaction.toolCallId, newest));
    }
  }

  /** Asks the gateway which interaction of a run is open, maps a new one and closes the others. */
  private async syncInteraction(runId: string, signal: AbortSignal): Promise<void> {
    const request = await this.client.getInteraction(runId, signal);
    const sessionId = leviathStudioSessionId(runId);
    const drafts: EventDraft[] = [];
    if (request) drafts.push(...this.mapper.mapOpenInteraction(runId, request));
    drafts.push(...this.mapper.reconcileInteractions(runId, request ? String(request.id) : null));
    await this.appendNew(sessionId, drafts);
  }

  /** A frame about a run the bridge has not seen needs the run read over REST first. */
  private prepareFrame(frame: LeviathFrame): (() => Promise<void>) | null {
    const runId = runIdOfFrame(frame);
    if (!runId || this.mapper.hasRun(runId)) return null;
    return async () => {
      let meta: LeviathRunMeta | null = null;
      try {
        meta = await this.client.getRun(runId, this.abort.signal);
      } catch (error) {
        this.logger.warn('leviath: could not read a new run', {
          runId,
          error: this.safeMessage(error),
        });
      }
      await this.ensureSession(
        runId,
        meta ?? {
          run_id: runId,
          agent_name: typeof frame.blueprint === 'string' ? frame.blueprint : undefined,
        },
      );
    };
  }

  /**
   * Applies one frame synchronously (inside the slice's group commit); the checkpoint after a
   * finished tool call is returned, to run once the slice has committed.
   */
  private async applyFrame(frame: LeviathFrame): Promise<(() => Promise<void>) | undefined> {
    const runId = runIdOfFrame(frame);
    if (runId && !this.mapper.hasRun(runId))
      await this.ensureSession(runId, {
        run_id: runId,
        agent_name: typeof frame.blueprint === 'string' ? frame.blueprint : undefined,
      });
    const mapped = this.mapper.mapFrame(frame);
    if (mapped.gateway) {
      this.gatewayFrame(frame, mapped.gateway);
      return undefined;
    }
    await this.appendMapped(mapped);
    if (mapped.runId && mapped.checkInteractions) this.scheduleSettleCheck(mapped.runId);
    const hook = this.options.hooks?.afterToolFinished;
    if (!mapped.runId || !mapped.toolFinished || !hook) return undefined;
    const context = this.toolContext(
      leviathStudioSessionId(mapped.runId),
      mapped.runId,
      mapped.toolFinished.toolCallId,
      mapped.toolFinished.toolName,
    );
    return async () => {
      try {
        await hook(context);
      } catch (error) {
        this.logger.warn('leviath: checkpoint after a tool call failed', {
          toolCallId: context.toolCallId,
          error: this.safeMessage(error),
        });
      }
    };
  }

  private gatewayFrame(frame: LeviathFrame, gateway: { type: string; payload: string }): void {
    if (gateway.type === 'daemon_link') {
      const connected = frame.connected !== false;
      this.requireHost().setStatus(
        connected ? 'LIVE' : 'RECONNECTING',
        connected ? 'daemon linked' : 'the gateway lost its daemon',
      );
      this.logger.info('leviath: daemon link', { connected, restarted: frame.restarted === true });
      return;
    }
    // Not about a run (update jobs, frame types newer than the bridge): only the log can keep it.
    this.logger.info('leviath: gateway frame without a run', {
      type: gateway.type,
      payload: gateway.payload,
    });
  }

  private scheduleSettleCheck(runId: string): void {
    const delay = this.options.settleMs ?? 1000;
    const timer = setTimeout(() => {
      if (this.abort.signal.aborted) return;
      this.enqueue(() => this.syncInteraction(runId, this.abort.signal)).catch((error: unknown) =>
        this.logger.warn('leviath: could not check a run for open interactions', {
          runId,
          error: this.safeMessage(error),
        }),
      );
    }, delay);
    timer.unref?.();
  }

  private async ensureSession(runId: string, meta: LeviathRunMeta): Promise<void> {
    const sessionId = leviathStudioSessionId(runId);
    if (typeof meta.workdir === 'string') this.workdirs.set(runId, meta.workdir);
    if (this.runsBySession.has(sessionId)) return;
    const title = titleOf(meta, runId);
    const model = typeof meta.model === 'string' ? meta.model : null;
    const spec: SessionSpec = {
      sessionId,
      title,
      mode: 'BUILD',
      requestedModel: model ?? 'leviath',
      model,
      projectId:
        this.options.projectIdFor?.({
          runId,
          title,
          workdir: typeof meta.workdir === 'string' ? meta.workdir : null,
        }) ?? null,
    };
    await this.requireHost().ensureSession(spec);
    this.runsBySession.set(sessionId, runId);
  }

  private async appendMapped(mapped: MappedFrame): Promise<void> {
    if (!mapped.runId || mapped.drafts.length === 0) return;
    await this.appendNew(leviathStudioSessionId(mapped.runId), mapped.drafts);
  }

  private async appendNew(sessionId: string, drafts: EventDraft[]): Promise<void> {
    if (drafts.length === 0) return;
    await appendSafely(this.requireHost(), sessionId, drafts, [this.options.token]);
  }

  /** The frame an inbox item holds, parsed once (null, and logged, if it is not a JSON object). */
  private frameOf(item: FrameItem): LeviathFrame | null {
    if (item.frame === undefined) {
      item.frame = parseFrame(item.raw);
      if (!item.frame) this.logger.warn('leviath: ignoring a frame that is not a JSON object');
    }
    return item.frame;
  }

  private requireIngest(): SlicedIngest<IngestItem> {
    if (!this.ingest) throw new Error('LeviathSource used before start()');
    return this.ingest;
  }

  /** Runs a REST task in the inbox's order (after the frames before it); settles with the task. */
  private enqueue(task: () => Promise<void>): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      void this.requireIngest().push({
        task: () => task().then(resolve, reject),
      });
    });
  }

  private toolContext(
    sessionId: string,
    runId: string,
    toolCallId: string,
    toolName: string,
  ): LeviathToolContext {
    return {
      sessionId,
      runId,
      toolCallId,
      toolName,
      runWorkdir: this.workdirs.get(runId) ?? null,
      workspaceDir: this.options.workspaceDir ?? null,
    };
  }

  private async call(fn: () => Promise<void>, what: string): Promise<void> {
    try {
      await fn();
    } catch (error) {
      throw this.studioError(error, what);
    }
  }

  private studioError(error: unknown, what: string): StudioError {
    const message = this.safeMessage(error);
    if (error instanceof LeviathHttpError) {
      if (error.status === 401 || error.status === 403) {
        return new StudioError(
          ErrorCode.PROVIDER_UNAVAILABLE,
          `The Leviath gateway refused the ${what}: ${message}`,
          { remediation: 'Check LEVIATH_TOKEN.' },
        );
      }
      if (error.status === 404)
        return new StudioError(
          ErrorCode.SESSION_NOT_FOUND,
          `Leviath does not know this run: ${message}`,
        );
      if (error.status === 502) {
        return new StudioError(
          ErrorCode.PROVIDER_UNAVAILABLE,
          `Leviath could not take the ${what}: ${message}`,
          {
            remediation:
              'The gateway runs against a daemon of another build; restart the Leviath daemon.',
          },
        );
      }
      if (error.status === 503)
        return new StudioError(
          ErrorCode.PROVIDER_UNAVAILABLE,
          `The Leviath daemon is down: ${message}`,
          { retryable: true },
        );
      if (error.status >= 400 && error.status < 500)
        return new StudioError(ErrorCode.BAD_REQUEST, `Leviath refused the ${what}: ${message}`);
    }
    return new StudioError(
      ErrorCode.PROVIDER_UNAVAILABLE,
      `Could not reach Leviath for the ${what}: ${message}`,
      { retryable: true },
    );
  }

  private safeMessage(error: unknown): string {
    return safeErrorMessage(error, [this.options.token]);
  }

  private runFor(sessionId: string): string {
    const runId = this.runsBySession.get(sessionId);
    if (!runId)
      throw new StudioError(
        ErrorCode.SESSION_NOT_FOUND,
        'This session is not a Leviath run of this studio',
      );
    return runId;
  }

  private requireHost(): SourceHost {
    if (!this.host) throw new Error('LeviathSource used before start()');
    return this.host;
  }
}

/** The InteractionResponse body for a question of this kind (see deliverAnswer). */
export function answerBody(
  kind: string,
  requestId: string,
  answer: Pick<QuestionAnswer, 'text' | 'choiceIndex' | 'approved'> & {
    question: Pick<QuestionValue, 'choices'>;
  },
): InteractionAnswerBody {
  switch (kind) {
    case 'free_text':
    case 'edit_text':
      if (answer.text === null)
        throw new StudioError(ErrorCode.BAD_REQUEST, 'This question needs a text answer', {
          field: 'text',
        });
      return { request_id: requestId, value: answer.text };
    case 'multiple_choice': {
      const index = answer.choiceIndex;
      if (
        index === null ||
        !Number.isInteger(index) ||
        index < 0 ||
        index >= answer.question.choices.length
      ) {
        throw new StudioError(ErrorCode.BAD_REQUEST, 'This question needs one of its choices', {
          field: 'choiceIndex',
        });
      }
      return { request_id: requestId, choice_index: index };
    }
    case 'confirm': {
      const approved =
        answer.approved ??
        (answer.choiceIndex === 0 ? true : answer.choiceIndex === 1 ? false : null);
      if (approved === null)
        throw new StudioError(ErrorCode.BAD_REQUEST, 'This question needs yes or no', {
          field: 'approved',
        });
      return { request_id: requestId, approved, choice_index: approved ? 0 : 1 };
    }
    default: {
      // A kind the bridge does not know: send whatever the user gave.
      const body: InteractionAnswerBody = { request_id: requestId };
      if (answer.text !== null) body.value = answer.text;
      if (answer.choiceIndex !== null) body.choice_index = answer.choiceIndex;
      if (answer.approved !== null) body.approved = answer.approved;
      return body;
    }
  }
}

function titleOf(meta: LeviathRunMeta, runId: string): string {
  for (const key of ['title', 'task', 'agent_name']) {
    const value = meta[key];
    if (typeof value === 'string' && value.trim()) return value.trim().slice(0, 120);
  }
  return `Leviath ${runId}`;
}

function parseFrame(data: WebSocket.RawData): LeviathFrame | null {
  try {
    // Decoded in place: Buffer.from(buffer) would copy every frame first.
    const text = Buffer.isBuffer(data)
      ? data.toString('utf8')
      : Array.isArray(data)
        ? Buffer.concat(data).toString('utf8')
        : Buffer.from(data).toString('utf8');
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as LeviathFrame)
      : null;
  } catch {
    return null;
  }
}

/** A gateway frame as the socket gave it, and once parsed, its object (null: not one). */
interface FrameItem {
  raw: WebSocket.RawData;
  frame?: LeviathFrame | null;
}

/** What the Leviath inbox holds: a gateway frame, or a REST task to run in order. */
type IngestItem = FrameItem | { task: () => Promise<void> };

/** The run a frame is about (`run_id`, else `agent_id`, else the nested world event's). */
function runIdOfFrame(frame: LeviathFrame): string | null {
  if (typeof frame.run_id === 'string') return frame.run_id;
  if (typeof frame.agent_id === 'string') return frame.agent_id;
  const nested =
    frame.type === 'world' && typeof frame.event === 'object' && frame.event !== null
      ? (frame.event as Record<string, unknown>)
      : null;
  return nested && typeof nested.run_id === 'string' ? nested.run_id : null;
}
