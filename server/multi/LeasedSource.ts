/**
 * A source as every instance of a multi-instance studio registers it: it runs the real source
 * only while this instance holds the source's lease (SourceLeases), and otherwise forwards the
 * engine's calls to the instance that does, through the database (SourceCalls). So every
 * instance serves the whole studio, each source runs on exactly one instance at a time, and an
 * action taken on any instance reaches the source.
 *
 * When the lease is taken, a fresh source is made and started with the engine's host (a source
 * resumes from the database as after a restart: the demo agent ends the runs cut off as
 * preempted and keeps waiting on pending approvals); when it is lost or the server stops, that
 * source is stopped. Calls that must answer at once (`canAskAgain`) are answered by a source
 * object that is never started (`shadow`).
 */
import type { Source, SourceHost, ToolDecision } from '../sources/Source.ts';
import type { SourceLeases } from '../store/postgres/SourceLeases.ts';
import type { SourceCalls } from './SourceCalls.ts';

/** The methods forwarded to the holder, and whether the caller waits for their result. */
const FORWARDED = {
  sendMessage: true,
  deliverDecision: true,
  prepareDecision: true,
  continueDecision: true,
  askAgain: true,
  cancelRun: true,
  deliverAnswer: true,
  onDecisionRecorded: false,
  onApprovalExpired: false,
  onApprovalRevoked: false,
} as const;
type Forwarded = keyof typeof FORWARDED;

export interface LeasedSourceOptions {
  /** Makes the real source (called once per lease taken; the shadow is made by the caller). */
  make: () => Source | Promise<Source>;
  leases: SourceLeases;
  calls: SourceCalls;
  /** This instance's name, for the status line. */
  instance: string;
  /**
   * Runs a decision delivery forwarded from another instance on the real source, in order, its
   * `onDecisionRecorded` included (Engine.deliverInOrder: under the session's lock, with what
   * the source records of it); the forwarding instance does not call that hook again. Without
   * it the delivery is a plain call.
   */
  deliverInOrder?: (source: Source, decision: ToolDecision) => Promise<void>;
  /** Runs after the real source started here (the demo seeds its sessions). */
  afterStart?: (source: Source) => Promise<void>;
  onProblem?: (message: string) => void;
}

export class LeasedSource implements Source {
  readonly sourceId: string;
  readonly checkpointsSupported: boolean;
  readonly checkpointsUnsupportedReason?: string;
  readonly steersActiveRun?: boolean;
  readonly shadow: Source;
  sendMessage?: Source['sendMessage'];
  deliverDecision?: Source['deliverDecision'];
  prepareDecision?: Source['prepareDecision'];
  continueDecision?: Source['continueDecision'];
  onDecisionRecorded?: Source['onDecisionRecorded'];
  onApprovalExpired?: Source['onApprovalExpired'];
  onApprovalRevoked?: Source['onApprovalRevoked'];
  canAskAgain?: Source['canAskAgain'];
  askAgain?: Source['askAgain'];
  cancelRun?: Source['cancelRun'];
  deliverAnswer?: Source['deliverAnswer'];

  private host: SourceHost | null = null;
  private local: Source | null = null;
  private stopServing: (() => void) | null = null;
  /** Lease changes run one at a time, in order. */
  private changes: Promise<void> = Promise.resolve();

  constructor(
    shadow: Source,
    private readonly options: LeasedSourceOptions,
  ) {
    this.shadow = shadow;
    this.sourceId = this.shadow.sourceId;
    this.checkpointsSupported = this.shadow.checkpointsSupported;
    if (this.shadow.checkpointsUnsupportedReason !== undefined)
      this.checkpointsUnsupportedReason = this.shadow.checkpointsUnsupportedReason;
    if (this.shadow.steersActiveRun !== undefined)
      this.steersActiveRun = this.shadow.steersActiveRun;
    for (const name of Object.keys(FORWARDED) as Forwarded[]) {
      if (typeof this.shadow[name] !== 'function') continue;
      const wait = FORWARDED[name];
      // Each forwarded method keeps its own signature; the dispatch is by name.
      (this as unknown as Record<string, (...args: unknown[]) => unknown>)[name] = (
        ...args: unknown[]
      ) => this.route(name, args, wait);
    }
    if (this.shadow.canAskAgain)
      this.canAskAgain = (session, call) =>
        (this.local ?? this.shadow).canAskAgain?.(session, call) ?? false;
  }

  /** True while the real source runs on this instance. */
  get runsHere(): boolean {
    return this.local !== null;
  }

  private route(name: Forwarded, args: unknown[], wait: boolean): unknown {
    const local = this.local as unknown as Record<string, (...a: unknown[]) => unknown> | null;
    if (local) return local[name]!(...args);
    const sent = this.options.calls.call(this.sourceId, name, args, wait);
    if (wait) return sent;
    // The engine does not wait on notification hooks; the call is durable once committed.
    sent.catch((error: unknown) =>
      this.options.onProblem?.(`forwarding ${name} to ${this.sourceId}: ${String(error)}`),
    );
    return undefined;
  }

  async start(host: SourceHost): Promise<void> {
    this.host = host;
    host.setStatus('CONNECTING', 'waiting for the instance that runs it');
    await this.options.leases.want(this.sourceId);
  }

  /** Called by SourceLeases when this instance took the source's lease. */
  acquired(): Promise<void> {
    return this.queue(async () => {
      if (this.local || !this.host) return;
      const source = await this.options.make();
      this.local = source;
      await source.start(this.host);
      const target = source as unknown as Record<string, (...a: unknown[]) => unknown>;
      this.stopServing = this.options.calls.serve(this.sourceId, async (method, args) => {
        const fn = target[method];
        if (typeof fn !== 'function') throw new Error(`source ${this.sourceId} has no ${method}`);
        if (method === 'deliverDecision' && this.options.deliverInOrder && !source.continueDecision)
          return this.options.deliverInOrder(source, args[0] as ToolDecision);
        return fn.apply(source, args);
      });
      await this.options.afterStart?.(source);
    });
  }

  /** Called by SourceLeases when the lease was lost (or this instance stops). */
  lost(): Promise<void> {
    return this.queue(async () => {
      const source = this.local;
      if (!source) return;
      this.stopServing?.();
      this.stopServing = null;
      this.local = null;
      await source.stop();
      this.host?.setStatus('LIVE', 'runs on another studio instance');
    });
  }

  /** Each heartbeat: take over calls a dead holder left once their claims lapsed. */
  poke(): void {
    if (this.local) this.options.calls.poke(this.sourceId);
  }

  async stop(): Promise<void> {
    await this.lost();
  }

  private queue(fn: () => Promise<void>): Promise<void> {
    const next = this.changes.then(fn, fn);
    this.changes = next.catch(() => undefined);
    return next;
  }
}
