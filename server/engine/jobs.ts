/**
 * The outbox worker. A decision and the effect it authorizes are committed together: the
 * effect as a job row (`Tx.enqueueJob`). After the commit the worker claims jobs (a lease in the
 * database, so two workers never run one job at once), runs each job's handler and marks it DONE,
 * or FAILED when the handler throws. Handlers are idempotent: they look at the state the job
 * acts on (a call already RUNNING, a restore already written) and do only what is left, so a job
 * run again after a crash finishes the work rather than doing it twice.
 *
 * At start (`recover`), jobs a dead worker left CLAIMED are taken over: on a store only this
 * process uses (SQLite) every CLAIMED job is a dead one's; on a shared store (PostgreSQL) a job
 * is taken over once its lease ran out, or once the instance that claimed it lost its
 * connection to the database (PgStore.claimJob); the starting worker keeps looking for a few
 * seconds (`takeOver`), since PostgreSQL may not have ended a killed instance's connection yet.
 */
import { randomUUID } from 'node:crypto';
import type { JobRecord } from '../store/Store.ts';
import type { Kernel } from './kernel.ts';
import type { Logger } from '../logger.ts';

/** Channel of "a job was enqueued" (payload: its kind). */
export const JOBS_CHANNEL = 'studio_jobs';

/** How long a claim holds before another worker may take the job over. */
export const JOB_LEASE_MS = 60_000;

/**
 * On a shared store, how long a starting worker keeps looking at jobs another instance left
 * CLAIMED, every TAKEOVER_POLL_MS, before it leaves them to their claims (see `recover`).
 */
export const JOB_TAKEOVER_WAIT_MS = 5_000;
const TAKEOVER_POLL_MS = 100;

export type JobHandler = (job: JobRecord) => Promise<void>;

export class JobWorker {
  readonly workerId = `worker-${randomUUID()}`;
  private running: Promise<void> | null = null;
  private again = false;
  private started = false;
  private stopped = false;

  constructor(
    private readonly kernel: Kernel,
    private readonly logger: Logger,
    private readonly handlers: Record<string, JobHandler>,
    private readonly now: () => number,
    private readonly leaseMs = JOB_LEASE_MS,
    private readonly takeoverWaitMs = JOB_TAKEOVER_WAIT_MS,
  ) {}

  private get kinds(): string[] {
    return Object.keys(this.handlers);
  }

  /** Takes over what a dead worker left, then runs every claimable job; later wakes run more. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.recover();
    this.wake();
    await this.idle();
  }

  /** Asks for a pass over the claimable jobs (merged with one already running). */
  wake(): void {
    if (!this.started || this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.kernel
      .detached(() => this.drain())
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Resolves when no pass is running (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.idle();
  }

  private async recover(): Promise<void> {
    const left = await this.kernel.read((tx) => tx.listJobs(['CLAIMED']));
    const mine = left.filter((job) => this.kinds.includes(job.kind));
    if (mine.length === 0) return;
    this.logger.warn('resuming jobs left by a stopped server', {
      jobs: mine.map((j) => `${j.kind}:${j.key}`).join(', '),
    });
    if (this.kernel.shared) {
      await this.kernel.detached(() => this.takeOver());
      return;
    }
    // Only this process uses the store: each CLAIMED job's worker is gone. Claim it as if its
    // lease had run out (the clock far ahead), and run it now.
    for (;;) {
      const job = await this.kernel.write((tx) =>
        tx.claimJob(this.kinds, this.workerId, Number.MAX_SAFE_INTEGER - this.leaseMs, 0),
      );
      if (!job) break;
      await this.run(job);
    }
  }

  /**
   * A shared store: a claim lapses once its instance lost its liveness lock (or its lease ran
   * out), and only then may this worker take the job (PgStore.claimJob). A restart right after a
   * kill can look before PostgreSQL has ended the dead instance's connection, when its lock still
   * looks held; so the starting worker looks again every TAKEOVER_POLL_MS while jobs of its kinds
   * are CLAIMED by someone else, for up to JOB_TAKEOVER_WAIT_MS, running each as soon as its
   * claim lapses. A live instance's job is never taken: it stays CLAIMED (or ends) meanwhile,
   * and after the wait the sweep's wakes keep looking (every sweep re-checks the lock).
   */
  private async takeOver(): Promise<void> {
    const deadline = Date.now() + this.takeoverWaitMs;
    for (;;) {
      await this.drain();
      const others = (await this.kernel.read((tx) => tx.listJobs(['CLAIMED']))).filter(
        (job) => this.kinds.includes(job.kind) && job.workerId !== this.workerId,
      );
      if (others.length === 0 || this.stopped || Date.now() >= deadline) return;
      await new Promise((resolve) => setTimeout(resolve, TAKEOVER_POLL_MS));
    }
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const job = await this.kernel.write((tx) =>
        tx.claimJob(this.kinds, this.workerId, this.now(), this.leaseMs),
      );
      if (!job) return;
      await this.run(job);
    }
  }

  private async run(job: JobRecord): Promise<void> {
    const handler = this.handlers[job.kind];
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      await handler(job);
      await this.kernel.write((tx) => tx.completeJob(job.jobId, this.workerId));
    } catch (error) {
      this.logger.error('job failed', { kind: job.kind, key: job.key, error: String(error) });
      try {
        await this.kernel.write((tx) =>
          tx.failJob(
            job.jobId,
            this.workerId,
            error instanceof Error ? error.message : String(error),
          ),
        );
      } catch (inner) {
        this.logger.error('could not mark a job failed', { key: job.key, error: String(inner) });
      }
    }
  }
}
