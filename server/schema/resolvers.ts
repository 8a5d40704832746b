/**
 * Resolvers for schema.graphql. They validate arguments, call the engine and shape results with
 * views.ts. Every mutation goes through `engine.idempotent`. Expected failures are StudioErrors
 * and leave as GraphQL errors with extensions.code / retryable / remediation.
 */
import type { GraphQLResolveInfo } from 'graphql';
import type { Engine } from '../engine/Engine.ts';
import { leaseEndedDraft } from '../engine/recordDrafts.ts';
import { StudioError } from '../engine/StudioError.ts';
import { WorkspaceError } from '../workspace/WorkspaceError.ts';
import { BigIntScalar, DateTimeScalar } from './scalars.ts';
import {
  approvalView,
  checkpointView,
  readEventViews,
  leaseView,
  projectView,
  runView,
  sessionView,
  toolCallView,
} from './views.ts';
import type { EventView, SessionView } from './views.ts';
import { eventStream, sessionUpdates } from './subscriptions.ts';
import { ExecutionReads, namedToolCallIds, selectsToolCall } from './executionReads.ts';
import { searchEvents, type SearchEventsArgs } from './searchResolvers.ts';
import { checkpointFileResolvers } from './checkpointFiles.ts';
import { historyQueryResolvers } from './historyResolvers.ts';
import { checkpointInsightResolvers } from './checkpointInsights.ts';
import { recentRestoreQueryResolvers } from './recentRestores.ts';
import { toolsForMode } from '../engine/toolRegistry.ts';
import { chargeRows, checkArguments, checkEventPage, checkSetModeProject } from './inputLimits.ts';
import { type CreateRuleInput, type UpdateRuleInput } from '../engine/approvalRules.ts';
import { policyView } from '../engine/agentPolicy.ts';
import { ruleView } from './ruleViews.ts';
import {
  CHECKPOINTS_PAGE_DEFAULT,
  CHECKPOINTS_PAGE_MAX,
  ErrorCode,
  EVENT_PAGE_SIZE,
  HISTORY_PAGE_DEFAULT,
  HISTORY_PAGE_MAX,
  SESSIONS_PAGE_DEFAULT,
  SESSIONS_PAGE_MAX,
} from '../../protocol/contract.ts';
import type { AgentMode } from '../../protocol/events.ts';

export interface StudioContext {
  engine: Engine;
  /** The reviewer behind the request's token (`owner` for STUDIO_TOKEN); null in tests that build a context by hand. */
  reviewer?: string | null;
}

type Args = Record<string, unknown>;
type Input = { idempotencyKey: string } & Record<string, unknown>;
type Resolver = (
  parent: unknown,
  args: Args,
  ctx: StudioContext,
  info: GraphQLResolveInfo,
) => unknown;

/** Maps expected failures to GraphQL errors with the contract's extensions. */
export function toGraphQLError(error: unknown): unknown {
  if (error instanceof StudioError) return error.toGraphQLError();
  if (error instanceof WorkspaceError) {
    const code =
      error.code === 'NOT_FOUND'
        ? ErrorCode.CHECKPOINT_NOT_FOUND
        : error.code === 'HASH_MISMATCH'
          ? ErrorCode.REVISION_CONFLICT
          : ErrorCode.TOOL_INPUT_INVALID;
    return new StudioError(code, error.message, { field: error.path }).toGraphQLError();
  }
  return error;
}

function guard(fn: Resolver, checkArgs = false): Resolver {
  return (parent, args, ctx, info) => {
    try {
      if (checkArgs) checkArguments(info.fieldName, args);
      const out = fn(parent, args, ctx, info);
      if (out instanceof Promise)
        return out.catch((error: unknown) => {
          throw toGraphQLError(error);
        });
      return out;
    } catch (error) {
      throw toGraphQLError(error);
    }
  };
}

function pageSize(value: unknown, fallback: number, max: number, field = 'first'): number {
  if (value === null || value === undefined) return fallback;
  const n = value as number;
  if (!Number.isInteger(n) || n < 1)
    throw new StudioError(ErrorCode.BAD_REQUEST, `${field} must be at least 1.`, { field });
  return Math.min(n, max);
}

