/**
 * Claude Code as a source, on the official `@anthropic-ai/claude-agent-sdk` (the real Claude Code
 * agent loop, run as the binary the SDK installs from its platform package).
 *
 * Each folder given with --claude-code is a project. A studio session in it starts one `query()`
 * with streaming input on its first message; later messages continue the same conversation.
 * `canUseTool` becomes the studio's exact-hash approval: the call is proposed and an approval
 * requested; Approve answers `allow` with the input unchanged (after an exact pre-image checkpoint
 * for a tool that can write), Deny answers `deny` with the person's reason, expiry answers `deny`
 * saying so. The SDK is configured explicitly: cwd, permission mode "default", no allowedTools,
 * no setting sources (none of the user's own Claude Code settings apply), and an environment
 * built here (PATH, HOME, the key), so credentials stay in the server.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  query,
  type CanUseTool,
  type PermissionResult,
  type Query,
  type SDKMessage,
  type SDKResultMessage,
  type SDKUserMessage,
} from '@anthropic-ai/claude-agent-sdk';
import { ErrorCode } from '../../../protocol/contract.ts';
import { StudioError } from '../../engine/StudioError.ts';
import type { EventDraft, QuestionValue } from '../../engine/eventDrafts.ts';
import type { Logger } from '../../logger.ts';
import {
  SILENT_LOGGER,
  appendSafely,
  approvalExpiresAt,
  approvalIdFor,
  budgetDimension,
  foreignEventDraft,
  logDraft,
  safeErrorMessage,
} from '../bridgeSupport.ts';
import { maskSecretText, redactForeignPayload, truncateText, truncateUtf8 } from '../redact.ts';
import type { QuestionAnswer, SessionInfo, Source, SourceHost, ToolDecision } from '../Source.ts';
import { ProposalDiffs, boundArgumentHash, claudeCodeFileChanges } from '../proposedFileChanges.ts';
import { ruleSuggestionsOf } from './permissionSuggestions.ts';
import { AskAgainWaiter, askAgainMessage } from './askAgain.ts';
import type { ToolCallRecord } from '../../store/records.ts';

export const CLAUDE_CODE_SOURCE_ID = 'claude-code';
const TOOL_VERSION = 'claude-code';
/** Tools that can change the folder: checkpointed (exact pre-image) before an allow. */
const READ_ONLY_TOOLS = new Set([
  'Read',
  'Glob',
  'Grep',
  'LS',
  'WebFetch',
  'WebSearch',
  'TodoWrite',
]);

/** Streamed text is appended once a chunk holds this many bytes, or this long after its first delta. */
const CHUNK_MAX_BYTES = 2_000;
const CHUNK_MAX_MS = 60;

/** The tool that starts a subagent ("Agent"; "Task" in older Claude Code). */
const SUBAGENT_TOOLS = new Set(['Agent', 'Task']);
/** How long a subagent's ask waits for the message loop to reach its tool_use (askedByOf). */
const SUBAGENT_ASK_WAIT_MS = 5_000;

export interface ClaudeCodeProject {
  projectId: string;
  name: string;
  root: string;
}

export interface ClaudeCodeHooks {
  /** Before answering `allow` to a tool that can write: an exact pre-image checkpoint. */
  beforeAllow?: (ctx: { sessionId: string; runId: string | null }) => Promise<void>;
  /** After each tool result. */
  afterToolResult?: (ctx: { sessionId: string; runId: string | null }) => Promise<void>;
}

export interface ClaudeCodeSourceOptions {
  projects: ClaudeCodeProject[];
  /** ANTHROPIC_API_KEY: given to the Claude Code process only, in its environment. */
  apiKey: string;
  /** Messages API base URL (ANTHROPIC_BASE_URL for the process; tests point it at a fake). */
  baseUrl?: string;
  /** HOME of the Claude Code process (default: the server's). */
  home?: string;
  /** Extra environment for the process (e.g. CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC). */
  env?: Record<string, string>;
  logger?: Logger;
  hooks?: ClaudeCodeHooks;
  approvalTtlMs?: number;
}

interface PendingAsk {
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
  argumentHash: string;
  runId: string | null;
  resolve: (result: PermissionResult) => void;
}

/** One AskUserQuestion call: a question card per question; allow once every one is answered. */
interface PendingQuestions {
  toolCallId: string;
  input: Record<string, unknown>;
  /** questionId -> the question's text (the key of `answers`) and its option labels. */
  questions: Map<string, { text: string; labels: string[]; value: QuestionValue }>;
  answers: Record<string, string>;
  runId: string | null;
  resolve: (result: PermissionResult) => void;
}

