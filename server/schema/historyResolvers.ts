/**
 * The history scrubber's reads (issue 11): `studioSessionHistory` (the rail's marks: runs,
 * approvals, checkpoints, restores) and `studioSessionAt` (the session as of one seq: tool
 * calls, approvals, run, budget and the newest checkpoint at or before it).
 *
 * The log is append-only and event-sourced, so both are folds over the stored events; nothing
 * is replayed and no side effect runs. The fold of a session is kept per engine and grows
 * incrementally (each request reads only the events after the last one folded), at most
 * FOLD_ROWS_PER_REQUEST per request, yielding to the event loop after every FOLD_CHUNK, so one
 * request on a huge session holds neither the event loop nor the requests that arrive beside it
 * (the newest event page of the same open, above all);
 * `throughSeq` says how far it got and the client asks again until it reaches the newest seq.
 * The fold is a cache of durable data, never a source of truth: dropping it loses nothing.
 */
import { ErrorCode } from '../../protocol/contract.ts';
import type { Engine } from '../engine/Engine.ts';
import { StudioError } from '../engine/StudioError.ts';
import { yieldToEventLoop } from '../eventLoop.ts';
import type { EventRow } from '../store/records.ts';
import { chargeRows } from './inputLimits.ts';
import { checkpointView } from './views.ts';

/** Events read per store call while folding. */
const FOLD_CHUNK = 2_000;
/** Events folded per request at most (a 1,000,000-event session takes several requests). */
export const FOLD_ROWS_PER_REQUEST = 100_000;
/** Marks returned at most; beyond it they are thinned evenly (checkpoints and restores kept). */
export const MARKS_MAX = 2_000;
/** Tool calls listed by studioSessionAt at most (newest first); the count covers all. */
export const AT_TOOL_CALLS_MAX = 50;
/** Sessions whose fold is kept (least recently used beyond it are dropped). */
const FOLDS_KEPT = 32;

export type MarkKind = 'RUN' | 'APPROVAL' | 'CHECKPOINT' | 'RESTORE';

interface Mark {
  seq: bigint;
  kind: MarkKind;
  type: string;
  label: string;
  runId: string | null;
  toolCallId: string | null;
  checkpointId: string | null;
}

interface ToolStep {
  seq: bigint;
  toolCallId: string;
  toolName: string | null;
  status: string;
}

interface ApprovalStep {
  seq: bigint;
  toolCallId: string;
  approvalId: string;
  status: string;
}

interface Fold {
  throughSeq: bigint;
  marks: Mark[];
  tools: ToolStep[];
  approvals: ApprovalStep[];
  runs: { seq: bigint; runId: string | null; status: string }[];
  budgets: { seq: bigint; budget: unknown }[];
  checkpoints: { seq: bigint; checkpointId: string }[];
}

const MARK_OF: Record<string, MarkKind> = {
  RUN_STARTED: 'RUN',
  RUN_PAUSED: 'RUN',
  RUN_SUCCEEDED: 'RUN',
  RUN_FAILED: 'RUN',
  RUN_CANCELLED: 'RUN',
  RUN_PREEMPTED: 'RUN',
  APPROVAL_REQUESTED: 'APPROVAL',
  APPROVAL_GRANTED: 'APPROVAL',
  APPROVAL_DENIED: 'APPROVAL',
  APPROVAL_EXPIRED: 'APPROVAL',
  CHECKPOINT_CREATED: 'CHECKPOINT',
  CHECKPOINT_RESTORED: 'RESTORE',
};

const RUN_STATUS: Record<string, string> = {
  RUN_STARTED: 'RUNNING',
  RUN_PAUSED: 'PAUSED',
  RUN_SUCCEEDED: 'SUCCEEDED',
  RUN_FAILED: 'FAILED',
  RUN_CANCELLED: 'CANCELLED',
  RUN_PREEMPTED: 'PREEMPTED',
};

type Payload = Record<string, unknown>;

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function labelOf(type: string, p: Payload): string {
  switch (type) {
    case 'CHECKPOINT_CREATED':
      return `Checkpoint (${str(p.reason) ?? 'checkpoint'})`;
    case 'CHECKPOINT_RESTORED':
      return 'Checkpoint restored';
    case 'APPROVAL_REQUESTED':
      return `Approval asked: ${str(p.safeSummary) ?? str(p.toolCallId) ?? ''}`.trim();
    default:
      return type
        .toLowerCase()
        .split('_')
        .map((w, i) => (i === 0 ? w[0]!.toUpperCase() + w.slice(1) : w))
        .join(' ');
  }
}

