/**
 * The engine: the one writer of the event log. It assigns seq, appends events and updates the
 * current state in one transaction, wakes subscribers after commit, enforces the protocol rules
 * (epochs, heartbeats, approvals, idempotency) and routes human actions to the session's source.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Store } from '../store/Store.ts';
import { Kernel, type Db, type Reads } from './kernel.ts';
import { JOBS_CHANNEL, JobWorker } from './jobs.ts';
import { IDEMPOTENCY_RETENTION_MS, Idempotency } from './idempotency.ts';
import { Attachments } from './attachments.ts';
import type { JobRecord, JobStatus } from '../store/Store.ts';
import type {
  ApprovalRecord,
  ApprovalRuleRecord,
  CheckpointRecord,
  ProjectRecord,
  RestoreJobRecord,
  SessionRecord,
  ToolCallRecord,
} from '../store/records.ts';
import type { EventDraft, StoredEvent } from './eventDrafts.ts';
import type { Logger } from '../logger.ts';
import type {
  QuestionAnswer,
  SessionInfo,
  SessionSpec,
  Source,
  SourceHost,
  SourceStatus,
  ToolDecision,
} from '../sources/Source.ts';
import { project } from './projector.ts';
import { approvalFieldsOf, leaseEndedDraft } from './recordDrafts.ts';
import { revocationDrafts, revocationsBefore } from './approvalLifecycle.ts';
import {
  buildRule,
  decidingRule,
  noteRuleUse,
  revokeRule,
  updateRule,
  type CreateRuleInput,
  type UpdateRuleInput,
} from './approvalRules.ts';
import { agentsStopped, readPolicy, writePolicy } from './agentPolicy.ts';
import type { AgentPolicyRecord, SetPolicyInput } from './agentPolicy.ts';
import { computeProposalDiff } from './proposalDiff.ts';
import type { DiffTarget, ProposedFileChange } from './proposalDiff.ts';
import { StudioError } from './StudioError.ts';
import { normalizeRestorePaths, selectedManifest } from './restoreSelection.ts';
import { validateDraft } from './validateDraft.ts';
import { registryDigest, toolsForMode } from './toolRegistry.ts';
import { canonicalJson } from '../workspace/canonicalJson.ts';
import {
  canonicalManifestHash,
  diffManifests,
  sha256Digest,
  sortManifest,
} from '../workspace/manifest.ts';
import { ContentStore } from '../workspace/contentStore.ts';
import { ProjectWorkspace, type RestoreResult } from '../workspace/ProjectWorkspace.ts';
import type { CapturePatterns } from '../workspace/ignoreRules.ts';
import type { ManifestFile } from '../workspace/manifest.ts';
import { WorkspaceError } from '../workspace/WorkspaceError.ts';
import {
  GC_GRACE_MS,
  eventFilesFor,
  isRetained,
  totalBytes,
  type EventFiles,
} from './checkpointContent.ts';
import { Notifier, SESSION_CHANNEL, SESSION_UPDATE_CHANNEL, SOURCES_CHANNEL } from './Notifier.ts';
import {
  ErrorCode,
  EVENT_PROTOCOL_VERSION,
  HEARTBEAT_STALE_MS,
  APPROVAL_TTL_MAX_MS,
  LOCAL_APP_ID,
  MAX_DECISION_REASON,
  MAX_USER_MESSAGE_BYTES,
  WORKSPACE_LEASE_MS,
} from '../../protocol/contract.ts';
import {
  EVENT_TYPE_MEMBER,
  RUN_EVENT_STATUS,
  TERMINAL_RUN_STATUSES,
  TERMINAL_TOOL_STATUSES,
} from '../../protocol/events.ts';
import type { AgentMode } from '../../protocol/events.ts';

export interface EngineOptions {
  store: Store;
  dataDir: string;
  logger: Logger;
  /** Approval lifetime (default and maximum 120 s). */
  approvalTtlMs?: number;
  /** Silence after which an attachment is detached (default 5 s). */
  heartbeatStaleMs?: number;
  workspaceLeaseMs?: number;
  /** How often timers (expiry, heartbeats, leases) are checked. */
  sweepIntervalMs?: number;
  /** Per-file cap of checkpoints (bytes) for projects that do not set their own; default 50 MiB. */
  checkpointMaxFileBytes?: number;
  /** How long idempotency records are kept (default 24 h; see idempotency.ts). */
  idempotencyRetentionMs?: number;
  /**
   * Test-only: called at each named durable step (FAULT_STEPS); the crash test kills the process
   * there with SIGKILL to check that a restart finishes or fails what was decided.
   */
  faultInjector?: (step: FaultStep) => void;
  now?: () => number;
}

/** The durable steps of a decision and the effect it authorizes, in order (crash tests). */
export const FAULT_STEPS = [
  'decision-committed',
  'job-claimed',
  'restore-started',
  'restore-written',
  'restore-committed',
] as const;
export type FaultStep = (typeof FAULT_STEPS)[number];

export interface DecideInput {
  sessionId: string;
  clientEpoch: string;
  toolCallId: string;
  argumentHash: string;
  reason?: string | null;
}

export interface ProposeInput {
  sessionId: string;
  runId: string | null;
  toolCallId?: string;
  toolName: string;
  toolVersion?: string;
  executor?: 'SERVER' | 'BROWSER';
  /** The full arguments; hashed into argumentHash and kept (canonical) on the tool call. */
  arguments: Record<string, unknown>;
  safeSummary: string;
  reasons: string[];
  ttlMs?: number;
  askedBy?: string | null;
  foreignId?: string;
  /**
   * The files the call would write (null content deletes). The engine diffs them against the
   * project folder, shows the diff on the card and binds the files' current hashes into the hash.
   */
  fileChanges?: ProposedFileChange[];
}

/** Something to do once an append committed (a source is told, an engine tool runs). */
type AfterCommit =
  | { kind: 'revoked'; approval: ApprovalRecord }
  | { kind: 'stopRun'; sessionId: string; runId: string };

/** `contentHash` of the empty manifest `{"files":[]}`. */
const EMPTY_MANIFEST_HASH = canonicalManifestHash([]);

/** How often the sweep prunes idempotency records past their retention. */
const PRUNE_INTERVAL_MS = 60_000;

/** How long a decision being delivered to a runtime holds its approval (see decidingClaim). */
const DECIDING_CLAIM_MS = 30_000;

/** Tools the engine itself executes after approval, whatever the session's source. */
const ENGINE_TOOLS = new Set(['project.checkpoint.restore']);

export class Engine {
  /** The store's only holder; rule code reaches the store through `db` (see kernel.ts). */
  private readonly kernel: Kernel;
  private readonly db: Db;
  /**
   * What views read (resolvers, subscriptions, sources): the current state and the log, no
   * writes. Each call is its own read-only transaction; `snapshot` groups reads in one.
   */
  readonly reads: Reads;
  private readonly idempotency: Idempotency;
  private readonly attachments: Attachments;
  private readonly worker: JobWorker;
  /** How long idempotency records are kept (pruned by the sweep). */
  readonly idempotencyRetentionMs: number;
  private lastPruneMs = 0;
  private readonly fault: (step: FaultStep) => void;
  readonly logger: Logger;
  readonly notifier = new Notifier();
  readonly contentStore: ContentStore;
  private readonly dataDir: string;
  private readonly sources = new Map<string, Source>();
  private readonly sourceStatus = new Map<
    string,
    { status: SourceStatus; detail: string | null }
  >();
  private readonly workspaces = new Map<string, ProjectWorkspace>();
  private readonly checkpointMaxFileBytes: number | undefined;
  private readonly clock: () => number;
  readonly approvalTtlMs: number;
  readonly heartbeatStaleMs: number;
  readonly workspaceLeaseMs: number;
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;
  private readonly sweepIntervalMs: number;

  constructor(options: EngineOptions) {
    this.logger = options.logger;
    this.fault = options.faultInjector ?? (() => undefined);
    this.kernel = new Kernel(options.store);
    this.db = this.kernel.db;
    this.reads = this.kernel.reads;
    this.kernel.onNotification((n) => {
      if (n.channel === JOBS_CHANNEL) this.worker.wake();
      else this.notifier.deliver(n);
    });
    this.kernel.onStepError = (error) =>
      this.logger.error('after-commit step failed', { error: String(error) });
    this.idempotency = new Idempotency(this.kernel, () => this.now());
    this.idempotencyRetentionMs = options.idempotencyRetentionMs ?? IDEMPOTENCY_RETENTION_MS;
    this.worker = new JobWorker(
      this.kernel,
      this.logger,
      {
        decision: (job) => {
          this.fault('job-claimed');
          return this.runDecisionJob(job);
        },
      },
      () => this.now(),
    );
    this.dataDir = options.dataDir;
    this.clock = options.now ?? Date.now;
    this.approvalTtlMs = Math.min(
      options.approvalTtlMs ?? APPROVAL_TTL_MAX_MS,
      APPROVAL_TTL_MAX_MS,
    );
    this.heartbeatStaleMs = options.heartbeatStaleMs ?? HEARTBEAT_STALE_MS;
    this.attachments = new Attachments({
      kernel: this.kernel,
      db: this.db,
      heartbeatStaleMs: this.heartbeatStaleMs,
      now: () => this.now(),
      iso: (ms?: number) => this.iso(ms),
      requireSession: (id) => this.requireSession(id),
      requireOpen: (session) => this.requireOpen(session),
      append: (id, drafts) => this.append(id, drafts),
    });
    this.workspaceLeaseMs = options.workspaceLeaseMs ?? WORKSPACE_LEASE_MS;
    this.sweepIntervalMs = options.sweepIntervalMs ?? 250;
    this.checkpointMaxFileBytes = options.checkpointMaxFileBytes;
    mkdirSync(join(this.dataDir, 'blobs'), { recursive: true });
    mkdirSync(join(this.dataDir, 'journal'), { recursive: true });
    this.contentStore = new ContentStore(join(this.dataDir, 'blobs'));
  }

  now(): number {
    return this.clock();
  }

  /** Runs `fn` in one read-only transaction: one consistent snapshot (a replay's batches). */
  snapshot<T>(fn: (reads: Reads) => Promise<T>): Promise<T> {
    return this.kernel.read((tx) => fn(tx));
  }

  /** 'sqlite' or 'postgres'. */
  get storeKind(): string {
    return this.kernel.storeKind;
  }

  /** A studio setting kept in the store (the demo seed's marker). */
  setting(key: string): Promise<string | null> {
    return this.db.getMeta(key);
  }

  async setSetting(key: string, value: string): Promise<void> {
    await this.db.putMeta(key, value);
  }

  /** Closes the store (after stop). */
  closeStore(): Promise<void> {
    return this.kernel.close();
  }

