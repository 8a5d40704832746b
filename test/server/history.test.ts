/**
 * The history scrubber's reads against the real server: studioSessionHistory marks runs,
 * approvals, checkpoints and restores in seq order; studioSessionAt describes the session as of
 * a seq (a read of the log: a later decision does not change an earlier seq's answer); the fold
 * follows new events; bad input is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVE,
  appendMany,
  decideInput,
  failCode,
  history,
  makeClient,
  ok,
  startHarness,
  waitForRunEnd,
  type Harness,
  type StudioClient,
} from './harness.ts';
import { startDelete } from './approvalKit.ts';
import {
  FOLD_ROWS_PER_REQUEST,
  sessionHistory,
  thinMarks,
} from '../../server/schema/historyResolvers.ts';

const HISTORY_RAIL = `query Rail($sessionId: String!) {
  studioSessionHistory(sessionId: $sessionId) {
    sessionId throughSeq marksThinned marks { seq kind type label runId toolCallId checkpointId }
  }
}`;

const AT = `query At($sessionId: String!, $seq: BigInt!) {
  studioSessionAt(sessionId: $sessionId, seq: $seq) {
    sessionId seq requestedSeq complete toolCallCount pendingApprovalCount runId runStatus
    toolCalls { toolCallId toolName status approvalStatus proposedSeq }
    budget { dimensions { name consumed } }
    checkpoint { checkpointId createdAt }
  }
}`;

interface Mark {
  seq: string;
  kind: string;
  type: string;
  label: string;
  runId: string | null;
  toolCallId: string | null;
  checkpointId: string | null;
}
interface Rail {
  studioSessionHistory: {
    sessionId: string;
    throughSeq: string;
    marksThinned: boolean;
    marks: Mark[];
  };
}
interface At {
  studioSessionAt: {
    seq: string;
    requestedSeq: string;
    complete: boolean;
    toolCallCount: number;
    pendingApprovalCount: number;
    runId: string | null;
    runStatus: string | null;
    toolCalls: {
      toolCallId: string;
      toolName: string;
      status: string;
      approvalStatus: string | null;
    }[];
    checkpoint: { checkpointId: string } | null;
  };
}

let h: Harness;
let c: StudioClient;

beforeAll(async () => {
  h = await startHarness();
  c = makeClient(h);
});

afterAll(async () => {
  await h.dispose();
});

const rail = async (sessionId: string) =>
  (await ok<Rail>(c, HISTORY_RAIL, { sessionId })).studioSessionHistory;
const at = async (sessionId: string, seq: string) =>
  (await ok<At>(c, AT, { sessionId, seq })).studioSessionAt;

describe('studioSessionHistory and studioSessionAt', () => {
  it('marks the run, its checkpoint and its approval, and reads the session as of each seq', async () => {
    const r = await startDelete(h, c);
    const sessionId = r.a.sessionId;
    const events = await history(c, sessionId);
    const first = await rail(sessionId);
    expect(first.throughSeq).toBe(events.at(-1)!.seq);
    const kinds = first.marks.map((m) => `${m.kind}:${m.type}`);
    expect(kinds).toContain('RUN:RUN_STARTED');
    expect(kinds).toContain('APPROVAL:APPROVAL_REQUESTED');
    expect(kinds).toContain('CHECKPOINT:CHECKPOINT_CREATED');
    // Exactly the marked events of the log, in seq order.
    const marked = events.filter((e) =>
      /^(RUN_(STARTED|PAUSED|SUCCEEDED|FAILED|CANCELLED|PREEMPTED)|APPROVAL_(REQUESTED|GRANTED|DENIED|EXPIRED)|CHECKPOINT_(CREATED|RESTORED))$/.test(
        e.type,
      ),
    );
    expect(first.marks.map((m) => m.seq)).toEqual(marked.map((e) => e.seq));
    const asked = first.marks.find((m) => m.type === 'APPROVAL_REQUESTED')!;
    expect(asked.toolCallId).toBe(r.approval.toolCallId);

    // Before the run: nothing.
    const before = await at(sessionId, (BigInt(first.marks[0]!.seq) - 1n).toString());
    expect(before).toMatchObject({ toolCallCount: 0, pendingApprovalCount: 0, checkpoint: null });

    // At the ask: the delete waits, and the checkpoint is the newest one at or before it.
    const waiting = await at(sessionId, asked.seq);
    expect(waiting.pendingApprovalCount).toBe(1);
    expect(waiting.runStatus).toBe('RUNNING');
    expect(waiting.toolCalls[0]).toMatchObject({
      toolCallId: r.approval.toolCallId,
      status: 'WAITING_FOR_APPROVAL',
      approvalStatus: 'PENDING',
    });
    const checkpointBefore = first.marks.filter(
      (m) => m.kind === 'CHECKPOINT' && BigInt(m.seq) <= BigInt(asked.seq),
    );
    expect(waiting.checkpoint?.checkpointId).toBe(checkpointBefore.at(-1)!.checkpointId);

    // Approve; the rail follows, and the earlier seq still reads as it was.
    await ok(c, APPROVE, decideInput(r.a, r.approval));
    await waitForRunEnd(c, sessionId, r.runId);
    const after = await rail(sessionId);
    expect(BigInt(after.throughSeq)).toBeGreaterThan(BigInt(first.throughSeq));
    expect(after.marks.map((m) => m.type)).toContain('APPROVAL_GRANTED');
    expect(after.marks.at(-1)!.kind).toBe('RUN');
    expect((await at(sessionId, asked.seq)).pendingApprovalCount).toBe(1);
    const end = await at(sessionId, after.throughSeq);
    expect(end.pendingApprovalCount).toBe(0);
    expect(end.runStatus).toBe('SUCCEEDED');
    expect(end.toolCalls.find((t) => t.toolCallId === r.approval.toolCallId)?.status).toBe(
      'SUCCEEDED',
    );
    r.stop();
  });

  it('answers a seq past the newest event as of the newest event, and says so', async () => {
    const r = await startDelete(h, c);
    const sessionId = r.a.sessionId;
    await appendMany(h, sessionId, 300, 'filler');
    const { throughSeq } = await rail(sessionId);
    const past = await at(sessionId, (BigInt(throughSeq) + 1000n).toString());
    expect(past).toMatchObject({ seq: throughSeq, complete: false });
    r.stop();
  });

  it('lets the event loop turn while it folds a long session, so requests beside it are served', async () => {
    const r = await startDelete(h, c);
    const sessionId = r.a.sessionId;
    // 10,000 events: five store reads of the fold, each followed by a turn of the event loop.
    await appendMany(h, sessionId, 10_000, 'long');
    let turned = false;
    const folding = sessionHistory(h.server.engine, {}, sessionId).then((rail) => ({
      rail,
      turned,
    }));
    // Queued now, so it runs at the first turn: during the fold, or only after it ended.
    setImmediate(() => (turned = true));
    const { rail, turned: turnedDuringFold } = await folding;
    expect(turnedDuringFold).toBe(true);
    expect(BigInt(rail.throughSeq)).toBeGreaterThanOrEqual(10_000n);
    expect(FOLD_ROWS_PER_REQUEST).toBeGreaterThan(10_000);
    r.stop();
  });

  it('refuses a bad seq and an unknown session', async () => {
    const r = await startDelete(h, c);
    expect(await failCode(c, AT, { sessionId: r.a.sessionId, seq: '-1' })).toBe('BAD_USER_INPUT');
    expect(await failCode(c, AT, { sessionId: r.a.sessionId, seq: '99999999999999999999' })).toBe(
      'BAD_USER_INPUT',
    );
    expect(await failCode(c, HISTORY_RAIL, { sessionId: 'no-such-session' })).toBeTruthy();
    r.stop();
  });
});

describe('thinMarks', () => {
  it('keeps every checkpoint and restore and spreads the rest evenly, in order', () => {
    const marks = Array.from({ length: 1000 }, (_, i) => ({
      i,
      kind: i % 100 === 0 ? ('CHECKPOINT' as const) : ('RUN' as const),
    }));
    const thinned = thinMarks(marks, 50);
    expect(thinned).toHaveLength(50);
    expect(thinned.filter((m) => m.kind === 'CHECKPOINT')).toHaveLength(10);
    expect(thinned.map((m) => m.i)).toEqual([...thinned.map((m) => m.i)].sort((a, b) => a - b));
    expect(thinned.at(-1)!.i).toBeGreaterThan(900);
  });
});