function foldRow(fold: Fold, row: EventRow): void {
  fold.throughSeq = row.seq;
  const kind = MARK_OF[row.type];
  const toolLike = row.type.startsWith('TOOL_') || row.type.startsWith('APPROVAL_');
  if (!kind && !toolLike && row.type !== 'BUDGET_UPDATED') return;
  const p = JSON.parse(row.payload) as Payload;
  if (kind) {
    fold.marks.push({
      seq: row.seq,
      kind,
      type: row.type,
      label: labelOf(row.type, p),
      runId: row.runId,
      toolCallId: str(p.toolCallId),
      checkpointId: str(p.checkpointId),
    });
  }
  if (row.type.startsWith('TOOL_') && str(p.toolCallId) && str(p.status)) {
    fold.tools.push({
      seq: row.seq,
      toolCallId: p.toolCallId as string,
      toolName: str(p.toolName),
      status: p.status as string,
    });
  } else if (row.type.startsWith('APPROVAL_') && str(p.toolCallId) && str(p.status)) {
    fold.approvals.push({
      seq: row.seq,
      toolCallId: p.toolCallId as string,
      approvalId: str(p.approvalId) ?? '',
      status: p.status as string,
    });
  }
  const runStatus = RUN_STATUS[row.type];
  if (runStatus) fold.runs.push({ seq: row.seq, runId: row.runId, status: runStatus });
  if (row.type === 'BUDGET_UPDATED') fold.budgets.push({ seq: row.seq, budget: p.budget });
  if (row.type === 'CHECKPOINT_CREATED' && str(p.checkpointId))
    fold.checkpoints.push({ seq: row.seq, checkpointId: p.checkpointId as string });
}

const foldsByEngine = new WeakMap<Engine, Map<string, Fold>>();

const foldingByEngine = new WeakMap<Engine, Map<string, Promise<Fold>>>();

/**
 * The session's fold, caught up by at most FOLD_ROWS_PER_REQUEST more events. Catch-ups of one
 * session run one after another (the reads are asynchronous), so no event is folded twice.
 */
function foldOf(engine: Engine, sessionId: string): Promise<Fold> {
  let folding = foldingByEngine.get(engine);
  if (!folding) {
    folding = new Map();
    foldingByEngine.set(engine, folding);
  }
  const before = folding.get(sessionId) ?? Promise.resolve(null);
  const next = before.catch(() => null).then(() => catchUp(engine, sessionId));
  folding.set(sessionId, next);
  void next.finally(() => {
    if (folding.get(sessionId) === next) folding.delete(sessionId);
  });
  return next;
}

async function catchUp(engine: Engine, sessionId: string): Promise<Fold> {
  let folds = foldsByEngine.get(engine);
  if (!folds) {
    folds = new Map();
    foldsByEngine.set(engine, folds);
  }
  let fold = folds.get(sessionId);
  if (fold) folds.delete(sessionId);
  fold ??= {
    throughSeq: 0n,
    marks: [],
    tools: [],
    approvals: [],
    runs: [],
    budgets: [],
    checkpoints: [],
  };
  folds.set(sessionId, fold);
  while (folds.size > FOLDS_KEPT) folds.delete(folds.keys().next().value as string);
  let read = 0;
  while (read < FOLD_ROWS_PER_REQUEST) {
    const rows = await engine.reads.readEvents(sessionId, fold.throughSeq, FOLD_CHUNK);
    for (const row of rows) foldRow(fold, row);
    read += rows.length;
    if (rows.length < FOLD_CHUNK) break;
    await yieldToEventLoop();
  }
  return fold;
}

function markView(m: Mark) {
  return {
    __typename: 'StudioHistoryMark' as const,
    seq: m.seq.toString(),
    kind: m.kind,
    type: m.type,
    label: m.label,
    runId: m.runId,
    toolCallId: m.toolCallId,
    checkpointId: m.checkpointId,
  };
}

/** At most `max` marks: every checkpoint and restore, the others evenly spread, in seq order. */
export function thinMarks<T extends { kind: MarkKind }>(marks: readonly T[], max: number): T[] {
  if (marks.length <= max) return [...marks];
  const kept = new Set<number>();
  marks.forEach((m, i) => {
    if ((m.kind === 'CHECKPOINT' || m.kind === 'RESTORE') && kept.size < max) kept.add(i);
  });
  const room = max - kept.size;
  const others = marks.flatMap((m, i) => (kept.has(i) ? [] : [i]));
  for (let k = 0; k < room && others.length > 0; k += 1)
    kept.add(others[Math.floor((k * others.length) / room)]!);
  return [...kept].sort((a, b) => a - b).map((i) => marks[i]!);
}

