/**
 * Test harness for the server suite: the real studio server in-process on port 0 with a temp data
 * dir, the real urql Client (fetchExchange + subscriptionExchange over graphql-ws with `ws`), and
 * bounded waits that poll History or listen to subscriptions. Nothing here is mocked.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import WebSocket from 'ws';
import { Client, fetchExchange, subscriptionExchange } from '@urql/core';
import type { CombinedError, OperationResult } from '@urql/core';
import { createClient as createWsClient } from 'graphql-ws';
import type { Client as WsClient } from 'graphql-ws';
import { onEnd, pipe, subscribe } from 'wonka';
import { startStudioServer } from '../../server/app.ts';
import type { StudioServer, StudioServerOptions } from '../../server/app.ts';
import type { EventDraft } from '../../server/engine/eventDrafts.ts';
import { harnessDatabaseUrl, releaseHarnessDatabase } from '../support/harnessStore.ts';

/** A started server plus what the tests need around it. */
export interface Harness {
  server: StudioServer;
  dataDir: string;
  /** Every log line the server wrote (through the logWrite option). */
  logs: string[];
  httpUrl: string;
  wsUrl: string;
  token: string;
  /** Closes the server (keeps the data dir, for restart tests). */
  close(): Promise<void>;
  /** Closes the server and the clients made from it, then removes the data dir. */
  dispose(): Promise<void>;
  track(dispose: () => void | Promise<void>): void;
}

export type HarnessOptions = Partial<Omit<StudioServerOptions, 'port' | 'logWrite'>> & {
  /** Reuse a data dir (a restart); otherwise a fresh temp dir is made. */
  dataDir?: string;
  /** Keep the data dir when disposing (the caller removes it). */
  keepDataDir?: boolean;
};

export function makeTempDir(prefix = 'studio-test-'): string {
  return fs.mkdtempSync(join(os.tmpdir(), prefix));
}

/** Starts the real server on port 0. Defaults: demo on, demoStepMs 0, no web app, all log lines kept. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const { keepDataDir, ...rest } = options;
  const dataDir = options.dataDir ?? makeTempDir();
  const logs: string[] = [];
  // The store under test (STUDIO_TEST_STORE): SQLite in the data dir, or a PostgreSQL database.
  const databaseUrl =
    rest.databaseUrl !== undefined ? rest.databaseUrl : await harnessDatabaseUrl(dataDir);
  const server = await startStudioServer({
    demoStepMs: 0,
    staticDir: null,
    quiet: false,
    ...rest,
    databaseUrl,
    dataDir,
    port: 0,
    logWrite: (line) => logs.push(line),
  });
  const disposers: (() => void | Promise<void>)[] = [];
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    for (const d of disposers.splice(0).reverse()) await d();
    await server.close();
  };
  return {
    server,
    dataDir,
    logs,
    httpUrl: `${server.url}/graphql`,
    wsUrl: `ws://${server.host}:${server.port}/graphql`,
    token: server.token,
    close,
    dispose: async () => {
      await close();
      if (!keepDataDir) {
        fs.rmSync(dataDir, { recursive: true, force: true });
        await releaseHarnessDatabase(dataDir);
      }
    },
    track: (d) => {
      disposers.push(d);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------------------------

/** A `ws` WebSocket that remembers its instances, so a test can pause or kill the real socket. */
export function trackedWebSocket(): { impl: unknown; sockets: WebSocket[] } {
  const sockets: WebSocket[] = [];
  class Tracked extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols);
      sockets.push(this);
    }
  }
  return { impl: Tracked, sockets };
}

export interface StudioClient {
  urql: Client;
  ws: WsClient;
  /** The real sockets the graphql-ws client opened (newest last). */
  sockets: WebSocket[];
  dispose(): Promise<void>;
}

