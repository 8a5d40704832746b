/**
 * The engine: a thin facade over the kernel and the rule modules. It owns the one append path
 * (seq, projection, revocations and approval rules in the same commit, notifications after it),
 * the source registry, the timers and the outbox worker, and composes the modules, each of which
 * owns one rule family and reaches the store only through the kernel:
 * attachments.ts (epochs, heartbeats), sessions.ts (sessions and runs), decisions.ts (approvals
 * and decisions), projects.ts + restores.ts (projects, checkpoints, restore), questions.ts,
 * idempotency.ts, approvalRules.ts and agentPolicy.ts (rules and the kill switch), jobs.ts (outbox).
 * Resolvers and sources use this class's API (sources through `SourceHost`).
 */
import type { Store } from '../store/Store.ts';
import { Kernel, type Db, type Reads } from './kernel.ts';
import { JOBS_CHANNEL, JobWorker } from './jobs.ts';
import { IDEMPOTENCY_RETENTION_MS, Idempotency } from './idempotency.ts';
import { Attachments } from './attachments.ts';
import type { JobRecord, JobStatus } from '../store/Store.ts';
import type { ApprovalRuleRecord, RestoreJobRecord, SessionRecord } from '../store/records.ts';
import type { EventDraft, StoredEvent } from './eventDrafts.ts';
import type { Logger } from '../logger.ts';
import type {
  GroupCommitOptions,
  SessionInfo,
  Source,
  SourceHost,
  SourceStatus,
  ToolDecision,
} from '../sources/Source.ts';
import { project } from './projector.ts';
import { newEventId } from './eventIds.ts';
import { eventTextOf } from '../store/eventText.ts';
import { leaseEndedDraft } from './recordDrafts.ts';
import { revocationDrafts, revocationsBefore } from './approvalLifecycle.ts';
import {
  buildRule,
  revokeRule,
  updateRule,
  type CreateRuleInput,
  type UpdateRuleInput,
} from './approvalRules.ts';
import { agentsStopped, readPolicy, writePolicy } from './agentPolicy.ts';
import type { AgentPolicyRecord, SetPolicyInput } from './agentPolicy.ts';
import { StudioError } from './StudioError.ts';
import { validateDraft } from './validateDraft.ts';
import { registryDigest, toolsForMode } from './toolRegistry.ts';
import { ContentStore } from '../workspace/contentStore.ts';
import { Notifier, SESSION_CHANNEL, SESSION_UPDATE_CHANNEL, SOURCES_CHANNEL } from './Notifier.ts';
import {
  ErrorCode,
  EVENT_PROTOCOL_VERSION,
  HEARTBEAT_STALE_MS,
  APPROVAL_TTL_MAX_MS,
  LOCAL_APP_ID,
  WORKSPACE_LEASE_MS,
} from '../../protocol/contract.ts';
import { EVENT_TYPE_MEMBER, RUN_EVENT_STATUS } from '../../protocol/events.ts';
import type { AgentMode } from '../../protocol/events.ts';
import type { AfterCommit, EngineCore, FaultStep } from './core.ts';
import { Sessions } from './sessions.ts';
import { Decisions } from './decisions.ts';
import { Projects } from './projects.ts';
import { Restores } from './restores.ts';
import { Questions } from './questions.ts';

export { FAULT_STEPS, type FaultStep } from './core.ts';
export type { DecideInput, ProposeInput } from './decisions.ts';

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