interface Conversation {
  sessionId: string;
  projectRoot: string;
  query: Query;
  /** Messages waiting for the SDK to pull them (streaming input). */
  inbox: SDKUserMessage[];
  wake: (() => void) | null;
  runId: string | null;
  claudeSessionId: string | null;
  pending: Map<string, PendingAsk>;
  /** Open AskUserQuestion calls by questionId (several questions share one call). */
  questions: Map<string, PendingQuestions>;
  /** Agent (Task) tool_use id -> the subagent it started ("general-purpose: Update the notes"). */
  subagents: Map<string, string>;
  /** tool_use id -> "subagent X" for calls made inside a subagent (from parent_tool_use_id). */
  askedBy: Map<string, string>;
  /** Asks from a subagent waiting for the message loop to reach their tool_use (askedByOf). */
  toolUseSeen: Map<string, () => void>;
  /**
   * A `result` that came while asks were still waiting (a background subagent asks after its
   * main turn ended): the run ends once the last of them is answered, so ending the turn does
   * not revoke an ask Claude Code is still waiting on.
   */
  resultAfterAsks: SDKResultMessage | null;
  /** Partial text (stream_event) per stream (main loop, or a subagent's parent_tool_use_id). */
  streams: Map<string, TextStream>;
  /** Streamed text not appended yet (deltas are coalesced: see CHUNK_MAX_BYTES, CHUNK_MAX_MS). */
  chunk: { draft: EventDraft & { type: 'ASSISTANT_CHUNK' }; timer: NodeJS.Timeout } | null;
  pump: Promise<void>;
  closed: boolean;
  /**
   * Calls the studio ended without running them (cancelled, revoked, expired: already CANCELLED
   * in the timeline); Claude Code's rejected tool_result for them is not recorded as a failure.
   */
  ended: Set<string>;
  /**
   * Set by cancelRun until the interrupted turn's own `result` came (bounded): a new message
   * waits for it, so that late `result` never ends the next run.
   */
  interrupted: { done: Promise<void>; end: () => void } | null;
  /** A studioAskAgain waiting for the next ask (see askAgain.ts). */
  askAgain: AskAgainWaiter | null;
}

/**
 * One model message streaming (`includePartialMessages`): its id, and the stream indexes of its
 * text blocks whose chunks were sent but whose final `assistant` message has not come yet (Claude
 * Code sends one `assistant` message per content block, after that block's deltas).
 */
interface TextStream {
  messageId: string;
  unfinished: number[];
}

export class ClaudeCodeSource implements Source {
  readonly sourceId = CLAUDE_CODE_SOURCE_ID;
  readonly checkpointsSupported = true;
  private readonly options: ClaudeCodeSourceOptions;
  private readonly conversations = new Map<string, Conversation>();
  private host: SourceHost | null = null;
  /** Write / Edit / MultiEdit: the diff shown and bound into the hash, once per call. */
  private readonly writeDiffs = new ProposalDiffs();
  private logger: Logger;

  constructor(options: ClaudeCodeSourceOptions) {
    if (!options.apiKey) throw new Error('Claude Code needs ANTHROPIC_API_KEY in the environment');
    this.options = options;
    this.logger = options.logger ?? SILENT_LOGGER;
    this.logger.addSecret(options.apiKey);
  }

  get projects(): readonly ClaudeCodeProject[] {
    return this.options.projects;
  }

  async start(host: SourceHost): Promise<void> {
    this.host = host;
    this.logger = this.options.logger ?? host.logger;
    this.logger.addSecret(this.options.apiKey);
    host.setStatus('LIVE', `${this.options.projects.length} project folder(s)`);
  }

  async stop(): Promise<void> {
    for (const c of this.conversations.values()) {
      await this.flushChunk(c);
      c.closed = true;
      c.askAgain?.fail('The studio stopped.');
      for (const ask of c.pending.values())
        ask.resolve({ behavior: 'deny', message: 'The studio stopped.' });
      for (const q of c.questions.values())
        q.resolve({ behavior: 'deny', message: 'The studio stopped.' });
      c.wake?.();
      c.query.close?.();
    }
    await Promise.allSettled([...this.conversations.values()].map((c) => c.pump));
    this.host?.setStatus('STOPPED', null);
  }

  async sendMessage(
    session: SessionInfo,
    content: string,
    options?: { author: string | null; runReason?: string },
  ): Promise<{ runId: string }> {
    const host = this.requireHost();
    await this.conversations.get(session.sessionId)?.interrupted?.done;
    let conversation = this.conversations.get(session.sessionId);
    if (!conversation || conversation.closed) conversation = await this.open(session);
    const newRun = conversation.runId === null;
    if (newRun) conversation.runId = `run-${randomUUID()}`;
    const runId = conversation.runId as string;
    await appendSafely(
      host,
      session.sessionId,
      [
        ...(newRun
          ? [{ type: 'RUN_STARTED' as const, runId, reason: options?.runReason ?? null }]
          : []),
        {
          type: 'USER_MESSAGE',
          runId,
          messageId: `message-${randomUUID()}`,
          role: 'USER',
          content: truncateUtf8(content, 60_000),
        },
      ],
      [this.options.apiKey],
    );
    conversation.inbox.push({
      type: 'user',
      message: { role: 'user', content },
      parent_tool_use_id: null,
      session_id: conversation.claudeSessionId ?? '',
    });
    conversation.wake?.();
    return { runId };
  }

  async cancelRun(session: SessionInfo): Promise<void> {
    const conversation = this.conversations.get(session.sessionId);
    if (!conversation) throw new StudioError(ErrorCode.RUN_NOT_ACTIVE, 'No Claude Code run here');
    conversation.askAgain?.fail(
      'The run was cancelled before Claude Code proposed the call again.',
    );
    for (const ask of conversation.pending.values()) conversation.ended.add(ask.toolCallId);
    for (const ask of conversation.pending.values())
      ask.resolve({
        behavior: 'deny',
        message: 'The run was cancelled in the studio.',
        interrupt: true,
      });
    conversation.pending.clear();
    for (const q of conversation.questions.values())
      q.resolve({
        behavior: 'deny',
        message: 'The run was cancelled in the studio.',
        interrupt: true,
      });
    await this.closeQuestions(conversation, 'EXPIRED');
    if (!conversation.interrupted) conversation.interrupted = awaitInterruptedResult(conversation);
    await conversation.query.interrupt();
    conversation.runId = null;
    conversation.resultAfterAsks = null;
  }

