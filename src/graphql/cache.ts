import type {
  Cache,
  CacheExchangeOpts,
  Data,
  DataFields,
  KeyingConfig,
  UpdatesConfig,
  OptimisticMutationConfig,
} from '@urql/exchange-graphcache';
import { EVENT_TYPENAMES } from '../../protocol/events.ts';
import { LOCAL_APP_ID } from '../../protocol/contract.ts';
import { EventPageFields, pageBounds, pageOfSeq, PAGE_SIZE } from './eventDocuments.ts';
import { graphql } from './graphql.ts';
import schema from './graphcache-schema.json';

type Key = string;
type Row = Record<string, unknown>;

const embedded = () => null;

const PageComplete = graphql(`
  fragment PageComplete on StudioEventPage {
    __typename
    sessionId
    page
    size
    complete
  }
`);

const SessionEpoch = graphql(`
  fragment SessionEpoch on AgentSession {
    __typename
    sessionId
    currentClientEpoch
  }
`);

const ToolCallProgress = graphql(`
  fragment ToolCallProgress on StudioToolCall {
    __typename
    toolCallId
    status
    updatedAt
  }
`);

/**
 * The newest state of each tool call seen on the event stream. A mutation answer (approve, deny,
 * restore request) travels over HTTP while the events travel over the socket, so it can land
 * after events that already moved the call on; its embedded call state is then older than the
 * cache's and is put back to the newest.
 */
interface CallProgress {
  calls: Map<string, { status: string; updatedAt: string }>;
  /** Approval status by approvalId; an approval only moves forward (PENDING, GRANTED, final). */
  approvals: Map<string, string>;
}

const APPROVAL_RANK: Record<string, number> = { PENDING: 0, GRANTED: 1 };
const approvalRank = (status: string) => APPROVAL_RANK[status] ?? 2;

const ApprovalProgress = graphql(`
  fragment ApprovalProgress on AgentApproval {
    __typename
    approvalId
    status
  }
`);

function isNewer(a: string, b: string): boolean {
  return Date.parse(a) > Date.parse(b);
}

function noteApproval(progress: CallProgress, approvalId: unknown, status: unknown): void {
  if (typeof approvalId !== 'string' || typeof status !== 'string') return;
  const known = progress.approvals.get(approvalId);
  if (known === undefined || approvalRank(status) >= approvalRank(known))
    progress.approvals.set(approvalId, status);
}

/**
 * Notes what a batch says of its calls: each approval event's status, and each call's current
 * state from the batch's `studioToolCalls` (the events link their calls by key only).
 */
function noteCallProgress(
  progress: CallProgress,
  events: readonly Row[],
  calls: readonly Row[],
): void {
  for (const event of events)
    if (event.__typename === 'AgentApprovalEvent')
      noteApproval(progress, event.approvalEventId, event.approvalStatus);
  for (const call of calls) {
    if (!call || typeof call.toolCallId !== 'string') continue;
    const approval = call.approval as Row | null | undefined;
    if (approval) noteApproval(progress, approval.approvalId, approval.status);
    if (typeof call.status !== 'string' || typeof call.updatedAt !== 'string') continue;
    const known = progress.calls.get(call.toolCallId);
    if (!known || !isNewer(known.updatedAt, call.updatedAt)) {
      progress.calls.set(call.toolCallId, { status: call.status, updatedAt: call.updatedAt });
    }
  }
}

function repairStaleCalls(cache: Cache, progress: CallProgress, value: unknown): void {
  if (!value || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) repairStaleCalls(cache, progress, item);
    return;
  }
  const row = value as Row;
  if (
    row.__typename === 'AgentApproval' &&
    typeof row.approvalId === 'string' &&
    typeof row.status === 'string'
  ) {
    const newest = progress.approvals.get(row.approvalId);
    if (newest !== undefined && approvalRank(newest) > approvalRank(row.status)) {
      cache.writeFragment(ApprovalProgress, {
        __typename: 'AgentApproval',
        approvalId: row.approvalId,
        status: newest as never,
      });
    }
  }
  if (
    row.__typename === 'StudioToolCall' &&
    typeof row.toolCallId === 'string' &&
    typeof row.updatedAt === 'string'
  ) {
    const newest = progress.calls.get(row.toolCallId);
    if (newest && isNewer(newest.updatedAt, row.updatedAt)) {
      cache.writeFragment(ToolCallProgress, {
        __typename: 'StudioToolCall',
        toolCallId: row.toolCallId,
        status: newest.status as never,
        updatedAt: newest.updatedAt,
      });
    }
  }
  for (const child of Object.values(row))
    if (child && typeof child === 'object') repairStaleCalls(cache, progress, child);
}

