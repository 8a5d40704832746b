/**
 * The Store conformance suite: what every Store (SqliteStore, PgStore) must do, run against a
 * real database. `storeConformance(name, open)` registers the tests; `open` makes a fresh, empty
 * store and can reopen the same database (a restart). Races are real: transactions are started
 * together and the database decides; nothing here relies on one process's memory.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StoreConflictError } from '../../../server/store/Store.ts';
import type { Store, StoreNotification, Tx } from '../../../server/store/Store.ts';
import type {
  ApprovalRecord,
  IdempotencyRecord,
  SessionRecord,
  ToolCallRecord,
} from '../../../server/store/records.ts';

export interface StoreFixture {
  store: Store;
  /** Closes `store` (if open) and opens the same database again. */
  reopen(): Promise<Store>;
  /** Closes whatever is open and removes the database. */
  dispose(): Promise<void>;
}

const AT = '2026-01-01T00:00:00.000Z';

export function sessionRecord(
  sessionId: string,
  patch: Partial<SessionRecord> = {},
): SessionRecord {
  return {
    sessionId,
    appId: 'app',
    source: 'demo',
    title: null,
    projectId: null,
    mode: 'ASK',
    status: 'ACTIVE',
    requestedModel: 'm',
    model: null,
    contextVersion: '1',
    currentClientEpoch: '0',
    attachedEpoch: null,
    lastEventSeq: '0',
    currentRunId: null,
    createdAt: AT,
    updatedAt: AT,
    closedAt: null,
    ...patch,
  };
}

function approvalRecord(approvalId: string, patch: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    approvalId,
    sessionId: 's1',
    toolCallId: `call-${approvalId}`,
    runId: null,
    argumentHash: 'sha256:00',
    status: 'PENDING',
    safeSummary: 'a call',
    reasons: [],
    clientEpoch: '1',
    expiresAt: '2026-01-01T01:00:00.000Z',
    decidedAt: null,
    decisionReason: null,
    automatic: false,
    ...patch,
  };
}

function toolCallRecord(toolCallId: string, approvalId: string | null): ToolCallRecord {
  return {
    toolCallId,
    sessionId: 's1',
    runId: null,
    toolName: 'write_file',
    toolVersion: '1',
    executor: null,
    status: 'PROPOSED',
    safeSummary: null,
    argumentHash: null,
    argumentsJson: '{"path":"a.txt"}',
    resultJson: null,
    error: null,
    approvalId,
    askedBy: null,
    proposedAt: AT,
    updatedAt: AT,
    steps: [],
  };
}

/** Appends one event the way the kernel does: lock the session, read its last seq, insert, update. */
async function appendOne(tx: Tx, sessionId: string, label: string): Promise<bigint> {
  await tx.lockSession(sessionId);
  const session = await tx.getSession(sessionId);
  if (!session) throw new Error(`no session ${sessionId}`);
  const seq = BigInt(session.lastEventSeq) + 1n;
  await tx.insertEvent({
    sessionId,
    seq,
    eventId: `${sessionId}-${label}`,
    type: 'STUDIO_LOG',
    runId: null,
    createdAt: AT,
    payload: JSON.stringify({ __typename: 'StudioLogEvent', message: label, seq: String(seq) }),
    foreignId: null,
  });
  await tx.putSession({ ...session, lastEventSeq: seq.toString() });
  return seq;
}

/** Resolves with the first notification `match` accepts (bounded by the test timeout). */
function nextNotification(
  store: Store,
  match: (n: StoreNotification) => boolean,
  seen: StoreNotification[],
): Promise<StoreNotification> {
  return new Promise((resolve) => {
    const stop = store.listen((n) => {
      seen.push(n);
      if (match(n)) {
        stop();
        resolve(n);
      }
    });
  });
}