/** The real urql Client: fetchExchange for HTTP, subscriptionExchange over a graphql-ws client. */
export function makeClient(h: Harness, options: { token?: string } = {}): StudioClient {
  const token = options.token ?? h.token;
  const { impl, sockets } = trackedWebSocket();
  const ws = createWsClient({
    url: h.wsUrl,
    webSocketImpl: impl,
    connectionParams: { Authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: true,
  });
  const urql = new Client({
    url: h.httpUrl,
    preferGetMethod: false,
    requestPolicy: 'network-only',
    fetchOptions: () => ({ headers: { Authorization: `Bearer ${token}` } }),
    exchanges: [
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({
            unsubscribe: ws.subscribe({ ...request, query: request.query ?? '' }, sink),
          }),
        }),
      }),
    ],
  });
  const client: StudioClient = {
    urql,
    ws,
    sockets,
    dispose: async () => {
      await ws.dispose();
    },
  };
  h.track(client.dispose);
  return client;
}

/** The error code of a failed operation (`extensions.code` of its first GraphQL error). */
export function codeOf(error: CombinedError | undefined | null): string | undefined {
  const code = error?.graphQLErrors[0]?.extensions?.code;
  return typeof code === 'string' ? code : undefined;
}

export type Vars = Record<string, unknown>;

/** Runs a query or mutation through urql; returns the whole result (data or error). */
export async function run<T = Record<string, unknown>>(
  c: StudioClient,
  document: string,
  variables: Vars = {},
): Promise<OperationResult<T>> {
  const isMutation = /^\s*mutation\b/.test(document);
  const op = isMutation
    ? c.urql.mutation<T>(document, variables)
    : c.urql.query<T>(document, variables);
  return op.toPromise();
}

/** Runs an operation that must succeed and returns its data. */
export async function ok<T = Record<string, unknown>>(
  c: StudioClient,
  document: string,
  variables: Vars = {},
): Promise<T> {
  const result = await run<T>(c, document, variables);
  if (result.error)
    throw new Error(
      `GraphQL failed: ${result.error.message} (${codeOf(result.error) ?? 'no code'})`,
    );
  if (!result.data) throw new Error('GraphQL returned no data');
  return flattenFilePages(result.data) as T;
}

/**
 * Manifests are served paged (`files(first, after) { edges { node } }`); the tests compare whole
 * lists, so a `files` connection that fits one page comes back as its array of nodes.
 */
function flattenFilePages(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(flattenFilePages);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const page = v as { edges?: { node: unknown }[]; pageInfo?: { hasNextPage: boolean } } | null;
    if (k === 'files' && page && Array.isArray(page.edges)) {
      if (page.pageInfo?.hasNextPage)
        throw new Error('a files page in a test did not hold every file');
      out[k] = page.edges.map((e) => e.node);
    } else out[k] = flattenFilePages(v);
  }
  return out;
}

/** Runs an operation that must fail and returns its error code. */
export async function failCode(
  c: StudioClient,
  document: string,
  variables: Vars = {},
): Promise<string | undefined> {
  const result = await run(c, document, variables);
  if (!result.error) throw new Error(`expected an error, got ${JSON.stringify(result.data)}`);
  return codeOf(result.error);
}

export function key(label = 'k'): string {
  return `test:${label}:${randomUUID()}`;
}

// ---------------------------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------------------------

/**
 * Every event member's fields a test reads. Fields whose types differ between members
 * (status, reason, clientEpoch, argumentHash) are aliased, as the contract requires.
 */
export const EVENT_FIELDS = `
  __typename
  ... on AgentEventBase { protocolVersion eventId sessionId seq type runId createdAt }
  ... on AgentLifecycleEvent { lifecycleEpoch: clientEpoch replayAfterSeq lifecycleReason: reason }
  ... on AgentToolEvent { toolCallId toolName toolStatus: status toolArgumentHash: argumentHash resultJson toolError: error { code } }
  ... on AgentApprovalEvent { approvalId approvalToolCallId: toolCallId argumentHash approvalStatus: status expiresAt }
  ... on AgentCheckpointEvent { checkpointId projectRevision contentHash checkpointReason: reason restoredAt files { target path contentHash byteLength } }
  ... on AgentRunEvent { code }
  ... on AgentMessageEvent { messageId content }
  ... on StudioLogEvent { message }
`;