const CheckpointRestoredAt = graphql(`
  fragment CheckpointRestoredAt on StudioCheckpoint {
    __typename
    checkpointId
    restoredAt
  }
`);

function keys(): KeyingConfig {
  const config: KeyingConfig = {};
  for (const typename of EVENT_TYPENAMES) config[typename] = (d) => d.eventId as string;
  Object.assign(config, {
    AgentSession: (d: DataFields) => d.sessionId as string,
    AgentRun: (d: DataFields) => d.runId as string,
    AgentLease: (d: DataFields) => d.leaseId as string,
    AgentApproval: (d: DataFields) => d.approvalId as string,
    StudioToolCall: (d: DataFields) => d.toolCallId as string,
    StudioCheckpoint: (d: DataFields) => d.checkpointId as string,
    StudioQuestion: (d: DataFields) => d.questionId as string,
    StudioEventPage: (d: DataFields) =>
      `${String(d.sessionId)}:${String(d.page)}:${String(d.size)}`,
    AgentToolCall: (d: DataFields) => d.toolCallId as string,
    StudioProject: (d: DataFields) => d.projectId as string,
    StudioSource: (d: DataFields) => d.sourceId as string,
    StudioApprovalRule: (d: DataFields) => d.ruleId as string,
    CrowdyStudioAgentPolicy: (d: DataFields) => `${String(d.kind)}:${String(d.appId)}`,
    // History scrubber (issue 11): one rail per session, refetched in place as the log grows.
    StudioSessionHistory: (d: DataFields) => d.sessionId as string,
    // A live batch is a delivery, keyed only so that reading it back goes through the
    // `events` resolver below (Graphcache reads an unkeyed root object's list from the result
    // itself, event by event); nothing links it, so the next GC drops it.
    StudioAgentEventBatch: (d: DataFields) =>
      `${String(d.sessionId)}:${String(d.fromSeq)}:${String(d.throughSeq)}`,
  });
  for (const typename of [
    'AgentError',
    'AgentBudget',
    'AgentBudgetDimension',
    'AgentCheckpointFile',
    'AgentToolInvocation',
    'AgentToolResultEnvelope',
    'AgentPageInfo',
    'AgentSessionEdge',
    'AgentSessionConnection',
    'AgentEventEdge',
    'AgentEventConnection',
    'StudioCheckpointEdge',
    'StudioCheckpointConnection',
    'StudioCheckpointFile',
    'StudioCheckpointFileEdge',
    'StudioCheckpointFileConnection',
    'StudioFileChange',
    'StudioFileChangeEdge',
    'StudioFileChangeConnection',
    'StudioToolCallStep',
    'StudioPendingApproval',
    'AgentClientAttachment',
    'AgentHeartbeat',
    'AgentEventAcknowledgement',
    'AgentToolDescriptor',
    'AgentToolDescriptorSet',
    'StudioProposalDiff',
    'StudioProposalDiffFile',
    'StudioDecidedApproval',
    'StudioRuleSuggestion',
    // Search results (issue 11): embedded in their query, never shared between queries.
    'StudioSearchResult',
    'StudioSearchHit',
    'StudioSearchSnippetPart',
    // History scrubber (issue 11): a mark and "as of a seq" views belong to their query.
    'StudioHistoryMark',
    'StudioSessionAt',
    'StudioToolCallAt',
    // Checkpoint browser (issue 11): computed per request, never shared.
    'StudioRestorePreview',
    'StudioCheckpointOrigin',
    // Home page (issue 11): a restored checkpoint with its session, read per query.
    'StudioRecentRestore',
  ]) {
    config[typename] = embedded;
  }
  return config;
}