function orderCursor(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = Number(value);
  if (typeof value !== 'string' || !/^[0-9]+$/.test(value) || !Number.isSafeInteger(n))
    throw new StudioError(ErrorCode.BAD_REQUEST, 'after is not a cursor this server gave out.', {
      field: 'after',
    });
  return n;
}

async function session(engine: Engine, sessionId: string): Promise<SessionView> {
  return sessionView(await engine.requireSession(sessionId));
}

async function pendingOf(engine: Engine, session: SessionView) {
  const now = engine.now();
  const pending =
    session._links?.pendingApprovals ??
    (await engine.reads.listPendingApprovals(session.sessionId));
  return pending.filter((a) => Date.parse(a.expiresAt) > now);
}

function terminal<T>(payload: T): T {
  if (payload instanceof StudioError) throw payload.toGraphQLError();
  return payload;
}

const Query: Record<string, Resolver> = {
  crowdyStudioAgentSession: (_p, a, { engine }) => session(engine, a.sessionId as string),
  crowdyStudioAgentSessions: async (_p, a, ctx) => {
    const { engine } = ctx;
    engine.requireApp(a.appId as string);
    const first = pageSize(a.first, SESSIONS_PAGE_DEFAULT, SESSIONS_PAGE_MAX);
    chargeRows(ctx, first, 'first');
    const rows = await engine.reads.listSessions(
      a.appId as string,
      orderCursor(a.after),
      first + 1,
    );
    const page = rows.slice(0, first);
    const edges = page.map((r) => ({ cursor: String(r.order), node: sessionView(r.record) }));
    const endCursor = edges.length ? edges[edges.length - 1]!.cursor : null;
    const hasNextPage = rows.length > first;
    return {
      edges,
      nodes: edges.map((e) => e.node),
      pageInfo: { hasNextPage, endCursor },
      endCursor,
      hasNextPage,
    };
  },
  crowdyStudioAgentHistory: async (_p, a, ctx) => {
    const { engine } = ctx;
    const s = await engine.requireSession(a.sessionId as string);
    const afterSeq = (a.afterSeq as string | null) ?? '0';
    if (BigInt(afterSeq) > BigInt(s.lastEventSeq))
      throw new StudioError(
        ErrorCode.EVENT_CURSOR_INVALID,
        `afterSeq ${afterSeq} is past the committed history (last seq ${s.lastEventSeq}).`,
        { field: 'afterSeq' },
      );
    const first = pageSize(a.first, HISTORY_PAGE_DEFAULT, HISTORY_PAGE_MAX);
    chargeRows(ctx, first, 'first');
    const read = await readEventViews(engine.reads, s.sessionId, BigInt(afterSeq), first + 1);
    const events = read.slice(0, first);
    const hasMore = read.length > first;
    const edges = events.map((node) => ({ cursor: node.seq, node }));
    return {
      edges,
      events,
      hasMore,
      pageInfo: {
        hasNextPage: hasMore,
        endCursor: edges.length ? edges[edges.length - 1]!.cursor : null,
      },
    };
  },
  crowdyStudioAgentToolDescriptors: async (_p, a, { engine }) => {
    const s = await engine.requireSession(a.sessionId as string);
    return { registryDigest: engine.registryDigestFor(s.mode), tools: toolsForMode(s.mode) };
  },
  crowdyStudioAgentBudget: async (_p, a, { engine }) => {
    const s = await engine.requireSession(a.sessionId as string);
    return (
      (await engine.reads.getBudget(s.sessionId))?.budget ?? {
        dimensions: [],
        resetAt: null,
        platformFunded: true,
        payer: 'PLATFORM',
      }
    );
  },
  studioCheckpoints: async (_p, a, ctx) => {
    const { engine } = ctx;
    const s = await engine.requireSession(a.sessionId as string);
    const support = await engine.checkpointsSupported(s.sessionId);
    const first = pageSize(a.first, CHECKPOINTS_PAGE_DEFAULT, CHECKPOINTS_PAGE_MAX);
    const rows = support.supported
      ? await engine.reads.listCheckpoints(s.sessionId, orderCursor(a.after), first + 1)
      : [];
    chargeRows(
      ctx,
      rows.reduce((n, r) => n + 1 + r.record.files.length, 0),
      'first',
    );
    const edges = rows
      .slice(0, first)
      .map((r) => ({ cursor: String(r.order), node: checkpointView(r.record) }));
    return {
      edges,
      pageInfo: {
        hasNextPage: rows.length > first,
        endCursor: edges.length ? edges[edges.length - 1]!.cursor : null,
      },
      supported: support.supported,
      unsupportedReason: support.reason,
    };
  },
  // One folder scan per request, however many fields (aliases) ask for the same project.
  studioProject: (_p, a, ctx, info) =>
    oncePerExecution(ctx, info, `project:${a.sessionId as string}`, async () => {
      const p = await ctx.engine.projectOfSession(a.sessionId as string);
      return p ? projectView(p) : null;
    }),
  studioCheckpoint: async (_p, a, { engine }) => {
    const c = await engine.reads.getCheckpoint(a.checkpointId as string);
    return c ? checkpointView(c) : null;
  },
  studioEventPage: async (_p, a, ctx) => {
    const { engine } = ctx;
    const s = await engine.requireSession(a.sessionId as string);
    const size = pageSize(a.size, EVENT_PAGE_SIZE, 1000, 'size');
    const page = BigInt(a.page as string);
    checkEventPage(page, size);
    chargeRows(ctx, size, 'size');
    const from = page * BigInt(size) + 1n;
    const through = from + BigInt(size) - 1n;
    const events = await readEventViews(engine.reads, s.sessionId, from - 1n, size);
    return {
      sessionId: s.sessionId,
      page: page.toString(),
      size,
      fromSeq: from.toString(),
      throughSeq: through.toString(),
      events,
      complete: BigInt(s.lastEventSeq) >= through,
    };
  },
  studioSearchEvents: (_p, a, { engine }) => searchEvents(engine, a as unknown as SearchEventsArgs),
  // The history scrubber (issue 11): its own module.
  ...(historyQueryResolvers as unknown as Record<string, Resolver>),
  ...(recentRestoreQueryResolvers as unknown as Record<string, Resolver>),
  studioPendingApprovals: async (_p, a, ctx) => {
    const { engine } = ctx;
    engine.requireApp(a.appId as string);
    const now = engine.now();
    const pending = (await engine.reads.listPendingApprovals(null)).filter(
      (ap) => Date.parse(ap.expiresAt) > now,
    );
    chargeRows(ctx, pending.length, 'appId');
    return engine.snapshot(async (reads) => {
      const out = [];
      for (const ap of pending) {
        const s = await reads.getSession(ap.sessionId);
        const call = await reads.getToolCall(ap.toolCallId);
        if (s && call)
          out.push({
            session: sessionView(s),
            toolCall: toolCallView(call),
            approval: approvalView(ap),
          });
      }
      return out;
    });
  },
  studioSources: (_p, _a, { engine }) => engine.sourceList(),
  studioProjects: async (_p, _a, { engine }) => (await engine.listProjects()).map(projectView),
  crowdyStudioAgentPolicy: async (_p, a, { engine }) => {
    engine.requireApp(a.appId as string);
    return policyView(await engine.policy(a.appId as string), 'APP');
  },
  crowdyStudioAgentEffectivePolicy: async (_p, a, { engine }) => {
    engine.requireApp(a.appId as string);
    return policyView(await engine.policy(a.appId as string), 'EFFECTIVE');
  },
  studioApprovalRules: async (_p, a, { engine }) => {
    engine.requireApp(a.appId as string);
    return (await engine.reads.listApprovalRules(a.appId as string)).map((r) =>
      ruleView(r, engine.now()),
    );
  },
  studioDecidedApprovals: async (_p, a, { engine }) => {
    engine.requireApp(a.appId as string);
    const first = pageSize(a.first, 20, 100);
    return engine.snapshot(async (reads) => {
      const out = [];
      for (const ap of await reads.listDecidedApprovals(first)) {
        const s = await reads.getSession(ap.sessionId);
        const call = await reads.getToolCall(ap.toolCallId);
        if (s && call && s.appId === a.appId)
          out.push({
            session: sessionView(s),
            toolCall: toolCallView(call),
            approval: approvalView(ap),
          });
      }
      return out;
    });
  },
  studioToolCall: async (_p, a, { engine }) => {
    const call = await engine.reads.getToolCall(a.toolCallId as string);
    return call ? toolCallView(call) : null;
  },
  studioQuestion: async (_p, a, { engine }) => {
    const question = await engine.reads.findQuestionById(a.questionId as string);
    if (!question) return null;
    const { runId, ...rest } = question;
    void runId;
    return { __typename: 'StudioQuestion', ...rest };
  },
};

