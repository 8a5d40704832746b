/**
 * What a studio server adds when its store is shared (PostgreSQL, several instances): one
 * SourceLeases competing for every source, one SourceCalls carrying calls between instances,
 * and `wrap` turning each source into a LeasedSource. app.ts registers the wrapped sources with
 * the engine exactly as it registers plain ones.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Source, ToolDecision } from '../sources/Source.ts';
import type { PgStore } from '../store/postgres/PgStore.ts';
import { SourceLeases } from '../store/postgres/SourceLeases.ts';
import { LeasedSource } from './LeasedSource.ts';
import { SourceCalls } from './SourceCalls.ts';

export interface MultiInstanceOptions {
  store: PgStore;
  onProblem: (message: string) => void;
  onInfo: (message: string) => void;
  /** Lease TTL and heartbeat (defaults 3,000 and 1,000 ms: a source moves within ~4 s). */
  leaseTtlMs?: number;
  leaseRenewMs?: number;
}

export class MultiInstance {
  /** This process in lease rows and logs: host, pid and a random part. */
  readonly instance = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly leases: SourceLeases;
  readonly calls: SourceCalls;
  private readonly sources = new Map<string, LeasedSource>();
  /**
   * Where a decision delivery forwarded from another instance runs on the real source (app.ts
   * sets it to Engine.deliverInOrder once the engine exists).
   */
  deliverInOrder: ((source: Source, decision: ToolDecision) => Promise<void>) | null = null;

  constructor(private readonly options: MultiInstanceOptions) {
    this.calls = new SourceCalls(options.store, { onProblem: options.onProblem });
    this.leases = new SourceLeases(options.store, {
      holder: this.instance,
      ttlMs: options.leaseTtlMs ?? 3_000,
      renewMs: options.leaseRenewMs ?? 1_000,
      onAcquired: async (sourceId) => {
        options.onInfo(`source ${sourceId} runs on this instance (${this.instance})`);
        await this.sources.get(sourceId)?.acquired();
      },
      onLost: async (sourceId) => {
        options.onInfo(`source ${sourceId} no longer runs on this instance`);
        await this.sources.get(sourceId)?.lost();
      },
      onProblem: options.onProblem,
      onBeat: () => {
        for (const source of this.sources.values()) source.poke();
      },
    });
  }

  /** The source as this instance registers it (runs here only while leased). */
  async wrap(
    make: () => Source | Promise<Source>,
    afterStart?: (source: Source) => Promise<void>,
  ): Promise<LeasedSource> {
    const leased = new LeasedSource(await make(), {
      make,
      leases: this.leases,
      calls: this.calls,
      instance: this.instance,
      onProblem: this.options.onProblem,
      // Without an engine (set by app.ts) the delivery is a plain call, prepared first.
      deliverInOrder: async (source, decision) => {
        if (this.deliverInOrder) return this.deliverInOrder(source, decision);
        await source.prepareDecision?.(decision);
        await source.deliverDecision!(decision);
      },
      ...(afterStart ? { afterStart } : {}),
    });
    if (this.sources.has(leased.sourceId))
      throw new Error(`source ${leased.sourceId} is registered twice`);
    this.sources.set(leased.sourceId, leased);
    return leased;
  }

  /** Stops every source running here and releases its lease (a graceful stop hands over at once). */
  async stop(): Promise<void> {
    await this.leases.stop();
    this.calls.close();
  }
}