  iso(ms = this.now()): string {
    return new Date(ms).toISOString();
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle
  // ------------------------------------------------------------------------------------------

  /** Finishes interrupted restores, then starts the timers. */
  async start(): Promise<void> {
    await this.recoverRestores();
    await this.collectGarbageSafely();
    this.sweepTimer = setInterval(() => {
      // One pass at a time: a slow pass is not overlapped by the next tick.
      if (this.sweeping) return;
      this.sweeping = this.sweep()
        .catch((error: unknown) => this.logger.error('sweep failed', { error: String(error) }))
        .finally(() => (this.sweeping = null));
    }, this.sweepIntervalMs);
    this.sweepTimer.unref();
  }

  /**
   * Starts the outbox worker: first the jobs a stopped server left (a decision's restore, a
   * rule's delivery), then every job as it is enqueued. Called once the sources are added, so a
   * resumed job finds its source and its project folder.
   */
  async startJobs(): Promise<void> {
    await this.worker.start();
  }

  /** Restores approved and started but not finished yet (operations and tests). */
  pendingRestores(): Promise<RestoreJobRecord[]> {
    return this.db.listRestoreJobs();
  }

  /** Outbox jobs in these states (operations and tests). */
  listJobs(statuses: readonly JobStatus[]): Promise<JobRecord[]> {
    return this.db.listJobs(statuses);
  }

  /** Resolves when the outbox has nothing running (tests). */
  jobsIdle(): Promise<void> {
    return this.worker.idle();
  }

  async stop(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    await this.sweeping;
    await this.worker.stop();
    for (const source of this.sources.values()) {
      try {
        await source.stop();
      } catch (error) {
        this.logger.warn('source stop failed', { sourceId: source.sourceId, error: String(error) });
      }
    }
    this.notifier.closeAll();
  }

  async addSource(source: Source): Promise<void> {
    if (this.sources.has(source.sourceId))
      throw new Error(`source ${source.sourceId} already added`);
    this.sources.set(source.sourceId, source);
    this.sourceStatus.set(source.sourceId, { status: 'CONNECTING', detail: null });
    await source.start(this.hostFor(source.sourceId));
  }

  sourceList(): { sourceId: string; kind: string; status: SourceStatus; detail: string | null }[] {
    return [...this.sources.values()].map((s) => ({
      sourceId: s.sourceId,
      kind: s.sourceId,
      ...(this.sourceStatus.get(s.sourceId) ?? { status: 'STOPPED' as const, detail: null }),
    }));
  }

  async sourceOf(sessionId: string): Promise<Source | undefined> {
    const session = await this.db.getSession(sessionId);
    return session ? this.sources.get(session.source) : undefined;
  }

  private hostFor(sourceId: string): SourceHost {
    return {
      logger: this.logger,
      now: () => this.now(),
      ensureSession: (spec) => this.ensureSession(sourceId, spec),
      findSession: async (id) => {
        const s = await this.db.getSession(id);
        return s ? this.sessionInfo(s) : null;
      },
      append: (id, drafts) => this.append(id, drafts),
      groupCommit: (fn) => this.groupCommit(fn),
      hasForeignId: (id, foreignId) => this.db.hasForeignId(id, foreignId),
      findQuestion: (id, questionId) => this.db.getQuestion(id, questionId),
      proposalDiff: (id, changes) => this.proposalDiffNow(id, changes),
      findApproval: async (id, toolCallId) => {
        const call = await this.db.getToolCall(toolCallId);
        if (!call || call.sessionId !== id || !call.approvalId) return null;
        const approval = await this.db.getApproval(call.approvalId);
        return approval
          ? {
              approvalId: approval.approvalId,
              status: approval.status,
              expiresAt: approval.expiresAt,
            }
          : null;
      },
      setStatus: (status, detail) => {
        this.sourceStatus.set(sourceId, { status, detail: detail ?? null });
        this.notifier.notifySources();
      },
    };
  }

  // ------------------------------------------------------------------------------------------
  // Appending
  // ------------------------------------------------------------------------------------------

  /**
   * Appends drafts to a session's log in one transaction, in order, each with the next seq, and
   * updates the current state. Subscribers are woken after the commit. Drafts whose foreignId is
   * already stored are skipped (a bridge re-reading history appends nothing twice).
   */
  async append(sessionId: string, drafts: EventDraft[]): Promise<StoredEvent[]> {
    for (const draft of drafts) validateDraft(draft);
    return this.kernel.write(async () => {
      const group = this.kernel.groupOf();
      // Appenders of one session queue here (a row lock on PostgreSQL), so seq has no gap.
      await this.db.lockSession(sessionId);
      const found = group?.get(sessionId) ?? (await this.db.getSession(sessionId));
      if (!found) throw new StudioError(ErrorCode.SESSION_NOT_FOUND, `No session ${sessionId}.`);
      // In a group commit, a copy: a refused append leaves the cached record as it was.
      const session = group ? { ...found } : found;
      this.sessionProjects.set(sessionId, session.projectId);
      const effects: AfterCommit[] = [];
      const out: StoredEvent[] = [];
      const queue = [...drafts];
      const expanded = new Set<EventDraft>();
      while (queue.length > 0) {
        const draft = queue.shift()!;
        if (draft.foreignId && (await this.db.hasForeignId(sessionId, draft.foreignId))) continue;
        // Whatever ends what an approval waits on revokes it first, in this same commit.
        if (!expanded.has(draft)) {
          expanded.add(draft);
          const before = await revocationsBefore(this.db, sessionId, draft);
          if (before.drafts.length > 0) {
            queue.unshift(...before.drafts, draft);
            for (const approval of before.revoked) effects.push({ kind: 'revoked', approval });
            continue;
          }
        }
        out.push(await this.appendOne(session, draft));
        queue.unshift(...(await this.afterAppended(session, draft, effects)));
      }
      if (out.length > 0) {
        if (group) group.set(sessionId, session);
        else await this.db.putSession(session);
        // Delivered after commit (the store's notifications); subscribers then pull.
        this.db.notify(SESSION_CHANNEL, sessionId);
        this.db.notify(SESSION_UPDATE_CHANNEL, sessionId);
      }
      if (effects.length > 0) this.kernel.afterCommit(() => this.runAfterCommit(effects));
      return out;
    });
  }

  /** projectId -> the source that starts sessions in it (absent: the demo agent). */
  private readonly projectSources = new Map<string, string>();

  /** Says which source starts new sessions in a project (Claude Code folders). */
  assignProjectSource(projectId: string, sourceId: string): void {
    this.projectSources.set(projectId, sourceId);
  }

  /** Every registered project folder, by name. */
  async listProjects(): Promise<ProjectRecord[]> {
    return this.kernel.read(async (tx) => {
      const found: ProjectRecord[] = [];
      for (const id of this.workspaces.keys()) {
        const project = await tx.getProject(id);
        if (project) found.push(project);
      }
      return found.sort((a, b) => a.name.localeCompare(b.name));
    });
  }

  /** The source that can start sessions in a project (null: none can). */
  projectSourceOf(projectId: string): string | null {
    return this.projectSources.get(projectId) ?? (this.sources.has('demo') ? 'demo' : null);
  }

  /**
   * Group commit for a source's ingest slice (slicedIngest.ts): every append inside joins one
   * transaction, so the slice costs one commit and one fsync, and each session's record is
   * written once at the end instead of once per append.
   */
  async groupCommit<T>(fn: () => Promise<T>): Promise<T> {
    return this.kernel.group(fn);
  }

  /** Inserts one event with the next seq and folds it into the current state. */
  private async appendOne(session: SessionRecord, draft: EventDraft): Promise<StoredEvent> {
    const sessionId = session.sessionId;
    const seq = (BigInt(session.lastEventSeq) + 1n).toString();
    const createdAt = this.iso();
    const event = {
      ...draft,
      eventId: randomUUID(),
      sessionId,
      seq,
      createdAt,
      runId: draft.runId ?? null,
    } as StoredEvent;
    const { type, runId, foreignId, ...fields } = draft;
    void runId;
    // RUN_* drafts may leave status out; store the status the type implies.
    if (Object.hasOwn(RUN_EVENT_STATUS, type) && !('status' in fields && fields.status))
      Object.assign(fields, {
        status: RUN_EVENT_STATUS[type as keyof typeof RUN_EVENT_STATUS],
      });
    // Stored in its served shape, so a replay only parses it.
    const served = {
      ...fields,
      __typename: EVENT_TYPE_MEMBER[type],
      protocolVersion: EVENT_PROTOCOL_VERSION,
      eventId: event.eventId,
      sessionId,
      seq,
      type,
      runId: event.runId,
      version: EVENT_PROTOCOL_VERSION,
      createdAt,
    };
    await this.db.insertEvent({
      sessionId,
      seq: BigInt(seq),
      eventId: event.eventId,
      type,
      runId: event.runId,
      createdAt,
      payload: JSON.stringify(served),
      foreignId: foreignId ?? null,
    });
    await project(this.db, session, event);
    session.lastEventSeq = seq;
    session.updatedAt = createdAt;
    return event;
  }

  /**
   * Rules applied right after a draft is folded, in the same commit: a new approval is revoked
   * while the kill switch is on, or decided by a matching approval rule; a run a runtime starts
   * while the kill switch is on is stopped after the commit.
   */
  private async afterAppended(
    session: SessionRecord,
    draft: EventDraft,
    effects: AfterCommit[],
  ): Promise<EventDraft[]> {
    const policy = await this.policy(session.appId);
    if (draft.type === 'RUN_STARTED' && agentsStopped(policy)) {
      effects.push({ kind: 'stopRun', sessionId: session.sessionId, runId: draft.runId });
      return [];
    }
    if (draft.type !== 'APPROVAL_REQUESTED') return [];
    const approval = await this.db.getApproval(draft.approvalId);
    if (!approval || approval.status !== 'PENDING') return [];
    if (agentsStopped(policy)) {
      effects.push({ kind: 'revoked', approval });
      return await revocationDrafts(this.db, approval, 'the kill switch is on');
    }
    const rule = await decidingRule(this.db, session, approval, this.now());
    if (!rule) return [];
    await noteRuleUse(this.db, rule, approval.toolCallId, this.iso());
    const ruledCall = await this.db.getToolCall(approval.toolCallId);
    if (ruledCall)
      // The runtime hears the rule's decision from the outbox, after this commit.
      await this.enqueueDecision(
        {
          sessionId: approval.sessionId,
          runId: approval.runId,
          toolCallId: ruledCall.toolCallId,
          toolName: ruledCall.toolName,
          approvalId: approval.approvalId,
          argumentHash: approval.argumentHash,
          approved: rule.effect === 'ALLOW',
          reason: rule.effect === 'ALLOW' ? null : `Denied by rule "${rule.name}".`,
        },
        true,
      );
    const base = {
      ...approvalFieldsOf(approval),
      studioRuleId: rule.ruleId,
      studioRuleName: rule.name,
      studioDecidedBy: null,
    };
    if (rule.effect === 'ALLOW') return [{ type: 'APPROVAL_GRANTED', status: 'GRANTED', ...base }];
    const call = await this.db.getToolCall(approval.toolCallId);
    const message = `Denied by rule "${rule.name}".`;
    return [
      { type: 'APPROVAL_DENIED', status: 'DENIED', decisionReason: message, ...base },
      ...(call
        ? [
            {
              type: 'TOOL_DENIED' as const,
              runId: approval.runId,
              toolCallId: call.toolCallId,
              toolName: call.toolName,
              toolVersion: call.toolVersion,
              status: 'DENIED' as const,
              error: { code: ErrorCode.APPROVAL_DENIED, message, retryable: false },
            },
          ]
        : []),
    ];
  }

  private async runAfterCommit(effects: AfterCommit[]): Promise<void> {
    for (const effect of effects) {
      try {
        if (effect.kind === 'revoked') await this.tellRevoked(effect.approval);
        else void this.stopRun(effect.sessionId, effect.runId, 'The kill switch is on.');
      } catch (error) {
        this.logger.error('after-commit step failed', { kind: effect.kind, error: String(error) });
      }
    }
  }

  private async tellRevoked(approval: ApprovalRecord): Promise<void> {
    const call = await this.db.getToolCall(approval.toolCallId);
    if (!call || ENGINE_TOOLS.has(call.toolName)) return;
    (await this.sourceOf(approval.sessionId))?.onApprovalRevoked?.({
      sessionId: approval.sessionId,
      runId: approval.runId,
      toolCallId: approval.toolCallId,
      toolName: call.toolName,
      approvalId: approval.approvalId,
      argumentHash: approval.argumentHash,
    });
  }

  /** Cancels a run on its source and records RUN_CANCELLED (its approvals are revoked with it). */
  private async stopRun(sessionId: string, runId: string, reason: string): Promise<void> {
    const session = await this.db.getSession(sessionId);
    const run = await this.db.getRun(runId);
    if (!session || !run || TERMINAL_RUN_STATUSES.has(run.status)) return;
    const source = this.sources.get(session.source);
    try {
      if (source?.cancelRun) await source.cancelRun(this.sessionInfo(session), runId);
    } catch (error) {
      this.logger.warn('source could not cancel a run', { runId, error: String(error) });
    }
    await this.endRun(sessionId, runId, 'RUN_CANCELLED', reason);
  }

  // ------------------------------------------------------------------------------------------
  // Approval rules (approvalRules.ts)
  // ------------------------------------------------------------------------------------------

  createApprovalRule(input: CreateRuleInput, by: string | null): Promise<ApprovalRuleRecord> {
    return this.kernel.write(async () => {
      const rule = await buildRule(this.db, input, this.iso(), by);
      await this.db.putApprovalRule(rule);
      return rule;
    });
  }

  updateApprovalRule(input: UpdateRuleInput): Promise<ApprovalRuleRecord> {
    return this.kernel.write(() => updateRule(this.db, input, this.iso()));
  }

  revokeApprovalRule(ruleId: string, by: string | null): Promise<ApprovalRuleRecord> {
    return this.kernel.write(() => revokeRule(this.db, ruleId, this.iso(), by));
  }

  // ------------------------------------------------------------------------------------------
  // Agent policy (kill switch)
  // ------------------------------------------------------------------------------------------

  /** The app's policy, as stored (read in the caller's transaction: every instance sees one switch). */
  async policy(appId: string): Promise<AgentPolicyRecord> {
    return readPolicy(this.db, appId, this.iso());
  }

  /** Throws AGENT_DISABLED while the app's kill switch is on (or agents are disabled). */
  async requireAgentsRunning(appId: string): Promise<void> {
    const policy = await this.policy(appId);
    if (agentsStopped(policy))
      throw new StudioError(
        ErrorCode.DISABLED,
        policy.killSwitch
          ? 'The kill switch is on: every agent is stopped and no new run starts.'
          : 'Agents are disabled for this app.',
        { remediation: 'Turn the kill switch off in the header to let agents run again.' },
      );
  }

  /**
   * setCrowdyStudioAgentPolicy. Turning the kill switch on (or `enabled` off) cancels every
   * active run of the app and revokes every pending approval before it returns.
   */
  async setPolicy(input: SetPolicyInput, by: string | null): Promise<AgentPolicyRecord> {
    this.requireApp(input.appId);
    const { before, after } = await this.kernel.write(async (tx) => {
      const written = await writePolicy(this.db, input, this.iso(), by);
      tx.notify(SOURCES_CHANNEL, '');
      return written;
    });
    if (agentsStopped(after) && !agentsStopped(before)) {
      const reason = 'The kill switch stopped every agent.';
      for (const session of await this.db.listAllSessions()) {
        if (session.appId !== input.appId) continue;
        if (session.currentRunId)
          await this.stopRun(session.sessionId, session.currentRunId, reason);
        const pending = await this.db.listPendingApprovals(session.sessionId);
        if (pending.length > 0)
          await this.append(
            session.sessionId,
            (
              await Promise.all(
                pending.map((a) =>
                  revocationDrafts(this.db, a, 'the kill switch is on', { revokedBy: by }),
                ),
              )
            ).flat(),
          );
        for (const approval of pending) await this.tellRevoked(approval);
      }
    }
    return after;
  }

  private async ensureSession(sourceId: string, spec: SessionSpec): Promise<SessionInfo> {
    const existing = await this.db.getSession(spec.sessionId);
    if (existing) return this.sessionInfo(existing);
    const createdAt = this.iso();
    await this.kernel.write(async () => {
      // Checked again inside the transaction: of two racing creations, one creates.
      if (await this.db.getSession(spec.sessionId)) return;
      const record: SessionRecord = {
        sessionId: spec.sessionId,
        appId: LOCAL_APP_ID,
        source: sourceId,
        title: spec.title || null,
        projectId: spec.projectId ?? null,
        mode: spec.mode,
        status: 'ACTIVE',
        requestedModel: spec.requestedModel,
        model: spec.model ?? null,
        contextVersion: 'ctx-1',
        currentClientEpoch: '0',
        attachedEpoch: null,
        lastEventSeq: '0',
        currentRunId: null,
        lastRunId: null,
        createdAt,
        updatedAt: createdAt,
        closedAt: null,
      };
      await this.db.putSession(record);
      await this.append(spec.sessionId, [
        { type: 'SESSION_CREATED', reason: sourceId },
        { type: 'MODE_SELECTED', mode: spec.mode },
      ]);
    });
    return this.sessionInfo(await this.requireSession(spec.sessionId));
  }

  /** Creates a session from CreateAgentSessionInput (owned by the demo agent when present). */
  async createSession(input: {
    appId: string;
    projectId?: string | null;
    mode: AgentMode;
    requestedModel?: string | null;
  }): Promise<SessionRecord> {
    this.requireApp(input.appId);
    if (input.mode === 'BUILD' && !input.projectId)
      throw new StudioError(ErrorCode.BAD_REQUEST, 'BUILD mode needs a projectId.', {
        field: 'projectId',
      });
    if (input.projectId && !(await this.db.getProject(input.projectId)))
      throw new StudioError(ErrorCode.BAD_REQUEST, `No project ${input.projectId}.`, {
        field: 'projectId',
      });
    // A project a runtime owns (a --claude-code folder) starts its sessions in that runtime.
    const owner = input.projectId ? this.projectSources.get(input.projectId) : undefined;
    const source = (owner && this.sources.get(owner)) || this.sources.get('demo');
    if (!source)
      throw new StudioError(
        ErrorCode.HOST_UNAVAILABLE,
        'No agent can run new sessions here: the built-in agent is off (--no-demo).',
        {
          remediation: 'Start the studio without --no-demo, or connect a runtime.',
        },
      );
    const sessionId = `ses_${randomUUID()}`;
    await this.ensureSession(source.sourceId, {
      sessionId,
      title: '',
      mode: input.mode,
      requestedModel:
        input.requestedModel ?? (source.sourceId === 'demo' ? 'studio-offline-agent' : 'default'),
      model: source.sourceId === 'demo' ? 'studio-offline-agent' : null,
      projectId: input.projectId ?? null,
    });
    return await this.requireSession(sessionId);
  }

  // ------------------------------------------------------------------------------------------
  // Reads
  // ------------------------------------------------------------------------------------------

  async requireSession(sessionId: string): Promise<SessionRecord> {
    const session = await this.db.getSession(sessionId);
    if (!session || session.appId !== LOCAL_APP_ID)
      throw new StudioError(ErrorCode.SESSION_NOT_FOUND, `No session ${sessionId}.`);
    this.sessionProjects.set(sessionId, session.projectId);
    return session;
  }

  requireApp(appId: string): void {
    if (appId !== LOCAL_APP_ID)
      throw new StudioError(
        ErrorCode.PERMISSION_DENIED,
        `This studio serves app ${LOCAL_APP_ID}, not ${appId}.`,
        {
          field: 'appId',
        },
      );
  }

  sessionInfo(s: SessionRecord): SessionInfo {
    return {
      sessionId: s.sessionId,
      source: s.source,
      status: s.status,
      projectId: s.projectId,
      currentRunId: s.currentRunId,
      lastEventSeq: s.lastEventSeq,
    };
  }

  registryDigestFor(mode: AgentMode): string {
    return registryDigest(toolsForMode(mode));
  }

  async checkpointsSupported(
    sessionId: string,
  ): Promise<{ supported: boolean; reason: string | null }> {
    const session = await this.requireSession(sessionId);
    const source = this.sources.get(session.source);
    if (session.projectId) {
      const unavailable = (await this.db.getProject(session.projectId))?.unavailableReason;
      if (unavailable)
        return { supported: false, reason: `The project is unavailable: ${unavailable}` };
      return { supported: true, reason: null };
    }
    if (source && !source.checkpointsSupported)
      return {
        supported: false,
        reason: source.checkpointsUnsupportedReason ?? 'This runtime has no checkpoints.',
      };
    return {
      supported: false,
      reason: 'This session has no project folder, so there is nothing to checkpoint.',
    };
  }

  // ------------------------------------------------------------------------------------------
  // Attachments, heartbeats, acknowledgements
  // ------------------------------------------------------------------------------------------

  /** Throws unless `clientEpoch` is the session's current attached epoch (attachments.ts). */
  requireAttached(sessionId: string, clientEpoch: string): Promise<SessionRecord> {
    return this.attachments.requireAttached(sessionId, clientEpoch);
  }

  requireOpen(session: SessionRecord): void {
    if (session.status === 'CLOSED' || session.status === 'REVOKED')
      throw new StudioError(ErrorCode.SESSION_CLOSED, `Session ${session.sessionId} is closed.`);
  }

  attach(input: { sessionId: string; clientInstanceId?: string | null; reviewer?: string | null }) {
    return this.attachments.attach(input);
  }

  /** Who controls the session now (the attached client's reviewer and since when), or null. */
  controllerOf(sessionId: string) {
    return this.attachments.controllerOf(sessionId);
  }

  heartbeat(input: { sessionId: string; clientEpoch: string }) {
    return this.attachments.heartbeat(input);
  }

  acknowledge(input: { sessionId: string; clientEpoch: string; throughSeq: string }) {
    return this.attachments.acknowledge(input);
  }

  // ------------------------------------------------------------------------------------------
  // Session control
  // ------------------------------------------------------------------------------------------

  async setMode(input: {
    sessionId: string;
    clientEpoch: string;
    mode: AgentMode;
    projectId?: string | null;
  }): Promise<SessionRecord> {
    const session = await this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    if (input.mode === 'PLAY')
      throw new StudioError(
        ErrorCode.BAD_REQUEST,
        'PLAY mode needs a game grid; this studio has none.',
        { field: 'mode' },
      );
    if (input.mode === 'BUILD' && !(input.projectId ?? session.projectId))
      throw new StudioError(ErrorCode.BAD_REQUEST, 'BUILD mode needs a projectId.', {
        field: 'projectId',
      });
    if (session.mode !== input.mode)
      await this.append(session.sessionId, [{ type: 'MODE_SELECTED', mode: input.mode }]);
    return await this.requireSession(session.sessionId);
  }

  async sendMessage(input: {
    sessionId: string;
    clientEpoch: string;
    content: string;
    author?: string | null;
  }): Promise<string> {
    const session = await this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    await this.requireAgentsRunning(session.appId);
    if (session.status === 'PAUSED')
      throw new StudioError(ErrorCode.SESSION_CLOSED, 'The session is paused.', {
        remediation: 'Resume it first.',
      });
    const content = input.content.trim();
    const bytes = Buffer.byteLength(content, 'utf8');
    if (bytes === 0 || bytes > MAX_USER_MESSAGE_BYTES)
      throw new StudioError(
        ErrorCode.BAD_REQUEST,
        `A message must be 1 to ${MAX_USER_MESSAGE_BYTES} bytes.`,
        {
          field: 'content',
        },
      );
    if (session.currentRunId)
      throw new StudioError(
        ErrorCode.RUN_ALREADY_ACTIVE,
        `Run ${session.currentRunId} is still active.`,
        {
          remediation: 'Wait for it to finish or cancel it.',
        },
      );
    const source = this.sources.get(session.source);
    if (!source?.sendMessage)
      throw new StudioError(
        ErrorCode.HOST_UNAVAILABLE,
        `The ${session.source} runtime does not take messages here.`,
      );
    const { runId } = await source.sendMessage(this.sessionInfo(session), content, {
      author: input.author ?? null,
    });
    return runId;
  }

  async pause(input: { sessionId: string; clientEpoch: string }): Promise<SessionRecord> {
    const session = await this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    if (session.status !== 'PAUSED') {
      const drafts: EventDraft[] = [{ type: 'SESSION_PAUSED', reason: 'HUMAN_STOP' }];
      if (session.currentRunId)
        drafts.push({
          type: 'RUN_PAUSED',
          runId: session.currentRunId,
          reason: 'Paused by a human.',
        });
      await this.append(session.sessionId, drafts);
    }
    return await this.requireSession(session.sessionId);
  }

  async resume(input: { sessionId: string; clientEpoch: string }): Promise<SessionRecord> {
    const session = await this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    if (session.status === 'PAUSED') {
      const drafts: EventDraft[] = [{ type: 'SESSION_RESUMED' }];
      if (session.currentRunId)
        drafts.push({ type: 'RUN_STARTED', runId: session.currentRunId, reason: 'RESUMED' });
      await this.append(session.sessionId, drafts);
    }
    return await this.requireSession(session.sessionId);
  }

  async cancelRun(input: {
    sessionId: string;
    clientEpoch: string;
    runId?: string | null;
  }): Promise<string> {
    const session = await this.requireAttached(input.sessionId, input.clientEpoch);
    const runId = input.runId ?? session.currentRunId;
    if (!runId) throw new StudioError(ErrorCode.RUN_NOT_ACTIVE, 'No run is active.');
    const run = await this.db.getRun(runId);
    if (!run || run.sessionId !== session.sessionId)
      throw new StudioError(ErrorCode.RUN_NOT_ACTIVE, `No run ${runId}.`);
    if (TERMINAL_RUN_STATUSES.has(run.status))
      throw new StudioError(
        ErrorCode.RUN_NOT_ACTIVE,
        `Run ${runId} already ended (${run.status}).`,
      );
    const source = this.sources.get(session.source);
    if (source?.cancelRun) await source.cancelRun(this.sessionInfo(session), runId);
    await this.endRun(session.sessionId, runId, 'RUN_CANCELLED', 'Cancelled by a human.');
    return runId;
  }

  /** Ends a run with RUN_*; `append` first revokes its pending approvals and cancels their calls. */
  async endRun(
    sessionId: string,
    runId: string,
    type: 'RUN_CANCELLED' | 'RUN_FAILED' | 'RUN_SUCCEEDED' | 'RUN_PREEMPTED',
    reason: string,
    error?: { code: string; message: string } | null,
  ): Promise<void> {
    const run = await this.db.getRun(runId);
    if (!run || TERMINAL_RUN_STATUSES.has(run.status)) return;
    await this.append(sessionId, [
      {
        type,
        runId,
        reason,
        code: error?.code ?? null,
        error: error ? { code: error.code, message: error.message, retryable: false } : null,
      },
    ]);
  }

  async closeSession(input: { sessionId: string; clientEpoch: string }): Promise<SessionRecord> {
    const session = await this.requireAttached(input.sessionId, input.clientEpoch);
    if (session.status === 'CLOSED') return session;
    if (session.currentRunId) {
      const source = this.sources.get(session.source);
      if (source?.cancelRun)
        await source.cancelRun(this.sessionInfo(session), session.currentRunId);
      await this.endRun(
        session.sessionId,
        session.currentRunId,
        'RUN_CANCELLED',
        'The session was closed.',
      );
    }
    await this.append(session.sessionId, [{ type: 'SESSION_CLOSED', reason: 'HUMAN_STOP' }]);
    return await this.requireSession(session.sessionId);
  }

  // ------------------------------------------------------------------------------------------
  // Approvals
  // ------------------------------------------------------------------------------------------

  /**
   * sha256 of the canonical binding of the call to its session, arguments and context, and,
   * for a call with a diff, of each target file with the hash it had when the diff was made.
   */
  argumentHash(
    sessionId: string,
    toolCallId: string,
    toolName: string,
    args: unknown,
    contextVersion: string,
    diffTargets?: DiffTarget[],
  ): string {
    return sha256Digest(
      canonicalJson({
        arguments: args,
        contextVersion,
        sessionId,
        toolCallId,
        toolName,
        ...(diffTargets && diffTargets.length > 0 ? { diffTargets } : {}),
      }),
    );
  }

  /**
   * The diff of proposed file changes against the session's project folder, and the targets
   * (path + current content hash) the argument hash binds. Null when the session has no project.
   */
  async proposalDiff(sessionId: string, changes: ProposedFileChange[]) {
    const project = await this.projectOfSession(sessionId);
    if (!project) return null;
    const ws = await this.workspace(project.projectId);
    return diffAgainst(ws, ws.state().files, changes);
  }

  /**
   * SourceHost.proposalDiff, synchronous for the bridges' mappers: the session's project from
   * what this process last read of the session (a project never changes for a session), the
   * files from the open workspace; no store read. Null when either is unknown here.
   */
  private proposalDiffNow(sessionId: string, changes: ProposedFileChange[]) {
    const projectId = this.sessionProjects.get(sessionId);
    const ws = projectId ? this.workspaces.get(projectId) : undefined;
    if (!ws) return null;
    return diffAgainst(ws, ws.state().files, changes);
  }

  /** sessionId -> its projectId, as last read (see proposalDiffNow). */
  private readonly sessionProjects = new Map<string, string | null>();

  /** The target files whose content changed since the call's diff was made (by path). */
  private async changedTargets(call: ToolCallRecord): Promise<string[]> {
    if (!call.diff || call.diff.files.length === 0) return [];
    const project = await this.projectOfSession(call.sessionId);
    const now = new Map(
      (project ? await this.projectFiles(project.projectId) : []).map((f) => [
        f.path,
        f.contentHash,
      ]),
    );
    return call.diff.files
      .filter((f) => (now.get(f.path) ?? null) !== f.beforeHash)
      .map((f) => f.path);
  }

  /**
   * Proposes a tool call that needs a human: TOOL_PROPOSED (WAITING_FOR_APPROVAL) then
   * APPROVAL_REQUESTED, in one commit. Returns the approval (already decided when a rule
   * matched, revoked when the kill switch is on).
   */
  async proposeWithApproval(input: ProposeInput): Promise<ApprovalRecord> {
    const session = await this.requireSession(input.sessionId);
    const toolCallId = input.toolCallId ?? `tc_${randomUUID()}`;
    const argumentsJson = canonicalJson(input.arguments);
    const diffed = input.fileChanges
      ? await this.proposalDiff(session.sessionId, input.fileChanges)
      : null;
    const argumentHash = this.argumentHash(
      session.sessionId,
      toolCallId,
      input.toolName,
      input.arguments,
      session.contextVersion,
      diffed?.targets,
    );
    const approvalId = `ap_${randomUUID()}`;
    const ttl = Math.min(input.ttlMs ?? this.approvalTtlMs, APPROVAL_TTL_MAX_MS);
    const expiresAt = this.iso(this.now() + ttl);
    await this.append(session.sessionId, [
      {
        type: 'TOOL_PROPOSED',
        runId: input.runId,
        toolCallId,
        toolName: input.toolName,
        toolVersion: input.toolVersion ?? '1.0.0',
        status: 'WAITING_FOR_APPROVAL',
        executor: input.executor ?? 'SERVER',
        safeSummary: input.safeSummary,
        argumentHash,
        argumentsJson,
        contextVersion: session.contextVersion,
        askedBy: input.askedBy ?? null,
        ...(diffed ? { studioDiff: diffed.diff } : {}),
        ...(input.foreignId ? { foreignId: input.foreignId } : {}),
      },
      {
        type: 'APPROVAL_REQUESTED',
        runId: input.runId,
        approvalId,
        toolCallId,
        argumentHash,
        status: 'PENDING',
        safeSummary: input.safeSummary,
        reasons: input.reasons,
        expiresAt,
      },
    ]);
    const approval = await this.db.getApproval(approvalId);
    if (!approval) throw new Error('approval vanished');
    return approval;
  }

  /** ApproveTool / RejectTool: a batch of one (see decideBatch). */
  async decide(
    input: DecideInput,
    approved: boolean,
    decidedBy: string | null = null,
  ): Promise<ApprovalRecord> {
    const [result] = await this.decideBatch([{ ...input, approve: approved }], decidedBy, false);
    if (!result) throw new Error('decision vanished');
    return result;
  }

  /** Finds and checks one decision; throws the StudioError that refuses it. */
  private async checkDecision(input: DecideInput & { approve: boolean }): Promise<{
    session: SessionRecord;
    call: ToolCallRecord;
    approval: ApprovalRecord;
  }> {
    const session = await this.requireSession(input.sessionId);
    const call = await this.db.getToolCall(input.toolCallId);
    if (!call || call.sessionId !== session.sessionId)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        `No tool call ${input.toolCallId} in this session.`,
      );
    const approval = call.approvalId ? await this.db.getApproval(call.approvalId) : null;
    if (!approval)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'This tool call has no approval to decide.',
      );
    // A revoked approval says so whatever else changed (closed session, lapsed control).
    if (approval.status === 'REVOKED') this.checkDecidable(approval, input.argumentHash);
    await this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    this.checkDecidable(approval, input.argumentHash);
    return { session, call, approval };
  }

  /**
   * studioDecideTools (and ApproveTool / RejectTool as a batch of one). All or nothing: every
   * decision is checked (epoch, pending approval, exact hash, expiry, single use, unchanged diff
   * targets) before any is applied; if one fails, none is applied and the error names each
   * failing item (`extensions.items`). Decisions are delivered to foreign runtimes first (in
   * order; a delivery failure refuses the batch), checked again, then recorded in one commit.
   */
  async decideBatch(
    inputs: (DecideInput & { approve: boolean })[],
    decidedBy: string | null,
    wrapErrors = true,
  ): Promise<ApprovalRecord[]> {
    if (inputs.length === 0 || inputs.length > 100)
      throw new StudioError(ErrorCode.BAD_REQUEST, 'A batch holds 1 to 100 decisions.', {
        field: 'decisions',
      });
    const refuse = (failures: { index: number; error: StudioError }[]): never => {
      if (!wrapErrors && failures.length === 1) throw failures[0]!.error;
      const items = failures.map(({ index, error }) => ({
        index,
        toolCallId: inputs[index]!.toolCallId,
        sessionId: inputs[index]!.sessionId,
        code: error.code,
        message: error.message,
      }));
      throw new StudioError(
        failures[0]!.error.code,
        `Nothing was decided: ${items.length} of ${inputs.length} decision(s) failed: ` +
          items.map((i) => `#${i.index + 1} ${i.toolCallId}: ${i.code}: ${i.message}`).join('; '),
        {
          extensions: { items },
          remediation: 'Review the named calls again; the rest are unchanged.',
        },
      );
    };
    const asStudioError = (error: unknown) =>
      error instanceof StudioError ? error : new StudioError(ErrorCode.BAD_REQUEST, String(error));
    const checkAll = async () => {
      const failures: { index: number; error: StudioError }[] = [];
      const checked: (Awaited<ReturnType<Engine['checkDecision']>> | null)[] = [];
      for (const [index, input] of inputs.entries()) {
        try {
          checked.push(await this.checkDecision(input));
        } catch (error) {
          failures.push({ index, error: asStudioError(error) });
          checked.push(null);
        }
      }
      return { checked, failures };
    };
    const inProgress = () =>
      new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'Another decision for this approval is in progress; approvals are used once.',
      );
    // The sessions' row locks first (in one order), then the checks: on PostgreSQL a read made
    // before the lock may predate a decision another instance recorded meanwhile, and claiming
    // from it would put a decided approval back to PENDING (a second grant).
    const lockSessions = async () => {
      for (const sessionId of [...new Set(inputs.map((i) => i.sessionId))].sort())
        await this.db.lockSession(sessionId);
    };
    // Checked and claimed in one transaction: the claim is stored on the approval, so a second
    // decision (from this process or another instance) is refused while this one is delivered.
    const claim = randomUUID();
    const checked = await this.kernel.write(async () => {
      await lockSessions();
      const first = await checkAll();
      const seen = new Set<string>();
      const now = this.now();
      for (const [index, c] of first.checked.entries()) {
        if (!c) continue;
        const claimed = c.approval.decidingClaim && c.approval.decidingClaim.untilMs > now;
        if (seen.has(c.approval.approvalId) || claimed)
          first.failures.push({ index, error: inProgress() });
        seen.add(c.approval.approvalId);
      }
      if (first.failures.length > 0) refuse(first.failures.sort((a, b) => a.index - b.index));
      const all = first.checked as NonNullable<(typeof first.checked)[number]>[];
      // A conditional update (still PENDING) takes the claim: never an overwrite of a decision.
      for (const [index, c] of all.entries())
        if (
          !(await this.db.decideApproval({
            ...c.approval,
            decidingClaim: { claim, untilMs: now + DECIDING_CLAIM_MS },
          }))
        )
          refuse([{ index, error: inProgress() }]);
      return all;
    });
    let recorded = false;
    try {
      // A target file that changed since its diff was shown: refuse, and revoke that approval.
      const stale: { index: number; error: StudioError }[] = [];
      for (const [index, c] of checked.entries()) {
        const changed = inputs[index]!.approve ? await this.changedTargets(c.call) : [];
        if (changed.length === 0) continue;
        await this.append(
          c.session.sessionId,
          await revocationDrafts(
            this.db,
            c.approval,
            `${changed.join(', ')} changed since the diff was shown`,
          ),
        );
        await this.tellRevoked(c.approval);
        stale.push({
          index,
          error: new StudioError(
            ErrorCode.APPROVAL_MISMATCH,
            `${changed.join(', ')} changed on disk since the diff was shown; the approval was revoked and the call did not run.`,
            { field: 'argumentHash', remediation: 'Ask again to see the current diff.' },
          ),
        });
      }
      if (stale.length > 0) refuse(stale);
      const decisions = checked.map((c, index): ToolDecision => {
        const reason = inputs[index]!.reason
          ? inputs[index]!.reason!.slice(0, MAX_DECISION_REASON)
          : null;
        return {
          sessionId: c.session.sessionId,
          runId: c.approval.runId,
          toolCallId: c.call.toolCallId,
          toolName: c.call.toolName,
          approvalId: c.approval.approvalId,
          argumentHash: c.approval.argumentHash,
          approved: inputs[index]!.approve,
          reason,
        };
      });
      for (const [index, decision] of decisions.entries()) {
        const source = this.sources.get(checked[index]!.session.source);
        if (ENGINE_TOOLS.has(decision.toolName) || !source?.deliverDecision) continue;
        try {
          await source.deliverDecision(decision);
        } catch (error) {
          refuse([
            {
              index,
              error:
                error instanceof StudioError
                  ? error
                  : new StudioError(ErrorCode.HOST_UNAVAILABLE, String(error)),
            },
          ]);
        }
      }
      // Recorded in one commit with what follows each decision (a job): re-checked inside it
      // (an approval may have lapsed or the epoch moved meanwhile), and each approval moves out
      // of PENDING by a conditional update, so of two racing decisions one is recorded.
      const result = await this.kernel.write(async () => {
        await lockSessions();
        const again = await checkAll();
        for (const [index, c] of again.checked.entries())
          if (c && c.approval.decidingClaim?.claim !== claim)
            again.failures.push({ index, error: inProgress() });
        if (again.failures.length > 0) refuse(again.failures);
        const decidedAt = this.iso();
        for (const decision of decisions) {
          const current = (await this.db.getApproval(decision.approvalId))!;
          const won = await this.db.decideApproval({
            ...current,
            status: decision.approved ? 'GRANTED' : 'DENIED',
            decidedAt,
            decidingClaim: null,
          });
          if (!won) refuse([{ index: decisions.indexOf(decision), error: inProgress() }]);
          const base = { ...approvalFieldsOf(current), studioDecidedBy: decidedBy };
          const call = (await this.db.getToolCall(decision.toolCallId))!;
          if (decision.approved) {
            await this.append(decision.sessionId, [
              { type: 'APPROVAL_GRANTED', status: 'GRANTED', ...base },
            ]);
          } else {
            const who = decidedBy && decidedBy !== 'owner' ? decidedBy : 'a human';
            await this.append(decision.sessionId, [
              {
                type: 'APPROVAL_DENIED',
                status: 'DENIED',
                decisionReason: decision.reason,
                ...base,
              },
              {
                type: 'TOOL_DENIED',
                runId: current.runId,
                toolCallId: call.toolCallId,
                toolName: call.toolName,
                toolVersion: call.toolVersion,
                status: 'DENIED',
                error: {
                  code: ErrorCode.APPROVAL_DENIED,
                  message: decision.reason
                    ? `Denied by ${who}: ${decision.reason}`
                    : `Denied by ${who}.`,
                  retryable: false,
                },
              },
            ]);
          }
          // What the decision authorizes runs from the outbox, after this commit.
          await this.enqueueDecision(decision, false);
        }
        const out: ApprovalRecord[] = [];
        for (const d of decisions) out.push((await this.db.getApproval(d.approvalId))!);
        return out;
      });
      recorded = true;
      this.fault('decision-committed');
      return result;
    } finally {
      if (!recorded) await this.releaseClaims(checked, claim);
    }
  }

  /** Ends this decision's claims on approvals it did not decide (a refusal, a failed delivery). */
  private async releaseClaims(
    checked: { approval: ApprovalRecord }[],
    claim: string,
  ): Promise<void> {
    try {
      await this.kernel.write(async () => {
        for (const c of checked) {
          await this.db.lockSession(c.approval.sessionId);
          const current = await this.db.getApproval(c.approval.approvalId);
          if (current?.status === 'PENDING' && current.decidingClaim?.claim === claim)
            await this.db.decideApproval({ ...current, decidingClaim: null });
        }
      });
    } catch (error) {
      // The claims lapse by themselves (DECIDING_CLAIM_MS).
      this.logger.warn('could not release decision claims', { error: String(error) });
    }
  }

  /**
   * Enqueues what follows a recorded decision, in the decision's transaction: `deliver` when
   * the runtime has not heard it yet (a rule decided it inside an append).
   */
  private async enqueueDecision(decision: ToolDecision, deliver: boolean): Promise<void> {
    await this.db.enqueueJob({
      kind: 'decision',
      key: `decision:${decision.approvalId}`,
      payload: JSON.stringify({ decision, deliver }),
    });
    this.db.notify(JOBS_CHANNEL, 'decision');
  }

  /** The 'decision' job: the runtime hears a rule's decision; then afterDecision. */
  private async runDecisionJob(job: JobRecord): Promise<void> {
    const { decision, deliver } = JSON.parse(job.payload) as {
      decision: ToolDecision;
      deliver: boolean;
    };
    const source = await this.sourceOf(decision.sessionId);
    if (deliver && !ENGINE_TOOLS.has(decision.toolName) && source?.deliverDecision) {
      try {
        await source.deliverDecision(decision);
      } catch (error) {
        const approval = await this.db.getApproval(decision.approvalId);
        // The rule's decision is recorded; the runtime did not take it. Say so in the timeline.
        await this.append(decision.sessionId, [
          {
            type: 'STUDIO_LOG',
            runId: decision.runId,
            level: 'warn',
            message: `Rule "${approval?.ruleName ?? approval?.ruleId ?? ''}" decided ${decision.toolName}, but the runtime did not take the decision: ${error instanceof Error ? error.message : String(error)}`,
            origin: 'approval-rules',
          },
        ]);
      }
    }
    await this.afterDecision(decision);
  }

  /** What follows a recorded decision: an engine tool runs (or its run ends); a source continues. */
  private async afterDecision(decision: ToolDecision): Promise<void> {
    if (ENGINE_TOOLS.has(decision.toolName)) {
      if (decision.approved) await this.runEngineTool(decision.toolCallId);
      else if (decision.runId)
        await this.endRun(
          decision.sessionId,
          decision.runId,
          'RUN_FAILED',
          'The tool call was denied.',
          {
            code: ErrorCode.APPROVAL_DENIED,
            message: 'The tool call was denied.',
          },
        );
    } else (await this.sourceOf(decision.sessionId))?.onDecisionRecorded?.(decision);
  }

  /** Whether the source of `call` can propose it again ("Ask again" on an expired or revoked card). */
  async canAskAgain(call: ToolCallRecord): Promise<boolean> {
    const approval = call.approvalId ? await this.db.getApproval(call.approvalId) : null;
    if (!approval || (approval.status !== 'EXPIRED' && approval.status !== 'REVOKED')) return false;
    const session = await this.db.getSession(call.sessionId);
    if (!session || session.status !== 'ACTIVE' || session.currentRunId) return false;
    if (agentsStopped(await this.policy(session.appId))) return false;
    const source = this.sources.get(session.source);
    return source?.canAskAgain?.(this.sessionInfo(session), call) ?? false;
  }

  /** studioAskAgain: the source proposes the expired or revoked call again (a new run and call). */
  async askAgain(input: {
    sessionId: string;
    clientEpoch: string;
    toolCallId: string;
    author?: string | null;
  }): Promise<ApprovalRecord> {
    const session = await this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    await this.requireAgentsRunning(session.appId);
    const call = await this.db.getToolCall(input.toolCallId);
    if (!call || call.sessionId !== session.sessionId)
      throw new StudioError(
        ErrorCode.TOOL_UNKNOWN,
        `No tool call ${input.toolCallId} in this session.`,
      );
    if (!(await this.canAskAgain(call)))
      throw new StudioError(
        ErrorCode.BAD_REQUEST,
        'This call cannot be asked again now: only an expired or revoked call, between runs, of a source that can ask again.',
        { field: 'toolCallId' },
      );
    const source = this.sources.get(session.source)!;
    const approvalId = await source.askAgain!(this.sessionInfo(session), call, {
      author: input.author ?? null,
    });
    const approval = await this.db.getApproval(approvalId);
    if (!approval) throw new Error('the source did not ask again');
    return approval;
  }

  private checkDecidable(approval: ApprovalRecord, argumentHash: string): void {
    if (approval.status === 'REVOKED')
      throw new StudioError(
        ErrorCode.APPROVAL_REVOKED,
        `The approval was revoked${approval.decisionReason ? ` (${approval.decisionReason.replace(/^Revoked: /, '').replace(/\.$/, '')})` : ''}; the call will not run.`,
        { remediation: 'Ask again if the agent should propose it anew.' },
      );
    if (
      approval.status === 'EXPIRED' ||
      (approval.status === 'PENDING' && Date.parse(approval.expiresAt) <= this.now())
    )
      throw new StudioError(
        ErrorCode.APPROVAL_EXPIRED,
        `The approval expired at ${approval.expiresAt}; the call will not run.`,
      );
    if (approval.status !== 'PENDING')
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        `The approval is ${approval.status}, not PENDING; approvals are used once.`,
      );
    if (approval.argumentHash !== argumentHash)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'The argument hash does not match the pending approval: the call you saw is not the call that would run.',
        { field: 'argumentHash', remediation: 'Reload the tool call and review it again.' },
      );
  }

  /** Marks lapsed approvals EXPIRED; the call does not run. */
  private async expireApprovals(): Promise<void> {
    const now = this.now();
    for (const approval of await this.db.listPendingApprovals(null)) {
      if (Date.parse(approval.expiresAt) > now) break;
      // A decision being delivered holds the approval until it is recorded or refused.
      if (approval.decidingClaim && approval.decidingClaim.untilMs > now) continue;
      const call = await this.db.getToolCall(approval.toolCallId);
      const drafts: EventDraft[] = [
        { type: 'APPROVAL_EXPIRED', status: 'EXPIRED', ...approvalFieldsOf(approval) },
      ];
      const engineTool = call ? ENGINE_TOOLS.has(call.toolName) : false;
      if (call && engineTool) drafts.push(this.expiredToolDraft(call));
      const expired = await this.kernel.write(async () => {
        await this.db.lockSession(approval.sessionId);
        // Read again under the lock: a decision may have claimed it since the list was read.
        const current = await this.db.getApproval(approval.approvalId);
        if (current?.decidingClaim && current.decidingClaim.untilMs > now) return false;
        // Out of PENDING by a conditional update: a decision that won the race stands.
        const won = await this.db.decideApproval({
          ...(current ?? approval),
          status: 'EXPIRED',
          decidedAt: this.iso(),
          decidingClaim: null,
        });
        if (won) await this.append(approval.sessionId, drafts);
        return won;
      });
      if (!expired) continue;
      const source = await this.sourceOf(approval.sessionId);
      if (!engineTool && call)
        source?.onApprovalExpired?.({
          sessionId: approval.sessionId,
          runId: approval.runId,
          toolCallId: approval.toolCallId,
          toolName: call.toolName,
          approvalId: approval.approvalId,
          argumentHash: approval.argumentHash,
        });
    }
  }

  /** The TOOL_FAILED draft for a call whose approval lapsed (status CANCELLED, not DENIED). */
  expiredToolDraft(call: ToolCallRecord): EventDraft {
    return {
      type: 'TOOL_FAILED',
      runId: call.runId,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      toolVersion: call.toolVersion,
      status: 'CANCELLED',
      error: {
        code: ErrorCode.APPROVAL_EXPIRED,
        message: 'The approval expired before anyone decided; the call did not run.',
        retryable: false,
      },
    };
  }

  // ------------------------------------------------------------------------------------------
  // Timers
  // ------------------------------------------------------------------------------------------

  /** One pass of the timers: approval expiry, heartbeat silence, lease expiry. */
  async sweep(): Promise<void> {
    await this.expireApprovals();
    const now = this.now();
    await this.attachments.detachSilent();
    for (const lease of await this.db.listActiveLeases(null)) {
      if (Date.parse(lease.expiresAt) > now) continue;
      await this.append(lease.sessionId, [
        leaseEndedDraft(lease, 'LEASE_EXPIRED', 'LEASE_EXPIRED'),
      ]);
    }
    // Jobs whose claim lapsed (a worker on a stopped instance) are taken over.
    this.worker.wake();
    if (now - this.lastPruneMs >= PRUNE_INTERVAL_MS) {
      this.lastPruneMs = now;
      await this.pruneIdempotency();
    }
  }

  // ------------------------------------------------------------------------------------------
  // Idempotency
  // ------------------------------------------------------------------------------------------

  /**
   * Deletes idempotency records older than the retention window (the sweep runs this every
   * minute); returns how many. A key used again after its record was pruned runs again.
   */
  async pruneIdempotency(): Promise<number> {
    const pruned = await this.idempotency.prune(this.idempotencyRetentionMs);
    if (pruned > 0) this.logger.info('idempotency records pruned', { pruned });
    return pruned;
  }

  /** Runs a mutation once per (operation, idempotencyKey): see idempotency.ts. */
  idempotent<T>(
    operation: string,
    input: { idempotencyKey: string } & Record<string, unknown>,
    run: () => T | Promise<T>,
  ): Promise<T> {
    return this.idempotency.run(operation, input, run);
  }

  // ------------------------------------------------------------------------------------------
  // Projects, checkpoints, restore
  // ------------------------------------------------------------------------------------------

  /**
   * Registers (or re-opens) a project folder; a folder edited while the studio was away gets a
   * new revision. A folder the workspace cannot read (missing, permissions, a name no manifest
   * can hold, an interrupted change it cannot finish safely) makes the project unavailable, with
   * the reason on the record and in the log: it never throws, so one odd project never stops
   * the studio. Every source registers its folders here (demo projects, `--leviath-workspace`,
   * a runtime's working directory).
   */
  async registerProject(input: {
    projectId: string;
    name: string;
    root: string;
    /** Include/exclude patterns (`.gitignore` syntax) on top of the folder's ignore files. */
    patterns?: CapturePatterns;
    /** Per-file cap (bytes); default the engine's `checkpointMaxFileBytes`, else 50 MiB. */
    maxFileBytes?: number;
  }): Promise<ProjectRecord> {
    const existing = await this.db.getProject(input.projectId);
    let ws: ProjectWorkspace;
    try {
      const maxFileBytes = input.maxFileBytes ?? this.checkpointMaxFileBytes;
      ws = new ProjectWorkspace({
        projectId: input.projectId,
        root: input.root,
        contentStore: this.contentStore,
        journalDir: join(this.dataDir, 'journal', input.projectId),
        ...(input.patterns ? { patterns: input.patterns } : {}),
        ...(maxFileBytes !== undefined ? { maxFileBytes } : {}),
      });
    } catch (error) {
      return await this.markUnavailable(input, existing, error);
    }
    this.workspaces.set(input.projectId, ws);
    try {
      ws.recover();
      if (this.sweepTimer) await this.recoverRestores();
      if (
        !existing ||
        existing.unavailableReason !== undefined ||
        existing.fileCount === undefined
      ) {
        const snap = ws.snapshot();
        const record: ProjectRecord = {
          projectId: input.projectId,
          name: input.name,
          root: input.root,
          revision: existing
            ? existing.contentHash === snap.contentHash
              ? existing.revision
              : (BigInt(existing.revision) + 1n).toString()
            : '1',
          contentHash: snap.contentHash,
          fileCount: snap.files.length,
          totalBytes: String(totalBytes(snap.files)),
          recordedContentHash: existing?.recordedContentHash ?? snap.contentHash,
          lastCheckpointContentHash: existing?.lastCheckpointContentHash ?? null,
          unavailableReason: null,
          updatedAt: this.iso(),
        };
        await this.db.putProject(record);
        return record;
      }
      return await this.syncProject(input.projectId);
    } catch (error) {
      return await this.markUnavailable(input, existing, error);
    }
  }

  private async markUnavailable(
    input: { projectId: string; name: string; root: string },
    existing: ProjectRecord | null,
    error: unknown,
  ): Promise<ProjectRecord> {
    const reason =
      error instanceof WorkspaceError || error instanceof StudioError
        ? error.message
        : String(error);
    this.logger.error('project unavailable', { projectId: input.projectId, reason });
    const record: ProjectRecord = {
      projectId: input.projectId,
      name: input.name,
      root: input.root,
      revision: existing?.revision ?? '1',
      contentHash: existing?.contentHash ?? EMPTY_MANIFEST_HASH,
      fileCount: existing?.fileCount ?? 0,
      totalBytes: existing?.totalBytes ?? '0',
      recordedContentHash: existing?.recordedContentHash ?? null,
      lastCheckpointContentHash: existing?.lastCheckpointContentHash ?? null,
      unavailableReason: reason,
      updatedAt: this.iso(),
    };
    await this.db.putProject(record);
    return record;
  }

  async workspace(projectId: string): Promise<ProjectWorkspace> {
    const ws = this.workspaces.get(projectId);
    const unavailable = (await this.db.getProject(projectId))?.unavailableReason;
    if (unavailable)
      throw new StudioError(
        ErrorCode.HOST_UNAVAILABLE,
        `Project ${projectId} is unavailable: ${unavailable}`,
      );
    if (!ws)
      throw new StudioError(ErrorCode.CHECKPOINT_NOT_FOUND, `Project ${projectId} is not open.`);
    return ws;
  }

  /**
   * Rescans the folder (the stat cache makes this cheap); if a human changed it, the project
   * moves to a new revision. A scan failure marks the project unavailable (and a later scan
   * that succeeds makes it available again); the record is returned either way.
   */
  async syncProject(projectId: string): Promise<ProjectRecord> {
    const record = await this.db.getProject(projectId);
    if (!record) throw new StudioError(ErrorCode.BAD_REQUEST, `No project ${projectId}.`);
    const ws = this.workspaces.get(projectId);
    if (!ws) return record;
    let snap: { files: ManifestFile[]; contentHash: string };
    try {
      if (ws.hasPendingJournal()) ws.recover();
      snap = ws.state();
    } catch (error) {
      if (record.unavailableReason) return record;
      return await this.markUnavailable(record, record, error);
    }
    if (snap.contentHash === record.contentHash && !record.unavailableReason) return record;
    const next: ProjectRecord = {
      ...record,
      revision:
        snap.contentHash === record.contentHash
          ? record.revision
          : (BigInt(record.revision) + 1n).toString(),
      contentHash: snap.contentHash,
      fileCount: snap.files.length,
      totalBytes: String(totalBytes(snap.files)),
      unavailableReason: null,
      updatedAt: this.iso(),
    };
    await this.db.putProject(next);
    return next;
  }

  async projectOfSession(sessionId: string): Promise<ProjectRecord | null> {
    const session = await this.requireSession(sessionId);
    if (!session.projectId) return null;
    return await this.syncProject(session.projectId);
  }

  /** The project's files now, sorted by path (served paged by `StudioProject.files`). */
  async projectFiles(projectId: string): Promise<ManifestFile[]> {
    return (await this.workspace(projectId)).state().files;
  }

  /**
   * A checkpoint's whole manifest. Checkpoints recorded before manifests were stored apart
   * carry it in their record (at most 128 files then).
   */
  async checkpointFiles(checkpoint: CheckpointRecord): Promise<ManifestFile[]> {
    const ws = await this.workspace(checkpoint.projectId);
    if (ws.hasManifest(checkpoint.contentHash)) return ws.manifest(checkpoint.contentHash);
    if (canonicalManifestHash(checkpoint.files) === checkpoint.contentHash)
      return sortManifest(checkpoint.files);
    throw new StudioError(
      ErrorCode.CHECKPOINT_NOT_FOUND,
      `The content of checkpoint ${checkpoint.checkpointId} is no longer stored.`,
    );
  }

  /**
   * What restoring `checkpoint` would do now: counts, every path, what cannot be put back, and
   * which of the paths changed on disk since the studio last recorded the project
   * ("changed outside the agent": the restore would throw that work away).
   */
  async restorePreview(checkpoint: CheckpointRecord, paths: readonly string[] | null = null) {
    const ws = await this.workspace(checkpoint.projectId);
    const target = paths
      ? selectedManifest(ws.state().files, await this.checkpointFiles(checkpoint), paths)
      : await this.checkpointFiles(checkpoint);
    const plan = ws.previewRestore(target);
    const project = await this.syncProject(checkpoint.projectId);
    const drifted = new Set<string>();
    if (project.recordedContentHash && project.recordedContentHash !== project.contentHash) {
      if (ws.hasManifest(project.recordedContentHash)) {
        const diff = diffManifests(ws.manifest(project.recordedContentHash), ws.state().files);
        for (const f of [...diff.added, ...diff.removed]) drifted.add(f.path);
        for (const c of diff.changed) drifted.add(c.path);
      }
    }
    return { plan, drifted };
  }

  /** Takes a checkpoint of the session's project now and appends CHECKPOINT_CREATED. */
  async checkpoint(
    sessionId: string,
    reason: 'AGENT_WRITE' | 'RESTORE_PREIMAGE' | 'MANUAL' | 'STUDIO_AFTER_TOOL',
    options: { runId?: string | null; exactPreImage?: boolean } = {},
  ): Promise<CheckpointRecord> {
    const project = await this.projectOfSession(sessionId);
    if (!project)
      throw new StudioError(
        ErrorCode.STUDIO_CHECKPOINTS_UNSUPPORTED,
        (await this.checkpointsSupported(sessionId)).reason ?? 'No project.',
      );
    const ws = await this.workspace(project.projectId);
    const snap = ws.snapshot();
    const eventFiles = eventFilesFor(this.previousManifest(ws, project), snap.files);
    const checkpointId = `cp_${randomUUID()}`;
    await this.append(sessionId, [
      {
        type: 'CHECKPOINT_CREATED',
        runId: options.runId ?? null,
        checkpointId,
        projectRevision: project.revision,
        contentHash: snap.contentHash,
        reason,
        ...eventFiles,
        exactPreImage: options.exactPreImage ?? false,
      },
    ]);
    await this.db.putProject({
      ...((await this.db.getProject(project.projectId)) ?? project),
      recordedContentHash: snap.contentHash,
      lastCheckpointContentHash: snap.contentHash,
    });
    const record = await this.db.getCheckpoint(checkpointId);
    if (!record) throw new Error('checkpoint vanished');
    return record;
  }

  /** The manifest the next checkpoint event is compared with (empty when none is stored). */
  private previousManifest(ws: ProjectWorkspace, project: ProjectRecord): ManifestFile[] {
    const hash = project.lastCheckpointContentHash;
    if (!hash || !ws.hasManifest(hash)) return [];
    return ws.manifest(hash);
  }

  /**
   * Removes stored content no retained checkpoint refers to (the rule: `isRetained` in
   * checkpointContent.ts, plus every project's current and recorded state). Never runs while a
   * restore job or an interrupted change is pending; content younger than an hour is never
   * removed, so a checkpoint being written is safe. Returns null when it did not run.
   */
  async collectGarbage(options: { graceMs?: number } = {}) {
    if ((await this.db.listRestoreJobs()).length > 0) return null;
    for (const ws of this.workspaces.values()) if (ws.hasPendingJournal()) return null;
    const live = new Set<string>();
    const now = this.now();
    const keepManifest = (ws: ProjectWorkspace, hash: string | null): void => {
      if (!hash || live.has(hash) || !ws.hasManifest(hash)) return;
      live.add(hash);
      for (const f of ws.manifest(hash)) if (!f.notCaptured) live.add(f.contentHash);
    };
    for (const [projectId, ws] of this.workspaces) {
      const project = await this.db.getProject(projectId);
      // An unavailable project's stored states are kept like any other's.
      if (!project) continue;
      keepManifest(ws, project.contentHash);
      keepManifest(ws, project.recordedContentHash);
      keepManifest(ws, project.lastCheckpointContentHash);
      const checkpoints = await this.db.listCheckpointsOfProject(projectId);
      checkpoints.forEach((c, i) => {
        if (isRetained(c, i === 0, now)) keepManifest(ws, c.contentHash);
        for (const f of c.files) if (!ws.hasManifest(c.contentHash)) live.add(f.contentHash);
      });
    }
    return this.contentStore.collectGarbage({ live, graceMs: options.graceMs ?? GC_GRACE_MS, now });
  }

  private async collectGarbageSafely(): Promise<void> {
    try {
      const result = await this.collectGarbage();
      if (result && result.blobsRemoved > 0)
        this.logger.info('checkpoint content collected', { ...result });
    } catch (error) {
      this.logger.error('checkpoint garbage collection failed', { error: String(error) });
    }
  }

  /** studioCreateCheckpoint: a MANUAL checkpoint (needs the attached epoch). */
  async createManualCheckpoint(input: {
    sessionId: string;
    clientEpoch: string;
  }): Promise<CheckpointRecord> {
    const session = await this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    return await this.checkpoint(session.sessionId, 'MANUAL');
  }

  /**
   * workspace.file.patch for a run: expectedRevision check, WORKSPACE lease, AGENT_WRITE
   * pre-image checkpoint, the change applied atomically, revision + 1. A conflict changes nothing.
   * `changes[].content === null` deletes the file.
   */
  async patchProject(input: {
    sessionId: string;
    runId: string | null;
    toolCallId: string;
    toolName: string;
    expectedRevision: string;
    changes: { path: string; content: string | null; expectedContentHash?: string }[];
  }): Promise<{ projectRevision: string; checkpointId: string; changedFiles: string[] }> {
    const project = await this.projectOfSession(input.sessionId);
    if (!project) throw new StudioError(ErrorCode.BAD_REQUEST, 'This session has no project.');
    if (project.revision !== input.expectedRevision)
      throw new StudioError(
        ErrorCode.REVISION_CONFLICT,
        `The project is at revision ${project.revision}, not ${input.expectedRevision}; nothing was changed.`,
        { remediation: 'Read the project again and retry against the current revision.' },
      );
    await this.ensureWorkspaceLease(input.sessionId, input.runId, project.revision);
    const preImage = await this.checkpoint(input.sessionId, 'AGENT_WRITE', { runId: input.runId });
    const ws = await this.workspace(project.projectId);
    const applied = ws.applyChanges(
      input.changes.map((c) => ({
        path: c.path,
        content: c.content,
        ...(c.expectedContentHash ? { expectedContentHash: c.expectedContentHash } : {}),
      })),
    );
    const next: ProjectRecord = {
      ...((await this.db.getProject(project.projectId)) ?? project),
      revision: (BigInt(project.revision) + 1n).toString(),
      contentHash: applied.contentHash,
      fileCount: applied.files.length,
      totalBytes: String(totalBytes(applied.files)),
      recordedContentHash: ws.storeManifest(applied.files),
      updatedAt: this.iso(),
    };
    await this.db.putProject(next);
    return {
      projectRevision: next.revision,
      checkpointId: preImage.checkpointId,
      changedFiles: applied.changedFiles,
    };
  }

  private async ensureWorkspaceLease(
    sessionId: string,
    runId: string | null,
    revision: string,
  ): Promise<void> {
    const active = (await this.db.listActiveLeases(sessionId)).find((l) => l.kind === 'WORKSPACE');
    if (active && Date.parse(active.expiresAt) > this.now()) return;
    const session = await this.requireSession(sessionId);
    const now = this.now();
    await this.append(sessionId, [
      {
        type: 'LEASE_GRANTED',
        runId,
        leaseId: `ls_${randomUUID()}`,
        kind: 'WORKSPACE',
        status: 'ACTIVE',
        clientEpoch: session.currentClientEpoch,
        scopes: ['studio.project.write.server'],
        holder: `agent:${session.source}`,
        contextVersion: session.contextVersion,
        expectedProjectRevision: revision,
        grantedAt: this.iso(now),
        expiresAt: this.iso(now + this.workspaceLeaseMs),
      },
    ]);
  }

  /**
   * studioRequestCheckpointRestore: checks the checkpoint, its hash and the revision, then
   * proposes project.checkpoint.restore and returns its PENDING approval.
   */
  async requestRestore(input: {
    requestedBy?: string | null;
    sessionId: string;
    clientEpoch: string;
    checkpointId: string;
    checkpointContentHash: string;
    expectedRevision: string;
    /** Restore only these files and folders (issue 11); null or absent: every file. */
    paths?: readonly string[] | null;
  }): Promise<ApprovalRecord> {
    const session = await this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    const { checkpoint, project } = await this.checkRestorable(session.sessionId, input);
    const paths = normalizeRestorePaths(input.paths);
    const diff = await this.workspaceDiffSummary(checkpoint, paths);
    const summary =
      (paths
        ? `Restore ${paths.length} path(s) of project "${project.name}" (${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}) from checkpoint ${checkpoint.checkpointId} `
        : `Restore project "${project.name}" to checkpoint ${checkpoint.checkpointId} `) +
      `(${checkpoint.reason}, revision ${checkpoint.projectRevision}, ${checkpoint.contentHash.slice(0, 19)}…): ${diff}. ` +
      `The current state (revision ${project.revision}) is saved first as a RESTORE_PREIMAGE checkpoint.`;
    return await this.proposeWithApproval({
      sessionId: session.sessionId,
      runId: null,
      toolName: 'project.checkpoint.restore',
      // The argument hash covers the selection: approving it approves exactly these paths.
      arguments: {
        checkpointContentHash: checkpoint.contentHash,
        checkpointId: checkpoint.checkpointId,
        expectedRevision: project.revision,
        ...(paths ? { paths } : {}),
      },
      safeSummary: summary,
      reasons: ['Restore replaces the current project snapshot.'],
      askedBy: input.requestedBy ?? null,
    });
  }

  private async workspaceDiffSummary(
    checkpoint: CheckpointRecord,
    paths: readonly string[] | null = null,
  ): Promise<string> {
    const { plan, drifted } = await this.restorePreview(checkpoint, paths);
    const touched = [
      ...plan.added.map((f) => f.path),
      ...plan.changed.map((c) => c.to.path),
      ...plan.removed.map((f) => f.path),
      ...plan.modeChanged.map((f) => f.path),
    ];
    const outside = touched.filter((p) => drifted.has(p)).length;
    let text =
      `${plan.changed.length} file(s) change, ${plan.added.length} come back, ` +
      `${plan.removed.length} are removed, ${plan.modeChanged.length} change mode`;
    if (outside > 0)
      text += `; ${outside} of them changed outside the agent since the last checkpoint`;
    if (plan.notRestorable.length > 0)
      text += `; ${plan.notRestorable.length} cannot be put back (${plan.notRestorable
        .slice(0, 3)
        .map((n) => `${n.path}: ${n.reason}`)
        .join('; ')}${plan.notRestorable.length > 3 ? '; …' : ''})`;
    return text;
  }

  private async checkRestorable(
    sessionId: string,
    input: { checkpointId: string; checkpointContentHash: string; expectedRevision: string },
  ): Promise<{ checkpoint: CheckpointRecord; project: ProjectRecord }> {
    const checkpoint = await this.db.getCheckpoint(input.checkpointId);
    const session = await this.requireSession(sessionId);
    if (!checkpoint || checkpoint.projectId !== session.projectId)
      throw new StudioError(
        ErrorCode.CHECKPOINT_NOT_FOUND,
        `No checkpoint ${input.checkpointId} for this project.`,
      );
    if (checkpoint.contentHash !== input.checkpointContentHash)
      throw new StudioError(
        ErrorCode.CHECKPOINT_NOT_FOUND,
        `Checkpoint ${input.checkpointId} has content hash ${checkpoint.contentHash}, not ${input.checkpointContentHash}.`,
        { field: 'checkpointContentHash' },
      );
    const project = await this.projectOfSession(sessionId);
    if (!project)
      throw new StudioError(ErrorCode.CHECKPOINT_NOT_FOUND, 'This session has no project.');
    if (project.revision !== input.expectedRevision)
      throw new StudioError(
        ErrorCode.REVISION_CONFLICT,
        `The project moved on: it is at revision ${project.revision}, not ${input.expectedRevision}. Nothing was changed.`,
        {
          field: 'expectedRevision',
          remediation: 'Refresh the project and review the restore again.',
        },
      );
    return { checkpoint, project };
  }

  /**
   * Executes an approved engine tool (project.checkpoint.restore); the 'decision' job runs it, so
   * it is idempotent: run again after a crash it does only what is left.
   * - GRANTED: one commit moves the call to RUNNING (APPROVAL_CONSUMED, TOOL_DISPATCHED), takes
   *   the RESTORE_PREIMAGE checkpoint and writes the restore job record; then finishRestore.
   * - RUNNING with a restore job record: finishRestore (writing the files again is idempotent).
   * - RUNNING without one (a data dir of an older server): TOOL_FAILED, nothing was written.
   * - already ended: nothing.
   * A failure before the restore job record ends the call with TOOL_FAILED; after it, the record
   * stays and a restart finishes the restore or ends the call with TOOL_FAILED (recoverRestores).
   */
  private async runEngineTool(toolCallId: string): Promise<void> {
    const call = await this.db.getToolCall(toolCallId);
    if (!call || !call.argumentsJson || !call.approvalId) return;
    if (TERMINAL_TOOL_STATUSES.has(call.status)) return;
    const fail = (error: unknown) => this.failEngineTool(call, error);
    if (call.status === 'RUNNING' && (await this.db.getRestoreJob(toolCallId)))
      return this.finishRestore(toolCallId);
    let started: boolean;
    try {
      if (call.status === 'RUNNING') {
        return await fail(
          new StudioError(
            ErrorCode.TOOL_FAILED,
            'The restore was interrupted by a restart before it wrote anything; the project is unchanged.',
            { remediation: 'Request the restore again.' },
          ),
        );
      }
      const approval = await this.db.getApproval(call.approvalId);
      if (!approval || approval.status !== 'GRANTED') return;
      const args = JSON.parse(call.argumentsJson) as {
        checkpointId: string;
        checkpointContentHash: string;
        expectedRevision: string;
        paths?: string[];
      };
      const { checkpoint, project } = await this.checkRestorable(call.sessionId, args);
      started = await this.kernel.write(async () => {
        const again = await this.db.getApproval(call.approvalId!);
        if (again?.status !== 'GRANTED') return false;
        await this.append(call.sessionId, [
          {
            type: 'APPROVAL_CONSUMED',
            status: 'CONSUMED',
            ...approvalFieldsOf(again),
            runId: call.runId,
          },
          {
            type: 'TOOL_DISPATCHED',
            runId: call.runId,
            toolCallId,
            toolName: call.toolName,
            toolVersion: call.toolVersion,
            status: 'RUNNING',
            executor: 'SERVER',
          },
        ]);
        const preImage = await this.checkpoint(call.sessionId, 'RESTORE_PREIMAGE', {
          runId: call.runId,
          exactPreImage: true,
        });
        await this.db.putRestoreJob({
          toolCallId,
          sessionId: call.sessionId,
          projectId: project.projectId,
          checkpointId: checkpoint.checkpointId,
          preImageCheckpointId: preImage.checkpointId,
          startedAt: this.iso(),
          ...(args.paths ? { paths: args.paths } : {}),
        });
        return true;
      });
    } catch (error) {
      await fail(error);
      return;
    }
    // Past this point the restore job record exists: a failure writing the folder leaves it, so
    // a restart finishes the restore (recoverRestores), or ends the call with TOOL_FAILED.
    if (!started) return;
    this.fault('restore-started');
    await this.finishRestore(toolCallId);
    this.fault('restore-committed');
  }

  /** Ends an engine tool call with TOOL_FAILED (consuming its grant), unless it already ended. */
  private async failEngineTool(call: ToolCallRecord, error: unknown): Promise<void> {
    const toolCallId = call.toolCallId;
    const e =
      error instanceof StudioError
        ? error
        : new StudioError(
            ErrorCode.TOOL_FAILED,
            error instanceof Error ? error.message : String(error),
          );
    await this.kernel.write(async () => {
      const now = await this.db.getToolCall(toolCallId);
      if (!now || TERMINAL_TOOL_STATUSES.has(now.status)) return;
      const approval = await this.db.getApproval(call.approvalId!);
      await this.append(call.sessionId, [
        ...(approval?.status === 'GRANTED'
          ? [
              {
                type: 'APPROVAL_CONSUMED' as const,
                status: 'CONSUMED' as const,
                ...approvalFieldsOf(approval),
                runId: call.runId,
              },
              {
                type: 'TOOL_DISPATCHED' as const,
                runId: call.runId,
                toolCallId,
                toolName: call.toolName,
                toolVersion: call.toolVersion,
                status: 'RUNNING' as const,
                executor: 'SERVER' as const,
              },
            ]
          : []),
        {
          type: 'TOOL_FAILED',
          runId: call.runId,
          toolCallId,
          toolName: call.toolName,
          toolVersion: call.toolVersion,
          status: 'FAILED',
          error: {
            code: e.code,
            message: e.message,
            retryable: false,
            remediation: e.remediation,
          },
        },
      ]);
      await this.db.deleteRestoreJob(toolCallId);
    });
  }

  /** Writes the restore (idempotent) and commits revision + 1, CHECKPOINT_RESTORED and TOOL_SUCCEEDED. */
  private async finishRestore(toolCallId: string): Promise<void> {
    const job = await this.db.getRestoreJob(toolCallId);
    const call = await this.db.getToolCall(toolCallId);
    if (!job || !call) return;
    const checkpoint = await this.db.getCheckpoint(job.checkpointId);
    const preImage = await this.db.getCheckpoint(job.preImageCheckpointId);
    const project = await this.db.getProject(job.projectId);
    if (!checkpoint || !preImage || !project)
      throw new Error(`restore job ${toolCallId} refers to missing records`);
    // A per-file restore writes the pre-image with the selected paths taken from the
    // checkpoint: computed from two stored checkpoints, so a restart computes the same files.
    const ws = await this.workspace(job.projectId);
    const targetFiles = job.paths
      ? selectedManifest(
          await this.checkpointFiles(preImage),
          await this.checkpointFiles(checkpoint),
          job.paths,
        )
      : await this.checkpointFiles(checkpoint);
    const restored: RestoreResult = ws.restore(targetFiles);
    this.fault('restore-written');
    const written: EventFiles = eventFilesFor([], restored.written);
    const recorded = ws.storeManifest(restored.files);
    const restoredAt = this.iso();
    await this.kernel.write(async () => {
      const next: ProjectRecord = {
        ...project,
        revision: (BigInt(preImage.projectRevision) + 1n).toString(),
        contentHash: restored.contentHash,
        fileCount: restored.files.length,
        totalBytes: String(totalBytes(restored.files)),
        recordedContentHash: recorded,
        unavailableReason: null,
        updatedAt: restoredAt,
      };
      await this.db.putProject(next);
      await this.append(job.sessionId, [
        {
          type: 'CHECKPOINT_RESTORED',
          runId: call.runId,
          checkpointId: checkpoint.checkpointId,
          projectRevision: checkpoint.projectRevision,
          contentHash: checkpoint.contentHash,
          reason: checkpoint.reason,
          files: written.files,
          studioFilesOmitted: written.studioFilesOmitted,
          studioFilesRemoved: restored.removed.length,
          studioFileCount: restored.files.length,
          studioTotalBytes: String(totalBytes(restored.files)),
          restoredAt,
        },
        {
          type: 'TOOL_SUCCEEDED',
          runId: call.runId,
          toolCallId,
          toolName: call.toolName,
          toolVersion: call.toolVersion,
          status: 'SUCCEEDED',
          resultJson: canonicalJson({
            preRestoreCheckpoint: {
              checkpointId: preImage.checkpointId,
              contentHash: preImage.contentHash,
              createdAt: preImage.createdAt,
              projectRevision: preImage.projectRevision,
              reason: preImage.reason,
            },
            project: {
              contentHash: next.contentHash,
              name: next.name,
              projectId: next.projectId,
              revision: next.revision,
            },
            restoredCheckpointId: checkpoint.checkpointId,
          }),
        },
      ]);
      await this.db.deleteRestoreJob(toolCallId);
    });
  }

  /**
   * A restart mid-restore finishes the restore the human approved. Jobs whose project folder is
   * not open yet are finished when the project is registered.
   */
  private async recoverRestores(): Promise<void> {
    for (const job of await this.db.listRestoreJobs()) {
      if (!this.workspaces.has(job.projectId)) continue;
      this.logger.warn('finishing a restore interrupted by a restart', {
        toolCallId: job.toolCallId,
      });
      try {
        await this.finishRestore(job.toolCallId);
      } catch (error) {
        this.logger.error('could not finish an interrupted restore', {
          toolCallId: job.toolCallId,
          error: String(error),
        });
        // Tried once more after the restart: the call ends, it is not left RUNNING.
        const call = await this.db.getToolCall(job.toolCallId);
        if (call)
          await this.failEngineTool(
            call,
            new StudioError(
              ErrorCode.TOOL_FAILED,
              `The restore could not be finished after a restart: ${error instanceof Error ? error.message : String(error)}`,
            ),
          );
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Questions (foreign runtimes)
  // ------------------------------------------------------------------------------------------

  async answerQuestion(input: {
    sessionId: string;
    clientEpoch: string;
    questionId: string;
    text?: string | null;
    choiceIndex?: number | null;
    approved?: boolean | null;
  }) {
    const session = await this.requireAttached(input.sessionId, input.clientEpoch);
    const question = await this.db.getQuestion(session.sessionId, input.questionId);
    if (!question) throw new StudioError(ErrorCode.BAD_REQUEST, `No question ${input.questionId}.`);
    if (question.status !== 'OPEN')
      throw new StudioError(
        ErrorCode.STUDIO_QUESTION_CLOSED,
        `The question is already ${question.status.toLowerCase().replaceAll('_', ' ')}.`,
      );
    const source = this.sources.get(session.source);
    const answer: QuestionAnswer = {
      sessionId: session.sessionId,
      question,
      text: input.text ?? null,
      choiceIndex: input.choiceIndex ?? null,
      approved: input.approved ?? null,
    };
    if (!source?.deliverAnswer)
      throw new StudioError(ErrorCode.HOST_UNAVAILABLE, 'This runtime takes no answers.');
    await source.deliverAnswer(answer);
    const after = await this.db.getQuestion(session.sessionId, input.questionId);
    if (after && after.status === 'OPEN') {
      await this.append(session.sessionId, [
        {
          type: 'STUDIO_QUESTION_ANSWERED',
          runId: after.runId,
          question: {
            ...stripRun(after),
            status: 'ANSWERED',
            answerText: answer.text,
            answerChoiceIndex: answer.choiceIndex,
            answerApproved: answer.approved,
            answeredAt: this.iso(),
          },
        },
      ]);
    }
    const result = await this.db.getQuestion(session.sessionId, input.questionId);
    if (!result) throw new Error('question vanished');
    return stripRun(result);
  }
}

function stripRun<T extends { runId: string | null }>(value: T): Omit<T, 'runId'> {
  const { runId, ...rest } = value;
  void runId;
  return rest;
}

/** The diff of proposed file changes against a workspace's files (see Engine.proposalDiff). */
function diffAgainst(ws: ProjectWorkspace, files: ManifestFile[], changes: ProposedFileChange[]) {
  const hashes = new Map(files.map((f) => [f.path, f.contentHash]));
  return computeProposalDiff(changes, (path) => {
    const contentHash = hashes.get(path) ?? null;
    if (contentHash === null) return { text: null, contentHash: null, opaque: false };
    try {
      const text = ws.readFile(path);
      return { text, contentHash, opaque: text.includes('\u0000') };
    } catch {
      return { text: null, contentHash, opaque: true };
    }
  });
}