function mutation(
  operation: string,
  run: (input: Input, engine: Engine, reviewer: string | null) => unknown,
): Resolver {
  return (_p, a, { engine, reviewer }) => {
    const input = a.input as Input;
    return engine.idempotent(operation, input, () => run(input, engine, reviewer ?? null));
  };
}

const str = (input: Input, key: string) => input[key] as string;

const Mutation: Record<string, Resolver> = {
  crowdyStudioAgentCreateSession: mutation('CreateSession', async (i, e) =>
    sessionView(
      await e.createSession({
        appId: str(i, 'appId'),
        projectId: (i.projectId as string | null) ?? null,
        mode: i.mode as AgentMode,
        requestedModel: (i.requestedModel as string | null) ?? null,
      }),
    ),
  ),
  crowdyStudioAgentAttachClient: mutation('AttachClient', async (i, e, by) => {
    const out = await e.attach({
      sessionId: str(i, 'sessionId'),
      clientInstanceId: (i.clientInstanceId as string | null) ?? null,
      reviewer: by,
    });
    return {
      session: sessionView(out.session),
      clientEpoch: out.clientEpoch,
      replayAfterSeq: out.replayAfterSeq,
    };
  }),
  crowdyStudioAgentSetMode: mutation('SetMode', async (i, e) => {
    await checkSetModeProject(e, str(i, 'sessionId'), (i.projectId as string | null) ?? null);
    return sessionView(
      await e.setMode({
        sessionId: str(i, 'sessionId'),
        clientEpoch: str(i, 'clientEpoch'),
        mode: i.mode as AgentMode,
        projectId: (i.projectId as string | null) ?? null,
      }),
    );
  }),
  crowdyStudioAgentAcknowledgeEvents: mutation(
    'AcknowledgeEvents',
    async (i, e) =>
      await e.acknowledge({
        sessionId: str(i, 'sessionId'),
        clientEpoch: str(i, 'clientEpoch'),
        throughSeq: str(i, 'throughSeq'),
      }),
  ),
  crowdyStudioAgentHeartbeat: mutation(
    'Heartbeat',
    async (i, e) =>
      await e.heartbeat({ sessionId: str(i, 'sessionId'), clientEpoch: str(i, 'clientEpoch') }),
  ),
  crowdyStudioAgentSendMessage: mutation('SendMessage', async (i, e, by) => {
    const runId = await e.sendMessage({
      sessionId: str(i, 'sessionId'),
      clientEpoch: str(i, 'clientEpoch'),
      content: str(i, 'content'),
      author: by,
    });
    const run = await e.reads.getRun(runId);
    if (!run) throw new StudioError(ErrorCode.HOST_UNAVAILABLE, 'The runtime did not start a run.');
    return runView(run);
  }),
  crowdyStudioAgentApproveTool: mutation('ApproveTool', async (i, e, by) =>
    approvalView(await e.decide(decideInput(i), true, by)),
  ),
  crowdyStudioAgentRejectTool: mutation('RejectTool', async (i, e, by) =>
    approvalView(await e.decide(decideInput(i), false, by)),
  ),
  studioDecideTools: mutation('StudioDecideTools', async (i, e, by) => {
    const decisions = (i.decisions as Input[]).map((d) => ({
      ...decideInput(d),
      approve: d.approve === true,
    }));
    return (await e.decideBatch(decisions, by)).map(approvalView);
  }),
  studioAskAgain: mutation('StudioAskAgain', async (i, e, by) =>
    approvalView(
      await e.askAgain({
        sessionId: str(i, 'sessionId'),
        clientEpoch: str(i, 'clientEpoch'),
        toolCallId: str(i, 'toolCallId'),
        author: by,
      }),
    ),
  ),
  studioCreateApprovalRule: mutation('StudioCreateApprovalRule', async (i, e, by) => {
    const { idempotencyKey, ...rest } = i;
    void idempotencyKey;
    return ruleView(await e.createApprovalRule(rest as unknown as CreateRuleInput, by), e.now());
  }),
  studioUpdateApprovalRule: mutation('StudioUpdateApprovalRule', async (i, e) => {
    const { idempotencyKey, ...rest } = i;
    void idempotencyKey;
    return ruleView(await e.updateApprovalRule(rest as unknown as UpdateRuleInput), e.now());
  }),
  studioRevokeApprovalRule: mutation('StudioRevokeApprovalRule', async (i, e, by) =>
    ruleView(await e.revokeApprovalRule(str(i, 'ruleId'), by), e.now()),
  ),
  setCrowdyStudioAgentPolicy: mutation('SetAgentPolicy', async (i, e, by) =>
    policyView(
      await e.setPolicy(
        {
          appId: str(i, 'appId'),
          expectedRevision: str(i, 'expectedRevision'),
          enabled: (i.enabled as boolean | null) ?? null,
          killSwitch: (i.killSwitch as boolean | null) ?? null,
          ...(i.disableReasonCode !== undefined
            ? { disableReasonCode: i.disableReasonCode as string | null }
            : {}),
          ...(i.disableReason !== undefined
            ? { disableReason: i.disableReason as string | null }
            : {}),
        },
        by,
      ),
    ),
  ),
  crowdyStudioAgentToolResult: mutation('ToolResult', async (i, e) => {
    await e.requireAttached(str(i, 'sessionId'), str(i, 'clientEpoch'));
    const result = i.result as { toolCallId: string };
    const call = await e.reads.getToolCall(result.toolCallId);
    if (!call || call.sessionId !== str(i, 'sessionId'))
      throw new StudioError(
        ErrorCode.TOOL_UNKNOWN,
        `No tool call ${result.toolCallId} in this session.`,
      );
    // The studio dispatches no BROWSER tools, so no result is ever awaited from a client.
    throw new StudioError(
      ErrorCode.CONTEXT_STALE,
      `Tool call ${call.toolCallId} (${call.toolName}) was not dispatched to a browser; its result is not accepted.`,
    );
  }),
  crowdyStudioAgentGrantLease: mutation('GrantLease', async (i, e) => {
    await e.requireAttached(str(i, 'sessionId'), str(i, 'clientEpoch'));
    throw new StudioError(
      ErrorCode.BAD_REQUEST,
      'PLAY leases need PLAY mode, which this studio does not host.',
      {
        field: 'sessionId',
      },
    );
  }),
  crowdyStudioAgentRevokeLease: mutation('RevokeLease', async (i, e) => {
    const s = await e.requireAttached(str(i, 'sessionId'), str(i, 'clientEpoch'));
    const lease = await e.reads.getLease(str(i, 'leaseId'));
    if (!lease || lease.sessionId !== s.sessionId)
      throw new StudioError(ErrorCode.BAD_REQUEST, `No lease ${str(i, 'leaseId')}.`, {
        field: 'leaseId',
      });
    if (lease.status === 'ACTIVE')
      await e.append(s.sessionId, [
        leaseEndedDraft(lease, 'LEASE_REVOKED', (i.reason as string | null) ?? 'HUMAN_STOP'),
      ]);
    const after = await e.reads.getLease(lease.leaseId);
    if (!after) throw new Error('lease vanished');
    return leaseView(after);
  }),
  crowdyStudioAgentPause: mutation('Pause', async (i, e) =>
    sessionView(
      await e.pause({ sessionId: str(i, 'sessionId'), clientEpoch: str(i, 'clientEpoch') }),
    ),
  ),
  crowdyStudioAgentResume: mutation('Resume', async (i, e) =>
    sessionView(
      await e.resume({ sessionId: str(i, 'sessionId'), clientEpoch: str(i, 'clientEpoch') }),
    ),
  ),
  crowdyStudioAgentCancelRun: mutation('CancelRun', async (i, e) => {
    const runId = await e.cancelRun({
      sessionId: str(i, 'sessionId'),
      clientEpoch: str(i, 'clientEpoch'),
      runId: (i.runId as string | null) ?? null,
    });
    const run = await e.reads.getRun(runId);
    if (!run) throw new Error('run vanished');
    return runView(run);
  }),
  crowdyStudioAgentCloseSession: mutation('CloseSession', async (i, e) =>
    sessionView(
      await e.closeSession({ sessionId: str(i, 'sessionId'), clientEpoch: str(i, 'clientEpoch') }),
    ),
  ),
  studioCreateCheckpoint: mutation('StudioCreateCheckpoint', async (i, e) =>
    checkpointView(
      await e.createManualCheckpoint({
        sessionId: str(i, 'sessionId'),
        clientEpoch: str(i, 'clientEpoch'),
      }),
    ),
  ),
  studioRequestCheckpointRestore: mutation('StudioRequestCheckpointRestore', async (i, e, by) =>
    approvalView(
      await e.requestRestore({
        requestedBy: by,
        sessionId: str(i, 'sessionId'),
        clientEpoch: str(i, 'clientEpoch'),
        checkpointId: str(i, 'checkpointId'),
        checkpointContentHash: str(i, 'checkpointContentHash'),
        expectedRevision: str(i, 'expectedRevision'),
        paths: (i.paths as string[] | null | undefined) ?? null,
      }),
    ),
  ),
  studioAnswerQuestion: mutation('StudioAnswerQuestion', async (i, e) => ({
    __typename: 'StudioQuestion',
    ...(await e.answerQuestion({
      sessionId: str(i, 'sessionId'),
      clientEpoch: str(i, 'clientEpoch'),
      questionId: str(i, 'questionId'),
      text: (i.text as string | null) ?? null,
      choiceIndex: (i.choiceIndex as number | null) ?? null,
      approved: (i.approved as boolean | null) ?? null,
    })),
  })),
};