export function storeConformance(name: string, open: () => Promise<StoreFixture>): void {
  describe(`Store conformance: ${name}`, () => {
    let fixture: StoreFixture | null = null;
    const start = async () => {
      fixture = await open();
      return fixture;
    };
    afterEach(async () => {
      await fixture?.dispose();
      fixture = null;
    });

    it('applies its numbered migrations once; migrating again or reopening changes nothing and keeps the data', async () => {
      const { store, reopen } = await start();
      const applied = await store.appliedMigrations();
      expect(applied.length).toBeGreaterThan(0);
      expect(applied).toEqual([...applied].sort((a, b) => a - b));
      await store.transaction(async (tx) => tx.putSession(sessionRecord('kept')));
      await store.migrate();
      expect(await store.appliedMigrations()).toEqual(applied);
      const again = await reopen();
      await again.migrate();
      expect(await again.appliedMigrations()).toEqual(applied);
      const kept = await again.transaction((tx) => tx.getSession('kept'), { readOnly: true });
      expect(kept?.sessionId).toBe('kept');
    });

    it('commits every write of a transaction or none: a throw rolls all of it back', async () => {
      const { store } = await start();
      await store.transaction(async (tx) => tx.putSession(sessionRecord('s1')));
      await expect(
        store.transaction(async (tx) => {
          await appendOne(tx, 's1', 'a');
          await tx.putSession(sessionRecord('s2'));
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      const after = await store.transaction(
        async (tx) => ({
          s1: await tx.getSession('s1'),
          s2: await tx.getSession('s2'),
          count: await tx.countEvents('s1'),
        }),
        { readOnly: true },
      );
      expect(after.s1?.lastEventSeq).toBe('0');
      expect(after.s2).toBeNull();
      expect(after.count).toBe(0);
    });

    it('rejects a duplicate (session, seq) as a conflict and a duplicate eventId, writing nothing', async () => {
      const { store } = await start();
      await store.transaction(async (tx) => {
        await tx.putSession(sessionRecord('s1'));
        await appendOne(tx, 's1', 'first');
      });
      const row = {
        sessionId: 's1',
        seq: 1n,
        eventId: 'another-id',
        type: 'STUDIO_LOG',
        runId: null,
        createdAt: AT,
        payload: '{}',
        foreignId: null,
      };
      let attempts = 0;
      await expect(
        store.transaction(async (tx) => {
          attempts++;
          await tx.insertEvent(row);
        }),
      ).rejects.toBeInstanceOf(StoreConflictError);
      expect(attempts).toBeGreaterThan(1);
      await expect(
        store.transaction(async (tx) => tx.insertEvent({ ...row, seq: 2n, eventId: 's1-first' })),
      ).rejects.toThrow();
      const payloads = await store.transaction((tx) => tx.readEventPayloads('s1', 0n, 10), {
        readOnly: true,
      });
      expect(payloads.map((p) => (JSON.parse(p) as { message: string }).message)).toEqual([
        'first',
      ]);
    });

    it('gives racing appends to one session consecutive seqs: no gap, no duplicate', async () => {
      const { store } = await start();
      await store.transaction(async (tx) => tx.putSession(sessionRecord('s1')));
      const n = 40;
      const seqs = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          store.transaction((tx) => appendOne(tx, 's1', `e${i}`)),
        ),
      );
      expect([...seqs].sort((a, b) => Number(a - b))).toEqual(
        Array.from({ length: n }, (_, i) => BigInt(i + 1)),
      );
      const rows = await store.transaction((tx) => tx.readEvents('s1', 0n, 1000), {
        readOnly: true,
      });
      expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: n }, (_, i) => BigInt(i + 1)));
      const session = await store.transaction((tx) => tx.getSession('s1'), { readOnly: true });
      expect(session?.lastEventSeq).toBe(String(n));
    });

    it('tells which foreign ids a session has stored, its own uncommitted ones included', async () => {
      const { store } = await start();
      await store.transaction(async (tx) => {
        await tx.putSession(sessionRecord('s1'));
        await tx.putSession(sessionRecord('s2'));
        for (const [sessionId, foreignId, seq] of [
          ['s1', "run/1 o'quote", 1n],
          ['s1', 'run/2', 2n],
          ['s2', 'run/3', 1n],
        ] as const)
          await tx.insertEvent({
            sessionId,
            seq,
            eventId: `${sessionId}-${seq}`,
            type: 'STUDIO_LOG',
            runId: null,
            createdAt: AT,
            payload: '{}',
            foreignId,
          });
        // Inside the writing transaction, after a deferred write (PostgreSQL sends both at once).
        await tx.putMeta('k', 'v');
        expect(await tx.storedForeignIds('s1', ['run/2', 'run/3', 'none'])).toEqual(
          new Set(['run/2']),
        );
      });
      const found = await store.transaction(
        (tx) => tx.storedForeignIds('s1', ["run/1 o'quote", 'run/2', 'run/3', 'run/2']),
        { readOnly: true },
      );
      expect(found).toEqual(new Set(["run/1 o'quote", 'run/2']));
      expect(
        await store.transaction((tx) => tx.storedForeignIds('s1', []), { readOnly: true }),
      ).toEqual(new Set());
    });

    it('reads event payloads in order in large batches', async () => {
      const { store } = await start();
      await store.transaction(async (tx) => {
        await tx.putSession(sessionRecord('s1'));
        for (let i = 0; i < 250; i++) await appendOne(tx, 's1', `e${i}`);
      });
      const all = await store.transaction(
        async (tx) => {
          const out: string[] = [];
          let after = 0n;
          for (;;) {
            const batch = await tx.readEventPayloads('s1', after, 100);
            if (batch.length === 0) break;
            out.push(...batch);
            after += BigInt(batch.length);
          }
          return out;
        },
        { readOnly: true },
      );
      expect(all).toHaveLength(250);
      expect((JSON.parse(all[249]!) as { seq: string }).seq).toBe('250');
    });

    it('reads tool calls and approvals by id in one call, its own writes included', async () => {
      const { store } = await start();
      await store.transaction(async (tx) => {
        await tx.putToolCall(toolCallRecord('c1', 'a1'));
        await tx.putToolCall(toolCallRecord('c2', null));
        await tx.putApproval(approvalRecord('a1', { toolCallId: 'c1' }));
      });
      const read = await store.transaction(
        async (tx) => ({
          calls: await tx.getToolCalls(['c2', 'missing', 'c1', 'c1']),
          approvals: await tx.getApprovals(['a1', 'nope']),
          none: await tx.getToolCalls([]),
        }),
        { readOnly: true },
      );
      expect([...read.calls.keys()].sort()).toEqual(['c1', 'c2']);
      expect(read.calls.get('c1')).toEqual(toolCallRecord('c1', 'a1'));
      expect(read.calls.get('c2')?.approvalId).toBeNull();
      expect([...read.approvals.keys()]).toEqual(['a1']);
      expect(read.approvals.get('a1')).toEqual(approvalRecord('a1', { toolCallId: 'c1' }));
      expect(read.none.size).toBe(0);
      // Inside a writer, what it wrote and has not committed yet is what it reads back.
      const own = await store.transaction(async (tx) => {
        await tx.putToolCall({ ...toolCallRecord('c1', 'a1'), status: 'RUNNING' });
        await tx.putToolCall(toolCallRecord('c3', null));
        await tx.putApproval(approvalRecord('a1', { toolCallId: 'c1', status: 'GRANTED' }));
        return {
          calls: await tx.getToolCalls(['c1', 'c2', 'c3']),
          approvals: await tx.getApprovals(['a1']),
        };
      });
      expect(own.calls.get('c1')?.status).toBe('RUNNING');
      expect(own.calls.get('c2')?.status).toBe('PROPOSED');
      expect(own.calls.get('c3')?.toolCallId).toBe('c3');
      expect(own.approvals.get('a1')?.status).toBe('GRANTED');
    });

    it('decides an approval once: of concurrent grants and denials exactly one wins', async () => {
      const { store } = await start();
      await store.transaction(async (tx) => tx.putApproval(approvalRecord('a1')));
      const results = await Promise.all(
        (['GRANTED', 'DENIED', 'GRANTED', 'GRANTED'] as const).map((status, i) =>
          store.transaction(async (tx) =>
            tx.decideApproval(
              approvalRecord('a1', { status, decisionReason: `r${i}`, decidedAt: AT }),
            ),
          ),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      const stored = await store.transaction((tx) => tx.getApproval('a1'), { readOnly: true });
      expect(stored?.decisionReason).toBe(`r${winner}`);
      expect(
        await store.transaction((tx) => tx.listPendingApprovals(null), { readOnly: true }),
      ).toEqual([]);
      // A decided approval is not decided again.
      expect(
        await store.transaction((tx) =>
          tx.decideApproval(approvalRecord('a1', { status: 'DENIED' })),
        ),
      ).toBe(false);
    });

    it("lists a locked session's pending approvals as its own writes leave them, by expiry then id", async () => {
      const { store } = await start();
      await store.transaction(async (tx) => {
        await tx.putSession(sessionRecord('s1'));
        await tx.putApproval(approvalRecord('b', { expiresAt: '2026-01-01T02:00:00.000Z' }));
        await tx.putApproval(approvalRecord('other', { sessionId: 's2' }));
      });
      const ids = (list: ApprovalRecord[]) => list.map((a) => a.approvalId);
      const seen = await store.transaction(async (tx) => {
        await tx.lockSession('s1');
        const out = [ids(await tx.listPendingApprovals('s1'))];
        await tx.putApproval(approvalRecord('c', { expiresAt: '2026-01-01T02:00:00.000Z' }));
        await tx.putApproval(approvalRecord('a', { expiresAt: '2026-01-01T03:00:00.000Z' }));
        out.push(ids(await tx.listPendingApprovals('s1')));
        await tx.decideApproval(approvalRecord('b', { status: 'GRANTED', decidedAt: AT }));
        await tx.putApproval(
          approvalRecord('c', { expiresAt: '2026-01-01T04:00:00.000Z', safeSummary: 'moved' }),
        );
        const list = await tx.listPendingApprovals('s1');
        out.push(ids(list), [list.at(-1)!.safeSummary]);
        return out;
      });
      expect(seen).toEqual([['b'], ['b', 'c', 'a'], ['a', 'c'], ['moved']]);
      const after = await store.transaction((tx) => tx.listPendingApprovals('s1'), {
        readOnly: true,
      });
      expect(ids(after)).toEqual(['a', 'c']);
      expect(
        ids(await store.transaction((tx) => tx.listPendingApprovals(null), { readOnly: true })),
      ).toEqual(['other', 'a', 'c']);
    });

    it('fences an epoch: of concurrent moves from one epoch exactly one lands', async () => {
      const { store } = await start();
      await store.transaction(async (tx) =>
        tx.putSession(sessionRecord('s1', { currentClientEpoch: '3' })),
      );
      const results = await Promise.all(
        ['4', '4', '4'].map((epoch, i) =>
          store.transaction((tx) =>
            tx.putSessionIf(
              sessionRecord('s1', { currentClientEpoch: epoch, title: `t${i}` }),
              '3',
            ),
          ),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const stored = await store.transaction((tx) => tx.getSession('s1'), { readOnly: true });
      expect(stored?.currentClientEpoch).toBe('4');
      expect(stored?.title).toBe(`t${results.indexOf(true)}`);
    });

    it('keeps list order from a sequence: replacing a record does not move it', async () => {
      const { store } = await start();
      await store.transaction(async (tx) => {
        for (const id of ['a', 'b', 'c']) await tx.putSession(sessionRecord(id));
      });
      await store.transaction(async (tx) =>
        tx.putSession(sessionRecord('a', { title: 'renamed' })),
      );
      const listed = await store.transaction((tx) => tx.listSessions('app', null, 10), {
        readOnly: true,
      });
      expect(listed.map((l) => l.record.sessionId)).toEqual(['c', 'b', 'a']);
      expect(listed[2]!.record.title).toBe('renamed');
      const older = await store.transaction((tx) => tx.listSessions('app', listed[0]!.order, 10), {
        readOnly: true,
      });
      expect(older.map((l) => l.record.sessionId)).toEqual(['b', 'a']);
    });

    it('a read-only transaction sees committed state only, and may not write', async () => {
      const { store } = await start();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let written!: () => void;
      const wrote = new Promise<void>((resolve) => (written = resolve));
      const writer = store.transaction(async (tx) => {
        await tx.putSession(sessionRecord('pending'));
        written();
        await gate;
      });
      await wrote;
      const during = await store.transaction((tx) => tx.getSession('pending'), { readOnly: true });
      expect(during).toBeNull();
      release();
      await writer;
      const after = await store.transaction((tx) => tx.getSession('pending'), { readOnly: true });
      expect(after?.sessionId).toBe('pending');
      await expect(
        store.transaction((tx) => tx.putSession(sessionRecord('nope')), { readOnly: true }),
      ).rejects.toThrow();
    });

    it('delivers a notification only after its commit, and never one of a rolled-back transaction', async () => {
      const { store } = await start();
      const seen: StoreNotification[] = [];
      const committedSeen = nextNotification(store, (n) => n.payload === 'committed', seen);
      let deliveredInside = false;
      await store.transaction(async (tx) => {
        tx.notify('session', 'committed');
        tx.notify('session', 'committed');
        await tx.putSession(sessionRecord('s1'));
        deliveredInside = seen.length > 0;
      });
      expect(deliveredInside).toBe(false);
      await committedSeen;
      await expect(
        store.transaction(async (tx) => {
          tx.notify('session', 'rolled-back');
          throw new Error('no');
        }),
      ).rejects.toThrow('no');
      const laterSeen = nextNotification(store, (n) => n.payload === 'later', seen);
      await store.transaction(async (tx) => {
        tx.notify('session', 'later');
        await tx.putMeta('k', 'v');
      });
      await laterSeen;
      expect(seen.map((n) => n.payload)).toEqual(['committed', 'later']);
      expect(seen[0]!.channel).toBe('session');
    });

    it('enqueues a job once per key; concurrent workers claim each job exactly once', async () => {
      const { store } = await start();
      const added = await store.transaction(async (tx) => {
        const out: boolean[] = [];
        for (let i = 0; i < 12; i++)
          out.push(await tx.enqueueJob({ kind: 'k', key: `job-${i}`, payload: `{"i":${i}}` }));
        out.push(await tx.enqueueJob({ kind: 'k', key: 'job-0', payload: '{}' }));
        out.push(await tx.enqueueJob({ kind: 'other', key: 'other-1', payload: '{}' }));
        return out;
      });
      expect(added.filter(Boolean)).toHaveLength(13);
      expect(added[12]).toBe(false);
      const now = Date.now();
      const claimedBy = new Map<string, string>();
      const worker = async (workerId: string) => {
        for (;;) {
          const job = await store.transaction((tx) => tx.claimJob(['k'], workerId, now, 60_000));
          if (!job) return;
          expect(claimedBy.has(job.jobId)).toBe(false);
          claimedBy.set(job.jobId, workerId);
          expect(job.status).toBe('CLAIMED');
          expect(job.workerId).toBe(workerId);
          expect(job.attempts).toBe(1);
        }
      };
      await Promise.all(['w1', 'w2', 'w3', 'w4'].map(worker));
      expect(claimedBy.size).toBe(12);
      const claimed = await store.transaction((tx) => tx.listJobs(['CLAIMED']), { readOnly: true });
      expect(claimed).toHaveLength(12);
      const pending = await store.transaction((tx) => tx.listJobs(['PENDING']), { readOnly: true });
      expect(pending.map((j) => j.kind)).toEqual(['other']);
    });

    it('a job is finished only by its claimant; a lapsed claim is claimed again', async () => {
      const { store } = await start();
      await store.transaction((tx) => tx.enqueueJob({ kind: 'k', key: 'one', payload: '{}' }));
      const now = 1_000_000;
      const first = await store.transaction((tx) => tx.claimJob(['k'], 'dead', now, 1_000));
      expect(first).not.toBeNull();
      // Still leased: nobody else gets it.
      expect(
        await store.transaction((tx) => tx.claimJob(['k'], 'w2', now + 500, 1_000)),
      ).toBeNull();
      // The lease lapsed (its worker died): another worker claims it.
      const second = await store.transaction((tx) => tx.claimJob(['k'], 'w2', now + 1_001, 1_000));
      expect(second?.jobId).toBe(first!.jobId);
      expect(second?.attempts).toBe(2);
      expect(await store.transaction((tx) => tx.completeJob(first!.jobId, 'dead'))).toBe(false);
      expect(await store.transaction((tx) => tx.completeJob(first!.jobId, 'w2'))).toBe(true);
      const done = await store.transaction((tx) => tx.getJobByKey('one'), { readOnly: true });
      expect(done?.status).toBe('DONE');
      expect(
        await store.transaction((tx) => tx.claimJob(['k'], 'w3', now + 10_000, 1_000)),
      ).toBeNull();

      await store.transaction((tx) => tx.enqueueJob({ kind: 'k', key: 'two', payload: '{}' }));
      const job = await store.transaction((tx) => tx.claimJob(['k'], 'w3', now, 1_000));
      expect(await store.transaction((tx) => tx.failJob(job!.jobId, 'w3', 'it broke'))).toBe(true);
      const failed = await store.transaction((tx) => tx.getJob(job!.jobId), { readOnly: true });
      expect(failed?.status).toBe('FAILED');
      expect(failed?.lastError).toBe('it broke');
      expect(await store.transaction((tx) => tx.pruneJobs('9999-01-01T00:00:00.000Z'))).toBe(2);
    });

    it('keeps one idempotency record per (operation, key) and prunes those older than the window', async () => {
      const { store } = await start();
      const record = (key: string, createdAt: string): IdempotencyRecord => ({
        operation: 'op',
        key,
        inputHash: 'h',
        resultJson: '{}',
        createdAt,
      });
      await store.transaction(async (tx) => {
        await tx.putIdempotency(record('old-1', '2026-01-01T00:00:00.000Z'));
        await tx.putIdempotency(record('old-2', '2026-01-01T10:00:00.000Z'));
        await tx.putIdempotency(record('new', '2026-01-02T10:00:00.000Z'));
      });
      await expect(
        store.transaction((tx) => tx.putIdempotency(record('new', '2026-01-03T00:00:00.000Z'))),
      ).rejects.toBeInstanceOf(StoreConflictError);
      const pruned = await store.transaction((tx) =>
        tx.pruneIdempotency('2026-01-02T00:00:00.000Z'),
      );
      expect(pruned).toBe(2);
      const left = await store.transaction(
        async (tx) => ({
          old: await tx.getIdempotency('op', 'old-1'),
          kept: await tx.getIdempotency('op', 'new'),
        }),
        { readOnly: true },
      );
      expect(left.old).toBeNull();
      expect(left.kept?.createdAt).toBe('2026-01-02T10:00:00.000Z');
    });

    it('retries a transaction that met a conflict and commits its last attempt only', async () => {
      const { store } = await start();
      let attempts = 0;
      const result = await store.transaction(async (tx) => {
        attempts++;
        await tx.putMeta('attempt', String(attempts));
        if (attempts < 3) throw new StoreConflictError('lost a race');
        return attempts;
      });
      expect(result).toBe(3);
      expect(await store.transaction((tx) => tx.getMeta('attempt'), { readOnly: true })).toBe('3');
    });
  });
}
