/**
 * The Claude Managed Agents bridge: follows one or more Managed Agents sessions and routes the
 * studio's decisions, messages and cancellations back to them.
 *
 * Per session (the documented reconnect procedure): open the SSE stream, page the whole history,
 * map every event not seen yet, then map the buffered and live stream events. On a drop: back
 * off (500 ms doubling to 10 s), and do it all again, skipping ids already mapped; the engine
 * additionally skips drafts whose foreignId it stored, so a restart re-pages safely.
 *
 * Subagent threads: the session stream is only a condensed view (a subagent's `auto` denials and
 * its calls that need no permission never reach it), so each subagent thread is followed the same
 * way (its `/threads/{tid}/stream`, then its paged `/threads/{tid}/events`, same backoff). Threads
 * are found by listing them at every connect and by `session.thread_created`; a thread that
 * terminates (or is archived) is read once more and then left. One set of seen ids spans the
 * session and its threads, so a cross-posted event is mapped once.
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../../../protocol/contract.ts';
import { StudioError } from '../../engine/StudioError.ts';
import type { Logger } from '../../logger.ts';
import {
  SILENT_LOGGER,
  appendSafely,
  backoffDelay,
  DEFAULT_BACKOFF,
  safeErrorMessage,
  sleep,
  type BackoffOptions,
  type RandomSource,
} from '../bridgeSupport.ts';
import type { SessionInfo, Source, SourceHost, SourceStatus, ToolDecision } from '../Source.ts';
import type { EventDraft } from '../../engine/eventDrafts.ts';
import { SlicedIngest } from '../slicedIngest.ts';
import { apiMessage, apiStatus, isFatalApiError, SessionsApi } from './sessionsApi.ts';
import type {
  BetaManagedAgentsEventParams,
  BetaManagedAgentsUserToolConfirmationEventParams,
} from '@anthropic-ai/sdk/resources/beta/sessions/events';
import type { BetaManagedAgentsSession } from '@anthropic-ai/sdk/resources/beta/sessions/sessions';
import {
  eventIdOf,
  eventRecord,
  type EventRecord,
  ManagedAgentsMapper,
  MANAGED_AGENTS_SOURCE_ID,
  type ManagedAgentsEvent,
} from './ManagedAgentsMapper.ts';

/** What a runtime is told when the studio revoked the approval it waits on. */
const REVOKED_MESSAGE =
  'The studio revoked this approval before anyone approved it; the call was not run.';

export interface ManagedAgentsSourceOptions {
  /** Managed Agents session ids (`sesn_...`) to follow. */
  sessionIds: string[];
  /** ANTHROPIC_API_KEY: the SDK sends it only as `Authorization: Bearer`, never in a URL. */
  apiKey: string;
  /** API base URL (default https://api.anthropic.com); for proxies and tests. */
  baseUrl?: string;
  /** Where the bridge logs (default: the engine's logger, given at start). */
  logger?: Logger;
  /** Reconnect backoff (default 500 ms doubling to 10 s, full jitter). */
  backoff?: BackoffOptions;
  /** The backoff's random source (default Math.random; tests inject one). */
  random?: RandomSource;
  /** Retries of a confirmation the API answered with 400 "does not match" (default 6 tries, 250 ms doubling to 4 s). */
  confirmationRetry?: { attempts: number; initialMs: number; maxMs: number };
  /** TTL of the approvals the bridge requests (default and cap 120 s; they are requested again while the session waits). */
  approvalTtlMs?: number;
  /** SDK retries of one request (default 2); the bridge's own reconnect loop comes on top. */
  maxRetries?: number;
  fetch?: typeof fetch;
}

/** The studio session id of a Managed Agents session. */
export function managedAgentsStudioSessionId(foreignSessionId: string): string {
  return `ma-${foreignSessionId}`;
}

const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,120}$/;

type FollowState = 'connecting' | 'live' | 'reconnecting' | 'failed' | 'closed';