function decideInput(i: Input) {
  return {
    sessionId: str(i, 'sessionId'),
    clientEpoch: str(i, 'clientEpoch'),
    toolCallId: str(i, 'toolCallId'),
    argumentHash: str(i, 'argumentHash'),
    reason: (i.reason as string | null) ?? null,
  };
}

const Subscription = {
  crowdyStudioAgentEvents: {
    subscribe: guard((_p, a, { engine }) =>
      eventStream(
        engine,
        {
          sessionId: a.sessionId as string,
          afterSeq: a.afterSeq as string,
          clientEpoch: a.clientEpoch as string,
          maxBatch: null,
        },
        false,
      ),
    ),
    resolve: terminal,
  },
  studioAgentEventBatches: {
    subscribe: guard((_p, a, { engine }) =>
      eventStream(
        engine,
        {
          sessionId: a.sessionId as string,
          afterSeq: a.afterSeq as string,
          clientEpoch: (a.clientEpoch as string | null) ?? null,
          maxBatch: (a.maxBatch as number | null) ?? null,
        },
        true,
      ),
    ),
    resolve: terminal,
  },
  studioSessionUpdates: {
    subscribe: guard((_p, a, { engine }) => sessionUpdates(engine, a.appId as string)),
    resolve: (payload: unknown) => payload,
  },
};