  /**
   * The pre-image checkpoint before a granted call that may write (`hooks.beforeAllow`), run by
   * the engine before `deliverDecision` and committed on its own (Source.prepareDecision): it is
   * durable before Claude Code hears `allow`.
   */
  async prepareDecision(decision: ToolDecision): Promise<void> {
    const { ask } = this.pendingAsk(decision);
    if (decision.approved && !READ_ONLY_TOOLS.has(ask.toolName) && this.options.hooks?.beforeAllow)
      await this.options.hooks.beforeAllow({ sessionId: decision.sessionId, runId: ask.runId });
  }

  /** The ask a decision answers, or the refusal the engine records. */
  private pendingAsk(decision: ToolDecision) {
    const conversation = this.conversations.get(decision.sessionId);
    const ask = conversation?.pending.get(decision.toolCallId);
    if (!conversation || !ask)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'Claude Code no longer waits for this call',
      );
    if (ask.argumentHash !== decision.argumentHash)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'The argument hash does not match the call',
      );
    return { conversation, ask };
  }

  async deliverDecision(decision: ToolDecision): Promise<void> {
    const { conversation, ask } = this.pendingAsk(decision);
    conversation.pending.delete(decision.toolCallId);
    ask.resolve(
      decision.approved
        ? { behavior: 'allow', updatedInput: ask.input }
        : { behavior: 'deny', message: decision.reason ?? 'Denied in the studio.' },
    );
  }

  /**
   * An answer to one of an AskUserQuestion call's cards: the chosen option's label (or the typed
   * text) becomes `answers[question]`; once every question of the call is answered, Claude Code
   * gets `allow` with the input plus `answers`, as the SDK documents for AskUserQuestion.
   */
  async deliverAnswer(answer: QuestionAnswer): Promise<void> {
    const conversation = this.conversations.get(answer.sessionId);
    const pending = conversation?.questions.get(answer.question.questionId);
    const question = pending?.questions.get(answer.question.questionId);
    if (!conversation || !pending || !question)
      throw new StudioError(
        ErrorCode.STUDIO_QUESTION_CLOSED,
        'Claude Code no longer waits for this answer',
      );
    const chosen = answer.choiceIndex !== null ? question.labels[answer.choiceIndex] : undefined;
    const text = chosen ?? answer.text?.trim();
    if (!text) throw new StudioError(ErrorCode.BAD_REQUEST, 'Choose an option or type an answer.');
    pending.answers[question.text] = text;
    conversation.questions.delete(answer.question.questionId);
    if ([...pending.questions.keys()].some((id) => conversation.questions.has(id))) return;
    pending.resolve({
      behavior: 'allow',
      updatedInput: { ...pending.input, answers: { ...pending.answers } },
    });
  }

  onDecisionRecorded(decision: ToolDecision): void {
    const conversation = this.conversations.get(decision.sessionId);
    if (!decision.approved) {
      // The decision is recorded: a deferred end of the turn no longer revokes it.
      if (conversation) queueMicrotask(() => this.endRunIfSettled(conversation));
      return;
    }
    const ask = { toolCallId: decision.toolCallId, toolName: decision.toolName };
    this.append(decision.sessionId, [
      this.toolDraft(ask, decision.runId, 'TOOL_DISPATCHED', 'DISPATCHED', decision.argumentHash),
    ])
      .then(() => {
        if (conversation) this.endRunIfSettled(conversation);
      })
      .catch((error: unknown) =>
        this.logger.warn('claude-code: could not record a dispatch', {
          error: safeErrorMessage(error, [this.options.apiKey]),
        }),
      );
  }

  onApprovalExpired(decision: Omit<ToolDecision, 'approved' | 'reason'>): void {
    const ask = this.denyEndedAsk(
      decision,
      'The approval expired in the studio before anyone decided; the call was not run.',
    );
    if (!ask) return;
    this.append(decision.sessionId, [
      {
        type: 'TOOL_FAILED',
        runId: ask.runId,
        toolCallId: ask.toolCallId,
        toolName: ask.toolName,
        toolVersion: TOOL_VERSION,
        status: 'CANCELLED',
        argumentHash: ask.argumentHash,
        executor: null,
        error: {
          code: ErrorCode.APPROVAL_EXPIRED,
          message: 'The approval expired before anyone decided; the call did not run.',
          retryable: false,
        },
        foreignId: `${ask.toolCallId}/expired`,
      },
    ]).catch((error: unknown) =>
      this.logger.warn('claude-code: could not record an expired call', {
        error: safeErrorMessage(error, [this.options.apiKey]),
      }),
    );
  }

  /** Revoked while Claude Code waits (a target file changed, a pause, the kill switch): deny. */
  onApprovalRevoked(decision: Omit<ToolDecision, 'approved' | 'reason'>): void {
    this.denyEndedAsk(
      decision,
      'The studio revoked this approval before anyone approved it; the call was not run.',
    );
  }

  /**
   * The studio ended an ask Claude Code still waits on (expired or revoked): the call is marked
   * ended (its later tool result does not overwrite CANCELLED), the run may end, and Claude Code
   * is answered deny with `message`. Returns the ask, or null if none was waiting.
   */
  private denyEndedAsk(
    decision: Omit<ToolDecision, 'approved' | 'reason'>,
    message: string,
  ): PendingAsk | null {
    const conversation = this.conversations.get(decision.sessionId);
    const ask = conversation?.pending.get(decision.toolCallId);
    if (!conversation || !ask) return null;
    conversation.pending.delete(decision.toolCallId);
    conversation.ended.add(decision.toolCallId);
    this.endRunIfSettled(conversation);
    ask.resolve({ behavior: 'deny', message });
    return ask;
  }

  /** An expired or revoked call can be proposed again: see askAgain.ts for how. */
  canAskAgain(session: SessionInfo, call: ToolCallRecord): boolean {
    return (
      this.host !== null &&
      call.argumentsJson !== null &&
      call.toolName !== 'AskUserQuestion' &&
      this.options.projects.some((p) => p.projectId === session.projectId)
    );
  }

  async askAgain(
    session: SessionInfo,
    call: ToolCallRecord,
    options: { author: string | null },
  ): Promise<string> {
    let conversation = this.conversations.get(session.sessionId);
    if (!conversation || conversation.closed) conversation = await this.open(session);
    if (conversation.askAgain)
      throw new StudioError(ErrorCode.RUN_ALREADY_ACTIVE, 'Claude Code is already asked again.');
    const c = conversation;
    const waiter = new AskAgainWaiter(call.toolName, call.argumentsJson ?? 'null', () => {
      if (c.askAgain === waiter) c.askAgain = null;
    });
    c.askAgain = waiter;
    const status = (await this.requireHost().findApproval?.(session.sessionId, call.toolCallId))
      ?.status;
    await this.sendMessage(session, askAgainMessage(call, status ?? null), {
      author: options.author,
      runReason: options.author ? `Asked again by ${options.author}` : 'Asked again',
    });
    return waiter.promise;
  }

  private async open(session: SessionInfo): Promise<Conversation> {
    const project = this.options.projects.find((p) => p.projectId === session.projectId);
    if (!project)
      throw new StudioError(
        ErrorCode.BAD_REQUEST,
        'This session has no Claude Code project folder',
      );
    const conversation: Conversation = {
      sessionId: session.sessionId,
      projectRoot: project.root,
      inbox: [],
      wake: null,
      runId: null,
      claudeSessionId: null,
      pending: new Map(),
      questions: new Map(),
      subagents: new Map(),
      askedBy: new Map(),
      toolUseSeen: new Map(),
      resultAfterAsks: null,
      streams: new Map(),
      chunk: null,
      closed: false,
      ended: new Set(),
      interrupted: null,
      askAgain: null,
      query: null as unknown as Query,
      pump: Promise.resolve(),
    };
    const prompt = async function* (): AsyncGenerator<SDKUserMessage> {
      while (!conversation.closed) {
        const next = conversation.inbox.shift();
        if (next) {
          yield next;
          continue;
        }
        await new Promise<void>((resolve) => (conversation.wake = resolve));
        conversation.wake = null;
      }
    };
    const canUseTool: CanUseTool = (toolName, input, options) =>
      this.ask(conversation, toolName, input, options);
    // The Claude Code session id is derived from the studio session's: the first conversation
    // starts it, a later one (after a studio restart) resumes it once its init was recorded.
    const claudeSessionId = claudeCodeSessionIdFor(session.sessionId);
    const resume = await this.requireHost().hasForeignId(
      session.sessionId,
      claudeSessionMarker(claudeSessionId),
    );
    conversation.query = query({
      prompt: prompt(),
      options: {
        cwd: project.root,
        permissionMode: 'default',
        allowedTools: [],
        settingSources: [],
        includePartialMessages: true,
        ...(resume ? { resume: claudeSessionId } : { sessionId: claudeSessionId }),
        env: this.env(),
        canUseTool,
      },
    });
    conversation.pump = this.pump(conversation);
    this.conversations.set(session.sessionId, conversation);
    return conversation;
  }

  private env(): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.options.home ?? process.env.HOME ?? '/tmp',
      ANTHROPIC_API_KEY: this.options.apiKey,
      ...(this.options.baseUrl ? { ANTHROPIC_BASE_URL: this.options.baseUrl } : {}),
      ...this.options.env,
    };
  }

  /**
   * Who asks: "subagent <its task>" for a call made inside a subagent, from the assistant
   * message that carried its tool_use (parent_tool_use_id). Claude Code sends that message
   * before the permission request, but the message loop may still be behind it (its appends
   * await the store), so a subagent's ask waits until the loop reaches its tool_use, or at most
   * SUBAGENT_ASK_WAIT_MS (then the agent id alone names it).
   */
  private async askedByOf(
    conversation: Conversation,
    toolCallId: string,
    options: Parameters<CanUseTool>[2],
  ): Promise<string | null> {
    const known = conversation.askedBy.get(toolCallId);
    if (known || !options.agentID) return known ?? null;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        options.signal.removeEventListener('abort', done);
        if (conversation.toolUseSeen.get(toolCallId) === done)
          conversation.toolUseSeen.delete(toolCallId);
        resolve();
      };
      const timer = setTimeout(done, SUBAGENT_ASK_WAIT_MS);
      options.signal.addEventListener('abort', done, { once: true });
      conversation.toolUseSeen.set(toolCallId, done);
    });
    return conversation.askedBy.get(toolCallId) ?? `subagent ${options.agentID}`;
  }

  private async ask(
    conversation: Conversation,
    toolName: string,
    input: Record<string, unknown>,
    options: Parameters<CanUseTool>[2],
  ): Promise<PermissionResult> {
    const toolCallId = options.toolUseID ?? `tool-${randomUUID()}`;
    if (toolName === 'AskUserQuestion' && Array.isArray(input.questions))
      return this.askQuestions(conversation, toolCallId, input, options);
    const diffed = this.writeDiff(conversation, toolCallId, toolName, input);
    const argumentHash = boundArgumentHash(toolName, input, diffed?.targets);
    const runId = conversation.runId;
    const summary = summarize(toolName, input);
    const askedBy = await this.askedByOf(conversation, toolCallId, options);
    const suggested = ruleSuggestionsOf(
      conversation.projectRoot,
      toolName,
      input,
      options.suggestions,
    );
    const reasons = [
      ...(askedBy ? [`Asked by ${askedBy}`] : []),
      ...(options.decisionReason ? [`Claude Code: ${options.decisionReason}`] : []),
      ...(suggested.length > 0
        ? [`Claude Code suggests: ${suggested.map((r) => r.label).join('; ')}`]
        : options.suggestions?.length
          ? [`Suggested rules: ${truncateText(JSON.stringify(options.suggestions), 500)}`]
          : []),
    ];
    const argumentsJson = redactForeignPayload(input, {
      secrets: [this.options.apiKey],
    }).payloadJson;
    let resolve!: (result: PermissionResult) => void;
    const answer = new Promise<PermissionResult>((r) => (resolve = r));
    {
      conversation.pending.set(toolCallId, {
        toolCallId,
        toolName,
        input,
        argumentHash,
        runId,
        resolve,
      });
      options.signal.addEventListener('abort', () => {
        if (conversation.pending.delete(toolCallId)) {
          resolve({ behavior: 'deny', message: 'The request was aborted.' });
          this.endRunIfSettled(conversation);
        }
      });
      await this.append(conversation.sessionId, [
        {
          ...this.toolDraft(
            { toolCallId, toolName },
            runId,
            'TOOL_PROPOSED',
            'WAITING_FOR_APPROVAL',
            argumentHash,
          ),
          safeSummary: summary,
          argumentsJson,
          askedBy,
          ...(diffed ? { studioDiff: diffed.diff } : {}),
          foreignId: `${toolCallId}/proposed`,
        },
        {
          type: 'APPROVAL_REQUESTED',
          runId,
          approvalId: approvalIdFor(toolCallId, 1),
          toolCallId,
          argumentHash,
          status: 'PENDING',
          safeSummary: summary,
          reasons: reasons.length > 0 ? reasons : ['Claude Code asks before this tool runs'],
          expiresAt: approvalExpiresAt(this.requireHost().now(), this.options.approvalTtlMs),
          studioRuleSuggestions: suggested,
          foreignId: `${toolCallId}/approval`,
        },
      ]);
      conversation.askAgain?.asked(toolName, argumentsJson, approvalIdFor(toolCallId, 1));
    }
    return answer;
  }

  /** AskUserQuestion: one question card per question (single choice, or free text for multi-select). */
  private async askQuestions(
    conversation: Conversation,
    toolCallId: string,
    input: Record<string, unknown>,
    options: Parameters<CanUseTool>[2],
  ): Promise<PermissionResult> {
    const runId = conversation.runId;
    const askedBy = (await this.askedByOf(conversation, toolCallId, options)) ?? 'Claude Code';
    const askedAt = new Date(this.requireHost().now()).toISOString();
    const secrets = [this.options.apiKey];
    let resolve!: (result: PermissionResult) => void;
    const answer = new Promise<PermissionResult>((r) => (resolve = r));
    {
      const pending: PendingQuestions = {
        toolCallId,
        input,
        questions: new Map(),
        answers: {},
        runId,
        resolve,
      };
      const drafts: EventDraft[] = [];
      (input.questions as unknown[]).forEach((raw, index) => {
        const q = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
        const text = typeof q.question === 'string' ? q.question : `Question ${index + 1}`;
        const opts = Array.isArray(q.options) ? (q.options as Record<string, unknown>[]) : [];
        const labels = opts.map((o) => (typeof o?.label === 'string' ? o.label : String(o)));
        const multi = q.multiSelect === true;
        const described = opts
          .map(
            (o, i) =>
              `- ${labels[i]}${typeof o?.description === 'string' ? `: ${o.description}` : ''}`,
          )
          .join('\n');
        const header = typeof q.header === 'string' ? `[${q.header}] ` : '';
        const value: QuestionValue = {
          questionId: `${toolCallId}/q${index}`,
          sessionId: conversation.sessionId,
          kind: multi ? 'FREE_TEXT' : 'MULTIPLE_CHOICE',
          prompt: truncateUtf8(
            maskSecretText(
              `${header}${text}${described ? `\n\n${described}` : ''}${multi ? '\n\n(Several allowed: separate them with commas.)' : ''}`,
              secrets,
            ),
            60_000,
          ),
          choices: multi ? [] : labels.map((l) => truncateText(l, 200)),
          initialText: null,
          status: 'OPEN',
          answerText: null,
          answerChoiceIndex: null,
          answerApproved: null,
          askedBy,
          askedAt,
          answeredAt: null,
        };
        pending.questions.set(value.questionId, { text, labels, value });
        conversation.questions.set(value.questionId, pending);
        drafts.push({
          type: 'STUDIO_QUESTION_ASKED',
          runId,
          question: value,
          foreignId: `${value.questionId}/asked`,
        });
      });
      options.signal.addEventListener('abort', () => {
        if (![...pending.questions.keys()].some((id) => conversation.questions.has(id))) return;
        for (const id of pending.questions.keys()) conversation.questions.delete(id);
        resolve({ behavior: 'deny', message: 'The request was aborted.' });
      });
      await this.append(conversation.sessionId, drafts);
    }
    return answer;
  }

  /** Marks every open question card of the conversation closed (cancel). */
  private async closeQuestions(conversation: Conversation, status: 'EXPIRED'): Promise<void> {
    const drafts: EventDraft[] = [];
    const now = new Date(this.requireHost().now()).toISOString();
    for (const [id, pending] of conversation.questions) {
      const q = pending.questions.get(id);
      if (!q) continue;
      drafts.push({
        type: 'STUDIO_QUESTION_ANSWERED',
        runId: pending.runId,
        question: { ...q.value, status, answeredAt: now },
        foreignId: `${id}/closed`,
      });
    }
    conversation.questions.clear();
    await this.append(conversation.sessionId, drafts);
  }

  private async pump(conversation: Conversation): Promise<void> {
    try {
      for await (const message of conversation.query) {
        const afterTool = this.map(conversation, message);
        if ((await afterTool) && this.options.hooks?.afterToolResult) {
          try {
            await this.options.hooks.afterToolResult({
              sessionId: conversation.sessionId,
              runId: conversation.runId,
            });
          } catch (error) {
            this.logger.warn('claude-code: checkpoint after a tool result failed', {
              error: safeErrorMessage(error, [this.options.apiKey]),
            });
          }
        }
      }
    } catch (error) {
      const message = safeErrorMessage(error, [this.options.apiKey]);
      this.logger.warn('claude-code: the Claude Code process ended', { error: message });
      if (conversation.runId)
        await this.append(conversation.sessionId, [
          {
            type: 'RUN_FAILED',
            runId: conversation.runId,
            reason: message,
            code: 'claude_code_error',
          },
        ]);
      conversation.runId = null;
    } finally {
      conversation.closed = true;
      conversation.interrupted?.end();
      conversation.askAgain?.fail('Claude Code ended before it proposed the call again.');
    }
  }

  /** Maps one SDK message; returns true when it carried a tool result (checkpoint after it). */
  private async map(conversation: Conversation, message: SDKMessage): Promise<boolean> {
    // Streamed text comes before whatever follows it (its final message above all).
    if (message.type !== 'stream_event') await this.flushChunk(conversation);
    const sessionId = conversation.sessionId;
    const runId = conversation.runId;
    const secrets = [this.options.apiKey];
    switch (message.type) {
      case 'system':
        if (message.subtype === 'init') {
          conversation.claudeSessionId = message.session_id;
          // The first init of a Claude Code session is its marker (resume after a restart).
          const marker = claudeSessionMarker(message.session_id);
          const resumed = await this.requireHost().hasForeignId(sessionId, marker);
          await this.append(sessionId, [
            logDraft(
              {
                runId,
                level: 'info',
                origin: 'claude-code',
                message: `Claude Code ${message.claude_code_version}: model ${message.model}, permission mode ${message.permissionMode}, tools ${message.tools.join(', ')}; session ${message.session_id}${resumed ? ' (resumed)' : ''}`,
              },
              secrets,
              resumed ? message.uuid : marker,
            ),
          ]);
          return false;
        }
        break;
      case 'assistant': {
        const drafts: EventDraft[] = [];
        const parent = message.parent_tool_use_id;
        const askedBy = parent ? `subagent ${conversation.subagents.get(parent) ?? parent}` : null;
        message.message.content.forEach((block, index) => {
          if (block.type === 'text' && block.text.trim()) {
            drafts.push({
              type: 'ASSISTANT_MESSAGE',
              runId,
              messageId: finalTextMessageId(conversation, message, index),
              role: 'ASSISTANT',
              content: truncateUtf8(block.text, 60_000),
              foreignId: `${message.uuid}/${index}`,
            });
          } else if (block.type === 'tool_use') {
            const input = (block.input ?? {}) as Record<string, unknown>;
            if (SUBAGENT_TOOLS.has(block.name))
              conversation.subagents.set(block.id, subagentLabel(input));
            if (askedBy) conversation.askedBy.set(block.id, askedBy);
            conversation.toolUseSeen.get(block.id)?.();
            const diffed = this.writeDiff(conversation, block.id, block.name, input);
            drafts.push({
              ...this.toolDraft(
                { toolCallId: block.id, toolName: block.name },
                runId,
                'TOOL_PROPOSED',
                'PROPOSED',
                boundArgumentHash(block.name, input, diffed?.targets),
              ),
              safeSummary: summarize(block.name, input),
              argumentsJson: redactForeignPayload(input, { secrets }).payloadJson,
              askedBy,
              ...(diffed ? { studioDiff: diffed.diff } : {}),
              foreignId: `${block.id}/proposed`,
            });
          } else if (block.type === 'thinking') {
            drafts.push(
              logDraft(
                { runId, level: 'debug', origin: 'thinking', message: block.thinking },
                secrets,
                `${message.uuid}/${index}`,
              ),
            );
          }
        });
        await this.append(sessionId, drafts);
        return false;
      }
      case 'user': {
        const content = message.message.content;
        if (!Array.isArray(content)) return false;
        const drafts: EventDraft[] = [];
        for (const block of content) {
          if (typeof block !== 'object' || block === null || block.type !== 'tool_result') continue;
          if (conversation.ended.delete(block.tool_use_id)) continue;
          const failed = block.is_error === true;
          drafts.push({
            ...this.toolDraft(
              { toolCallId: block.tool_use_id, toolName: 'tool' },
              runId,
              failed ? 'TOOL_FAILED' : 'TOOL_SUCCEEDED',
              failed ? 'FAILED' : 'SUCCEEDED',
              null,
            ),
            resultJson: redactForeignPayload(block.content ?? null, { secrets }).payloadJson,
            foreignId: `${block.tool_use_id}/result`,
          });
        }
        await this.append(sessionId, drafts);
        return drafts.length > 0;
      }
      case 'stream_event':
        for (const chunk of streamedChunks(conversation, message, runId))
          await this.addChunk(conversation, chunk);
        return false;
      case 'result': {
        if (conversation.interrupted) {
          conversation.interrupted.end();
          return false;
        }
        if (conversation.pending.size > 0) {
          conversation.resultAfterAsks = message;
          return false;
        }
        await this.endRun(conversation, message);
        return false;
      }
      default:
        break;
    }
    await this.append(sessionId, [
      foreignEventDraft(
        { source: CLAUDE_CODE_SOURCE_ID, runId, foreignType: message.type, payload: message },
        secrets,
        'uuid' in message && typeof message.uuid === 'string' ? message.uuid : undefined,
      ),
    ]);
    return false;
  }

  /**
   * Coalesces streamed text: deltas of one message join one ASSISTANT_CHUNK until it holds
   * CHUNK_MAX_BYTES or CHUNK_MAX_MS passed since its first delta (a model streams a few tokens per
   * delta; one event each would be dozens of commits a second per session).
   */
  private async addChunk(
    conversation: Conversation,
    chunk: EventDraft & { type: 'ASSISTANT_CHUNK' },
  ): Promise<void> {
    const pending = conversation.chunk;
    if (pending && pending.draft.messageId === chunk.messageId) {
      pending.draft = { ...pending.draft, content: pending.draft.content + chunk.content };
    } else {
      await this.flushChunk(conversation);
      conversation.chunk = {
        draft: chunk,
        timer: setTimeout(() => {
          this.flushChunk(conversation).catch((error: unknown) =>
            this.logger.warn('claude-code: could not record streamed text', {
              error: safeErrorMessage(error, [this.options.apiKey]),
            }),
          );
        }, CHUNK_MAX_MS),
      };
    }
    if (Buffer.byteLength(conversation.chunk!.draft.content, 'utf8') >= CHUNK_MAX_BYTES)
      await this.flushChunk(conversation);
  }

  private async flushChunk(conversation: Conversation): Promise<void> {
    const pending = conversation.chunk;
    if (!pending) return;
    conversation.chunk = null;
    clearTimeout(pending.timer);
    await this.append(conversation.sessionId, [
      { ...pending.draft, content: truncateUtf8(pending.draft.content, 60_000) },
    ]);
  }

  /** Once no ask waits any more, ends the run a deferred `result` ended. */
  private endRunIfSettled(conversation: Conversation): void {
    const result = conversation.resultAfterAsks;
    if (!result || conversation.pending.size > 0) return;
    conversation.resultAfterAsks = null;
    this.endRun(conversation, result).catch((error: unknown) =>
      this.logger.warn('claude-code: could not end a run', {
        error: safeErrorMessage(error, [this.options.apiKey]),
      }),
    );
  }

  /** A turn's `result`: its budget gauges, then RUN_SUCCEEDED or RUN_FAILED. */
  private async endRun(conversation: Conversation, message: SDKResultMessage): Promise<void> {
    const ended = conversation.runId;
    conversation.runId = null;
    if (!ended) return;
    conversation.askAgain?.fail('Claude Code ended its turn without proposing the call again.');
    const usage = message.usage;
    await this.append(conversation.sessionId, [
      {
        type: 'BUDGET_UPDATED',
        runId: ended,
        budget: {
          dimensions: [
            budgetDimension('INPUT_TOKENS', usage.input_tokens ?? 0, null, 'tokens'),
            budgetDimension('OUTPUT_TOKENS', usage.output_tokens ?? 0, null, 'tokens'),
            budgetDimension(
              'PROVIDER_COST',
              (message.total_cost_usd ?? 0) * 1_000_000,
              null,
              'micro-USD',
            ),
          ],
          resetAt: null,
          platformFunded: false,
          payer: 'USER',
        },
      },
      message.subtype === 'success' && !message.is_error
        ? { type: 'RUN_SUCCEEDED', runId: ended, foreignId: `${message.uuid}/run` }
        : {
            type: 'RUN_FAILED',
            runId: ended,
            reason: message.subtype,
            code: message.subtype,
            foreignId: `${message.uuid}/run`,
          },
    ]);
  }

  private toolDraft(
    tool: { toolCallId: string; toolName: string },
    runId: string | null,
    type: 'TOOL_PROPOSED' | 'TOOL_DISPATCHED' | 'TOOL_SUCCEEDED' | 'TOOL_FAILED',
    status: 'PROPOSED' | 'WAITING_FOR_APPROVAL' | 'DISPATCHED' | 'SUCCEEDED' | 'FAILED',
    argumentHash: string | null,
  ): EventDraft & { type: typeof type } {
    return {
      type,
      runId,
      toolCallId: tool.toolCallId,
      toolName: tool.toolName,
      toolVersion: TOOL_VERSION,
      status,
      argumentHash,
      executor: null,
    } as EventDraft & { type: typeof type };
  }

  private async append(sessionId: string, drafts: EventDraft[]): Promise<void> {
    if (drafts.length === 0) return;
    await appendSafely(this.requireHost(), sessionId, drafts, [this.options.apiKey]);
  }

  private writeDiff(
    conversation: Conversation,
    toolCallId: string,
    toolName: string,
    input: Record<string, unknown>,
  ) {
    return this.writeDiffs.of(this.host, conversation.sessionId, toolCallId, () =>
      claudeCodeFileChanges(conversation.projectRoot, toolName, input),
    );
  }

  private requireHost(): SourceHost {
    if (!this.host) throw new Error('ClaudeCodeSource used before start()');
    return this.host;
  }
}

