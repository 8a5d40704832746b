/**
 * Calls to a source that runs on another instance, through the database (the jobs table).
 *
 * The caller commits a job of kind `source:<sourceId>` (payload: method and JSON arguments) and
 * a notification in one transaction. The instance holding the source's lease (SourceLeases)
 * claims it with FOR UPDATE SKIP LOCKED, runs the method on the real source, writes the result
 * (or the StudioError it threw) to `source_call_results` and completes the job in one
 * transaction, and notifies. A caller that awaits the result wakes on that notification and
 * reads the row. A holder that dies mid-call leaves the job CLAIMED; its claim lapses after
 * `claimMs` and the next holder runs it again (so source methods are called at least once).
 */
import { randomUUID } from 'node:crypto';
import { StudioError } from '../engine/StudioError.ts';
import { RESYNC_CHANNEL } from '../store/postgres/PgStore.ts';
import type { PgStore, PgTx } from '../store/postgres/PgStore.ts';
import type { StoreNotification } from '../store/Store.ts';

/** "A call to source <payload> was enqueued." */
export const SOURCE_CALL_CHANNEL = 'studio_source_call';
/** "The call <payload> (its job key) has a result." */
export const SOURCE_RESULT_CHANNEL = 'studio_source_result';

export type SourceMethod = (method: string, args: unknown[]) => Promise<unknown>;

interface CallPayload {
  method: string;
  args: unknown[];
  /** Whether a caller waits for the result (otherwise none is written). */
  wait: boolean;
}

type Outcome =
  | { ok: true; value: unknown }
  | {
      ok: false;
      error: {
        message: string;
        code: string | null;
        retryable: boolean;
        remediation: string | null;
        field: string | null;
        extensions: Record<string, unknown>;
      };
    };

const kindOf = (sourceId: string) => `source:${sourceId}`;

export class SourceCalls {
  readonly workerId = `source-worker-${randomUUID()}`;
  private readonly served = new Map<string, { handler: SourceMethod | null; run: () => void }>();
  private readonly waiters = new Map<string, () => void>();
  private readonly stopListening: () => void;

  constructor(
    private readonly store: PgStore,
    private readonly options: {
      /** How long a holder's claim on a call lasts (default 10,000 ms). */
      claimMs?: number;
      /** How long an awaited call waits for a holder (default 30,000 ms). */
      timeoutMs?: number;
      onProblem?: (message: string) => void;
    } = {},
  ) {
    this.stopListening = store.listen((n) => this.onNotification(n));
  }

  private onNotification(n: StoreNotification): void {
    if (n.channel === SOURCE_CALL_CHANNEL) this.served.get(n.payload)?.run();
    else if (n.channel === SOURCE_RESULT_CHANNEL) this.waiters.get(n.payload)?.();
    else if (n.channel === RESYNC_CHANNEL) {
      for (const served of this.served.values()) served.run();
      for (const wake of [...this.waiters.values()]) wake();
    }
  }