type Obj = Record<string, unknown>;

/** The reads of one execution, gathered and memoised (executionReads.ts). */
const readsByExecution = new WeakMap<object, ExecutionReads>();

function executionReads(ctx: StudioContext, info: GraphQLResolveInfo): ExecutionReads {
  const scope =
    typeof info.rootValue === 'object' && info.rootValue !== null
      ? (info.rootValue as object)
      : ctx;
  let reads = readsByExecution.get(scope);
  if (!reads) {
    reads = new ExecutionReads(ctx.engine);
    readsByExecution.set(scope, reads);
  }
  return reads;
}

function oncePerExecution<T>(
  ctx: StudioContext,
  info: GraphQLResolveInfo,
  key: string,
  load: () => T,
): T {
  return executionReads(ctx, info).once(key, load);
}

// Synchronous when the execution has the record already (a prefetched list, see `withCalls`).
function toolCallOnce(toolCallId: string, ctx: StudioContext, info: GraphQLResolveInfo) {
  const reads = executionReads(ctx, info);
  return reads.once(`tc:${toolCallId}`, () => {
    const known = reads.peekToolCall(toolCallId);
    if (known !== undefined) return known ? toolCallView(known) : null;
    return reads.toolCall(toolCallId).then((call) => (call ? toolCallView(call) : null));
  });
}

