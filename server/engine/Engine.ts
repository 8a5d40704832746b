/**
 * The engine: the one writer of the event log. It assigns seq, appends events and updates the
 * current state in one transaction, wakes subscribers after commit, enforces the protocol rules
 * (epochs, heartbeats, approvals, idempotency) and routes human actions to the session's source.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Store } from '../store/Store.ts';
import type {
  ApprovalRecord,
  CheckpointRecord,
  ProjectRecord,
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
import { decidingRule, noteRuleUse } from './approvalRules.ts';
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
import { Notifier } from './Notifier.ts';
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
import { compareSeq, isDecimalString } from '../../protocol/seq.ts';
import {
  EVENT_TYPE_MEMBER,
  RUN_EVENT_STATUS,
  TERMINAL_RUN_STATUSES,
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
  now?: () => number;
}

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
  | { kind: 'ruled'; approvalId: string; approved: boolean }
  | { kind: 'stopRun'; sessionId: string; runId: string };

/** `contentHash` of the empty manifest `{"files":[]}`. */
const EMPTY_MANIFEST_HASH = canonicalManifestHash([]);

/** Tools the engine itself executes after approval, whatever the session's source. */
const ENGINE_TOOLS = new Set(['project.checkpoint.restore']);

export class Engine {
  readonly store: Store;
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
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly deciding = new Set<string>();
  private readonly clock: () => number;
  readonly approvalTtlMs: number;
  readonly heartbeatStaleMs: number;
  readonly workspaceLeaseMs: number;
  private sweepTimer: NodeJS.Timeout | null = null;
  private readonly sweepIntervalMs: number;