function seqOfKey(cache: Cache, key: Key): bigint | null {
  const seq = cache.resolve(key, 'seq');
  return typeof seq === 'string' ? BigInt(seq) : null;
}

/**
 * Links a batch's events into the fixed-size pages they belong to. A page is only written when
 * its `Query.studioEventPage` field is already cached (the timeline is watching it), or when a
 * live event is the first seq of the page right after a cached, full page: then the new page is
 * created so the newest page keeps growing without a refetch. Older pages are never touched, a
 * seq at or below a page's last linked seq is a duplicate and is skipped.
 */
function linkEventsIntoPages(cache: Cache, sessionId: string, events: readonly Row[]): void {
  const byPage = new Map<string, { key: Key; seq: bigint }[]>();
  for (const event of events) {
    const key = cache.keyOfEntity(event as Data);
    if (!key || typeof event.seq !== 'string') continue;
    const page = pageOfSeq(event.seq);
    const list = byPage.get(page) ?? [];
    list.push({ key, seq: BigInt(event.seq) });
    byPage.set(page, list);
  }
  const pages = [...byPage.keys()].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  for (const page of pages) {
    const incoming = (byPage.get(page) ?? []).sort((a, b) =>
      a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0,
    );
    const args = { sessionId, page, size: PAGE_SIZE };
    let pageKey = cache.resolve('Query', 'studioEventPage', args);
    let linked: Key[] = [];
    if (typeof pageKey === 'string') {
      const current = cache.resolve(pageKey, 'events');
      linked = Array.isArray(current)
        ? (current.filter((k) => typeof k === 'string') as Key[])
        : [];
    } else if (!opensPageAfterCachedPage(cache, sessionId, page, incoming[0]?.seq)) {
      continue;
    } else {
      const bounds = pageBounds(page);
      cache.writeFragment(EventPageFields, {
        __typename: 'StudioEventPage',
        sessionId,
        page,
        size: PAGE_SIZE,
        fromSeq: bounds.fromSeq,
        throughSeq: bounds.throughSeq,
        complete: false,
      });
      pageKey = cache.keyOfEntity({
        __typename: 'StudioEventPage',
        sessionId,
        page,
        size: PAGE_SIZE,
      });
      if (!pageKey) continue;
      cache.link('Query', 'studioEventPage', args, pageKey);
    }
    const lastKey = linked[linked.length - 1];
    let last = lastKey ? seqOfKey(cache, lastKey) : null;
    const next = [...linked];
    for (const item of incoming) {
      if (last !== null && item.seq <= last) continue;
      next.push(item.key);
      last = item.seq;
    }
    if (next.length === linked.length && typeof cache.resolve(pageKey, 'events') !== 'undefined')
      continue;
    cache.link(pageKey, 'events', next);
    if (last !== null && last.toString() === pageBounds(page).throughSeq) {
      cache.writeFragment(PageComplete, {
        __typename: 'StudioEventPage',
        sessionId,
        page,
        size: PAGE_SIZE,
        complete: true,
      });
      openEmptyPage(cache, sessionId, (BigInt(page) + 1n).toString());
    }
  }
}

/**
 * Caches the page after one the stream just filled, empty, unless it is cached already: the
 * timeline moves on to it at once, and finds it in the cache instead of asking the server for
 * a page the stream is about to fill anyway (its events follow in order on the same stream).
 */
function openEmptyPage(cache: Cache, sessionId: string, page: string): void {
  const args = { sessionId, page, size: PAGE_SIZE };
  if (typeof cache.resolve('Query', 'studioEventPage', args) === 'string') return;
  const bounds = pageBounds(page);
  cache.writeFragment(EventPageFields, {
    __typename: 'StudioEventPage',
    sessionId,
    page,
    size: PAGE_SIZE,
    fromSeq: bounds.fromSeq,
    throughSeq: bounds.throughSeq,
    complete: false,
  });
  const pageKey = cache.keyOfEntity({
    __typename: 'StudioEventPage',
    sessionId,
    page,
    size: PAGE_SIZE,
  });
  if (!pageKey) return;
  cache.link(pageKey, 'events', []);
  cache.link('Query', 'studioEventPage', args, pageKey);
}