export interface CheckpointFile {
  target: string;
  path: string;
  contentHash: string;
  byteLength: number;
}

/** An event as EVENT_FIELDS selects it. */
export interface Ev {
  __typename: string;
  protocolVersion: string;
  eventId: string;
  sessionId: string;
  seq: string;
  type: string;
  runId: string | null;
  createdAt: string;
  lifecycleEpoch?: string | null;
  replayAfterSeq?: string | null;
  lifecycleReason?: string | null;
  toolCallId?: string;
  toolName?: string;
  toolStatus?: string;
  toolArgumentHash?: string | null;
  resultJson?: string | null;
  toolError?: { code: string } | null;
  approvalId?: string;
  approvalToolCallId?: string;
  argumentHash?: string;
  approvalStatus?: string;
  expiresAt?: string;
  checkpointId?: string;
  projectRevision?: string;
  contentHash?: string;
  checkpointReason?: string;
  restoredAt?: string | null;
  files?: CheckpointFile[];
  code?: string | null;
  messageId?: string;
  content?: string;
  message?: string;
}

export const HISTORY = `query History($sessionId: String!, $afterSeq: BigInt, $first: Int) {
  crowdyStudioAgentHistory(sessionId: $sessionId, afterSeq: $afterSeq, first: $first) {
    hasMore
    pageInfo { hasNextPage endCursor }
    edges { cursor node { ${EVENT_FIELDS} } }
    events { ${EVENT_FIELDS} }
  }
}`;

export interface HistoryPage {
  crowdyStudioAgentHistory: {
    hasMore: boolean;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    edges: { cursor: string; node: Ev }[];
    events: Ev[];
  };
}

export const SESSION_FIELDS = `sessionId appId projectId mode status lastEventSeq currentClientEpoch clientEpoch createdAt
  studioTitle studioSource
  currentRun { runId status }
  activeRun { runId status }
  pendingApproval { approvalId toolCallId argumentHash status expiresAt }`;

export interface SessionData {
  sessionId: string;
  appId: string;
  projectId: string | null;
  mode: string;
  status: string;
  lastEventSeq: string;
  currentClientEpoch: string;
  clientEpoch: string | null;
  createdAt: string;
  studioTitle: string | null;
  studioSource: string;
  currentRun: { runId: string; status: string } | null;
  activeRun: { runId: string; status: string } | null;
  pendingApproval: {
    approvalId: string;
    toolCallId: string;
    argumentHash: string;
    status: string;
    expiresAt: string;
  } | null;
}

export const SESSION = `query Session($sessionId: String!) { crowdyStudioAgentSession(sessionId: $sessionId) { ${SESSION_FIELDS} } }`;

export const CREATE_SESSION = `mutation Create($input: CreateAgentSessionInput!) {
  crowdyStudioAgentCreateSession(input: $input) { ${SESSION_FIELDS} }
}`;

export const ATTACH = `mutation Attach($input: AttachAgentClientInput!) {
  crowdyStudioAgentAttachClient(input: $input) { clientEpoch replayAfterSeq session { ${SESSION_FIELDS} } }
}`;

export const HEARTBEAT = `mutation Heartbeat($input: AgentHeartbeatInput!) {
  crowdyStudioAgentHeartbeat(input: $input) { serverTime playLeaseFreshUntil workspaceLeaseExpiresAt }
}`;

export const ACK = `mutation Ack($input: AcknowledgeAgentEventsInput!) {
  crowdyStudioAgentAcknowledgeEvents(input: $input) { throughSeq }
}`;