/**
 * The Claude Code session id of a studio session: a UUID (as the SDK's `sessionId` requires)
 * from a digest of the studio session id, so a restarted studio finds it again.
 */
export function claudeCodeSessionIdFor(studioSessionId: string): string {
  const hex = createHash('sha256').update(`claude-code-session:${studioSessionId}`).digest('hex');
  const variant = ((parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Resolves once the interrupted turn's `result` came (`end`), or after 10 s without it. */
function awaitInterruptedResult(conversation: Conversation): Conversation['interrupted'] {
  let end = () => {};
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(() => end(), 10_000);
    end = () => {
      clearTimeout(timer);
      conversation.interrupted = null;
      resolve();
    };
  });
  return { done, end: () => end() };
}

/** The foreignId of the init log that marks a Claude Code session as started. */
function claudeSessionMarker(claudeSessionId: string): string {
  return `claude-session/${claudeSessionId}`;
}

type SDKPartialAssistantMessage = Extract<SDKMessage, { type: 'stream_event' }>;
type SDKAssistantMessage = Extract<SDKMessage, { type: 'assistant' }>;

/**
 * A stream event: each `text_delta` becomes an ASSISTANT_CHUNK of the text block's message
 * (`<model message id>-<block index>`), so the timeline grows one bubble; the other stream
 * events (tool input JSON, thinking, message_delta) add nothing, their whole blocks follow.
 */
function streamedChunks(
  conversation: Conversation,
  message: SDKPartialAssistantMessage,
  runId: string | null,
): (EventDraft & { type: 'ASSISTANT_CHUNK' })[] {
  const key = message.parent_tool_use_id ?? '';
  const event = message.event;
  if (event.type === 'message_start') {
    conversation.streams.set(key, { messageId: event.message.id, unfinished: [] });
    return [];
  }
  const stream = conversation.streams.get(key);
  if (!stream) return [];
  if (event.type === 'content_block_start' && event.content_block.type === 'text') {
    stream.unfinished.push(event.index);
    return [];
  }
  if (event.type !== 'content_block_delta' || event.delta.type !== 'text_delta') return [];
  if (!event.delta.text) return [];
  return [
    {
      type: 'ASSISTANT_CHUNK',
      runId,
      messageId: `${stream.messageId}-${event.index}`,
      role: 'ASSISTANT',
      content: truncateUtf8(event.delta.text, 60_000),
      foreignId: message.uuid,
    },
  ];
}

/**
 * The messageId of a final text block: the one its chunks streamed under (the oldest unfinished
 * text block of that model message), so the final replaces the chunks in the same bubble; without
 * streamed chunks, `<model message id>-<index>`.
 */
function finalTextMessageId(
  conversation: Conversation,
  message: SDKAssistantMessage,
  index: number,
): string {
  const stream = conversation.streams.get(message.parent_tool_use_id ?? '');
  if (stream && stream.messageId === message.message.id) {
    const streamed = stream.unfinished.shift();
    if (streamed !== undefined) return `${stream.messageId}-${streamed}`;
  }
  return `${message.message.id}-${index}`;
}

function summarize(toolName: string, input: Record<string, unknown>): string {
  const target =
    typeof input.file_path === 'string'
      ? input.file_path
      : typeof input.command === 'string'
        ? input.command
        : typeof input.pattern === 'string'
          ? input.pattern
          : '';
  return truncateText(target ? `${toolName} ${target}` : toolName, 200);
}

/** How a subagent is named on the cards it asks from: its type and its task's description. */
function subagentLabel(input: Record<string, unknown>): string {
  const type = typeof input.subagent_type === 'string' ? input.subagent_type : 'general-purpose';
  const description = typeof input.description === 'string' ? input.description : '';
  return truncateText(description ? `${type}: ${description}` : type, 120);
}
