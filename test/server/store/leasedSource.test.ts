/**
 * LeasedSource + SourceCalls on a real PostgreSQL: two instances register one source; it runs
 * on one; an action taken on the other reaches it through the jobs table (its result and its
 * StudioError come back); when the holder's heartbeat stops the source moves, and a call made
 * meanwhile is answered by the new holder.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { StudioError } from '../../../server/engine/StudioError.ts';
import { MultiInstance } from '../../../server/multi/multiInstance.ts';
import type { LeasedSource } from '../../../server/multi/LeasedSource.ts';
import type { Source, SourceHost, ToolDecision } from '../../../server/sources/Source.ts';
import { PgStore } from '../../../server/store/postgres/PgStore.ts';
import { freshDatabase } from '../../support/postgresDatabase.ts';
import type { TestDatabase } from '../../support/postgresDatabase.ts';

/** A source that remembers which instance's copy handled what. */
class RecordingSource implements Source {
  readonly sourceId = 'recorder';
  readonly checkpointsSupported = false;
  started = false;
  constructor(
    private readonly instance: string,
    private readonly log: string[],
  ) {}
  async start(): Promise<void> {
    this.started = true;
  }
  async stop(): Promise<void> {
    this.started = false;
  }
  async deliverDecision(decision: ToolDecision): Promise<void> {
    if (decision.toolCallId === 'refused')
      throw new StudioError('RUNTIME_REFUSED', 'the runtime refused it', { retryable: true });
    this.log.push(`${this.instance}:deliver:${decision.toolCallId}`);
  }
  async sendMessage(): Promise<{ runId: string }> {
    this.log.push(`${this.instance}:send`);
    return { runId: `run-from-${this.instance}` };
  }
  onDecisionRecorded(decision: ToolDecision): void {
    this.log.push(`${this.instance}:recorded:${decision.toolCallId}`);
  }
}

const decision = (toolCallId: string): ToolDecision => ({
  sessionId: 's1',
  runId: 'r1',
  toolCallId,
  toolName: 'demo.tool',
  approvalId: `a-${toolCallId}`,
  argumentHash: 'sha256:00',
  approved: true,
  reason: null,
});

describe('LeasedSource', () => {
  let db: TestDatabase | null = null;
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
    await db?.drop();
    db = null;
  });

  const instances = async (n: number) => {
    db = await freshDatabase();
    const log: string[] = [];
    const out: { multi: MultiInstance; source: LeasedSource; name: string }[] = [];
    for (let k = 0; k < n; k++) {
      const store = new PgStore({ url: db.url });
      await store.migrate();
      await store.ready();
      const multi = new MultiInstance({
        store,
        onProblem: () => undefined,
        onInfo: () => undefined,
        leaseTtlMs: 800,
        leaseRenewMs: 200,
      });
      const name = `i${k}`;
      const source = await multi.wrap(() => new RecordingSource(name, log));
      cleanup.push(async () => {
        await multi.stop();
        await store.close();
      });
      out.push({ multi, source, name });
    }
    const host = { setStatus: () => undefined } as unknown as SourceHost;
    for (const i of out) await i.source.start(host);
    return { log, all: out };
  };

  it('forwards an action taken on another instance to the one running the source', async () => {
    const { log, all } = await instances(2);
    const holders = all.filter((i) => i.source.runsHere);
    expect(holders).toHaveLength(1);
    const holder = holders[0]!;
    const other = all.find((i) => i !== holder)!;

    await other.source.deliverDecision!(decision('c1'));
    expect(log).toEqual([`${holder.name}:deliver:c1`]);
    const session = {
      sessionId: 's1',
      source: 'recorder',
      status: 'ACTIVE' as const,
      projectId: null,
      currentRunId: null,
      lastEventSeq: '0',
    };
    expect(await other.source.sendMessage!(session, 'hi')).toEqual({
      runId: `run-from-${holder.name}`,
    });
    const refused = await other.source.deliverDecision!(decision('refused')).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(StudioError);
    expect((refused as StudioError).code).toBe('RUNTIME_REFUSED');
    expect((refused as StudioError).retryable).toBe(true);
  });

  it('moves the source when its holder stops beating, and the new holder answers calls made meanwhile', async () => {
    const { log, all } = await instances(3);
    const holder = all.find((i) => i.source.runsHere)!;
    const caller = all.find((i) => i !== holder)!;
    holder.multi.leases.freeze();
    // Stop serving on the frozen holder as a killed process would (it no longer runs anything).
    await holder.source.lost();
    const answered = caller.source.deliverDecision!(decision('during-move'));
    await answered;
    const newHolder = all.find((i) => i !== holder && i.source.runsHere);
    expect(newHolder).toBeDefined();
    expect(log).toEqual([`${newHolder!.name}:deliver:during-move`]);
    caller.source.onDecisionRecorded!(decision('notified'));
    await expect
      .poll(() => log.includes(`${newHolder!.name}:recorded:notified`), { timeout: 5_000 })
      .toBe(true);
  });
});