export const SEND = `mutation Send($input: SendAgentMessageInput!) {
  crowdyStudioAgentSendMessage(input: $input) { runId status }
}`;

const APPROVAL_FIELDS = `approvalId toolCallId argumentHash status safeSummary clientEpoch expiresAt approved rejected
  studioSessionId studioReasons studioDecidedAt`;

export interface ApprovalData {
  approvalId: string;
  toolCallId: string;
  argumentHash: string;
  status: string;
  safeSummary: string;
  clientEpoch: string;
  expiresAt: string;
  approved: boolean;
  rejected: boolean;
  studioSessionId: string;
  studioReasons: string[];
  studioDecidedAt: string | null;
}

export const APPROVE = `mutation Approve($input: DecideAgentToolInput!) {
  crowdyStudioAgentApproveTool(input: $input) { ${APPROVAL_FIELDS} }
}`;

export const REJECT = `mutation Reject($input: DecideAgentToolInput!) {
  crowdyStudioAgentRejectTool(input: $input) { ${APPROVAL_FIELDS} }
}`;

const CHECKPOINT_FIELDS = `checkpointId sessionId projectId projectRevision contentHash reason fileCount totalBytes createdAt restoredAt exactPreImage
  files(first: 500) { pageInfo { hasNextPage } edges { node { target path contentHash byteLength } } }`;

export interface CheckpointData {
  checkpointId: string;
  sessionId: string;
  projectId: string;
  projectRevision: string;
  contentHash: string;
  reason: string;
  fileCount: number;
  totalBytes: string;
  createdAt: string;
  restoredAt: string | null;
  exactPreImage: boolean;
  files: CheckpointFile[];
}

export const CREATE_CHECKPOINT = `mutation Checkpoint($input: StudioCreateCheckpointInput!) {
  studioCreateCheckpoint(input: $input) { ${CHECKPOINT_FIELDS} }
}`;

export const CHECKPOINTS = `query Checkpoints($sessionId: String!, $after: String, $first: Int) {
  studioCheckpoints(sessionId: $sessionId, after: $after, first: $first) {
    supported
    pageInfo { hasNextPage endCursor }
    edges { cursor node { ${CHECKPOINT_FIELDS} } }
  }
}`;

export const REQUEST_RESTORE = `mutation RequestRestore($input: StudioCheckpointRestoreInput!) {
  studioRequestCheckpointRestore(input: $input) { ${APPROVAL_FIELDS} }
}`;

export const PROJECT = `query Project($sessionId: String!) {
  studioProject(sessionId: $sessionId) { projectId name revision contentHash
    files(first: 500) { pageInfo { hasNextPage } edges { node { target path contentHash byteLength } } } }
}`;

export interface ProjectData {
  projectId: string;
  name: string;
  revision: string;
  contentHash: string;
  files: CheckpointFile[];
}

export const EVENTS_SUBSCRIPTION = `subscription Events($sessionId: String!, $afterSeq: BigInt!, $clientEpoch: BigInt!) {
  crowdyStudioAgentEvents(sessionId: $sessionId, afterSeq: $afterSeq, clientEpoch: $clientEpoch) { ${EVENT_FIELDS} }
}`;

export const BATCHES_SUBSCRIPTION = `subscription Batches($sessionId: String!, $afterSeq: BigInt!, $clientEpoch: BigInt, $maxBatch: Int) {
  studioAgentEventBatches(sessionId: $sessionId, afterSeq: $afterSeq, clientEpoch: $clientEpoch, maxBatch: $maxBatch) {
    sessionId fromSeq throughSeq events { ${EVENT_FIELDS} }
  }
}`;

export interface Batch {
  sessionId: string;
  fromSeq: string;
  throughSeq: string;
  events: Ev[];
}

// ---------------------------------------------------------------------------------------------
// Protocol helpers
// ---------------------------------------------------------------------------------------------