function opensPageAfterCachedPage(
  cache: Cache,
  sessionId: string,
  page: string,
  firstSeq: bigint | undefined,
): boolean {
  if (firstSeq === undefined || firstSeq.toString() !== pageBounds(page).fromSeq) return false;
  const previous = BigInt(page) - 1n;
  if (previous < 0n) return false;
  const prevKey = cache.resolve('Query', 'studioEventPage', {
    sessionId,
    page: previous.toString(),
    size: PAGE_SIZE,
  });
  if (typeof prevKey !== 'string') return false;
  const prevEvents = cache.resolve(prevKey, 'events');
  if (!Array.isArray(prevEvents) || prevEvents.length === 0) return false;
  const lastKey = prevEvents[prevEvents.length - 1];
  const lastSeq = typeof lastKey === 'string' ? seqOfKey(cache, lastKey) : null;
  return lastSeq !== null && lastSeq + 1n === firstSeq;
}

/**
 * The event pages each mounted timeline holds, by session. The sets are the holders' own live
 * sets (read when a batch is written, never copied). Module state rather than per-client: the
 * app has one client, and a holder only ever keeps pages cached, never drops one.
 */
const heldEventPages = new Map<string, Set<ReadonlySet<string>>>();

/**
 * Declares that a timeline holds `pages` of a session (a set it keeps current). While anyone
 * holds a session's pages, writing a live batch unlinks every other cached page of it except the
 * two newest, so Graphcache's GC frees their events (stack-notes 1.8); a page wanted again is
 * fetched again. Sessions nobody holds are never trimmed. Returns the release function.
 */
export function holdEventPages(sessionId: string, pages: ReadonlySet<string>): () => void {
  let holds = heldEventPages.get(sessionId);
  if (!holds) heldEventPages.set(sessionId, (holds = new Set()));
  holds.add(pages);
  return () => {
    holds.delete(pages);
    if (holds.size === 0 && heldEventPages.get(sessionId) === holds)
      heldEventPages.delete(sessionId);
  };
}

function isHeld(holds: ReadonlySet<ReadonlySet<string>>, page: string): boolean {
  for (const pages of holds) if (pages.has(page)) return true;
  return false;
}

/** Unlinks the session's cached pages that no timeline holds (the two newest always stay). */
function unlinkUnheldPages(cache: Cache, sessionId: string): void {
  const holds = heldEventPages.get(sessionId);
  if (!holds) return;
  const cached = cache
    .inspectFields('Query')
    .filter(
      (field) =>
        field.fieldName === 'studioEventPage' &&
        field.arguments?.sessionId === sessionId &&
        field.arguments.size === PAGE_SIZE &&
        typeof field.arguments.page === 'string',
    );
  if (cached.length <= 2) return;
  let newest = 0n;
  for (const field of cached) {
    const page = BigInt(field.arguments?.page as string);
    if (page > newest) newest = page;
  }
  for (const field of cached) {
    const page = field.arguments?.page as string;
    if (BigInt(page) >= newest - 1n || isHeld(holds, page)) continue;
    cache.invalidate('Query', 'studioEventPage', field.arguments ?? undefined);
  }
}

/**
 * Keeps the session's currentClientEpoch moving with the stream. Its lastEventSeq is left to
 * studioSessionUpdates (the shell's sidebar and inbox link keep that subscription open, at most
 * one push per frame): writing it from every live batch made Graphcache re-read every query
 * holding the session (screen, header, sidebar) once more per frame, and the timeline does not
 * need it (it takes the newest of lastEventSeq and its newest loaded seq). Measured in
 * docs/ARCHITECTURE.md ("Why this shape").
 */
