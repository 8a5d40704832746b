/**
 * Turns store records into the plain objects GraphQL serves. Views are JSON-safe (BigInt values
 * are decimal strings) so a mutation's first result can be stored and replayed for idempotency.
 * Links between entities (a session's run, a tool call's approval) are resolved lazily from the
 * current state in resolvers.ts, so they never go stale inside a stored result.
 */
import type { EventRow } from '../store/records.ts';
import type { Reads } from '../engine/kernel.ts';
import { GRAPHQL_INT_MAX, type ManifestFile } from '../workspace/manifest.ts';
import type {
  ApprovalRecord,
  CheckpointRecord,
  LeaseRecord,
  ProjectRecord,
  RunRecord,
  SessionRecord,
  ToolCallRecord,
} from '../store/records.ts';
import { CONTRACT_VERSION } from '../../protocol/contract.ts';

export interface SessionView {
  __typename: 'AgentSession';
  contractVersion: string;
  sessionId: string;
  appId: string;
  projectId: string | null;
  gridId: null;
  mode: string;
  requestedModel: string;
  model: string | null;
  resolvedModel: string | null;
  status: string;
  providerDataConsent: boolean;
  providerPolicyVersion: string;
  appPolicyVersion: string;
  contextVersion: string;
  currentClientEpoch: string;
  clientEpoch: string | null;
  lastEventSeq: string;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  studioTitle: string | null;
  studioSource: string;
  /** Internal: resolves activeRun (the active run only). */
  _currentRunId: string | null;
  /** Internal: resolves currentRun (the newest run, active or ended). */
  _lastRunId: string | null;
  /**
   * Internal: the session's linked records read in the same snapshot as the session itself
   * (a `studioSessionUpdates` push), so one payload never mixes two commits. Absent: each field
   * reads on its own.
   */
  _links?: SessionLinks;
}

export interface SessionLinks {
  activeRun: RunRecord | null;
  currentRun: RunRecord | null;
  pendingApprovals: ApprovalRecord[];
}

/** The session and its linked records in one read-only snapshot (see `SessionView._links`). */
export async function readSessionWithLinks(
  reads: Pick<Reads, 'getSession' | 'getRun' | 'listPendingApprovals'>,
  sessionId: string,
): Promise<SessionView | null> {
  const record = await reads.getSession(sessionId);
  if (!record) return null;
  const view = sessionView(record);
  const activeRun = view._currentRunId ? await reads.getRun(view._currentRunId) : null;
  const currentRun =
    view._lastRunId === view._currentRunId
      ? activeRun
      : view._lastRunId
        ? await reads.getRun(view._lastRunId)
        : null;
  const pendingApprovals = await reads.listPendingApprovals(sessionId);
  return { ...view, _links: { activeRun, currentRun, pendingApprovals } };
}

export function sessionView(s: SessionRecord): SessionView {
  return {
    __typename: 'AgentSession',
    contractVersion: CONTRACT_VERSION,
    sessionId: s.sessionId,
    appId: s.appId,
    projectId: s.projectId,
    gridId: null,
    mode: s.mode,
    requestedModel: s.requestedModel,
    model: s.model,
    resolvedModel: s.model,
    status: s.status,
    providerDataConsent: false,
    providerPolicyVersion: 'studio-local/1',
    appPolicyVersion: 'studio-local/1',
    contextVersion: s.contextVersion,
    currentClientEpoch: s.currentClientEpoch,
    clientEpoch: s.attachedEpoch,
    lastEventSeq: s.lastEventSeq,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    closedAt: s.closedAt,
    studioTitle: s.title,
    studioSource: s.source,
    _currentRunId: s.currentRunId,
    _lastRunId: s.lastRunId ?? s.currentRunId,
  };
}

export function runView(r: RunRecord) {
  return {
    __typename: 'AgentRun' as const,
    runId: r.runId,
    status: r.status,
    providerRounds: r.providerRounds,
    toolCalls: r.toolCalls,
    errorCode: r.errorCode,
    terminalReason: r.terminalReason,
    reason: r.reason,
    startedAt: r.startedAt,
    finishedAt: r.finishedAt,
    createdAt: r.createdAt,
    cancelled: r.cancelled,
  };
}