/** Creates a session through the contract (owned by the demo agent). */
export async function createSession(
  c: StudioClient,
  mode: 'ASK' | 'BUILD',
  projectId = 'sample-app',
): Promise<SessionData> {
  const data = await ok<{ crowdyStudioAgentCreateSession: SessionData }>(c, CREATE_SESSION, {
    input: { idempotencyKey: key('create'), appId: '1', projectId, mode },
  });
  return data.crowdyStudioAgentCreateSession;
}

export interface Attachment {
  sessionId: string;
  clientEpoch: string;
  replayAfterSeq: string;
  session: SessionData;
}

export async function attach(
  c: StudioClient,
  sessionId: string,
  clientInstanceId?: string,
): Promise<Attachment> {
  const data = await ok<{ crowdyStudioAgentAttachClient: Omit<Attachment, 'sessionId'> }>(
    c,
    ATTACH,
    {
      input: {
        idempotencyKey: key('attach'),
        sessionId,
        ...(clientInstanceId ? { clientInstanceId } : {}),
      },
    },
  );
  return { sessionId, ...data.crowdyStudioAgentAttachClient };
}

/** Heart-beats an attachment every `everyMs` until the returned stop function is called. */
export function keepAlive(c: StudioClient, a: Attachment, everyMs = 500): () => void {
  const timer = setInterval(() => {
    void run(c, HEARTBEAT, {
      input: { idempotencyKey: key('hb'), sessionId: a.sessionId, clientEpoch: a.clientEpoch },
    });
  }, everyMs);
  return () => clearInterval(timer);
}

export async function sendMessage(
  c: StudioClient,
  a: Attachment,
  content: string,
): Promise<{ runId: string; status: string }> {
  const data = await ok<{ crowdyStudioAgentSendMessage: { runId: string; status: string } }>(
    c,
    SEND,
    {
      input: {
        idempotencyKey: key('send'),
        sessionId: a.sessionId,
        clientEpoch: a.clientEpoch,
        content,
      },
    },
  );
  return data.crowdyStudioAgentSendMessage;
}

export function decideInput(
  a: Attachment,
  approval: { toolCallId: string; argumentHash: string },
  extra: Vars = {},
): Vars {
  return {
    input: {
      idempotencyKey: key('decide'),
      sessionId: a.sessionId,
      clientEpoch: a.clientEpoch,
      toolCallId: approval.toolCallId,
      argumentHash: approval.argumentHash,
      ...extra,
    },
  };
}

/** Every event of a session, paging History (200 at a time) from `afterSeq`. */
export async function history(c: StudioClient, sessionId: string, afterSeq = '0'): Promise<Ev[]> {
  const out: Ev[] = [];
  let cursor = afterSeq;
  for (;;) {
    const page = (await ok<HistoryPage>(c, HISTORY, { sessionId, afterSeq: cursor, first: 200 }))
      .crowdyStudioAgentHistory;
    out.push(...page.events);
    const last = page.events[page.events.length - 1];
    if (!page.hasMore || !last) return out;
    cursor = last.seq;
  }
}

export async function getSession(c: StudioClient, sessionId: string): Promise<SessionData> {
  return (await ok<{ crowdyStudioAgentSession: SessionData }>(c, SESSION, { sessionId }))
    .crowdyStudioAgentSession;
}

export async function getProject(c: StudioClient, sessionId: string): Promise<ProjectData> {
  const data = await ok<{ studioProject: ProjectData | null }>(c, PROJECT, { sessionId });
  if (!data.studioProject) throw new Error('no project');
  return data.studioProject;
}