function advanceSession(cache: Cache, sessionId: string, events: readonly Row[]): void {
  const sessionKey = cache.keyOfEntity({ __typename: 'AgentSession', sessionId });
  if (!sessionKey) return;
  let maxEpoch: bigint | null = null;
  for (const event of events) {
    if (event.type === 'CLIENT_ATTACHED' && typeof event.lifecycleClientEpoch === 'string') {
      const epoch = BigInt(event.lifecycleClientEpoch);
      if (maxEpoch === null || epoch > maxEpoch) maxEpoch = epoch;
    }
  }
  const cachedEpoch = cache.resolve(sessionKey, 'currentClientEpoch');
  if (maxEpoch !== null && typeof cachedEpoch === 'string' && maxEpoch > BigInt(cachedEpoch)) {
    cache.writeFragment(SessionEpoch, {
      __typename: 'AgentSession',
      sessionId,
      currentClientEpoch: maxEpoch.toString(),
    });
  }
}

/** Drops every cached checkpoint list of a session, so watching screens refetch it. */
function invalidateCheckpoints(cache: Cache, sessionId: string): void {
  for (const field of cache.inspectFields('Query')) {
    if (field.fieldName === 'studioCheckpoints' && field.arguments?.sessionId === sessionId) {
      cache.invalidate('Query', field.fieldName, field.arguments);
    }
  }
}

function applyCheckpointEvents(cache: Cache, sessionId: string, events: readonly Row[]): void {
  let touched = false;
  for (const event of events) {
    if (event.__typename !== 'AgentCheckpointEvent') continue;
    touched = true;
    const checkpointId = event.checkpointEventId;
    if (
      event.type === 'CHECKPOINT_RESTORED' &&
      typeof checkpointId === 'string' &&
      event.checkpointRestoredAt
    ) {
      const key = cache.keyOfEntity({ __typename: 'StudioCheckpoint', checkpointId });
      if (key && cache.resolve(key, 'checkpointId')) {
        cache.writeFragment(CheckpointRestoredAt, {
          __typename: 'StudioCheckpoint',
          checkpointId,
          restoredAt: event.checkpointRestoredAt as string,
        });
      }
    }
  }
  if (touched) invalidateCheckpoints(cache, sessionId);
}

/**
 * Links a session that is not in a cached session list yet (newest first). Only a new session
 * goes to the top of the first page: one that is already on any loaded page, or that is older
 * than the newest listed one (it belongs to an older page, loaded or not), is left where it is;
 * normalization updates it in place.
 */
function linkSessionIntoLists(cache: Cache, session: Row): void {
  const sessionKey = cache.keyOfEntity(session as Data);
  if (!sessionKey) return;
  const fields = cache
    .inspectFields('Query')
    .filter((field) => field.fieldName === 'crowdyStudioAgentSessions');
  const nodesOf = (fieldKey: string): Key[] | null => {
    const connection = cache.resolve('Query', fieldKey);
    if (typeof connection !== 'string') return null;
    const nodes = cache.resolve(connection, 'nodes');
    return Array.isArray(nodes) ? (nodes as Key[]) : null;
  };
  if (fields.some((field) => nodesOf(field.fieldKey)?.includes(sessionKey))) return;
  const createdAt = typeof session.createdAt === 'string' ? Date.parse(session.createdAt) : NaN;
  for (const field of fields) {
    // Only the first page of a list takes new sessions; later pages are older by definition.
    if (field.arguments?.after) continue;
    const connection = cache.resolve('Query', field.fieldKey);
    const nodes = nodesOf(field.fieldKey);
    if (typeof connection !== 'string' || !nodes) continue;
    const newest = nodes[0] ? cache.resolve(nodes[0], 'createdAt') : null;
    const newestAt = typeof newest === 'string' ? Date.parse(newest) : NaN;
    if (createdAt < newestAt) continue;
    cache.link(connection, 'nodes', [sessionKey, ...nodes]);
  }
}