export async function sessionHistory(engine: Engine, ctx: object, sessionId: string) {
  const session = await engine.requireSession(sessionId);
  const fold = await foldOf(engine, session.sessionId);
  const marks = thinMarks(fold.marks, MARKS_MAX);
  chargeRows(ctx, marks.length, 'marks');
  return {
    __typename: 'StudioSessionHistory' as const,
    sessionId: session.sessionId,
    throughSeq: fold.throughSeq.toString(),
    marks: marks.map(markView),
    marksThinned: marks.length < fold.marks.length,
  };
}

function parseSeq(value: unknown): bigint {
  if (typeof value !== 'string' || !/^(0|[1-9][0-9]{0,18})$/.test(value))
    throw new StudioError(ErrorCode.BAD_REQUEST, 'seq must be a decimal seq.', { field: 'seq' });
  const seq = BigInt(value);
  if (seq > 9_223_372_036_854_775_807n)
    throw new StudioError(ErrorCode.BAD_REQUEST, 'seq is past the largest 64-bit integer.', {
      field: 'seq',
    });
  return seq;
}

/** The last element with seq <= at (arrays are in seq order). */
function lastAtOrBefore<T extends { seq: bigint }>(items: readonly T[], at: bigint): T | null {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (items[mid]!.seq <= at) low = mid + 1;
    else high = mid;
  }
  return low > 0 ? items[low - 1]! : null;
}

export async function sessionAt(engine: Engine, ctx: object, sessionId: string, seqArg: unknown) {
  const session = await engine.requireSession(sessionId);
  const seq = parseSeq(seqArg);
  const fold = await foldOf(engine, session.sessionId);
  // Past what is folded (the fold is still catching up, or seq is past the newest event), the
  // answer is as of throughSeq and says so.
  const at = seq < fold.throughSeq ? seq : fold.throughSeq;
  const calls = new Map<string, { toolName: string | null; status: string; seq: bigint }>();
  for (const step of fold.tools) {
    if (step.seq > at) break;
    const previous = calls.get(step.toolCallId);
    calls.set(step.toolCallId, {
      toolName: step.toolName ?? previous?.toolName ?? null,
      status: step.status,
      seq: previous?.seq ?? step.seq,
    });
  }
  const approvals = new Map<string, string>();
  for (const step of fold.approvals) {
    if (step.seq > at) break;
    approvals.set(step.toolCallId, step.status);
  }
  const toolCalls = [...calls.entries()]
    .sort((a, b) => (a[1].seq === b[1].seq ? 0 : a[1].seq > b[1].seq ? -1 : 1))
    .slice(0, AT_TOOL_CALLS_MAX)
    .map(([toolCallId, call]) => ({
      __typename: 'StudioToolCallAt' as const,
      toolCallId,
      toolName: call.toolName ?? 'unknown',
      status: call.status,
      approvalStatus: approvals.get(toolCallId) ?? null,
      proposedSeq: call.seq.toString(),
    }));
  chargeRows(ctx, toolCalls.length + 1, 'toolCalls');
  const run = lastAtOrBefore(fold.runs, at);
  const budget = lastAtOrBefore(fold.budgets, at);
  const checkpointStep = lastAtOrBefore(fold.checkpoints, at);
  const checkpoint = checkpointStep
    ? await engine.reads.getCheckpoint(checkpointStep.checkpointId)
    : null;
  return {
    __typename: 'StudioSessionAt' as const,
    sessionId: session.sessionId,
    seq: at.toString(),
    requestedSeq: seq.toString(),
    complete: seq <= fold.throughSeq,
    toolCalls,
    toolCallCount: calls.size,
    pendingApprovalCount: [...approvals.values()].filter((s) => s === 'PENDING').length,
    runId: run?.runId ?? null,
    runStatus: run?.status ?? null,
    budget: budget?.budget ?? null,
    checkpoint: checkpoint ? checkpointView(checkpoint) : null,
  };
}

type Args = Record<string, unknown>;

/** Root fields to spread into Query (resolvers.ts). */
export const historyQueryResolvers = {
  studioSessionHistory: (_p: unknown, a: Args, ctx: { engine: Engine }) =>
    sessionHistory(ctx.engine, ctx, a.sessionId as string),
  studioSessionAt: (_p: unknown, a: Args, ctx: { engine: Engine }) =>
    sessionAt(ctx.engine, ctx, a.sessionId as string, a.seq),
};