/** A checkpoint's whole manifest, read through the paged `StudioCheckpoint.files`. */
export async function checkpointManifest(
  c: StudioClient,
  checkpointId: string,
): Promise<CheckpointFile[]> {
  const out: CheckpointFile[] = [];
  let after: string | null = null;
  for (;;) {
    const data: {
      studioCheckpoint: {
        files: {
          edges: { cursor: string; node: CheckpointFile }[];
          pageInfo: { hasNextPage: boolean; endCursor: string | null };
        };
      } | null;
    } = await run<never>(c, CHECKPOINT_FILES, { checkpointId, after }).then((r) => {
      if (r.error || !r.data) throw new Error(`GraphQL failed: ${r.error?.message}`);
      return r.data as never;
    });
    if (!data.studioCheckpoint) throw new Error(`no checkpoint ${checkpointId}`);
    out.push(...data.studioCheckpoint.files.edges.map((e) => e.node));
    if (!data.studioCheckpoint.files.pageInfo.hasNextPage) return out;
    after = data.studioCheckpoint.files.pageInfo.endCursor;
  }
}

const CHECKPOINT_FILES = `query CheckpointFiles($checkpointId: String!, $after: String) {
  studioCheckpoint(checkpointId: $checkpointId) {
    files(first: 500, after: $after) {
      pageInfo { hasNextPage endCursor }
      edges { cursor node { target path contentHash byteLength } }
    }
  }
}`;

export async function listCheckpoints(
  c: StudioClient,
  sessionId: string,
): Promise<CheckpointData[]> {
  const data = await ok<{ studioCheckpoints: { edges: { node: CheckpointData }[] } }>(
    c,
    CHECKPOINTS,
    { sessionId, first: 50 },
  );
  return data.studioCheckpoints.edges.map((e) => e.node);
}

// ---------------------------------------------------------------------------------------------
// Waiting (bounded)
// ---------------------------------------------------------------------------------------------

