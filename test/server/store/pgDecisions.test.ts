/**
 * Decisions on one PostgreSQL from two engines (two instances): of two approvals of one call,
 * exactly one is recorded, however their transactions interleave. The second instance is held
 * at its claim's session lock (a real row lock on the real database) until the first instance
 * has recorded its decision: what it then claims must be what the database holds now, not what
 * it read before the lock, so it is refused ("used once") instead of granting the call again.
 */
import fs from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCAL_APP_ID } from '../../../protocol/contract.ts';
import { Engine } from '../../../server/engine/Engine.ts';
import { StudioError } from '../../../server/engine/StudioError.ts';
import { makeLogger } from '../../../server/logger.ts';
import { PgStore } from '../../../server/store/postgres/PgStore.ts';
import type { Source, ToolDecision } from '../../../server/sources/Source.ts';
import type { Store, Tx } from '../../../server/store/Store.ts';
import { freshDatabase } from '../../support/postgresDatabase.ts';
import type { TestDatabase } from '../../support/postgresDatabase.ts';

/** Holds the next `lockSession` of a transaction until `open()` (armed by `arm()`). */
class LockGate {
  private armed = false;
  private release: () => void = () => undefined;
  private opened: Promise<void> = Promise.resolve();
  /** Resolves once a transaction reached the held lockSession. */
  reached: Promise<void> = Promise.resolve();
  private onReached: () => void = () => undefined;

  arm(): void {
    this.armed = true;
    this.opened = new Promise((resolve) => (this.release = resolve));
    this.reached = new Promise((resolve) => (this.onReached = resolve));
  }
  open(): void {
    this.release();
  }
  async pass(): Promise<void> {
    if (!this.armed) return;
    this.armed = false;
    this.onReached();
    await this.opened;
  }
}

/** The store with every transaction's lockSession passing through `gate` first. */
function gated(store: Store, gate: LockGate): Store {
  const wrapTx = (tx: Tx): Tx =>
    new Proxy(tx, {
      get(target, name, receiver) {
        if (name === 'lockSession')
          return async (sessionId: string) => {
            await gate.pass();
            return target.lockSession(sessionId);
          };
        const value = Reflect.get(target, name, receiver) as unknown;
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
  return new Proxy(store, {
    get(target, name, receiver) {
      if (name === 'transaction')
        return <T>(fn: (tx: Tx) => Promise<T>, opts?: { readOnly?: boolean }) =>
          target.transaction((tx) => fn(wrapTx(tx)), opts);
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}

/** The sessions' source on each instance: remembers which instance delivered which decision. */
class DeliveringSource implements Source {
  readonly sourceId = 'demo';
  readonly checkpointsSupported = false;
  constructor(
    private readonly instance: string,
    private readonly log: string[],
  ) {}
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async deliverDecision(decision: ToolDecision): Promise<void> {
    this.log.push(`${this.instance}:${decision.approved ? 'approve' : 'deny'}`);
  }
}

describe('decisions from two instances on one PostgreSQL', () => {
  let db: TestDatabase | null = null;
  let dataDir: string | null = null;
  const engines: Engine[] = [];
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.stop();
    await db?.drop();
    db = null;
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    dataDir = null;
  });

  const deliveries: string[] = [];
  const engineOn = async (store: Store, name: string) => {
    const engine = new Engine({ store, dataDir: dataDir!, logger: makeLogger(() => undefined) });
    engines.push(engine);
    await engine.start();
    await engine.addSource(new DeliveringSource(name, deliveries));
    return engine;
  };

  it('records one grant when the second approval waits for the session lock until the first is recorded', async () => {
    db = await freshDatabase();
    dataDir = fs.mkdtempSync(join(os.tmpdir(), 'studio-pg-decide-'));
    const storeA = new PgStore({ url: db.url });
    await storeA.migrate();
    await storeA.ready();
    const storeB = new PgStore({ url: db.url });
    await storeB.ready();
    const gate = new LockGate();
    const A = await engineOn(storeA, 'A');
    const B = await engineOn(gated(storeB, gate), 'B');

    const { sessionId } = await A.createSession({ appId: LOCAL_APP_ID, mode: 'ASK' });
    const { clientEpoch } = await A.attach({ sessionId, clientInstanceId: 'tab' });
    const approval = await A.proposeWithApproval({
      sessionId,
      runId: null,
      toolName: 'demo.delete_file',
      arguments: { path: 'scratch.txt' },
      safeSummary: 'Delete scratch.txt',
      reasons: ['deletes a file'],
    });
    const input = {
      sessionId,
      clientEpoch,
      toolCallId: approval.toolCallId,
      argumentHash: approval.argumentHash,
    };

    gate.arm();
    const onB = B.decide(input, true).then(
      (record) => ({ record, error: null }),
      (error: unknown) => ({ record: null, error }),
    );
    await gate.reached;
    // B's decision is inside its claiming transaction, about to take the session lock.
    const onA = await A.decide(input, true);
    expect(onA.status).toBe('GRANTED');
    gate.open();
    const second = await onB;

    expect(second.record).toBeNull();
    expect(second.error).toBeInstanceOf(StudioError);
    expect((second.error as StudioError).code).toBe('AGENT_APPROVAL_MISMATCH');
    expect((second.error as StudioError).message).toMatch(/GRANTED, not PENDING/);
    const events = await A.reads.readEvents(sessionId, 0n, 1000);
    const granted = events.filter(
      (e) => e.type === 'APPROVAL_GRANTED' && e.payload.includes(approval.toolCallId),
    );
    expect(granted).toHaveLength(1);
    // The runtime hears the one recorded decision from the outbox, once: A's worker starts
    // first and runs the job; B's finds nothing left.
    expect(deliveries).toEqual([]);
    await A.startJobs();
    await A.jobsIdle();
    await B.startJobs();
    await B.jobsIdle();
    expect(deliveries).toEqual(['A:approve']);
    expect(await A.listJobs(['PENDING', 'CLAIMED'])).toEqual([]);
    const stored = await A.reads.getApproval(approval.approvalId);
    expect(stored?.status).toBe('GRANTED');
    expect(stored?.decidingClaim ?? null).toBeNull();
  });
});