function approvalOnce(approvalId: string, ctx: StudioContext, info: GraphQLResolveInfo) {
  const reads = executionReads(ctx, info);
  return reads.once(`ap:${approvalId}`, () => {
    const known = reads.peekApproval(approvalId);
    if (known !== undefined) return known ? approvalView(known) : null;
    return reads.approval(approvalId).then((a) => (a ? approvalView(a) : null));
  });
}

async function canAskAgain(c: Obj, ctx: StudioContext, reads: ExecutionReads): Promise<boolean> {
  const approval = await reads.approval(c._approvalId as string);
  if (!approval || (approval.status !== 'EXPIRED' && approval.status !== 'REVOKED')) return false;
  const call = await reads.toolCall(c.toolCallId as string);
  return call ? await ctx.engine.canAskAgain(call) : false;
}

/**
 * A list of events, after the calls its items embed are read in one snapshot (only when the
 * selection embeds them): the items' `studioToolCall` then resolves synchronously.
 */
function withCalls(
  parent: { events: EventView[] },
  _a: Args,
  ctx: StudioContext,
  info: GraphQLResolveInfo,
): EventView[] | Promise<EventView[]> {
  if (!Array.isArray(parent.events) || !selectsToolCall(info)) return parent.events;
  // A failed prefetch changes nothing: each studioToolCall then reads (and fails) on its own.
  return executionReads(ctx, info)
    .prefetch(parent.events)
    .then(
      () => parent.events,
      () => parent.events,
    );
}