interface Follow {
  foreignSessionId: string;
  studioSessionId: string;
  mapper: ManagedAgentsMapper;
  seen: Set<string>;
  inFlight: Set<string>;
  decided: Set<string>;
  /** Ids of user.interrupt events the studio sent (cancelRun). */
  studioInterrupts: Set<string>;
  /** Texts of messages sent while the API answered without the sent events (echo not yet mapped). */
  unechoedMessages: string[];
  state: FollowState;
  detail: string | null;
  sessionKnown: boolean;
  threads: Map<string, ThreadFollow>;
  /** Events of the session and its threads, applied in order in slices with group commit. */
  inbox: SlicedIngest<() => Promise<void>>;
}

interface ThreadFollow {
  threadId: string;
  /** Aborted when the thread terminates or is archived (or the session closes). */
  abort: AbortController;
  /** The thread ended: after its stream closes, its history is read once more, then it is left. */
  ended: boolean;
  /** Resolves once the thread first caught up with its history (or its first attempt failed). */
  ready: Promise<void>;
}

export class ManagedAgentsSource implements Source {
  readonly sourceId = MANAGED_AGENTS_SOURCE_ID;
  readonly checkpointsSupported = false;
  readonly checkpointsUnsupportedReason =
    'Claude Managed Agents has no checkpoint API: it snapshots its sandbox on its own when a session goes idle and offers no way to list or restore those snapshots.';

  private readonly options: ManagedAgentsSourceOptions;
  private readonly api: SessionsApi;
  private logger: Logger;
  private readonly follows = new Map<string, Follow>();
  private readonly abort = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private host: SourceHost | null = null;

  constructor(options: ManagedAgentsSourceOptions) {
    for (const id of options.sessionIds) {
      if (!SESSION_ID_PATTERN.test(id))
        throw new Error(`not a Managed Agents session id: ${JSON.stringify(id.slice(0, 40))}`);
    }
    if (!options.apiKey) throw new Error('Managed Agents needs an API key (ANTHROPIC_API_KEY)');
    this.options = options;
    this.logger = options.logger ?? SILENT_LOGGER;
    this.logger.addSecret(options.apiKey);
    this.api = new SessionsApi({
      apiKey: options.apiKey,
      baseUrl: options.baseUrl,
      fetch: options.fetch,
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      // The SDK logs through the bridge's logger (which masks the key), once start() set it.
      logger: {
        info: (...a) => this.logger.info(...a),
        warn: (...a) => this.logger.warn(...a),
        error: (...a) => this.logger.error(...a),
        addSecret: (secret) => this.logger.addSecret(secret),
      },
    });
  }

  /** Resolves once every session has caught up with its history (or failed its first attempt); following goes on. */
  async start(host: SourceHost): Promise<void> {
    this.host = host;
    host.logger.addSecret(this.options.apiKey);
    this.logger = this.options.logger ?? host.logger;
    this.logger.addSecret(this.options.apiKey);
    host.setStatus('CONNECTING', null);
    const ready: Promise<void>[] = [];
    for (const foreignSessionId of new Set(this.options.sessionIds)) {
      const studioSessionId = managedAgentsStudioSessionId(foreignSessionId);
      const follow: Follow = {
        foreignSessionId,
        studioSessionId,
        seen: new Set(),
        inFlight: new Set(),
        decided: new Set(),
        studioInterrupts: new Set(),
        unechoedMessages: [],
        state: 'connecting',
        detail: null,
        sessionKnown: false,
        threads: new Map(),
        inbox: new SlicedIngest<() => Promise<void>>({
          host,
          apply: (ingest) => ingest(),
          onError: (error) =>
            this.logger.warn('managed-agents: could not map an event', {
              session: foreignSessionId,
              error: this.safeMessage(error),
            }),
        }),
        mapper: new ManagedAgentsMapper({
          now: () => host.now(),
          secrets: [this.options.apiKey],
          ...(this.options.approvalTtlMs !== undefined
            ? { approvalTtlMs: this.options.approvalTtlMs }
            : {}),
          // The stored half is read before each event (noteStudioEchoes).
          decidedInStudio: (toolUseId) =>
            follow.inFlight.has(toolUseId) || follow.decided.has(toolUseId),
          interruptFromStudio: (eventId) => follow.studioInterrupts.has(eventId),
        }),
      };
      this.follows.set(studioSessionId, follow);
      let markReady!: () => void;
      ready.push(new Promise<void>((resolve) => (markReady = resolve)));
      this.loops.push(this.follow(follow, markReady));
    }
    await Promise.all(ready);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled(this.loops);
    for (const follow of this.follows.values()) {
      await follow.inbox.idle();
      follow.inbox.stop();
    }
    this.host?.setStatus('STOPPED', null);
  }