/** Polls `probe` until it returns a value other than undefined/false; fails after `timeoutMs`. */
export async function waitUntil<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 10_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Polls History until an event matches; returns it with the whole history read. */
export async function waitForEvent(
  c: StudioClient,
  sessionId: string,
  match: (e: Ev) => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<{ event: Ev; events: Ev[] }> {
  return waitUntil(
    async () => {
      const events = await history(c, sessionId);
      const event = events.find(match);
      return event ? { event, events } : undefined;
    },
    what,
    timeoutMs,
    50,
  );
}

/** Polls History until the session's current run is over (RUN_SUCCEEDED/FAILED/...) for `runId`. */
export async function waitForRunEnd(
  c: StudioClient,
  sessionId: string,
  runId: string,
): Promise<Ev[]> {
  const terminal = new Set(['RUN_SUCCEEDED', 'RUN_FAILED', 'RUN_CANCELLED', 'RUN_PREEMPTED']);
  const { events } = await waitForEvent(
    c,
    sessionId,
    (e) => e.runId === runId && terminal.has(e.type),
    `end of run ${runId}`,
  );
  return events;
}

/** The events of `events` whose type is in `types`, as their types, in order. */
export function typesOf(events: Ev[], types?: readonly string[]): string[] {
  return events.filter((e) => !types || types.includes(e.type)).map((e) => e.type);
}

/** Asserts helper: seqs are exactly from..through, ascending, each once. */
export function seqGaps(seqs: readonly string[], from: bigint, through: bigint): string[] {
  const problems: string[] = [];
  let expected = from;
  for (const s of seqs) {
    if (BigInt(s) !== expected) problems.push(`expected ${expected}, got ${s}`);
    expected = BigInt(s) + 1n;
  }
  if (expected !== through + 1n) problems.push(`ended at ${expected - 1n}, wanted ${through}`);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Subscriptions
// ---------------------------------------------------------------------------------------------

export interface Collector<T> {
  items: T[];
  errors: CombinedError[];
  /** Resolves when the stream ended (completed or failed). */
  ended: Promise<void>;
  isEnded(): boolean;
  waitFor(predicate: (items: T[]) => boolean, what: string, timeoutMs?: number): Promise<void>;
  unsubscribe(): void;
}

/** Subscribes through urql and collects every `data[field]` and every error. */
export function collect<T>(
  c: StudioClient,
  document: string,
  variables: Vars,
  field: string,
): Collector<T> {
  const items: T[] = [];
  const errors: CombinedError[] = [];
  let ended = false;
  let signalEnd: () => void = () => {};
  const endedPromise = new Promise<void>((resolve) => (signalEnd = resolve));
  const end = () => {
    ended = true;
    signalEnd();
  };
  const source = c.urql.subscription<Record<string, T>>(document, variables);
  let lastData: Record<string, T> | undefined;
  const sub = pipe(
    source,
    onEnd(end),
    subscribe((result) => {
      // urql carries the previous data into an error result and re-emits the last result on
      // completion, so only new data objects and new errors are recorded.
      if (result.error) {
        const seen = errors.some(
          (e) => e.message === result.error?.message && codeOf(e) === codeOf(result.error),
        );
        if (!seen) errors.push(result.error);
        return;
      }
      if (result.data === lastData) return;
      lastData = result.data;
      const value = result.data?.[field];
      if (value !== undefined && value !== null) items.push(value);
    }),
  );
  return {
    items,
    errors,
    ended: endedPromise,
    isEnded: () => ended,
    waitFor: async (predicate, what, timeoutMs = 10_000) => {
      await waitUntil(
        () => {
          if (predicate(items)) return true;
          if (errors.length > 0)
            throw new Error(`stream failed while waiting for ${what}: ${errors[0]?.message}`);
          return false;
        },
        what,
        timeoutMs,
        10,
      );
    },
    unsubscribe: () => sub.unsubscribe(),
  };
}

/** Subscribes with a bare graphql-ws client (no urql) and collects raw payloads. */
export function collectRaw<T>(ws: WsClient, query: string, variables: Vars, field: string) {
  const items: T[] = [];
  const errors: unknown[] = [];
  let completed = false;
  let resolveEnd: () => void = () => {};
  const ended = new Promise<void>((resolve) => (resolveEnd = resolve));
  const unsubscribe = ws.subscribe<Record<string, T>>(
    { query, variables },
    {
      next: (value) => {
        if (value.errors?.length) errors.push(...value.errors);
        const item = value.data?.[field];
        if (item !== undefined && item !== null) items.push(item);
      },
      error: (error) => {
        errors.push(error);
        completed = true;
        resolveEnd();
      },
      complete: () => {
        completed = true;
        resolveEnd();
      },
    },
  );
  return { items, errors, ended, isEnded: () => completed, unsubscribe };
}

// ---------------------------------------------------------------------------------------------
// Disk
// ---------------------------------------------------------------------------------------------

export function projectDir(h: Harness, projectId: string): string {
  return join(h.dataDir, 'projects', projectId);
}

/** Every regular file under `root` (relative `/` path -> content), skipping .git and node_modules. */
export function readTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (abs: string, rel: string) => {
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      if (entry.name === '.git' || entry.name === 'node_modules') continue;
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      const childAbs = join(abs, entry.name);
      if (entry.isDirectory()) visit(childAbs, childRel);
      else if (entry.isFile()) out[childRel] = fs.readFileSync(childAbs, 'utf8');
    }
  };
  if (fs.existsSync(root)) visit(root, '');
  return out;
}

export function sha256(text: string | Buffer): string {
  return 'sha256:' + createHash('sha256').update(text).digest('hex');
}

/** The manifest a checkpoint of `tree` would list (sorted by path, target SERVER). */
export function manifestOf(tree: Record<string, string>): CheckpointFile[] {
  return Object.keys(tree)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((path) => ({
      target: 'SERVER',
      path,
      contentHash: sha256(Buffer.from(tree[path]!, 'utf8')),
      byteLength: Buffer.byteLength(tree[path]!, 'utf8'),
    }));
}