/** Refetches the inbox when a session's set of pending approvals differs from the inbox's. */
function refreshInboxIfChanged(cache: Cache, session: Row): void {
  const pending = session.studioPendingApprovals;
  if (!Array.isArray(pending)) return;
  const fresh = new Set(
    pending.map((a) => (a as Row).approvalId).filter((id) => typeof id === 'string'),
  );
  for (const field of cache.inspectFields('Query')) {
    if (field.fieldName !== 'studioPendingApprovals') continue;
    const items = cache.resolve('Query', field.fieldKey);
    if (!Array.isArray(items)) continue;
    const cached = new Set<string>();
    for (const item of items) {
      if (typeof item !== 'string') continue;
      const sessionKey = cache.resolve(item, 'session');
      if (
        typeof sessionKey !== 'string' ||
        cache.resolve(sessionKey, 'sessionId') !== session.sessionId
      )
        continue;
      const approvalKey = cache.resolve(item, 'approval');
      const approvalId =
        typeof approvalKey === 'string' ? cache.resolve(approvalKey, 'approvalId') : null;
      if (typeof approvalId === 'string') cached.add(approvalId);
    }
    const same = cached.size === fresh.size && [...fresh].every((id) => cached.has(id as string));
    if (!same) {
      cache.invalidate('Query', field.fieldName, field.arguments ?? undefined);
      invalidateField(cache, 'studioDecidedApprovals');
    }
  }
}

function invalidateField(cache: Cache, fieldName: string): void {
  for (const field of cache.inspectFields('Query'))
    if (field.fieldName === fieldName)
      cache.invalidate('Query', field.fieldName, field.arguments ?? undefined);
}

const noop = () => undefined;

function mutationUpdates(progress: CallProgress): NonNullable<UpdatesConfig['Mutation']> {
  const invalidateSessionCheckpoints = (
    _result: DataFields,
    args: Record<string, unknown>,
    cache: Cache,
  ) => {
    const input = args.input as Row | undefined;
    if (input && typeof input.sessionId === 'string') invalidateCheckpoints(cache, input.sessionId);
  };
  const repair = (result: DataFields, _args: Record<string, unknown>, cache: Cache) =>
    repairStaleCalls(cache, progress, result);
  return {
    crowdyStudioAgentCreateSession: (result, _args, cache) => {
      const session = result.crowdyStudioAgentCreateSession;
      if (session && typeof session === 'object') linkSessionIntoLists(cache, session as Row);
    },
    crowdyStudioAgentAttachClient: noop,
    crowdyStudioAgentSetMode: noop,
    crowdyStudioAgentAcknowledgeEvents: noop,
    crowdyStudioAgentHeartbeat: noop,
    crowdyStudioAgentSendMessage: noop,
    crowdyStudioAgentApproveTool: repair,
    crowdyStudioAgentRejectTool: repair,
    crowdyStudioAgentToolResult: noop,
    crowdyStudioAgentGrantLease: noop,
    crowdyStudioAgentRevokeLease: noop,
    crowdyStudioAgentPause: noop,
    crowdyStudioAgentResume: noop,
    crowdyStudioAgentCancelRun: noop,
    crowdyStudioAgentCloseSession: noop,
    studioCreateCheckpoint: invalidateSessionCheckpoints,
    studioRequestCheckpointRestore: (result, args, cache) => {
      invalidateSessionCheckpoints(result, args, cache);
      repair(result, args, cache);
    },
    studioAnswerQuestion: noop,
    // Decisions of many calls merge by key like one; the recent list is read again.
    studioDecideTools: (result, args, cache) => {
      repair(result, args, cache);
      invalidateField(cache, 'studioDecidedApprovals');
    },
    // The new call arrives on the event stream; the old one's studioCanAskAgain turns false there.
    studioAskAgain: noop,
    studioCreateApprovalRule: (_result, _args, cache) =>
      invalidateField(cache, 'studioApprovalRules'),
    // Edits and revocations come back as the rule itself (normalized by ruleId).
    studioUpdateApprovalRule: noop,
    studioRevokeApprovalRule: noop,
    // The policy is keyed by kind and appId; the answer replaces it in place.
    setCrowdyStudioAgentPolicy: noop,
  };
}

/**
 * Approve and deny flip the approval at once; the server's answer (or its refusal) replaces the
 * guess. Restore is never optimistic: it is destructive and its outcome comes from events.
 */