  constructor(options: EngineOptions) {
    this.store = options.store;
    this.logger = options.logger;
    this.dataDir = options.dataDir;
    this.clock = options.now ?? Date.now;
    this.approvalTtlMs = Math.min(
      options.approvalTtlMs ?? APPROVAL_TTL_MAX_MS,
      APPROVAL_TTL_MAX_MS,
    );
    this.heartbeatStaleMs = options.heartbeatStaleMs ?? HEARTBEAT_STALE_MS;
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

  iso(ms = this.now()): string {
    return new Date(ms).toISOString();
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle
  // ------------------------------------------------------------------------------------------

  /** Finishes interrupted restores, then starts the timers. */
  start(): void {
    this.recoverRestores();
    this.collectGarbageSafely();
    this.sweepTimer = setInterval(() => {
      try {
        this.sweep();
      } catch (error) {
        this.logger.error('sweep failed', { error: String(error) });
      }
    }, this.sweepIntervalMs);
    this.sweepTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
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

  sourceOf(sessionId: string): Source | undefined {
    const session = this.store.getSession(sessionId);
    return session ? this.sources.get(session.source) : undefined;
  }

  private hostFor(sourceId: string): SourceHost {
    return {
      logger: this.logger,
      now: () => this.now(),
      ensureSession: (spec) => this.ensureSession(sourceId, spec),
      findSession: (id) => {
        const s = this.store.getSession(id);
        return s ? this.sessionInfo(s) : null;
      },
      append: (id, drafts) => this.append(id, drafts),
      groupCommit: (fn) => this.groupCommit(fn),
      hasForeignId: (id, foreignId) => this.store.hasForeignId(id, foreignId),
      findQuestion: (id, questionId) => this.store.getQuestion(id, questionId),
      proposalDiff: (id, changes) => this.proposalDiff(id, changes),
      findApproval: (id, toolCallId) => {
        const call = this.store.getToolCall(toolCallId);
        if (!call || call.sessionId !== id || !call.approvalId) return null;
        const approval = this.store.getApproval(call.approvalId);
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
  append(sessionId: string, drafts: EventDraft[]): StoredEvent[] {
    for (const draft of drafts) validateDraft(draft);
    const group = this.groupSessions;
    const effects: AfterCommit[] = [];
    const stored = this.store.transaction(() => {
      const found = group?.get(sessionId) ?? this.store.getSession(sessionId);
      if (!found) throw new StudioError(ErrorCode.SESSION_NOT_FOUND, `No session ${sessionId}.`);
      // In a group commit, a copy: a refused append (its savepoint rolled back) leaves the cached record as it was.
      const session = group ? { ...found } : found;
      const out: StoredEvent[] = [];
      const queue = [...drafts];
      const expanded = new Set<EventDraft>();
      while (queue.length > 0) {
        const draft = queue.shift()!;
        if (draft.foreignId && this.store.hasForeignId(sessionId, draft.foreignId)) continue;
        // Whatever ends what an approval waits on revokes it first, in this same commit.
        if (!expanded.has(draft)) {
          expanded.add(draft);
          const before = revocationsBefore(this.store, sessionId, draft);
          if (before.drafts.length > 0) {
            queue.unshift(...before.drafts, draft);
            for (const approval of before.revoked) effects.push({ kind: 'revoked', approval });
            continue;
          }
        }
        out.push(this.appendOne(session, draft));
        queue.unshift(...this.afterAppended(session, draft, effects));
      }
      if (out.length > 0) {
        if (group) group.set(sessionId, session);
        else this.store.putSession(session);
      }
      return out;
    });
    if (stored.length > 0) {
      this.notifier.notifySession(sessionId);
      this.notifier.notifySessionUpdate(sessionId);
    }
    if (effects.length > 0) setImmediate(() => this.runAfterCommit(effects));
    return stored;
  }

  /** projectId -> the source that starts sessions in it (absent: the demo agent). */
  private readonly projectSources = new Map<string, string>();

  /** Says which source starts new sessions in a project (Claude Code folders). */
  assignProjectSource(projectId: string, sourceId: string): void {
    this.projectSources.set(projectId, sourceId);
  }

  /** Every registered project folder, by name. */
  listProjects(): ProjectRecord[] {
    return [...this.workspaces.keys()]
      .map((id) => this.store.getProject(id))
      .filter((p): p is ProjectRecord => p !== null)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The source that can start sessions in a project (null: none can). */
  projectSourceOf(projectId: string): string | null {
    return this.projectSources.get(projectId) ?? (this.sources.has('demo') ? 'demo' : null);
  }

  /** Session records appended to in the current group commit, written once at its end. */
  private groupSessions: Map<string, SessionRecord> | null = null;

  /**
   * Group commit for a source's ingest slice (slicedIngest.ts): every append inside joins one
   * transaction (better-sqlite3 savepoints), so the slice costs one commit and one fsync, and each
   * session's record is written once at the end instead of once per append.
   */
  groupCommit<T>(fn: () => T): T {
    if (this.groupSessions) return fn();
    const sessions = new Map<string, SessionRecord>();
    this.groupSessions = sessions;
    try {
      return this.store.transaction(() => {
        const result = fn();
        for (const session of sessions.values()) this.store.putSession(session);
        return result;
      });
    } finally {
      this.groupSessions = null;
    }
  }

  /** Inserts one event with the next seq and folds it into the current state. */
  private appendOne(session: SessionRecord, draft: EventDraft): StoredEvent {
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
    this.store.insertEvent({
      sessionId,
      seq: BigInt(seq),
      eventId: event.eventId,
      type,
      runId: event.runId,
      createdAt,
      payload: JSON.stringify(served),
      foreignId: foreignId ?? null,
    });
    project(this.store, session, event);
    session.lastEventSeq = seq;
    session.updatedAt = createdAt;
    return event;
  }

  /**
   * Rules applied right after a draft is folded, in the same commit: a new approval is revoked
   * while the kill switch is on, or decided by a matching approval rule; a run a runtime starts
   * while the kill switch is on is stopped after the commit.
   */
  private afterAppended(
    session: SessionRecord,
    draft: EventDraft,
    effects: AfterCommit[],
  ): EventDraft[] {
    const policy = this.policy(session.appId);
    if (draft.type === 'RUN_STARTED' && agentsStopped(policy)) {
      effects.push({ kind: 'stopRun', sessionId: session.sessionId, runId: draft.runId });
      return [];
    }
    if (draft.type !== 'APPROVAL_REQUESTED') return [];
    const approval = this.store.getApproval(draft.approvalId);
    if (!approval || approval.status !== 'PENDING') return [];
    if (agentsStopped(policy)) {
      effects.push({ kind: 'revoked', approval });
      return revocationDrafts(this.store, approval, 'the kill switch is on');
    }
    const rule = decidingRule(this.store, session, approval, this.now());
    if (!rule) return [];
    noteRuleUse(this.store, rule, approval.toolCallId, this.iso());
    effects.push({
      kind: 'ruled',
      approvalId: approval.approvalId,
      approved: rule.effect === 'ALLOW',
    });
    const base = {
      ...approvalFieldsOf(approval),
      studioRuleId: rule.ruleId,
      studioRuleName: rule.name,
      studioDecidedBy: null,
    };
    if (rule.effect === 'ALLOW') return [{ type: 'APPROVAL_GRANTED', status: 'GRANTED', ...base }];
    const call = this.store.getToolCall(approval.toolCallId);
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

  private runAfterCommit(effects: AfterCommit[]): void {
    for (const effect of effects) {
      try {
        if (effect.kind === 'revoked') this.tellRevoked(effect.approval);
        else if (effect.kind === 'ruled')
          void this.afterRuleDecision(effect.approvalId, effect.approved);
        else void this.stopRun(effect.sessionId, effect.runId, 'The kill switch is on.');
      } catch (error) {
        this.logger.error('after-commit step failed', { kind: effect.kind, error: String(error) });
      }
    }
  }

  private tellRevoked(approval: ApprovalRecord): void {
    const call = this.store.getToolCall(approval.toolCallId);
    if (!call || ENGINE_TOOLS.has(call.toolName)) return;
    this.sourceOf(approval.sessionId)?.onApprovalRevoked?.({
      sessionId: approval.sessionId,
      runId: approval.runId,
      toolCallId: approval.toolCallId,
      toolName: call.toolName,
      approvalId: approval.approvalId,
      argumentHash: approval.argumentHash,
    });
  }

  /** A rule decided an approval (recorded): the source hears it like a human decision. */
  private async afterRuleDecision(approvalId: string, approved: boolean): Promise<void> {
    const approval = this.store.getApproval(approvalId);
    const call = approval ? this.store.getToolCall(approval.toolCallId) : null;
    if (!approval || !call) return;
    const decision: ToolDecision = {
      sessionId: approval.sessionId,
      runId: approval.runId,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      approvalId,
      argumentHash: approval.argumentHash,
      approved,
      reason: approval.decisionReason,
    };
    this.afterDecision(decision);
    const source = this.sourceOf(approval.sessionId);
    if (ENGINE_TOOLS.has(call.toolName) || !source?.deliverDecision) return;
    try {
      await source.deliverDecision(decision);
    } catch (error) {
      // The rule's decision is recorded; the runtime did not take it. Say so in the timeline.
      this.append(approval.sessionId, [
        {
          type: 'STUDIO_LOG',
          runId: approval.runId,
          level: 'warn',
          message: `Rule "${approval.ruleName ?? approval.ruleId}" decided ${call.toolName}, but the runtime did not take the decision: ${error instanceof Error ? error.message : String(error)}`,
          origin: 'approval-rules',
        },
      ]);
    }
  }

  /** Cancels a run on its source and records RUN_CANCELLED (its approvals are revoked with it). */
  private async stopRun(sessionId: string, runId: string, reason: string): Promise<void> {
    const session = this.store.getSession(sessionId);
    const run = this.store.getRun(runId);
    if (!session || !run || TERMINAL_RUN_STATUSES.has(run.status)) return;
    const source = this.sources.get(session.source);
    try {
      if (source?.cancelRun) await source.cancelRun(this.sessionInfo(session), runId);
    } catch (error) {
      this.logger.warn('source could not cancel a run', { runId, error: String(error) });
    }
    this.endRun(sessionId, runId, 'RUN_CANCELLED', reason);
  }

  // ------------------------------------------------------------------------------------------
  // Agent policy (kill switch)
  // ------------------------------------------------------------------------------------------

  private readonly policies = new Map<string, AgentPolicyRecord>();

  /** The app's policy (cached: only setPolicy writes it). */
  policy(appId: string): AgentPolicyRecord {
    let policy = this.policies.get(appId);
    if (!policy) {
      policy = readPolicy(this.store, appId, this.iso());
      this.policies.set(appId, policy);
    }
    return policy;
  }

  /** Throws AGENT_DISABLED while the app's kill switch is on (or agents are disabled). */
  requireAgentsRunning(appId: string): void {
    const policy = this.policy(appId);
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
    const { before, after } = writePolicy(this.store, input, this.iso(), by);
    this.policies.set(input.appId, after);
    if (agentsStopped(after) && !agentsStopped(before)) {
      const reason = 'The kill switch stopped every agent.';
      for (const session of this.store.listAllSessions()) {
        if (session.appId !== input.appId) continue;
        if (session.currentRunId)
          await this.stopRun(session.sessionId, session.currentRunId, reason);
        const pending = this.store.listPendingApprovals(session.sessionId);
        if (pending.length > 0)
          this.append(
            session.sessionId,
            pending.flatMap((a) =>
              revocationDrafts(this.store, a, 'the kill switch is on', { revokedBy: by }),
            ),
          );
        for (const approval of pending) this.tellRevoked(approval);
      }
    }
    this.notifier.notifySources();
    return after;
  }

  private ensureSession(sourceId: string, spec: SessionSpec): SessionInfo {
    const existing = this.store.getSession(spec.sessionId);
    if (existing) return this.sessionInfo(existing);
    const createdAt = this.iso();
    this.store.transaction(() => {
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
      this.store.putSession(record);
      this.append(spec.sessionId, [
        { type: 'SESSION_CREATED', reason: sourceId },
        { type: 'MODE_SELECTED', mode: spec.mode },
      ]);
    });
    return this.sessionInfo(this.requireSession(spec.sessionId));
  }

  /** Creates a session from CreateAgentSessionInput (owned by the demo agent when present). */
  createSession(input: {
    appId: string;
    projectId?: string | null;
    mode: AgentMode;
    requestedModel?: string | null;
  }): SessionRecord {
    this.requireApp(input.appId);
    if (input.mode === 'BUILD' && !input.projectId)
      throw new StudioError(ErrorCode.BAD_REQUEST, 'BUILD mode needs a projectId.', {
        field: 'projectId',
      });
    if (input.projectId && !this.store.getProject(input.projectId))
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
    this.ensureSession(source.sourceId, {
      sessionId,
      title: '',
      mode: input.mode,
      requestedModel:
        input.requestedModel ?? (source.sourceId === 'demo' ? 'studio-offline-agent' : 'default'),
      model: source.sourceId === 'demo' ? 'studio-offline-agent' : null,
      projectId: input.projectId ?? null,
    });
    return this.requireSession(sessionId);
  }

  // ------------------------------------------------------------------------------------------
  // Reads
  // ------------------------------------------------------------------------------------------

  requireSession(sessionId: string): SessionRecord {
    const session = this.store.getSession(sessionId);
    if (!session || session.appId !== LOCAL_APP_ID)
      throw new StudioError(ErrorCode.SESSION_NOT_FOUND, `No session ${sessionId}.`);
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

  checkpointsSupported(sessionId: string): { supported: boolean; reason: string | null } {
    const session = this.requireSession(sessionId);
    const source = this.sources.get(session.source);
    if (session.projectId) {
      const unavailable = this.store.getProject(session.projectId)?.unavailableReason;
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

  /** Throws unless `clientEpoch` is the session's current attached epoch. */
  requireAttached(sessionId: string, clientEpoch: string): SessionRecord {
    const session = this.requireSession(sessionId);
    if (!isDecimalString(clientEpoch))
      throw new StudioError(ErrorCode.BAD_REQUEST, 'clientEpoch must be a decimal string.', {
        field: 'clientEpoch',
      });
    if (session.attachedEpoch === null || session.attachedEpoch !== clientEpoch)
      throw new StudioError(
        ErrorCode.CLIENT_EPOCH_STALE,
        session.attachedEpoch === null
          ? `Epoch ${clientEpoch} is no longer attached to this session (it was detached or replaced).`
          : `Epoch ${clientEpoch} was fenced: another client attached with epoch ${session.attachedEpoch}.`,
        { remediation: 'Attach again to act on this session; attaching fences the other client.' },
      );
    return session;
  }

  requireOpen(session: SessionRecord): void {
    if (session.status === 'CLOSED' || session.status === 'REVOKED')
      throw new StudioError(ErrorCode.SESSION_CLOSED, `Session ${session.sessionId} is closed.`);
  }

  attach(input: {
    sessionId: string;
    clientInstanceId?: string | null;
    reviewer?: string | null;
  }): {
    session: SessionRecord;
    clientEpoch: string;
    replayAfterSeq: string;
  } {
    const instance = input.clientInstanceId ?? `anon-${randomUUID()}`;
    return this.store.transaction(() => {
      const session = this.requireSession(input.sessionId);
      this.requireOpen(session);
      const epoch = (BigInt(session.currentClientEpoch) + 1n).toString();
      const drafts: EventDraft[] = [];
      for (const client of this.store.listAttachedClients())
        if (client.sessionId === session.sessionId) {
          this.store.putClient({ ...client, attached: false });
          drafts.push({
            type: 'CLIENT_DETACHED',
            clientEpoch: client.epoch,
            reason: 'CLIENT_REATTACHED',
          });
        }
      const previous = this.store.getClient(session.sessionId, instance);
      const replayAfterSeq = previous?.ackedSeq ?? '0';
      this.store.putClient({
        sessionId: session.sessionId,
        clientInstanceId: instance,
        epoch,
        lastHeartbeatMs: this.now(),
        ackedSeq: replayAfterSeq,
        attached: true,
        reviewer: input.reviewer ?? null,
        attachedAt: this.iso(),
      });
      drafts.push({
        type: 'CLIENT_ATTACHED',
        clientEpoch: epoch,
        replayAfterSeq,
        studioReviewer: input.reviewer ?? null,
      });
      this.append(session.sessionId, drafts);
      return {
        session: this.requireSession(session.sessionId),
        clientEpoch: epoch,
        replayAfterSeq,
      };
    });
  }

  /** Who controls the session now (the attached client's reviewer and since when), or null. */
  controllerOf(sessionId: string): { reviewer: string | null; since: string | null } | null {
    const session = this.store.getSession(sessionId);
    if (!session?.attachedEpoch) return null;
    const client = this.attachedClient(sessionId, session.attachedEpoch);
    return client ? { reviewer: client.reviewer ?? null, since: client.attachedAt ?? null } : null;
  }

  private attachedClient(sessionId: string, epoch: string) {
    return (
      this.store
        .listAttachedClients()
        .find((c) => c.sessionId === sessionId && c.epoch === epoch) ?? null
    );
  }

  heartbeat(input: { sessionId: string; clientEpoch: string }): {
    serverTime: string;
    playLeaseFreshUntil: string | null;
    workspaceLeaseExpiresAt: string | null;
  } {
    const session = this.requireAttached(input.sessionId, input.clientEpoch);
    const client = this.attachedClient(session.sessionId, input.clientEpoch);
    if (client) this.store.putClient({ ...client, lastHeartbeatMs: this.now() });
    const leases = this.store.listActiveLeases(session.sessionId);
    const workspace = leases.find((l) => l.kind === 'WORKSPACE');
    const play = leases.find((l) => l.kind === 'PLAY');
    return {
      serverTime: this.iso(),
      playLeaseFreshUntil: play ? this.iso(this.now() + this.heartbeatStaleMs) : null,
      workspaceLeaseExpiresAt: workspace ? workspace.expiresAt : null,
    };
  }

  acknowledge(input: { sessionId: string; clientEpoch: string; throughSeq: string }): {
    throughSeq: string;
  } {
    const session = this.requireAttached(input.sessionId, input.clientEpoch);
    if (
      !isDecimalString(input.throughSeq) ||
      compareSeq(input.throughSeq, session.lastEventSeq) > 0
    )
      throw new StudioError(
        ErrorCode.EVENT_CURSOR_INVALID,
        `throughSeq ${input.throughSeq} is past the committed history (last seq ${session.lastEventSeq}).`,
        { field: 'throughSeq' },
      );
    const client = this.attachedClient(session.sessionId, input.clientEpoch);
    if (!client) throw new StudioError(ErrorCode.CLIENT_EPOCH_STALE, 'This attachment is gone.');
    const acked =
      compareSeq(input.throughSeq, client.ackedSeq) > 0 ? input.throughSeq : client.ackedSeq;
    this.store.putClient({ ...client, ackedSeq: acked });
    return { throughSeq: acked };
  }

  // ------------------------------------------------------------------------------------------
  // Session control
  // ------------------------------------------------------------------------------------------

  setMode(input: {
    sessionId: string;
    clientEpoch: string;
    mode: AgentMode;
    projectId?: string | null;
  }): SessionRecord {
    const session = this.requireAttached(input.sessionId, input.clientEpoch);
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
      this.append(session.sessionId, [{ type: 'MODE_SELECTED', mode: input.mode }]);
    return this.requireSession(session.sessionId);
  }

  async sendMessage(input: {
    sessionId: string;
    clientEpoch: string;
    content: string;
    author?: string | null;
  }): Promise<string> {
    const session = this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    this.requireAgentsRunning(session.appId);
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

  pause(input: { sessionId: string; clientEpoch: string }): SessionRecord {
    const session = this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    if (session.status !== 'PAUSED') {
      const drafts: EventDraft[] = [{ type: 'SESSION_PAUSED', reason: 'HUMAN_STOP' }];
      if (session.currentRunId)
        drafts.push({
          type: 'RUN_PAUSED',
          runId: session.currentRunId,
          reason: 'Paused by a human.',
        });
      this.append(session.sessionId, drafts);
    }
    return this.requireSession(session.sessionId);
  }

  resume(input: { sessionId: string; clientEpoch: string }): SessionRecord {
    const session = this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    if (session.status === 'PAUSED') {
      const drafts: EventDraft[] = [{ type: 'SESSION_RESUMED' }];
      if (session.currentRunId)
        drafts.push({ type: 'RUN_STARTED', runId: session.currentRunId, reason: 'RESUMED' });
      this.append(session.sessionId, drafts);
    }
    return this.requireSession(session.sessionId);
  }

  async cancelRun(input: {
    sessionId: string;
    clientEpoch: string;
    runId?: string | null;
  }): Promise<string> {
    const session = this.requireAttached(input.sessionId, input.clientEpoch);
    const runId = input.runId ?? session.currentRunId;
    if (!runId) throw new StudioError(ErrorCode.RUN_NOT_ACTIVE, 'No run is active.');
    const run = this.store.getRun(runId);
    if (!run || run.sessionId !== session.sessionId)
      throw new StudioError(ErrorCode.RUN_NOT_ACTIVE, `No run ${runId}.`);
    if (TERMINAL_RUN_STATUSES.has(run.status))
      throw new StudioError(
        ErrorCode.RUN_NOT_ACTIVE,
        `Run ${runId} already ended (${run.status}).`,
      );
    const source = this.sources.get(session.source);
    if (source?.cancelRun) await source.cancelRun(this.sessionInfo(session), runId);
    this.endRun(session.sessionId, runId, 'RUN_CANCELLED', 'Cancelled by a human.');
    return runId;
  }

  /** Ends a run with RUN_*; `append` first revokes its pending approvals and cancels their calls. */
  endRun(
    sessionId: string,
    runId: string,
    type: 'RUN_CANCELLED' | 'RUN_FAILED' | 'RUN_SUCCEEDED' | 'RUN_PREEMPTED',
    reason: string,
    error?: { code: string; message: string } | null,
  ): void {
    const run = this.store.getRun(runId);
    if (!run || TERMINAL_RUN_STATUSES.has(run.status)) return;
    this.append(sessionId, [
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
    const session = this.requireAttached(input.sessionId, input.clientEpoch);
    if (session.status === 'CLOSED') return session;
    if (session.currentRunId) {
      const source = this.sources.get(session.source);
      if (source?.cancelRun)
        await source.cancelRun(this.sessionInfo(session), session.currentRunId);
      this.endRun(
        session.sessionId,
        session.currentRunId,
        'RUN_CANCELLED',
        'The session was closed.',
      );
    }
    this.append(session.sessionId, [{ type: 'SESSION_CLOSED', reason: 'HUMAN_STOP' }]);
    return this.requireSession(session.sessionId);
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
  proposalDiff(sessionId: string, changes: ProposedFileChange[]) {
    const project = this.projectOfSession(sessionId);
    if (!project) return null;
    const ws = this.workspace(project.projectId);
    const hashes = new Map(
      this.projectFiles(project.projectId).map((f) => [f.path, f.contentHash]),
    );
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

  /** The target files whose content changed since the call's diff was made (by path). */
  private changedTargets(call: ToolCallRecord): string[] {
    if (!call.diff || call.diff.files.length === 0) return [];
    const project = this.projectOfSession(call.sessionId);
    const now = new Map(
      (project ? this.projectFiles(project.projectId) : []).map((f) => [f.path, f.contentHash]),
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
  proposeWithApproval(input: ProposeInput): ApprovalRecord {
    const session = this.requireSession(input.sessionId);
    const toolCallId = input.toolCallId ?? `tc_${randomUUID()}`;
    const argumentsJson = canonicalJson(input.arguments);
    const diffed = input.fileChanges
      ? this.proposalDiff(session.sessionId, input.fileChanges)
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
    this.append(session.sessionId, [
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
    const approval = this.store.getApproval(approvalId);
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
  private checkDecision(input: DecideInput & { approve: boolean }): {
    session: SessionRecord;
    call: ToolCallRecord;
    approval: ApprovalRecord;
  } {
    const session = this.requireSession(input.sessionId);
    const call = this.store.getToolCall(input.toolCallId);
    if (!call || call.sessionId !== session.sessionId)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        `No tool call ${input.toolCallId} in this session.`,
      );
    const approval = call.approvalId ? this.store.getApproval(call.approvalId) : null;
    if (!approval)
      throw new StudioError(
        ErrorCode.APPROVAL_MISMATCH,
        'This tool call has no approval to decide.',
      );
    // A revoked approval says so whatever else changed (closed session, lapsed control).
    if (approval.status === 'REVOKED') this.checkDecidable(approval, input.argumentHash);
    this.requireAttached(input.sessionId, input.clientEpoch);
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
    const checkAll = () => {
      const failures: { index: number; error: StudioError }[] = [];
      const checked = inputs.map((input, index) => {
        try {
          return this.checkDecision(input);
        } catch (error) {
          failures.push({
            index,
            error:
              error instanceof StudioError
                ? error
                : new StudioError(ErrorCode.BAD_REQUEST, String(error)),
          });
          return null;
        }
      });
      return { checked, failures };
    };
    const first = checkAll();
    const seen = new Set<string>();
    first.checked.forEach((c, index) => {
      if (!c) return;
      if (seen.has(c.approval.approvalId) || this.deciding.has(c.approval.approvalId))
        first.failures.push({
          index,
          error: new StudioError(
            ErrorCode.APPROVAL_MISMATCH,
            'Another decision for this approval is in progress; approvals are used once.',
          ),
        });
      seen.add(c.approval.approvalId);
    });
    if (first.failures.length > 0) refuse(first.failures.sort((a, b) => a.index - b.index));
    const checked = first.checked as NonNullable<(typeof first.checked)[number]>[];
    for (const c of checked) this.deciding.add(c.approval.approvalId);
    try {
      // A target file that changed since its diff was shown: refuse, and revoke that approval.
      const stale: { index: number; error: StudioError }[] = [];
      checked.forEach((c, index) => {
        const changed = inputs[index]!.approve ? this.changedTargets(c.call) : [];
        if (changed.length === 0) return;
        this.append(
          c.session.sessionId,
          revocationDrafts(
            this.store,
            c.approval,
            `${changed.join(', ')} changed since the diff was shown`,
          ),
        );
        this.tellRevoked(c.approval);
        stale.push({
          index,
          error: new StudioError(
            ErrorCode.APPROVAL_MISMATCH,
            `${changed.join(', ')} changed on disk since the diff was shown; the approval was revoked and the call did not run.`,
            { field: 'argumentHash', remediation: 'Ask again to see the current diff.' },
          ),
        });
      });
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
      // Re-check after the awaits: an approval may have lapsed or the epoch moved meanwhile.
      const again = checkAll();
      if (again.failures.length > 0) refuse(again.failures);
      this.store.transaction(() => {
        for (const decision of decisions) {
          const current = this.store.getApproval(decision.approvalId)!;
          const base = { ...approvalFieldsOf(current), studioDecidedBy: decidedBy };
          const call = this.store.getToolCall(decision.toolCallId)!;
          if (decision.approved) {
            this.append(decision.sessionId, [
              { type: 'APPROVAL_GRANTED', status: 'GRANTED', ...base },
            ]);
          } else {
            const who = decidedBy && decidedBy !== 'owner' ? decidedBy : 'a human';
            this.append(decision.sessionId, [
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
        }
      });
      // Let the mutation answer first; the tools run (or the runs end) right after.
      setImmediate(() => {
        for (const decision of decisions) this.afterDecision(decision);
      });
      return decisions.map((d) => this.store.getApproval(d.approvalId)!);
    } finally {
      for (const c of checked) this.deciding.delete(c.approval.approvalId);
    }
  }

  /** What follows a recorded decision: an engine tool runs (or its run ends); a source continues. */
  private afterDecision(decision: ToolDecision): void {
    try {
      if (ENGINE_TOOLS.has(decision.toolName)) {
        if (decision.approved) this.runEngineTool(decision.toolCallId);
        else if (decision.runId)
          this.endRun(
            decision.sessionId,
            decision.runId,
            'RUN_FAILED',
            'The tool call was denied.',
            {
              code: ErrorCode.APPROVAL_DENIED,
              message: 'The tool call was denied.',
            },
          );
      } else this.sourceOf(decision.sessionId)?.onDecisionRecorded?.(decision);
    } catch (error) {
      this.logger.error('after-decision step failed', {
        toolCallId: decision.toolCallId,
        error: String(error),
      });
    }
  }

  /** Whether the source of `call` can propose it again ("Ask again" on an expired or revoked card). */
  canAskAgain(call: ToolCallRecord): boolean {
    const approval = call.approvalId ? this.store.getApproval(call.approvalId) : null;
    if (!approval || (approval.status !== 'EXPIRED' && approval.status !== 'REVOKED')) return false;
    const session = this.store.getSession(call.sessionId);
    if (!session || session.status !== 'ACTIVE' || session.currentRunId) return false;
    if (agentsStopped(this.policy(session.appId))) return false;
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
    const session = this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    this.requireAgentsRunning(session.appId);
    const call = this.store.getToolCall(input.toolCallId);
    if (!call || call.sessionId !== session.sessionId)
      throw new StudioError(
        ErrorCode.TOOL_UNKNOWN,
        `No tool call ${input.toolCallId} in this session.`,
      );
    if (!this.canAskAgain(call))
      throw new StudioError(
        ErrorCode.BAD_REQUEST,
        'This call cannot be asked again now: only an expired or revoked call, between runs, of a source that can ask again.',
        { field: 'toolCallId' },
      );
    const source = this.sources.get(session.source)!;
    const approvalId = await source.askAgain!(this.sessionInfo(session), call, {
      author: input.author ?? null,
    });
    const approval = this.store.getApproval(approvalId);
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
  private expireApprovals(): void {
    const now = this.now();
    for (const approval of this.store.listPendingApprovals(null)) {
      if (Date.parse(approval.expiresAt) > now) break;
      if (this.deciding.has(approval.approvalId)) continue;
      const call = this.store.getToolCall(approval.toolCallId);
      const drafts: EventDraft[] = [
        { type: 'APPROVAL_EXPIRED', status: 'EXPIRED', ...approvalFieldsOf(approval) },
      ];
      const engineTool = call ? ENGINE_TOOLS.has(call.toolName) : false;
      if (call && engineTool) drafts.push(this.expiredToolDraft(call));
      this.append(approval.sessionId, drafts);
      const source = this.sourceOf(approval.sessionId);
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
  sweep(): void {
    this.expireApprovals();
    const now = this.now();
    for (const client of this.store.listAttachedClients()) {
      if (now - client.lastHeartbeatMs < this.heartbeatStaleMs) continue;
      this.store.transaction(() => {
        this.store.putClient({ ...client, attached: false });
        const session = this.store.getSession(client.sessionId);
        if (session?.attachedEpoch === client.epoch)
          this.append(client.sessionId, [
            { type: 'CLIENT_DETACHED', clientEpoch: client.epoch, reason: 'HEARTBEAT_TIMEOUT' },
          ]);
      });
    }
    for (const lease of this.store.listActiveLeases(null)) {
      if (Date.parse(lease.expiresAt) > now) continue;
      this.append(lease.sessionId, [leaseEndedDraft(lease, 'LEASE_EXPIRED', 'LEASE_EXPIRED')]);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Idempotency
  // ------------------------------------------------------------------------------------------

  /**
   * Runs a mutation once per (operation, idempotencyKey). The same key with the same input
   * returns the first result (stored as JSON); the same key with other input is refused.
   */
  async idempotent<T>(
    operation: string,
    input: { idempotencyKey: string } & Record<string, unknown>,
    run: () => T | Promise<T>,
  ): Promise<T> {
    const { idempotencyKey, ...rest } = input;
    if (!idempotencyKey || idempotencyKey.length > 240)
      throw new StudioError(ErrorCode.BAD_REQUEST, 'idempotencyKey must be 1 to 240 characters.', {
        field: 'idempotencyKey',
      });
    const inputHash = sha256Digest(canonicalJson(stripUndefined(rest)));
    const flightKey = `${operation}\u0000${idempotencyKey}`;
    const pending = this.inFlight.get(flightKey) as Promise<{ hash: string; value: T }> | undefined;
    if (pending) {
      const first = await pending.catch(() => null);
      if (first && first.hash !== inputHash) throw conflict(operation);
      if (first) return first.value;
    }
    const existing = this.store.getIdempotency(operation, idempotencyKey);
    if (existing) {
      if (existing.inputHash !== inputHash) throw conflict(operation);
      return JSON.parse(existing.resultJson) as T;
    }
    const promise = (async () => {
      const value = await run();
      this.store.putIdempotency({
        operation,
        key: idempotencyKey,
        inputHash,
        resultJson: JSON.stringify(value),
        createdAt: this.iso(),
      });
      return { hash: inputHash, value };
    })();
    this.inFlight.set(flightKey, promise);
    try {
      return (await promise).value;
    } finally {
      this.inFlight.delete(flightKey);
    }
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
  registerProject(input: {
    projectId: string;
    name: string;
    root: string;
    /** Include/exclude patterns (`.gitignore` syntax) on top of the folder's ignore files. */
    patterns?: CapturePatterns;
    /** Per-file cap (bytes); default the engine's `checkpointMaxFileBytes`, else 50 MiB. */
    maxFileBytes?: number;
  }): ProjectRecord {
    const existing = this.store.getProject(input.projectId);
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
      return this.markUnavailable(input, existing, error);
    }
    this.workspaces.set(input.projectId, ws);
    try {
      ws.recover();
      if (this.sweepTimer) this.recoverRestores();
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
        this.store.putProject(record);
        return record;
      }
      return this.syncProject(input.projectId);
    } catch (error) {
      return this.markUnavailable(input, existing, error);
    }
  }

  private markUnavailable(
    input: { projectId: string; name: string; root: string },
    existing: ProjectRecord | null,
    error: unknown,
  ): ProjectRecord {
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
    this.store.putProject(record);
    return record;
  }

  workspace(projectId: string): ProjectWorkspace {
    const ws = this.workspaces.get(projectId);
    const unavailable = this.store.getProject(projectId)?.unavailableReason;
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
  syncProject(projectId: string): ProjectRecord {
    const record = this.store.getProject(projectId);
    if (!record) throw new StudioError(ErrorCode.BAD_REQUEST, `No project ${projectId}.`);
    const ws = this.workspaces.get(projectId);
    if (!ws) return record;
    let snap: { files: ManifestFile[]; contentHash: string };
    try {
      if (ws.hasPendingJournal()) ws.recover();
      snap = ws.state();
    } catch (error) {
      if (record.unavailableReason) return record;
      return this.markUnavailable(record, record, error);
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
    this.store.putProject(next);
    return next;
  }

  projectOfSession(sessionId: string): ProjectRecord | null {
    const session = this.requireSession(sessionId);
    if (!session.projectId) return null;
    return this.syncProject(session.projectId);
  }

  /** The project's files now, sorted by path (served paged by `StudioProject.files`). */
  projectFiles(projectId: string): ManifestFile[] {
    return this.workspace(projectId).state().files;
  }

  /**
   * A checkpoint's whole manifest. Checkpoints recorded before manifests were stored apart
   * carry it in their record (at most 128 files then).
   */
  checkpointFiles(checkpoint: CheckpointRecord): ManifestFile[] {
    const ws = this.workspace(checkpoint.projectId);
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
  restorePreview(checkpoint: CheckpointRecord, paths: readonly string[] | null = null) {
    const ws = this.workspace(checkpoint.projectId);
    const target = paths
      ? selectedManifest(ws.state().files, this.checkpointFiles(checkpoint), paths)
      : this.checkpointFiles(checkpoint);
    const plan = ws.previewRestore(target);
    const project = this.syncProject(checkpoint.projectId);
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
  checkpoint(
    sessionId: string,
    reason: 'AGENT_WRITE' | 'RESTORE_PREIMAGE' | 'MANUAL' | 'STUDIO_AFTER_TOOL',
    options: { runId?: string | null; exactPreImage?: boolean } = {},
  ): CheckpointRecord {
    const project = this.projectOfSession(sessionId);
    if (!project)
      throw new StudioError(
        ErrorCode.STUDIO_CHECKPOINTS_UNSUPPORTED,
        this.checkpointsSupported(sessionId).reason ?? 'No project.',
      );
    const ws = this.workspace(project.projectId);
    const snap = ws.snapshot();
    const eventFiles = eventFilesFor(this.previousManifest(ws, project), snap.files);
    const checkpointId = `cp_${randomUUID()}`;
    this.append(sessionId, [
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
    this.store.putProject({
      ...(this.store.getProject(project.projectId) ?? project),
      recordedContentHash: snap.contentHash,
      lastCheckpointContentHash: snap.contentHash,
    });
    const record = this.store.getCheckpoint(checkpointId);
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
  collectGarbage(options: { graceMs?: number } = {}) {
    if (this.store.listRestoreJobs().length > 0) return null;
    for (const ws of this.workspaces.values()) if (ws.hasPendingJournal()) return null;
    const live = new Set<string>();
    const now = this.now();
    const keepManifest = (ws: ProjectWorkspace, hash: string | null): void => {
      if (!hash || live.has(hash) || !ws.hasManifest(hash)) return;
      live.add(hash);
      for (const f of ws.manifest(hash)) if (!f.notCaptured) live.add(f.contentHash);
    };
    for (const [projectId, ws] of this.workspaces) {
      const project = this.store.getProject(projectId);
      // An unavailable project's stored states are kept like any other's.
      if (!project) continue;
      keepManifest(ws, project.contentHash);
      keepManifest(ws, project.recordedContentHash);
      keepManifest(ws, project.lastCheckpointContentHash);
      const checkpoints = this.store.listCheckpointsOfProject(projectId);
      checkpoints.forEach((c, i) => {
        if (isRetained(c, i === 0, now)) keepManifest(ws, c.contentHash);
        for (const f of c.files) if (!ws.hasManifest(c.contentHash)) live.add(f.contentHash);
      });
    }
    return this.contentStore.collectGarbage({ live, graceMs: options.graceMs ?? GC_GRACE_MS, now });
  }

  private collectGarbageSafely(): void {
    try {
      const result = this.collectGarbage();
      if (result && result.blobsRemoved > 0)
        this.logger.info('checkpoint content collected', { ...result });
    } catch (error) {
      this.logger.error('checkpoint garbage collection failed', { error: String(error) });
    }
  }

  /** studioCreateCheckpoint: a MANUAL checkpoint (needs the attached epoch). */
  createManualCheckpoint(input: { sessionId: string; clientEpoch: string }): CheckpointRecord {
    const session = this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    return this.checkpoint(session.sessionId, 'MANUAL');
  }

  /**
   * workspace.file.patch for a run: expectedRevision check, WORKSPACE lease, AGENT_WRITE
   * pre-image checkpoint, the change applied atomically, revision + 1. A conflict changes nothing.
   * `changes[].content === null` deletes the file.
   */
  patchProject(input: {
    sessionId: string;
    runId: string | null;
    toolCallId: string;
    toolName: string;
    expectedRevision: string;
    changes: { path: string; content: string | null; expectedContentHash?: string }[];
  }): { projectRevision: string; checkpointId: string; changedFiles: string[] } {
    const project = this.projectOfSession(input.sessionId);
    if (!project) throw new StudioError(ErrorCode.BAD_REQUEST, 'This session has no project.');
    if (project.revision !== input.expectedRevision)
      throw new StudioError(
        ErrorCode.REVISION_CONFLICT,
        `The project is at revision ${project.revision}, not ${input.expectedRevision}; nothing was changed.`,
        { remediation: 'Read the project again and retry against the current revision.' },
      );
    this.ensureWorkspaceLease(input.sessionId, input.runId, project.revision);
    const preImage = this.checkpoint(input.sessionId, 'AGENT_WRITE', { runId: input.runId });
    const ws = this.workspace(project.projectId);
    const applied = ws.applyChanges(
      input.changes.map((c) => ({
        path: c.path,
        content: c.content,
        ...(c.expectedContentHash ? { expectedContentHash: c.expectedContentHash } : {}),
      })),
    );
    const next: ProjectRecord = {
      ...(this.store.getProject(project.projectId) ?? project),
      revision: (BigInt(project.revision) + 1n).toString(),
      contentHash: applied.contentHash,
      fileCount: applied.files.length,
      totalBytes: String(totalBytes(applied.files)),
      recordedContentHash: ws.storeManifest(applied.files),
      updatedAt: this.iso(),
    };
    this.store.putProject(next);
    return {
      projectRevision: next.revision,
      checkpointId: preImage.checkpointId,
      changedFiles: applied.changedFiles,
    };
  }

  private ensureWorkspaceLease(sessionId: string, runId: string | null, revision: string): void {
    const active = this.store.listActiveLeases(sessionId).find((l) => l.kind === 'WORKSPACE');
    if (active && Date.parse(active.expiresAt) > this.now()) return;
    const session = this.requireSession(sessionId);
    const now = this.now();
    this.append(sessionId, [
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
  requestRestore(input: {
    requestedBy?: string | null;
    sessionId: string;
    clientEpoch: string;
    checkpointId: string;
    checkpointContentHash: string;
    expectedRevision: string;
    /** Restore only these files and folders (issue 11); null or absent: every file. */
    paths?: readonly string[] | null;
  }): ApprovalRecord {
    const session = this.requireAttached(input.sessionId, input.clientEpoch);
    this.requireOpen(session);
    const { checkpoint, project } = this.checkRestorable(session.sessionId, input);
    const paths = normalizeRestorePaths(input.paths);
    const diff = this.workspaceDiffSummary(checkpoint, paths);
    const summary =
      (paths
        ? `Restore ${paths.length} path(s) of project "${project.name}" (${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}) from checkpoint ${checkpoint.checkpointId} `
        : `Restore project "${project.name}" to checkpoint ${checkpoint.checkpointId} `) +
      `(${checkpoint.reason}, revision ${checkpoint.projectRevision}, ${checkpoint.contentHash.slice(0, 19)}…): ${diff}. ` +
      `The current state (revision ${project.revision}) is saved first as a RESTORE_PREIMAGE checkpoint.`;
    return this.proposeWithApproval({
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

  private workspaceDiffSummary(
    checkpoint: CheckpointRecord,
    paths: readonly string[] | null = null,
  ): string {
    const { plan, drifted } = this.restorePreview(checkpoint, paths);
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

  private checkRestorable(
    sessionId: string,
    input: { checkpointId: string; checkpointContentHash: string; expectedRevision: string },
  ): { checkpoint: CheckpointRecord; project: ProjectRecord } {
    const checkpoint = this.store.getCheckpoint(input.checkpointId);
    const session = this.requireSession(sessionId);
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
    const project = this.projectOfSession(sessionId);
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

  /** Executes an approved engine tool (project.checkpoint.restore). */
  private runEngineTool(toolCallId: string): void {
    const call = this.store.getToolCall(toolCallId);
    if (!call || !call.argumentsJson || !call.approvalId) return;
    const approval = this.store.getApproval(call.approvalId);
    if (!approval || approval.status !== 'GRANTED') return;
    const consumed: EventDraft[] = [
      {
        type: 'APPROVAL_CONSUMED',
        status: 'CONSUMED',
        ...approvalFieldsOf(approval),
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
    ];
    this.append(call.sessionId, consumed);
    const args = JSON.parse(call.argumentsJson) as {
      checkpointId: string;
      checkpointContentHash: string;
      expectedRevision: string;
      paths?: string[];
    };
    let checkpoint: CheckpointRecord;
    let project: ProjectRecord;
    try {
      ({ checkpoint, project } = this.checkRestorable(call.sessionId, args));
    } catch (error) {
      const e =
        error instanceof StudioError
          ? error
          : new StudioError(ErrorCode.TOOL_FAILED, String(error));
      this.append(call.sessionId, [
        {
          type: 'TOOL_FAILED',
          runId: call.runId,
          toolCallId,
          toolName: call.toolName,
          toolVersion: call.toolVersion,
          status: 'FAILED',
          error: { code: e.code, message: e.message, retryable: false, remediation: e.remediation },
        },
      ]);
      return;
    }
    const preImage = this.checkpoint(call.sessionId, 'RESTORE_PREIMAGE', {
      runId: call.runId,
      exactPreImage: true,
    });
    this.store.putRestoreJob({
      toolCallId,
      sessionId: call.sessionId,
      projectId: project.projectId,
      checkpointId: checkpoint.checkpointId,
      preImageCheckpointId: preImage.checkpointId,
      startedAt: this.iso(),
      ...(args.paths ? { paths: args.paths } : {}),
    });
    this.finishRestore(toolCallId);
  }

  /** Writes the restore (idempotent) and commits revision + 1, CHECKPOINT_RESTORED and TOOL_SUCCEEDED. */
  private finishRestore(toolCallId: string): void {
    const job = this.store.getRestoreJob(toolCallId);
    const call = this.store.getToolCall(toolCallId);
    if (!job || !call) return;
    const checkpoint = this.store.getCheckpoint(job.checkpointId);
    const preImage = this.store.getCheckpoint(job.preImageCheckpointId);
    const project = this.store.getProject(job.projectId);
    if (!checkpoint || !preImage || !project)
      throw new Error(`restore job ${toolCallId} refers to missing records`);
    // A per-file restore writes the pre-image with the selected paths taken from the
    // checkpoint: computed from two stored checkpoints, so a restart computes the same files.
    const ws = this.workspace(job.projectId);
    const targetFiles = job.paths
      ? selectedManifest(
          this.checkpointFiles(preImage),
          this.checkpointFiles(checkpoint),
          job.paths,
        )
      : this.checkpointFiles(checkpoint);
    const restored: RestoreResult = ws.restore(targetFiles);
    const written: EventFiles = eventFilesFor([], restored.written);
    const recorded = ws.storeManifest(restored.files);
    const restoredAt = this.iso();
    this.store.transaction(() => {
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
      this.store.putProject(next);
      this.append(job.sessionId, [
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
      this.store.deleteRestoreJob(toolCallId);
    });
  }

  /**
   * A restart mid-restore finishes the restore the human approved. Jobs whose project folder is
   * not open yet are finished when the project is registered.
   */
  private recoverRestores(): void {
    for (const job of this.store.listRestoreJobs()) {
      if (!this.workspaces.has(job.projectId)) continue;
      this.logger.warn('finishing a restore interrupted by a restart', {
        toolCallId: job.toolCallId,
      });
      try {
        this.finishRestore(job.toolCallId);
      } catch (error) {
        this.logger.error('could not finish an interrupted restore', {
          toolCallId: job.toolCallId,
          error: String(error),
        });
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
    const session = this.requireAttached(input.sessionId, input.clientEpoch);
    const question = this.store.getQuestion(session.sessionId, input.questionId);
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
    const after = this.store.getQuestion(session.sessionId, input.questionId);
    if (after && after.status === 'OPEN') {
      this.append(session.sessionId, [
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
    const result = this.store.getQuestion(session.sessionId, input.questionId);
    if (!result) throw new Error('question vanished');
    return stripRun(result);
  }
}

function stripRun<T extends { runId: string | null }>(value: T): Omit<T, 'runId'> {
  const { runId, ...rest } = value;
  void runId;
  return rest;
}

function conflict(operation: string): StudioError {
  return new StudioError(
    ErrorCode.IDEMPOTENCY_CONFLICT,
    `This idempotencyKey was already used for ${operation} with a different input.`,
    { field: 'idempotencyKey', remediation: 'Use a new idempotencyKey for a new action.' },
  );
}

function stripUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}