  async sendMessage(session: SessionInfo, content: string): Promise<{ runId: string }> {
    const follow = this.followFor(session.sessionId);
    // What arrived before the message is mapped before its echo.
    await follow.inbox.idle();
    const sent = await this.send(
      follow,
      [{ type: 'user.message', content: [{ type: 'text', text: content }] }],
      'message',
    );
    const echo = sent.find((e) => e.type === 'user.message' || e.type === undefined);
    if (echo && eventIdOf(echo)) {
      await this.ingest(follow, {
        ...echo,
        type: 'user.message',
        content: echo.content ?? [{ type: 'text', text: content }],
      } as ManagedAgentsEvent);
    } else {
      // The API answered without the sent event: record it under a local id and skip its echo.
      follow.unechoedMessages.push(content);
      await this.map(follow, {
        type: 'user.message',
        id: `local-${randomUUID()}`,
        content: [{ type: 'text', text: content }],
      });
    }
    const runId = follow.mapper.currentRunId;
    if (!runId)
      throw new StudioError(
        ErrorCode.RUN_NOT_ACTIVE,
        'The message was sent but no run is open for it',
      );
    return { runId };
  }

  /**
   * Posts `user.interrupt` (every thread). The engine records RUN_CANCELLED itself once this
   * resolves, so the runtime's own end of the turn (idle, end_turn) becomes only a row.
   */
  async cancelRun(session: SessionInfo, runId: string): Promise<void> {
    const follow = this.followFor(session.sessionId);
    await follow.inbox.idle();
    const sent = await this.send(follow, [{ type: 'user.interrupt' }], 'interrupt');
    follow.mapper.runEndedInStudio(runId);
    const ids = sent
      .map((e) => (typeof e.id === 'string' ? e.id : ''))
      .filter((id) => id.length > 0);
    for (const id of ids) follow.studioInterrupts.add(id);
    if (ids.length === 0) follow.mapper.expectStudioInterrupt();
    for (const event of sent)
      await this.ingest(follow, {
        ...event,
        type: typeof event.type === 'string' ? event.type : 'user.interrupt',
      } as ManagedAgentsEvent);
  }

