/**
 * Which instance runs each source, when several studio servers share one PostgreSQL database.
 *
 * A source (the demo agent, a bridge, a Claude Code session) must run on exactly one instance at
 * a time. Each has one row in `source_leases` (holder, expiry). An instance takes a row with a
 * conditional upsert that succeeds only when the row is free, expired or already its own, and
 * renews it every `renewMs` (a heartbeat). Expiry is the database's clock, so instances never
 * compare their own clocks. When the holder dies (kill -9, a lost network) its row expires after
 * `ttlMs` and the next heartbeat of another instance takes it: the source moves within
 * ttlMs + renewMs. A holder that cannot renew in time (the database unreachable) stops the source
 * itself before its row can expire, so two instances never both believe they run it. A graceful
 * stop releases the row at once.
 *
 * Each take bumps `generation`, so a holder can tell a row it kept from one it lost and took back.
 */
import type { PgStore } from './PgStore.ts';

export interface SourceLeaseOptions {
  /** This instance's name in the row (unique per process). */
  holder: string;
  /** How long a taken row lasts without renewal (default 3,000 ms). */
  ttlMs?: number;
  /** Heartbeat period (default 1,000 ms; under ttlMs / 2). */
  renewMs?: number;
  /** The source is now this instance's to run. */
  onAcquired(sourceId: string, generation: number): void | Promise<void>;
  /** The source is no longer this instance's (lost, or this instance is stopping). */
  onLost(sourceId: string): void | Promise<void>;
  onProblem?(message: string): void;
  /** After each heartbeat (the holder takes over calls a dead holder left). */
  onBeat?(): void;
}

const NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

export class SourceLeases {
  private readonly wanted = new Set<string>();
  private readonly held = new Map<string, { generation: number; renewedAt: number }>();
  private timer: NodeJS.Timeout | null = null;
  private beat: Promise<void> | null = null;
  /** onAcquired callbacks still running, by source. */
  private readonly starting = new Map<string, Promise<void>>();
  private stopped = false;
  readonly ttlMs: number;
  readonly renewMs: number;

  constructor(
    private readonly store: PgStore,
    private readonly options: SourceLeaseOptions,
  ) {
    this.ttlMs = options.ttlMs ?? 3_000;
    this.renewMs = options.renewMs ?? 1_000;
    if (this.renewMs * 2 > this.ttlMs) throw new Error('renewMs must be at most ttlMs / 2');
  }

  /** Competes for `sourceId` from now on (the first attempt runs at once). */
  async want(sourceId: string): Promise<void> {
    this.wanted.add(sourceId);
    if (!this.timer && !this.stopped)
      this.timer = setInterval(() => void this.heartbeat(), this.renewMs);
    await this.heartbeat();
    // Taken at once: the caller waits until the source started (the renewals go on meanwhile).
    await this.starting.get(sourceId);
  }

  holds(sourceId: string): boolean {
    return this.held.has(sourceId);
  }

  /** The instance holding `sourceId` now (null when free or expired). */
  async holderOf(sourceId: string): Promise<string | null> {
    const { rows } = await this.store.query<{ holder: string }>(
      `SELECT holder FROM source_leases WHERE source_id = $1 AND expires_at_ms > ${NOW_MS}`,
      [sourceId],
    );
    return rows[0]?.holder ?? null;
  }

  /** One heartbeat: renew what is held, try to take what is wanted. Runs one at a time. */
  heartbeat(): Promise<void> {
    this.beat ??= this.beatOnce().finally(() => {
      this.beat = null;
      if (!this.stopped) this.options.onBeat?.();
    });
    return this.beat;
  }

  private async beatOnce(): Promise<void> {
    for (const sourceId of this.wanted) {
      if (this.stopped) return;
      let generation: number | null;
      try {
        generation = await this.take(sourceId);
      } catch (error) {
        this.options.onProblem?.(
          `source lease ${sourceId}: ${error instanceof Error ? error.message : String(error)}`,
        );
        const mine = this.held.get(sourceId);
        // Unrenewed for most of the TTL: another instance may take it soon, so stop first.
        if (mine && Date.now() - mine.renewedAt > this.ttlMs - this.renewMs)
          await this.lose(sourceId);
        continue;
      }
      const mine = this.held.get(sourceId);
      if (generation === null) {
        if (mine) await this.lose(sourceId);
      } else if (!mine || mine.generation !== generation) {
        if (mine) await this.lose(sourceId);
        this.held.set(sourceId, { generation, renewedAt: Date.now() });
        // Not awaited: starting a source (the demo seeds its sessions) may outlast the TTL, and
        // the heartbeats must renew the row meanwhile or the holder would lose its own lease.
        const started = this.run(() => this.options.onAcquired(sourceId, generation));
        this.starting.set(sourceId, started);
        void started.then(() => {
          if (this.starting.get(sourceId) === started) this.starting.delete(sourceId);
        });
      } else mine.renewedAt = Date.now();
    }
  }

  /** Takes or renews the row; its generation, or null when another live holder has it. */
  private async take(sourceId: string): Promise<number | null> {
    const { rows } = await this.store.query<{ generation: string }>(
      `INSERT INTO source_leases AS l (source_id, holder, expires_at_ms, acquired_at_ms)
       VALUES ($1, $2, ${NOW_MS} + $3::bigint, ${NOW_MS})
       ON CONFLICT (source_id) DO UPDATE SET
         holder = excluded.holder,
         expires_at_ms = excluded.expires_at_ms,
         acquired_at_ms = CASE WHEN l.holder = excluded.holder AND l.expires_at_ms > ${NOW_MS}
                               THEN l.acquired_at_ms ELSE excluded.acquired_at_ms END,
         generation = l.generation + CASE WHEN l.holder = excluded.holder AND l.expires_at_ms > ${NOW_MS}
                                          THEN 0 ELSE 1 END
       WHERE l.holder = excluded.holder OR l.expires_at_ms <= ${NOW_MS}
       RETURNING generation`,
      [sourceId, this.options.holder, this.ttlMs],
    );
    return rows[0] ? Number(rows[0].generation) : null;
  }

  private async lose(sourceId: string): Promise<void> {
    if (!this.held.delete(sourceId)) return;
    await this.run(() => this.options.onLost(sourceId));
  }

  private async run(fn: () => void | Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (error) {
      this.options.onProblem?.(
        `source lease callback failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /** Stops competing: every held source is stopped (onLost), then its row released at once. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beat?.catch(() => undefined);
    // A source still starting stops after its start (onLost follows onAcquired).
    await Promise.all(this.starting.values());
    for (const sourceId of [...this.held.keys()]) {
      await this.lose(sourceId);
      await this.store
        .query('UPDATE source_leases SET expires_at_ms = 0 WHERE source_id = $1 AND holder = $2', [
          sourceId,
          this.options.holder,
        ])
        .catch(() => undefined);
    }
  }

  /** Test hook: stops the heartbeat without releasing (as a frozen or killed process would). */
  freeze(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