function optimistic(): OptimisticMutationConfig {
  const decide =
    (status: 'GRANTED' | 'DENIED') => (args: Record<string, unknown>, cache: Cache) => {
      const input = args.input as Row | undefined;
      if (!input || typeof input.toolCallId !== 'string') return null;
      const toolCallKey = cache.keyOfEntity({
        __typename: 'StudioToolCall',
        toolCallId: input.toolCallId,
      });
      const approvalKey = toolCallKey ? cache.resolve(toolCallKey, 'approval') : null;
      const approvalId =
        typeof approvalKey === 'string' ? cache.resolve(approvalKey, 'approvalId') : null;
      if (typeof approvalId !== 'string') return null;
      return {
        __typename: 'AgentApproval',
        approvalId,
        status,
        approved: status === 'GRANTED',
        rejected: status === 'DENIED',
      };
    };
  return {
    crowdyStudioAgentApproveTool: decide('GRANTED'),
    crowdyStudioAgentRejectTool: decide('DENIED'),
  };
}

/**
 * The production Graphcache configuration: schema-aware, a key for every keyable type, an
 * updater for every mutation, and the subscription updaters that write live events into the
 * newest fixed-size page and keep session lists and the inbox current. Tests use this exact
 * config with a real urql Client.
 */
export function makeCacheConfig(): CacheExchangeOpts {
  const progress: CallProgress = { calls: new Map(), approvals: new Map() };
  return {
    schema: schema as unknown as CacheExchangeOpts['schema'],
    keys: keys(),
    optimistic: optimistic(),
    resolvers: {
      // After writing a subscription result Graphcache reads the whole document back, which for
      // a batch was every event with its whole tool call (as costly as the write, for a result
      // nobody reads: the stream's hook only watches errors). The events live in their pages,
      // which the timeline reads; read back, a batch has none (ARCHITECTURE.md, "Why this shape").
      // The same for its calls: they live in their entities, which cards read by key.
      StudioAgentEventBatch: { events: () => [], studioToolCalls: () => [] },
      // Entities read by key: a card asks for one tool call or question and gets the cached
      // entity that events keep current (the network only when it was never seen).
      Query: {
        studioToolCall: (_parent, args) => ({
          __typename: 'StudioToolCall',
          toolCallId: args.toolCallId as string,
        }),
        studioQuestion: (_parent, args) => ({
          __typename: 'StudioQuestion',
          questionId: args.questionId as string,
        }),
        studioCheckpoint: (_parent, args) => ({
          __typename: 'StudioCheckpoint',
          checkpointId: args.checkpointId as string,
        }),
        crowdyStudioAgentSession: (_parent, args) => ({
          __typename: 'AgentSession',
          sessionId: args.sessionId as string,
        }),
      },
    },
    updates: {
      Mutation: mutationUpdates(progress),
      Subscription: {
        studioAgentEventBatches: (result, args, cache) => {
          const batch = result.studioAgentEventBatches as Row | null | undefined;
          const events = Array.isArray(batch?.events) ? (batch.events as Row[]) : [];
          const sessionId = typeof args.sessionId === 'string' ? args.sessionId : batch?.sessionId;
          if (typeof sessionId !== 'string' || events.length === 0) return;
          const calls = Array.isArray(batch?.studioToolCalls)
            ? (batch.studioToolCalls as Row[])
            : [];
          noteCallProgress(progress, events, calls);
          linkEventsIntoPages(cache, sessionId, events);
          unlinkUnheldPages(cache, sessionId);
          advanceSession(cache, sessionId, events);
          applyCheckpointEvents(cache, sessionId, events);
        },
        studioSessionUpdates: (result, _args, cache) => {
          const session = result.studioSessionUpdates as Row | null | undefined;
          if (!session || typeof session !== 'object') return;
          linkSessionIntoLists(cache, session);
          refreshInboxIfChanged(cache, session);
        },
      },
    },
  };
}

/** The app id of this single-tenant studio (the contract's appId argument). */
export const APP_ID = LOCAL_APP_ID;