  /**
   * Posts `user.tool_confirmation` ({tool_use_id, result, deny_message for a deny}; no thread id:
   * the API routes it by the event id). A 400 "does not match" (the API has not caught up with its
   * own tool-use event) is retried with backoff; any other 400 means the call cannot be confirmed.
   */
  async deliverDecision(decision: ToolDecision): Promise<void> {
    const follow = this.followFor(decision.sessionId);
    const toolUseId = decision.toolCallId;
    const tool = follow.mapper.tool(toolUseId);
    if (!tool)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'Managed Agents has not sent this tool call',
      );
    // The outbox job run again after a crash: this very decision is already in the session's
    // history (its `<id>/confirmation` row was stored before the crash, and the history replayed
    // since shows the runtime took it), so it is not sent twice; the API has no idempotency key.
    if (
      follow.decided.has(toolUseId) &&
      !follow.inFlight.has(toolUseId) &&
      (decision.approved
        ? tool.phase === 'running' || tool.phase === 'finished'
        : tool.phase === 'denied')
    )
      return;
    if (
      tool.phase !== 'awaiting' ||
      tool.notConfirmable ||
      follow.decided.has(toolUseId) ||
      follow.inFlight.has(toolUseId)
    ) {
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'This call no longer waits for a confirmation in Managed Agents',
      );
    }
    if (decision.argumentHash !== tool.argumentHash)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'The argument hash does not match the call',
      );
    const event: BetaManagedAgentsUserToolConfirmationEventParams = {
      type: 'user.tool_confirmation',
      tool_use_id: toolUseId,
      result: decision.approved ? 'allow' : 'deny',
      ...(!decision.approved && decision.reason
        ? { deny_message: decision.reason.slice(0, 10_000) }
        : {}),
    };
    follow.inFlight.add(toolUseId);
    try {
      await this.postConfirmation(follow, event);
      follow.decided.add(toolUseId);
      await appendSafely(
        this.requireHost(),
        follow.studioSessionId,
        follow.mapper.confirmationDelivered(toolUseId, decision.approved),
        [this.options.apiKey],
      );
    } finally {
      follow.inFlight.delete(toolUseId);
    }
  }

  onDecisionRecorded(decision: ToolDecision): void {
    const follow = this.follows.get(decision.sessionId);
    if (!follow || !decision.approved) return;
    const drafts = follow.mapper.dispatchedAfterApproval(decision.toolCallId);
    this.appendLater(follow, drafts);
  }

  /**
   * The studio revoked an approval the runtime still waits on (the session was paused or closed,
   * the kill switch, a changed target): `user.tool_confirmation` deny, once, with a message saying
   * so, so the hosted session stops waiting, as Claude Code is denied. The revoke is what is
   * durable: after a restart, resumeApprovals denies a call still awaiting whose newest approval
   * is REVOKED the same way.
   */
  onApprovalRevoked(decision: Omit<ToolDecision, 'approved' | 'reason'>): void {
    const follow = this.follows.get(decision.sessionId);
    if (follow) void this.denyRevoked(follow, decision.toolCallId);
  }

  private async denyRevoked(follow: Follow, toolUseId: string): Promise<void> {
    const tool = follow.mapper.tool(toolUseId);
    if (
      !tool ||
      tool.phase !== 'awaiting' ||
      tool.notConfirmable ||
      follow.decided.has(toolUseId) ||
      follow.inFlight.has(toolUseId)
    )
      return;
    follow.inFlight.add(toolUseId);
    try {
      await this.postConfirmation(follow, {
        type: 'user.tool_confirmation',
        tool_use_id: toolUseId,
        result: 'deny',
        deny_message: REVOKED_MESSAGE,
      });
      follow.decided.add(toolUseId);
      await this.appendNew(follow, follow.mapper.confirmationDelivered(toolUseId, false));
    } catch (error) {
      this.logger.warn('managed-agents: could not tell the runtime that an approval was revoked', {
        session: follow.foreignSessionId,
        error: this.safeMessage(error),
      });
    } finally {
      follow.inFlight.delete(toolUseId);
    }
  }

  /** The engine expired an approval (120 s cap); the runtime still waits, so request it again. */
  onApprovalExpired(decision: Omit<ToolDecision, 'approved' | 'reason'>): void {
    const follow = this.follows.get(decision.sessionId);
    if (!follow) return;
    const drafts = follow.mapper.reRequestApproval(decision.toolCallId, decision.approvalId);
    // The engine calls this after its commit: appended on its own, later.
    this.appendLater(follow, drafts);
  }

  private async follow(follow: Follow, markReady: () => void): Promise<void> {
    const signal = this.abort.signal;
    let attempt = 0;
    while (!signal.aborted && !follow.mapper.sessionClosed) {
      try {
        const host = this.requireHost();
        if (!follow.sessionKnown) {
          const session = await this.api.retrieveSession(follow.foreignSessionId, signal);
          await host.ensureSession(sessionSpec(follow, session));
          follow.mapper.noteBudget(session.budget);
          follow.sessionKnown = true;
        }
        const stream = await this.api.openStream(follow.foreignSessionId, signal);
        const buffered: ManagedAgentsEvent[] = [];
        let caughtUp = false;
        const pumped = (async () => {
          for await (const event of stream) {
            if (caughtUp) void follow.inbox.push(() => this.ingest(follow, event));
            else buffered.push(event);
            // session.deleted is the last event a session has: stop reading once it arrived.
            if (event.type === 'session.deleted' || follow.mapper.sessionClosed) return;
          }
        })().then(
          () => null,
          (error: unknown) => error,
        );
        const history = await this.api.listAllEvents(follow.foreignSessionId, signal);
        await follow.inbox.push(...history.map((event) => () => this.ingest(follow, event)));
        caughtUp = true;
        await follow.inbox.push(
          ...buffered.splice(0).map((event) => () => this.ingest(follow, event)),
        );
        await this.syncThreads(follow, signal);
        await Promise.all([...follow.threads.values()].map((t) => t.ready));
        await this.resumeApprovals(follow);
        attempt = 0;
        this.setFollowState(follow, follow.mapper.sessionClosed ? 'closed' : 'live', null);
        markReady();
        const streamError = await pumped;
        if (signal.aborted || follow.mapper.sessionClosed) break;
        this.logger.warn('managed-agents: stream ended; reconnecting', {
          session: follow.foreignSessionId,
          ...(streamError ? { error: this.safeMessage(streamError) } : {}),
        });
        this.setFollowState(
          follow,
          'reconnecting',
          streamError ? this.safeMessage(streamError) : 'stream ended',
        );
      } catch (error) {
        if (signal.aborted) break;
        if (isFatalApiError(error)) {
          this.logger.error('managed-agents: giving up on a session', {
            session: follow.foreignSessionId,
            status: error.status,
            error: this.safeMessage(error),
          });
          this.setFollowState(
            follow,
            'failed',
            `${follow.foreignSessionId}: HTTP ${error.status} ${this.safeMessage(error)}`,
          );
          markReady();
          return;
        }
        this.logger.warn('managed-agents: connection failed; retrying', {
          session: follow.foreignSessionId,
          error: this.safeMessage(error),
        });
        this.setFollowState(follow, 'reconnecting', this.safeMessage(error));
        markReady();
      }
      await sleep(
        backoffDelay(attempt, this.options.backoff ?? DEFAULT_BACKOFF, this.options.random),
        signal,
      );
      attempt += 1;
    }
    if (follow.mapper.sessionClosed) {
      for (const thread of follow.threads.values()) this.endThread(follow, thread.threadId);
      this.setFollowState(follow, 'closed', null);
    }
    markReady();
  }

  /**
   * Lists the session's threads and follows every subagent thread not followed yet (the primary
   * thread, `parent_thread_id: null`, is the session stream itself). A failed list is logged and
   * tried again at the next connect; `session.thread_created` still starts follows meanwhile.
   */
  private async syncThreads(follow: Follow, signal: AbortSignal): Promise<void> {
    let threads: Record<string, unknown>[];
    try {
      // Read defensively: the thread resource is an open shape across API versions.
      threads = (await this.api.listAllThreads(follow.foreignSessionId, signal)).map(
        (t) => t as unknown as Record<string, unknown>,
      );
    } catch (error) {
      if (signal.aborted) return;
      this.logger.warn('managed-agents: could not list the session threads', {
        session: follow.foreignSessionId,
        error: this.safeMessage(error),
      });
      return;
    }
    for (const thread of threads) {
      const threadId = typeof thread.id === 'string' ? thread.id : '';
      if (!threadId || thread.parent_thread_id === null) continue;
      const agent = thread.agent;
      const name =
        typeof thread.agent_name === 'string'
          ? thread.agent_name
          : typeof agent === 'object' && agent !== null
            ? (agent as Record<string, unknown>).name
            : undefined;
      if (typeof name === 'string') follow.mapper.noteThreadName(threadId, name);
      const ended =
        thread.status === 'terminated' ||
        (typeof thread.archived_at === 'string' && thread.archived_at.length > 0);
      this.startThread(follow, threadId, ended);
    }
  }

  /** Starts following a subagent thread (once); an already ended one is only read once. */
  private startThread(follow: Follow, threadId: string, ended = false): void {
    if (this.abort.signal.aborted || !SESSION_ID_PATTERN.test(threadId)) return;
    const known = follow.threads.get(threadId);
    if (known) {
      if (ended) this.endThread(follow, threadId);
      return;
    }
    let markReady!: () => void;
    const thread: ThreadFollow = {
      threadId,
      abort: new AbortController(),
      ended,
      ready: new Promise<void>((resolve) => (markReady = resolve)),
    };
    if (ended) thread.abort.abort();
    follow.threads.set(threadId, thread);
    this.loops.push(this.followThread(follow, thread, markReady));
  }

  private endThread(follow: Follow, threadId: string): void {
    const thread = follow.threads.get(threadId);
    if (!thread) return this.startThread(follow, threadId, true);
    thread.ended = true;
    thread.abort.abort();
  }

  /** The session loop's procedure for one thread: stream first, then the paged history, then tail. */
  private async followThread(
    follow: Follow,
    thread: ThreadFollow,
    markReady: () => void,
  ): Promise<void> {
    const signal = AbortSignal.any([this.abort.signal, thread.abort.signal]);
    const where = { session: follow.foreignSessionId, thread: thread.threadId };
    let attempt = 0;
    while (!signal.aborted) {
      try {
        const stream = await this.api.openThreadStream(
          follow.foreignSessionId,
          thread.threadId,
          signal,
        );
        const buffered: ManagedAgentsEvent[] = [];
        let caughtUp = false;
        const pumped = (async () => {
          for await (const event of stream) {
            if (caughtUp)
              void follow.inbox.push(() => this.ingestThread(follow, thread.threadId, event));
            else buffered.push(event);
          }
        })().then(
          () => null,
          (error: unknown) => error,
        );
        const history = await this.api.listAllThreadEvents(
          follow.foreignSessionId,
          thread.threadId,
          signal,
        );
        await follow.inbox.push(
          ...history.map((event) => () => this.ingestThread(follow, thread.threadId, event)),
        );
        caughtUp = true;
        await follow.inbox.push(
          ...buffered
            .splice(0)
            .map((event) => () => this.ingestThread(follow, thread.threadId, event)),
        );
        attempt = 0;
        markReady();
        const streamError = await pumped;
        if (signal.aborted) break;
        this.logger.warn('managed-agents: thread stream ended; reconnecting', {
          ...where,
          ...(streamError ? { error: this.safeMessage(streamError) } : {}),
        });
      } catch (error) {
        if (signal.aborted) break;
        markReady();
        if (isFatalApiError(error)) {
          this.logger.error('managed-agents: giving up on a thread', {
            ...where,
            status: error.status,
            error: this.safeMessage(error),
          });
          return;
        }
        this.logger.warn('managed-agents: thread connection failed; retrying', {
          ...where,
          error: this.safeMessage(error),
        });
      }
      await sleep(
        backoffDelay(attempt, this.options.backoff ?? DEFAULT_BACKOFF, this.options.random),
        signal,
      );
      attempt += 1;
    }
    if (thread.ended && !this.abort.signal.aborted) {
      // What the thread wrote between the last read and its end (e.g. its final denial).
      try {
        const rest = await this.api.listAllThreadEvents(
          follow.foreignSessionId,
          thread.threadId,
          this.abort.signal,
        );
        await follow.inbox.push(
          ...rest.map((event) => () => this.ingestThread(follow, thread.threadId, event)),
        );
      } catch (error) {
        if (!this.abort.signal.aborted)
          this.logger.warn('managed-agents: could not read an ended thread', {
            ...where,
            error: this.safeMessage(error),
          });
      }
    }
    markReady();
  }

  private async ingestThread(
    follow: Follow,
    threadId: string,
    event: ManagedAgentsEvent,
  ): Promise<void> {
    const key = eventIdOf(event);
    if (key && follow.seen.has(key)) return;
    const drafts = follow.mapper.mapThreadEvent(event, threadId);
    if (drafts === null) return;
    if (key) follow.seen.add(key);
    await this.appendNew(follow, drafts);
  }

  /**
   * After a (re)connect: approvals that lapsed while the studio was down are requested again, and
   * ones the studio revoked (the deny may not have reached the runtime) are denied.
   */
  private async resumeApprovals(follow: Follow): Promise<void> {
    const host = this.requireHost();
    if (!host.findApproval) return;
    for (const tool of follow.mapper.awaitingTools()) {
      const newest = await host.findApproval(follow.studioSessionId, tool.toolUseId);
      if (!newest) continue;
      if (newest.status === 'REVOKED') await this.denyRevoked(follow, tool.toolUseId);
      else await this.appendNew(follow, follow.mapper.resumeApproval(tool.toolUseId, newest));
    }
  }

  private async ingest(follow: Follow, input: ManagedAgentsEvent): Promise<void> {
    const event = eventRecord(input);
    const key = eventIdOf(event);
    if (key) {
      if (follow.seen.has(key)) return;
      follow.seen.add(key);
    }
    await this.noteStudioEchoes(follow, event, key);
    if (event.type === 'user.message' && follow.unechoedMessages.length > 0) {
      const text = textOf(event.content);
      const index = follow.unechoedMessages.indexOf(text);
      if (index !== -1) {
        follow.unechoedMessages.splice(index, 1);
        return;
      }
    }
    await this.map(follow, input);
    const threadId = typeof event.session_thread_id === 'string' ? event.session_thread_id : '';
    if (event.type === 'session.thread_created' && threadId) this.startThread(follow, threadId);
    else if (event.type === 'session.thread_status_terminated' && threadId)
      this.endThread(follow, threadId);
  }

  private async map(follow: Follow, event: ManagedAgentsEvent): Promise<void> {
    await this.appendNew(follow, follow.mapper.map(event));
  }

  /**
   * Before the mapper sees an event: whether the studio itself delivered the confirmation it
   * echoes (or sent the interrupt), read from the store (the mapper's predicates are
   * synchronous; they read the sets this fills).
   */
  private async noteStudioEchoes(
    follow: Follow,
    event: Record<string, unknown>,
    key: string | undefined,
  ): Promise<void> {
    const host = this.requireHost();
    const toolUseId = typeof event.tool_use_id === 'string' ? event.tool_use_id : null;
    if (
      toolUseId &&
      !follow.decided.has(toolUseId) &&
      (await host.hasForeignId(follow.studioSessionId, `${toolUseId}/confirmation`))
    )
      follow.decided.add(toolUseId);
    if (
      event.type === 'user.interrupt' &&
      key &&
      (await host.hasForeignId(follow.studioSessionId, `${key}/studio-cancel`))
    )
      follow.studioInterrupts.add(key);
  }

  private async appendNew(follow: Follow, drafts: EventDraft[]): Promise<void> {
    await appendSafely(this.requireHost(), follow.studioSessionId, drafts, [this.options.apiKey]);
  }

  /** Appends outside the caller's flow (a hook the engine calls after its commit). */
  private appendLater(follow: Follow, drafts: EventDraft[]): void {
    this.appendNew(follow, drafts).catch((error: unknown) =>
      this.logger.warn('managed-agents: could not record an event', {
        session: follow.foreignSessionId,
        error: this.safeMessage(error),
      }),
    );
  }

  private async postConfirmation(
    follow: Follow,
    event: BetaManagedAgentsUserToolConfirmationEventParams,
  ): Promise<void> {
    const retry = this.options.confirmationRetry ?? { attempts: 6, initialMs: 250, maxMs: 4_000 };
    for (let attempt = 0; ; attempt += 1) {
      try {
        await this.api.sendEvents(follow.foreignSessionId, [event], this.abort.signal);
        return;
      } catch (error) {
        const status = apiStatus(error);
        const racing =
          (status === 400 && /does not match/i.test(apiMessage(error))) || status === 429;
        if (racing && attempt + 1 < retry.attempts) {
          this.logger.warn('managed-agents: confirmation not accepted yet; retrying', {
            session: follow.foreignSessionId,
            toolUseId: event.tool_use_id,
            status,
          });
          await sleep(
            backoffDelay(
              attempt,
              { initialMs: retry.initialMs, maxMs: retry.maxMs },
              this.options.random,
            ),
            this.abort.signal,
          );
          continue;
        }
        if (status === 400 && !racing) {
          follow.mapper.markNotConfirmable(String(event.tool_use_id));
          throw new StudioError(
            ErrorCode.APPROVAL_REVOKED,
            `Managed Agents refused the confirmation: ${this.safeMessage(error)}`,
            {
              remediation:
                'The call no longer waits for a confirmation (it was decided elsewhere or denied by the runtime).',
            },
          );
        }
        throw this.studioError(error, 'confirmation');
      }
    }
  }

  private async send(
    follow: Follow,
    events: BetaManagedAgentsEventParams[],
    what: string,
  ): Promise<EventRecord[]> {
    try {
      const sent = await this.api.sendEvents(follow.foreignSessionId, events, this.abort.signal);
      return sent.map(eventRecord);
    } catch (error) {
      throw this.studioError(error, what);
    }
  }

  private studioError(error: unknown, what: string): StudioError {
    const message = this.safeMessage(error);
    const status = apiStatus(error);
    if (status !== null) {
      if (status === 401 || status === 403) {
        return new StudioError(
          ErrorCode.PROVIDER_UNAVAILABLE,
          `Managed Agents refused the ${what}: ${message}`,
          {
            remediation: 'Check ANTHROPIC_API_KEY and its access to this session.',
          },
        );
      }
      if (status === 404)
        return new StudioError(
          ErrorCode.SESSION_NOT_FOUND,
          `Managed Agents does not know this session: ${message}`,
        );
      if (status === 400)
        return new StudioError(
          ErrorCode.BAD_REQUEST,
          `Managed Agents refused the ${what}: ${message}`,
        );
    }
    return new StudioError(
      ErrorCode.PROVIDER_UNAVAILABLE,
      `Could not reach Managed Agents for the ${what}: ${message}`,
      { retryable: true },
    );
  }

  private safeMessage(error: unknown): string {
    return safeErrorMessage(error, [this.options.apiKey]);
  }

  private followFor(studioSessionId: string): Follow {
    const follow = this.follows.get(studioSessionId);
    if (!follow)
      throw new StudioError(
        ErrorCode.SESSION_NOT_FOUND,
        'This session is not a Managed Agents session of this studio',
      );
    return follow;
  }

  private requireHost(): SourceHost {
    if (!this.host) throw new Error('ManagedAgentsSource used before start()');
    return this.host;
  }

  private setFollowState(follow: Follow, state: FollowState, detail: string | null): void {
    follow.state = state;
    follow.detail = detail;
    const all = [...this.follows.values()];
    let status: SourceStatus;
    if (all.some((f) => f.state === 'connecting')) status = 'CONNECTING';
    else if (all.some((f) => f.state === 'reconnecting')) status = 'RECONNECTING';
    else if (all.every((f) => f.state === 'failed')) status = 'FAILED';
    else status = 'LIVE';
    const troubled = all
      .filter((f) => f.detail !== null && f.state !== 'live')
      .map((f) => `${f.foreignSessionId}: ${f.state} (${f.detail})`);
    const live = all.filter((f) => f.state === 'live').length;
    this.host?.setStatus(
      status,
      troubled.length > 0
        ? troubled.join('; ')
        : `${live} of ${all.length} session${all.length === 1 ? '' : 's'} live`,
    );
  }
}

function sessionSpec(follow: Follow, resource: BetaManagedAgentsSession) {
  const session = resource as unknown as Record<string, unknown>;
  const title =
    typeof session.title === 'string' && session.title.trim()
      ? session.title.trim().slice(0, 200)
      : `Managed Agents ${follow.foreignSessionId}`;
  const agent = session.agent;
  let model: string | null = null;
  if (typeof agent === 'object' && agent !== null) {
    const m = (agent as Record<string, unknown>).model;
    if (typeof m === 'string') model = m;
    else if (
      typeof m === 'object' &&
      m !== null &&
      typeof (m as Record<string, unknown>).id === 'string'
    )
      model = (m as Record<string, string>).id ?? null;
  }
  return {
    sessionId: follow.studioSessionId,
    title,
    mode: 'BUILD' as const,
    requestedModel: model ?? 'managed-agents',
    model,
  };
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return typeof content === 'string' ? content : '';
  return content
    .map((b: unknown) =>
      typeof b === 'object' && b !== null && (b as Record<string, unknown>).type === 'text'
        ? String((b as Record<string, unknown>).text ?? '')
        : '',
    )
    .join('');
}