/** The contentHash of a manifest, recomputed independently from the documented recipe. */
export function manifestHash(files: readonly CheckpointFile[]): string {
  const sorted = [...files].sort((a, b) =>
    a.target !== b.target
      ? a.target < b.target
        ? -1
        : 1
      : a.path < b.path
        ? -1
        : a.path > b.path
          ? 1
          : 0,
  );
  const text = JSON.stringify({
    files: sorted.map((f) => ({
      byteLength: f.byteLength,
      contentHash: f.contentHash,
      path: f.path,
      target: f.target,
    })),
  });
  return sha256(Buffer.from(text, 'utf8'));
}

/** A checkpoint's files, sorted by path, reduced to the four manifest fields. */
export function sortedFiles(files: readonly CheckpointFile[]): CheckpointFile[] {
  return [...files]
    .map((f) => ({
      target: f.target,
      path: f.path,
      contentHash: f.contentHash,
      byteLength: f.byteLength,
    }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// Appending from the test (the engine is the one writer; a test may drive it directly)
// ---------------------------------------------------------------------------------------------

/** A STUDIO_LOG draft whose message identifies it, so order can be checked end to end. */
/**
 * One step of a server-side read of README.md, tool call `toolCallId` (status from the type);
 * its arguments and result name the call, so each call's JSON is its own.
 */
export function readToolDraft(
  type: 'TOOL_PROPOSED' | 'TOOL_DISPATCHED' | 'TOOL_SUCCEEDED',
  toolCallId: string,
): EventDraft {
  const status = type === 'TOOL_PROPOSED' ? 'PROPOSED' : type.slice('TOOL_'.length);
  return {
    type,
    runId: null,
    toolCallId,
    toolName: 'workspace.file.read',
    toolVersion: '1.0.0',
    status,
    safeSummary: `Read README.md (${toolCallId})`,
    argumentHash: `sha256:${'a'.repeat(64)}`,
    argumentsJson: `{"path":"README.md","call":"${toolCallId}"}`,
    executor: 'SERVER',
    ...(status === 'SUCCEEDED' ? { resultJson: `{"bytes":120,"call":"${toolCallId}"}` } : {}),
  } as EventDraft;
}

export function logDraft(message: string): EventDraft {
  return { type: 'STUDIO_LOG', level: 'info', message, origin: 'test' };
}

export interface RacingOptions {
  /** Events per commit (default 1). */
  perCommit?: number;
  /** Appended to every message (to make events big). */
  pad?: string;
  /** Keep appending past `count` while this says so (capped at 50 000 events). */
  keepGoing?: () => boolean;
  /** Called after each commit. */
  onCommit?: () => void;
}

/**
 * Appends log events `label-0`, `label-1` ... in commits of `perCommit`, yielding to the event
 * loop between commits so deliveries interleave with them; returns how many it appended.
 */
export async function appendRacing(
  h: Harness,
  sessionId: string,
  count: number,
  label: string,
  options: RacingOptions = {},
): Promise<number> {
  const perCommit = options.perCommit ?? 1;
  let i = 0;
  while (i < count || (options.keepGoing?.() && i < 50_000)) {
    const drafts: EventDraft[] = [];
    for (let j = 0; j < perCommit; j++, i++)
      drafts.push(logDraft(`${label}-${i}${options.pad ?? ''}`));
    // Awaited: each commit lands before the next starts (their order is the test's).
    await h.server.engine.append(sessionId, drafts);
    options.onCommit?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return i;
}

/** Appends `count` log events at once, in commits of 500 (no yielding). */
export async function appendMany(
  h: Harness,
  sessionId: string,
  count: number,
  label: string,
): Promise<void> {
  for (let i = 0; i < count; i += 500) {
    const drafts: EventDraft[] = [];
    for (let j = i; j < Math.min(count, i + 500); j++) drafts.push(logDraft(`${label}-${j}`));
    await h.server.engine.append(sessionId, drafts);
  }
}