/** How often the sweep prunes idempotency records past their retention. */
const PRUNE_INTERVAL_MS = 60_000;

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
  private readonly sessions: Sessions;
  private readonly decisions: Decisions;
  private readonly projects: Projects;
  private readonly restores: Restores;
  private readonly questions: Questions;
  private readonly worker: JobWorker;
  /** How long idempotency records are kept (pruned by the sweep). */
  readonly idempotencyRetentionMs: number;
  private lastPruneMs = 0;
  private readonly fault: (step: FaultStep) => void;
  readonly logger: Logger;
  readonly notifier = new Notifier();
  private readonly sources = new Map<string, Source>();
  private readonly sourceStatus = new Map<
    string,
    { status: SourceStatus; detail: string | null }
  >();
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
          return this.decisions.runDecisionJob(job);
        },
      },
      () => this.now(),
    );
    this.clock = options.now ?? Date.now;
    this.approvalTtlMs = Math.min(
      options.approvalTtlMs ?? APPROVAL_TTL_MAX_MS,
      APPROVAL_TTL_MAX_MS,
    );
    this.heartbeatStaleMs = options.heartbeatStaleMs ?? HEARTBEAT_STALE_MS;
    this.workspaceLeaseMs = options.workspaceLeaseMs ?? WORKSPACE_LEASE_MS;
    this.sweepIntervalMs = options.sweepIntervalMs ?? 250;
    // What every module gets (core.ts); each module's host adds the narrow ports it needs.
    const core: EngineCore = {
      kernel: this.kernel,
      db: this.db,
      logger: this.logger,
      approvalTtlMs: this.approvalTtlMs,
      workspaceLeaseMs: this.workspaceLeaseMs,
      now: () => this.now(),
      iso: (ms?: number) => this.iso(ms),
      fault: (step) => this.fault(step),
      started: () => this.sweepTimer !== null,
      append: (id, drafts) => this.append(id, drafts),
      requireSession: (id) => this.requireSession(id),
      requireAttached: (id, epoch) => this.requireAttached(id, epoch),
      requireOpen: (session) => this.requireOpen(session),
      requireApp: (appId) => this.requireApp(appId),
      requireAgentsRunning: (appId) => this.requireAgentsRunning(appId),
      policy: (appId) => this.policy(appId),
      sessionInfo: (session) => this.sessionInfo(session),
      source: (sourceId) => this.sources.get(sourceId),
      sourceOf: (sessionId) => this.sourceOf(sessionId),
      projectOwner: (projectId) => this.projectSources.get(projectId),
    };
    this.attachments = new Attachments({ ...core, heartbeatStaleMs: this.heartbeatStaleMs });
    this.sessions = new Sessions(core);
    this.questions = new Questions(core);
    // The modules that need each other get ports resolved on use (they are built in turn).
    const modules = {
      sessions: () => this.sessions,
      decisions: () => this.decisions,
      projects: () => this.projects,
      restores: () => this.restores,
    };
    this.projects = new Projects({
      ...core,
      dataDir: options.dataDir,
      checkpointMaxFileBytes: options.checkpointMaxFileBytes,
      get restores() {
        return modules.restores();
      },
    });
    this.restores = new Restores({
      ...core,
      get decisions() {
        return modules.decisions();
      },
      get projects() {
        return modules.projects();
      },
    });
    this.decisions = new Decisions({
      ...core,
      get projects() {
        return modules.projects();
      },
      get restores() {
        return modules.restores();
      },
      get sessions() {
        return modules.sessions();
      },
    });
  }

  now(): number {
    return this.clock();
  }

  /** Test-only: a source reached a named durable step (FAULT_STEPS; the crash tests kill here). */
  faultPoint(step: FaultStep): void {
    this.fault(step);
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

  /** The last time `iso` formatted, and its text: an ingest burst stamps many events per ms. */
  private isoMs = Number.NaN;
  private isoText = '';

  iso(ms = this.now()): string {
    if (ms !== this.isoMs) {
      this.isoText = new Date(ms).toISOString();
      this.isoMs = ms;
    }
    return this.isoText;
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle
  // ------------------------------------------------------------------------------------------

  /** Finishes interrupted restores, then starts the timers. */
  async start(): Promise<void> {
    await this.restores.recoverRestores();
    await this.projects.collectGarbageSafely();
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
    // The project folders' watchers (their scans are full ones from here on).
    this.projects.close();
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
      ensureSession: (spec) => this.sessions.ensureSession(sourceId, spec),
      findSession: async (id) => {
        const s = await this.db.getSession(id);
        return s ? this.sessionInfo(s) : null;
      },
      append: (id, drafts) => this.append(id, drafts),
      groupCommit: (fn, options) => this.groupCommit(fn, options),
      hasForeignId: (id, foreignId) => this.db.hasForeignId(id, foreignId),
      findQuestion: (id, questionId) => this.db.getQuestion(id, questionId),
      proposalDiff: (id, changes) => this.projects.proposalDiffNow(id, changes),
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
      this.projects.noteSessionProject(sessionId, session.projectId);
      const effects: AfterCommit[] = [];
      const out: StoredEvent[] = [];
      const queue = [...drafts];
      const expanded = new Set<EventDraft>();
      // The drafts' foreignIds, looked up in one query; `taken` also gets those this append
      // stores, and a draft a rule adds on the way (not looked up) is asked about alone.
      const asked = new Set<string>();
      for (const draft of drafts) if (draft.foreignId) asked.add(draft.foreignId);
      const taken = await this.db.storedForeignIds(sessionId, [...asked]);
      while (queue.length > 0) {
        const draft = queue.shift()!;
        const foreignId = draft.foreignId;
        if (foreignId) {
          if (taken.has(foreignId)) continue;
          if (!asked.has(foreignId) && (await this.db.hasForeignId(sessionId, foreignId))) continue;
        }
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
        if (foreignId) taken.add(foreignId);
        queue.unshift(...(await this.decisions.afterAppended(session, draft, effects)));
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

  /** The source that can start sessions in a project (null: none can). */
  projectSourceOf(projectId: string): string | null {
    return this.projectSources.get(projectId) ?? (this.sources.has('demo') ? 'demo' : null);
  }

  /**
   * Group commit for a source's ingest slice (slicedIngest.ts): every append inside joins one
   * transaction, so the slice costs one commit and one fsync, and each session's record is
   * written once at the end instead of once per append.
   */
  async groupCommit<T>(fn: () => Promise<T>, options?: GroupCommitOptions): Promise<T> {
    return this.kernel.group(fn, options);
  }

  /** Inserts one event with the next seq and folds it into the current state. */
  private async appendOne(session: SessionRecord, draft: EventDraft): Promise<StoredEvent> {
    const sessionId = session.sessionId;
    const seq = (BigInt(session.lastEventSeq) + 1n).toString();
    const createdAt = this.iso();
    // Time-ordered (eventIds.ts): a commit writes a few pages of the event_id index, not one per event.
    const eventId = newEventId();
    const type = draft.type;
    const runId = draft.runId ?? null;
    // Both objects are built key by key (copyDraft), never as `{ ...draft, more }`: see there.
    const event = copyDraft(draft, null) as unknown as StoredEvent & Record<string, unknown>;
    event.eventId = eventId;
    event.sessionId = sessionId;
    event.seq = seq;
    event.createdAt = createdAt;
    event.runId = runId;
    // Stored in its served shape, so a replay only parses it: the draft's fields but type, runId
    // and foreignId, then the envelope.
    const served = copyDraft(draft, SERVED_SKIP);
    // RUN_* drafts may leave status out; store the status the type implies.
    if (Object.hasOwn(RUN_EVENT_STATUS, type) && !served.status)
      served.status = RUN_EVENT_STATUS[type as keyof typeof RUN_EVENT_STATUS];
    served.__typename = EVENT_TYPE_MEMBER[type];
    served.protocolVersion = EVENT_PROTOCOL_VERSION;
    served.eventId = eventId;
    served.sessionId = sessionId;
    served.seq = seq;
    served.type = type;
    served.runId = runId;
    served.version = EVENT_PROTOCOL_VERSION;
    served.createdAt = createdAt;
    const foreignId = draft.foreignId;
    await this.db.insertEvent({
      sessionId,
      seq: BigInt(seq),
      eventId: event.eventId,
      type,
      runId,
      createdAt,
      payload: JSON.stringify(served),
      foreignId: foreignId ?? null,
      text: eventTextOf(served),
    });
    await project(this.db, session, event);
    session.lastEventSeq = seq;
    session.updatedAt = createdAt;
    return event;
  }

  private async runAfterCommit(effects: AfterCommit[]): Promise<void> {
    for (const effect of effects) {
      try {
        if (effect.kind === 'revoked') await this.decisions.tellRevoked(effect.approval);
        else void this.sessions.stopRun(effect.sessionId, effect.runId, 'The kill switch is on.');
      } catch (error) {
        this.logger.error('after-commit step failed', { kind: effect.kind, error: String(error) });
      }
    }
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
          await this.sessions.stopRun(session.sessionId, session.currentRunId, reason);
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
        for (const approval of pending) await this.decisions.tellRevoked(approval);
      }
    }
    return after;
  }

  // ------------------------------------------------------------------------------------------
  // Reads
  // ------------------------------------------------------------------------------------------

  async requireSession(sessionId: string): Promise<SessionRecord> {
    const session = await this.db.getSession(sessionId);
    if (!session || session.appId !== LOCAL_APP_ID)
      throw new StudioError(ErrorCode.SESSION_NOT_FOUND, `No session ${sessionId}.`);
    this.projects.noteSessionProject(sessionId, session.projectId);
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
  // Timers
  // ------------------------------------------------------------------------------------------

  /** One pass of the timers: approval expiry, heartbeat silence, lease expiry. */
  async sweep(): Promise<void> {
    await this.decisions.expireApprovals();
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
  // Sessions and runs (sessions.ts)
  // ------------------------------------------------------------------------------------------

  createSession(...args: Parameters<Sessions['createSession']>) {
    return this.sessions.createSession(...args);
  }

  setMode(...args: Parameters<Sessions['setMode']>) {
    return this.sessions.setMode(...args);
  }

  sendMessage(...args: Parameters<Sessions['sendMessage']>) {
    return this.sessions.sendMessage(...args);
  }

  pause(...args: Parameters<Sessions['pause']>) {
    return this.sessions.pause(...args);
  }

  resume(...args: Parameters<Sessions['resume']>) {
    return this.sessions.resume(...args);
  }

  cancelRun(...args: Parameters<Sessions['cancelRun']>) {
    return this.sessions.cancelRun(...args);
  }

  endRun(...args: Parameters<Sessions['endRun']>) {
    return this.sessions.endRun(...args);
  }

  closeSession(...args: Parameters<Sessions['closeSession']>) {
    return this.sessions.closeSession(...args);
  }

  // ------------------------------------------------------------------------------------------
  // Approvals and decisions (decisions.ts)
  // ------------------------------------------------------------------------------------------

  argumentHash(...args: Parameters<Decisions['argumentHash']>) {
    return this.decisions.argumentHash(...args);
  }

  proposeWithApproval(...args: Parameters<Decisions['proposeWithApproval']>) {
    return this.decisions.proposeWithApproval(...args);
  }

  decide(...args: Parameters<Decisions['decide']>) {
    return this.decisions.decide(...args);
  }

  decideBatch(...args: Parameters<Decisions['decideBatch']>) {
    return this.decisions.decideBatch(...args);
  }

  canAskAgain(...args: Parameters<Decisions['canAskAgain']>) {
    return this.decisions.canAskAgain(...args);
  }

  /**
   * A decision delivery forwarded from another instance, run here where the source runs
   * (LeasedSource), in order as the outbox runs one (Decisions.deliverInOrder). Throws the
   * runtime's refusal, which the forwarding instance's job handles.
   */
  async deliverInOrder(source: Source, decision: ToolDecision): Promise<void> {
    const refused = await this.decisions.deliverInOrder(source, decision, true);
    if (refused) throw refused.error;
  }

  askAgain(...args: Parameters<Decisions['askAgain']>) {
    return this.decisions.askAgain(...args);
  }

  expiredToolDraft(...args: Parameters<Decisions['expiredToolDraft']>) {
    return this.decisions.expiredToolDraft(...args);
  }

  // ------------------------------------------------------------------------------------------
  // Projects and checkpoints (projects.ts)
  // ------------------------------------------------------------------------------------------

  /** The content-addressed store of checkpoint content (projects.ts). */
  get contentStore(): ContentStore {
    return this.projects.contentStore;
  }

  listProjects(...args: Parameters<Projects['listProjects']>) {
    return this.projects.listProjects(...args);
  }

  checkpointsSupported(...args: Parameters<Projects['checkpointsSupported']>) {
    return this.projects.checkpointsSupported(...args);
  }

  proposalDiff(...args: Parameters<Projects['proposalDiff']>) {
    return this.projects.proposalDiff(...args);
  }

  registerProject(...args: Parameters<Projects['registerProject']>) {
    return this.projects.registerProject(...args);
  }

  workspace(...args: Parameters<Projects['workspace']>) {
    return this.projects.workspace(...args);
  }

  syncProject(...args: Parameters<Projects['syncProject']>) {
    return this.projects.syncProject(...args);
  }

  projectOfSession(...args: Parameters<Projects['projectOfSession']>) {
    return this.projects.projectOfSession(...args);
  }

  projectFiles(...args: Parameters<Projects['projectFiles']>) {
    return this.projects.projectFiles(...args);
  }

  checkpointFiles(...args: Parameters<Projects['checkpointFiles']>) {
    return this.projects.checkpointFiles(...args);
  }

  restorePreview(...args: Parameters<Projects['restorePreview']>) {
    return this.projects.restorePreview(...args);
  }

  checkpoint(...args: Parameters<Projects['checkpoint']>) {
    return this.projects.checkpoint(...args);
  }

  collectGarbage(...args: Parameters<Projects['collectGarbage']>) {
    return this.projects.collectGarbage(...args);
  }

  createManualCheckpoint(...args: Parameters<Projects['createManualCheckpoint']>) {
    return this.projects.createManualCheckpoint(...args);
  }

  patchProject(...args: Parameters<Projects['patchProject']>) {
    return this.projects.patchProject(...args);
  }

  // ------------------------------------------------------------------------------------------
  // Restore (restores.ts)
  // ------------------------------------------------------------------------------------------

  requestRestore(...args: Parameters<Restores['requestRestore']>) {
    return this.restores.requestRestore(...args);
  }

  // ------------------------------------------------------------------------------------------
  // Questions (questions.ts)
  // ------------------------------------------------------------------------------------------

  answerQuestion(...args: Parameters<Questions['answerQuestion']>) {
    return this.questions.answerQuestion(...args);
  }
}

/** Draft keys the served payload leaves out (the envelope writes type and runId itself). */
const SERVED_SKIP: ReadonlySet<string> = new Set(['type', 'runId', 'foreignId']);

/**
 * A draft's own keys and values, in order, but `skip`: what `{ ...draft }` gives, built key by
 * key. On Node 20's V8, adding new keys to a spread copy of drafts of varying shapes took 12 µs
 * per object for `{ ...draft, eventId, sessionId, seq, createdAt, runId }` and 22 µs for the
 * served payload's spread (rest of the draft, then ten envelope keys), against under 1 µs for
 * this copy (node micro-benchmark of 50,000 Leviath drafts; bench:ingest's profile agreed).
 */
function copyDraft(draft: EventDraft, skip: ReadonlySet<string> | null): Record<string, unknown> {
  const source = draft as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) if (!skip?.has(key)) out[key] = source[key];
  return out;
}