export function leaseView(l: LeaseRecord) {
  return {
    __typename: 'AgentLease' as const,
    leaseId: l.leaseId,
    kind: l.kind,
    status: l.status,
    clientEpoch: l.clientEpoch,
    scopes: l.scopes,
    holder: l.holder,
    contextVersion: l.contextVersion,
    controlledEntityId: l.controlledEntityId,
    hostCapabilityRevision: l.hostCapabilityRevision,
    expectedProjectRevision: l.expectedProjectRevision,
    grantedAt: l.grantedAt,
    expiresAt: l.expiresAt,
    revokedReason: l.revokedReason,
  };
}

export function approvalView(a: ApprovalRecord) {
  return {
    __typename: 'AgentApproval' as const,
    approvalId: a.approvalId,
    toolCallId: a.toolCallId,
    argumentHash: a.argumentHash,
    status: a.status,
    safeSummary: a.safeSummary,
    clientEpoch: a.clientEpoch,
    expiresAt: a.expiresAt,
    approved: a.status === 'GRANTED' || a.status === 'CONSUMED',
    rejected: a.status === 'DENIED',
    studioSessionId: a.sessionId,
    studioReasons: a.reasons,
    studioDecidedAt: a.decidedAt,
    studioDecisionReason: a.decisionReason,
    studioAutomatic: a.automatic,
    studioRuleId: a.ruleId ?? null,
    studioRuleName: a.ruleName ?? null,
    studioDecidedBy: a.decidedBy ?? null,
    studioRuleSuggestions: a.ruleSuggestions ?? [],
  };
}

export function toolCallView(c: ToolCallRecord) {
  return {
    __typename: 'StudioToolCall' as const,
    toolCallId: c.toolCallId,
    sessionId: c.sessionId,
    runId: c.runId,
    toolName: c.toolName,
    toolVersion: c.toolVersion,
    executor: c.executor,
    status: c.status,
    safeSummary: c.safeSummary,
    argumentHash: c.argumentHash,
    argumentsJson: c.argumentsJson,
    resultJson: c.resultJson,
    error: c.error,
    askedBy: c.askedBy,
    studioDiff: c.diff ?? null,
    proposedAt: c.proposedAt,
    updatedAt: c.updatedAt,
    steps: c.steps,
    _approvalId: c.approvalId,
  };
}

export function checkpointView(c: CheckpointRecord) {
  return {
    __typename: 'StudioCheckpoint' as const,
    checkpointId: c.checkpointId,
    sessionId: c.sessionId,
    projectId: c.projectId,
    projectRevision: c.projectRevision,
    contentHash: c.contentHash,
    reason: c.reason,
    changedFiles: c.files,
    fileCount: c.fileCount ?? c.files.length,
    totalBytes: c.totalBytes ?? String(c.files.reduce((sum, f) => sum + f.byteLength, 0)),
    createdAt: c.createdAt,
    restoredAt: c.restoredAt,
    exactPreImage: c.exactPreImage,
  };
}

export function projectView(p: ProjectRecord) {
  return {
    __typename: 'StudioProject' as const,
    projectId: p.projectId,
    name: p.name,
    revision: p.revision,
    contentHash: p.contentHash,
    fileCount: p.fileCount ?? 0,
    totalBytes: p.totalBytes ?? '0',
    available: !p.unavailableReason,
    unavailableReason: p.unavailableReason ?? null,
    updatedAt: p.updatedAt,
  };
}

/** One manifest entry as `StudioCheckpointFile`. */
export function checkpointFileView(f: ManifestFile) {
  return {
    target: f.target,
    path: f.path,
    contentHash: f.contentHash,
    // Int saturates at 2^31 - 1 (a file over 2 GiB, recorded over the cap); `size` is exact.
    byteLength: Math.min(f.byteLength, GRAPHQL_INT_MAX),
    size: String(f.byteLength),
    kind: f.kind === 'SYMLINK' ? 'SYMLINK' : 'FILE',
    executable: f.executable === true,
    notCaptured: f.notCaptured ?? null,
  };
}

export type EventView = Record<string, unknown> & { __typename: string; seq: string; type: string };

/** An event row as its union member (the engine stores events in their served shape). */
export function eventView(row: EventRow): EventView {
  return JSON.parse(row.payload) as EventView;
}

/** Events after `afterSeq` as their union members, read straight from their stored JSON. */
export async function readEventViews(
  reads: Pick<Reads, 'readEventPayloads'>,
  sessionId: string,
  afterSeq: bigint,
  limit: number,
): Promise<EventView[]> {
  return (await reads.readEventPayloads(sessionId, afterSeq, limit)).map(
    (json) => JSON.parse(json) as EventView,
  );
}