  /**
   * Calls `method` on the source wherever it runs. With `wait`, resolves with its result (or
   * rejects with its StudioError); without, resolves once the call is committed.
   */
  async call(sourceId: string, method: string, args: unknown[], wait: boolean): Promise<unknown> {
    const key = `sourcecall:${randomUUID()}`;
    const payload: CallPayload = { method, args, wait };
    let woken: () => void = () => undefined;
    const wake = () => woken();
    if (wait) this.waiters.set(key, wake);
    try {
      await this.store.transaction(async (tx) => {
        await tx.enqueueJob({ kind: kindOf(sourceId), key, payload: JSON.stringify(payload) });
        tx.notify(SOURCE_CALL_CHANNEL, sourceId);
      });
      if (!wait) return undefined;
      const deadline = Date.now() + (this.options.timeoutMs ?? 30_000);
      for (;;) {
        const woke = new Promise<void>((resolve) => (woken = resolve));
        const outcome = await this.readResult(key);
        if (outcome) {
          if (outcome.ok) return outcome.value;
          const e = outcome.error;
          if (e.code)
            throw new StudioError(e.code, e.message, {
              retryable: e.retryable,
              ...(e.remediation ? { remediation: e.remediation } : {}),
              ...(e.field ? { field: e.field } : {}),
              extensions: e.extensions,
            });
          throw new Error(e.message);
        }
        const left = deadline - Date.now();
        if (left <= 0)
          throw new StudioError(
            'SOURCE_UNAVAILABLE',
            `No studio instance answered for source ${sourceId} in time`,
            { retryable: true, remediation: 'Try again in a few seconds.' },
          );
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          woke,
          new Promise<void>((resolve) => (timer = setTimeout(resolve, left))),
        ]);
        clearTimeout(timer);
      }
    } finally {
      this.waiters.delete(key);
    }
  }

  private async readResult(key: string): Promise<Outcome | null> {
    const { rows } = await this.store.query<{ result: string }>(
      'DELETE FROM source_call_results WHERE key = $1 RETURNING result',
      [key],
    );
    return rows[0] ? (JSON.parse(rows[0].result) as Outcome) : null;
  }

  /**
   * Runs calls to `sourceId` on `handler` (this instance holds its lease) until the returned
   * function is called. `poke()` runs a pass too (after taking the lease, on each heartbeat, so
   * calls a dead holder left are taken over once their claim lapsed).
   */
  serve(sourceId: string, handler: SourceMethod): () => void {
    let draining: Promise<void> | null = null;
    let again = false;
    const entry = {
      handler: handler as SourceMethod | null,
      run: () => {
        if (!entry.handler) return;
        if (draining) {
          again = true;
          return;
        }
        draining = this.drain(sourceId, entry).finally(() => {
          draining = null;
          if (again) {
            again = false;
            entry.run();
          }
        });
      },
    };
    this.served.set(sourceId, entry);
    entry.run();
    return () => {
      entry.handler = null;
      if (this.served.get(sourceId) === entry) this.served.delete(sourceId);
    };
  }

  /** A pass over the calls waiting for `sourceId` (if this instance serves it). */
  poke(sourceId: string): void {
    this.served.get(sourceId)?.run();
  }

  private async drain(sourceId: string, entry: { handler: SourceMethod | null }): Promise<void> {
    while (entry.handler) {
      let job;
      try {
        job = await this.store.transaction((tx) =>
          tx.claimJob(
            [kindOf(sourceId)],
            this.workerId,
            Date.now(),
            this.options.claimMs ?? 10_000,
          ),
        );
      } catch (error) {
        this.options.onProblem?.(`source calls: ${String(error)}`);
        return;
      }
      if (!job) return;
      const { method, args, wait } = JSON.parse(job.payload) as CallPayload;
      let outcome: Outcome;
      try {
        outcome = { ok: true, value: (await entry.handler(method, args)) ?? null };
      } catch (error) {
        outcome = {
          ok: false,
          error: {
            message: error instanceof Error ? error.message : String(error),
            code: error instanceof StudioError ? error.code : null,
            retryable: error instanceof StudioError ? error.retryable : false,
            remediation: error instanceof StudioError ? error.remediation : null,
            field: error instanceof StudioError ? error.field : null,
            extensions: error instanceof StudioError ? error.extensions : {},
          },
        };
      }
      try {
        await this.store.transaction(async (tx) => {
          if (wait) {
            await (tx as PgTx).sql(
              `INSERT INTO source_call_results (key, result) VALUES ($1, $2)
               ON CONFLICT (key) DO UPDATE SET result = excluded.result`,
              [job.key, JSON.stringify(outcome)],
            );
            tx.notify(SOURCE_RESULT_CHANNEL, job.key);
          } else if (!outcome.ok)
            this.options.onProblem?.(`source ${sourceId} ${method}: ${outcome.error.message}`);
          await tx.completeJob(job.jobId, this.workerId);
        });
      } catch (error) {
        this.options.onProblem?.(`source calls: could not record a result: ${String(error)}`);
      }
    }
  }

  close(): void {
    this.stopListening();
    for (const entry of this.served.values()) entry.handler = null;
    this.served.clear();
  }
}