/**
 * The current state of each tool call a list of events names, once each, in order of first
 * mention (`studioToolCalls` of a history page or a batch). Read through the same prefetch and
 * per-execution memo as the events' own `studioToolCall`, so both give the same view object:
 * the web documents select the whole call here once and only its key on each event.
 */
async function toolCallsOf(
  parent: { events: EventView[] },
  _a: Args,
  ctx: StudioContext,
  info: GraphQLResolveInfo,
): Promise<unknown[]> {
  if (!Array.isArray(parent.events)) return [];
  const ids = namedToolCallIds(parent.events);
  if (ids.length === 0) return [];
  // A failed prefetch changes nothing: each call then reads (and fails) on its own.
  await executionReads(ctx, info)
    .prefetch(parent.events)
    .catch(() => undefined);
  const calls = await Promise.all(ids.map((id) => toolCallOnce(id, ctx, info)));
  return calls.filter((call) => call !== null);
}

const linked = {
  StudioProject: {
    studioStartSource: (p: { projectId: string }, _a: Args, { engine }: StudioContext) =>
      engine.projectSourceOf(p.projectId),
  },
  AgentSession: {
    activeRun: async (s: SessionView, _a: Args, { engine }: StudioContext) => {
      const run = s._links
        ? s._links.activeRun
        : s._currentRunId
          ? await engine.reads.getRun(s._currentRunId)
          : null;
      return run ? runView(run) : null;
    },
    currentRun: async (s: SessionView, _a: Args, { engine }: StudioContext) => {
      const run = s._links
        ? s._links.currentRun
        : s._lastRunId
          ? await engine.reads.getRun(s._lastRunId)
          : null;
      return run ? runView(run) : null;
    },
    activeLeases: async (s: SessionView, _a: Args, { engine }: StudioContext) =>
      (await engine.reads.listActiveLeases(s.sessionId)).map(leaseView),
    pendingApproval: async (s: SessionView, _a: Args, { engine }: StudioContext) => {
      const pending = await pendingOf(engine, s);
      const newest = pending[pending.length - 1];
      return newest ? approvalView(newest) : null;
    },
    studioPendingApprovals: async (s: SessionView, _a: Args, { engine }: StudioContext) =>
      (await pendingOf(engine, s)).map(approvalView),
    studioCheckpointsSupported: async (s: SessionView, _a: Args, { engine }: StudioContext) =>
      (await engine.checkpointsSupported(s.sessionId)).supported,
    registryDigest: (s: SessionView, _a: Args, { engine }: StudioContext) =>
      engine.registryDigestFor(s.mode as AgentMode),
    studioControlledBy: async (s: SessionView, _a: Args, { engine }: StudioContext) =>
      (await engine.controllerOf(s.sessionId))?.reviewer ?? null,
    studioControlledSince: async (s: SessionView, _a: Args, { engine }: StudioContext) =>
      (await engine.controllerOf(s.sessionId))?.since ?? null,
  },
  AgentApproval: {
    studioToolCall: (a: Obj, _a: Args, ctx: StudioContext, info: GraphQLResolveInfo) =>
      toolCallOnce(a.toolCallId as string, ctx, info),
  },
  AgentEventConnection: { events: withCalls, studioToolCalls: toolCallsOf },
  StudioAgentEventBatch: { events: withCalls, studioToolCalls: toolCallsOf },
  StudioEventPage: { events: withCalls },
  StudioToolCall: {
    studioCanAskAgain: (c: Obj, _a: Args, ctx: StudioContext, info: GraphQLResolveInfo) => {
      // Only an expired or revoked call can be asked again (engine.canAskAgain checks it first):
      // the execution's gathered reads answer that for every other call, synchronously when
      // the approval was prefetched.
      if (!c._approvalId) return false;
      const reads = executionReads(ctx, info);
      const known = reads.peekApproval(c._approvalId as string);
      if (known !== undefined && known?.status !== 'EXPIRED' && known?.status !== 'REVOKED')
        return false;
      return canAskAgain(c, ctx, reads);
    },
    approval: (c: Obj, _a: Args, ctx: StudioContext, info: GraphQLResolveInfo) =>
      c._approvalId ? approvalOnce(c._approvalId as string, ctx, info) : null,
  },
  AgentToolEvent: {
    studioToolCall: (ev: Obj, _a: Args, ctx: StudioContext, info: GraphQLResolveInfo) =>
      toolCallOnce(ev.toolCallId as string, ctx, info),
  },
  AgentApprovalEvent: {
    studioToolCall: (ev: Obj, _a: Args, ctx: StudioContext, info: GraphQLResolveInfo) =>
      toolCallOnce(ev.toolCallId as string, ctx, info),
  },
};

function guardAll<T extends Record<string, Resolver>>(map: T, checkArgs = false): T {
  return Object.fromEntries(Object.entries(map).map(([k, fn]) => [k, guard(fn, checkArgs)])) as T;
}

const byTypename = { __resolveType: (value: Obj) => value.__typename as string };

export function makeResolvers() {
  return {
    BigInt: BigIntScalar,
    DateTime: DateTimeScalar,
    // Root fields check every argument against inputLimits.ts before they run.
    Query: guardAll(Query, true),
    Mutation: guardAll(Mutation, true),
    Subscription: Object.fromEntries(
      Object.entries(Subscription).map(([name, field]) => [
        name,
        { ...field, subscribe: guard(field.subscribe as Resolver, true) },
      ]),
    ),
    CrowdyStudioAgentEvent: byTypename,
    AgentEventBase: byTypename,
    ...Object.fromEntries(
      Object.entries({
        ...linked,
        ...checkpointFileResolvers,
        // Both add fields to these types: keep both sets.
        StudioProject: { ...linked.StudioProject, ...checkpointFileResolvers.StudioProject },
        // Issue 11's checkpoint fields (checkpointInsights.ts) beside the paged manifests.
        StudioCheckpoint: {
          ...checkpointFileResolvers.StudioCheckpoint,
          ...checkpointInsightResolvers,
        },
      }).map(([type, fields]) => [type, guardAll(fields as unknown as Record<string, Resolver>)]),
    ),
  };
}
