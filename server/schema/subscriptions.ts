/**
 * Replay-then-live subscriptions. Each one registers its wake-up listener before its first read,
 * then loops: read the next rows after its cursor from the store, push them, and sleep only when
 * nothing new was committed. `await push` waits for the consumer (the socket), which is the
 * backpressure: a slow client is read for less often instead of buffered for.
 */
import { Repeater } from '@repeaterjs/repeater';
import type { Engine } from '../engine/Engine.ts';
import { StudioError } from '../engine/StudioError.ts';
import { yieldToEventLoop } from '../eventLoop.ts';
import { readEventViews, readSessionWithLinks } from './views.ts';
import type { EventView, SessionView } from './views.ts';
import { EVENT_BATCH_DEFAULT, EVENT_BATCH_MAX, ErrorCode } from '../../protocol/contract.ts';

export interface EventBatch {
  sessionId: string;
  fromSeq: string;
  throughSeq: string;
  events: EventView[];
}

/**
 * Recently read batches per session, so observers at the same cursor get the same object (and
 * execution.ts executes it once for all of them). A full batch never changes; a short one, and
 * an empty read, are reused until the session's next commit notification (which wakes its
 * subscribers after it).
 */
class BatchCache {
  private readonly bySession = new Map<
    string,
    Map<string, { generation: number; batch: EventBatch | null }>
  >();
  /** Commits heard per session (the store's notifications): a short or empty read is current while unchanged. */
  private readonly generations = new Map<string, number>();
  private static readonly PER_SESSION = 64;

  constructor(engine: Engine) {
    engine.notifier.onAnySession((sessionId) =>
      this.generations.set(sessionId, (this.generations.get(sessionId) ?? 0) + 1),
    );
  }

  async read(
    engine: Engine,
    sessionId: string,
    cursor: bigint,
    limit: number,
  ): Promise<EventBatch | null> {
    // Taken before the read: a commit during it moves the generation, so this entry is stale.
    const generation = this.generations.get(sessionId) ?? 0;
    const entries = this.bySession.get(sessionId);
    const key = `${cursor}:${limit}`;
    const hit = entries?.get(key);
    // A full batch never changes; a partial one, or nothing, is current until the session's next
    // commit. Nothing is the common answer: each observer reads again at its new cursor once the
    // socket took its batch, each at its own time (so not in one shared read); remembered, the
    // 50 observers of bench:server's live phase made one empty read per commit instead of 50.
    if (
      hit &&
      ((hit.batch !== null && hit.batch.events.length === limit) || hit.generation === generation)
    )
      return hit.batch;
    // A read of these rows may be under way from before the last commit (a read-ahead): a full
    // batch from it is current whatever was committed since; anything shorter is read again.
    const earlier = this.latestFlight.get(`${sessionId}\u0000${key}`);
    if (earlier && earlier.generation !== generation) {
      const batch = await earlier.flight.catch(() => null);
      if (batch !== null && batch.events.length === limit) return batch;
    }
    // Observers woken by the same commit ask for the same rows at once: they share one read
    // (started after the notification each of them heard, so it sees that commit), and so one
    // batch object and one execution of it. Without this, 50 observers on PostgreSQL made 50
    // queries per commit and queued for the pool, then 50 executions (live p99 ~870 ms).
    const flightKey = `${sessionId}\u0000${key}\u0000${generation}`;
    let flight = this.inFlight.get(flightKey);
    if (!flight) {
      const started = this.load(engine, sessionId, cursor, limit, key, generation);
      flight = started;
      const latestKey = `${sessionId}\u0000${key}`;
      this.inFlight.set(flightKey, started);
      this.latestFlight.set(latestKey, { generation, flight: started });
      const clear = () => {
        this.inFlight.delete(flightKey);
        if (this.latestFlight.get(latestKey)?.flight === started)
          this.latestFlight.delete(latestKey);
      };
      started.then(clear, clear);
    }
    return flight;
  }

  /**
   * Starts reading the batch after a full one while that one is sent: a subscription that is
   * behind (a replay) then waits for the store only once. PostgreSQL answers on its own
   * process, so its query time leaves the server thread's path; SQLite reads on this thread, so
   * there it only moves the read earlier. At most one batch ahead per cursor, shared like any
   * read; a failure is left to the subscription's own read of the same rows.
   */
  readAhead(engine: Engine, sessionId: string, cursor: bigint, limit: number): void {
    this.read(engine, sessionId, cursor, limit).catch(() => undefined);
  }

  private readonly inFlight = new Map<string, Promise<EventBatch | null>>();
  /** The newest read in flight per session and rows, whatever its generation (see `read`). */
  private readonly latestFlight = new Map<
    string,
    { generation: number; flight: Promise<EventBatch | null> }
  >();

  private readonly frames = new Map<string, Promise<void>>();
  /**
   * The end of the session's current coalescing frame (LIVE_COALESCE_MS after the first woken
   * subscription asked): every batch subscription woken by the same commits waits for the same
   * timer, so they all read at the same cursor and generation at once and share one read.
   */
  frame(sessionId: string): Promise<void> {
    let frame = this.frames.get(sessionId);
    if (!frame) {
      frame = new Promise<void>((resolve) =>
        setTimeout(() => {
          this.frames.delete(sessionId);
          resolve();
        }, LIVE_COALESCE_MS),
      );
      this.frames.set(sessionId, frame);
    }
    return frame;
  }

  private async load(
    engine: Engine,
    sessionId: string,
    cursor: bigint,
    limit: number,
    key: string,
    generation: number,
  ): Promise<EventBatch | null> {
    const events = await readEventViews(engine.reads, sessionId, cursor, limit);
    const first = events[0];
    const last = events[events.length - 1];
    const batch: EventBatch | null =
      first && last ? { sessionId, fromSeq: first.seq, throughSeq: last.seq, events } : null;
    let entries = this.bySession.get(sessionId);
    if (!entries) {
      entries = new Map();
      this.bySession.set(sessionId, entries);
    }
    entries.delete(key);
    entries.set(key, { generation, batch });
    if (entries.size > BatchCache.PER_SESSION) entries.delete(entries.keys().next().value!);
    return batch;
  }
}

const batches = new WeakMap<Engine, BatchCache>();

function batchCache(engine: Engine): BatchCache {
  let cache = batches.get(engine);
  if (!cache) {
    cache = new BatchCache(engine);
    batches.set(engine, cache);
  }
  return cache;
}

/** How long a woken batch subscription waits for more commits before it reads (one frame). */
const LIVE_COALESCE_MS = 16;

/** A value a subscription yields when it has to end with an error (the resolver throws it). */
export type Terminal = StudioError;

async function checkCursor(
  engine: Engine,
  sessionId: string,
  afterSeq: string,
  clientEpoch: string | null,
) {
  const session = await engine.requireSession(sessionId);
  if (clientEpoch !== null) await engine.requireAttached(sessionId, clientEpoch);
  if (BigInt(afterSeq) > BigInt(session.lastEventSeq))
    throw new StudioError(
      ErrorCode.EVENT_CURSOR_INVALID,
      `afterSeq ${afterSeq} is past the committed history (last seq ${session.lastEventSeq}).`,
      { field: 'afterSeq', remediation: 'Resume from the last seq you applied.' },
    );
}

function staleError(clientEpoch: string, attached: string | null): StudioError {
  return new StudioError(
    ErrorCode.CLIENT_EPOCH_STALE,
    attached
      ? `Epoch ${clientEpoch} was fenced by a newer attachment (epoch ${attached}).`
      : `Epoch ${clientEpoch} is no longer attached.`,
    { remediation: 'Attach again to act on this session.' },
  );
}

/**
 * Events with seq > afterSeq, in order, then live commits. `batch` delivers arrays of up to
 * maxBatch events; otherwise one event per push. With a clientEpoch the stream ends with
 * AGENT_CLIENT_EPOCH_STALE as soon as that epoch is fenced or detached.
 */
export async function eventStream(
  engine: Engine,
  args: {
    sessionId: string;
    afterSeq: string;
    clientEpoch: string | null;
    maxBatch: number | null;
  },
  batch: boolean,
): Promise<Repeater<EventBatch | EventView | Terminal>> {
  await checkCursor(engine, args.sessionId, args.afterSeq, args.clientEpoch);
  const limit = Math.max(1, Math.min(args.maxBatch ?? EVENT_BATCH_DEFAULT, EVENT_BATCH_MAX));
  const cache = batchCache(engine);
  return new Repeater<EventBatch | EventView | Terminal>(async (push, stop) => {
    let dirty: boolean;
    let stopped = false;
    let wake: (() => void) | null = null;
    const unlisten = engine.notifier.onSession(args.sessionId, () => {
      dirty = true;
      wake?.();
    });
    const unclose = engine.notifier.onClose(() => stop());
    void stop.then(() => {
      stopped = true;
      wake?.();
    });
    let cursor = BigInt(args.afterSeq);
    try {
      while (!stopped) {
        dirty = false;
        const next = batch ? await cache.read(engine, args.sessionId, cursor, limit) : null;
        const events = batch
          ? []
          : await readEventViews(engine.reads, args.sessionId, cursor, limit);
        // The epoch is checked after the read, not before: the attachment that fences this one
        // commits its CLIENT_ATTACHED with the new epoch, so a read that saw that event is
        // followed by a check that sees the epoch. Checked first, a commit between the two
        // reads (two snapshots on PostgreSQL) let the fenced stream deliver the new attachment.
        if (args.clientEpoch !== null) {
          const session = await engine.reads.getSession(args.sessionId);
          if (session?.attachedEpoch !== args.clientEpoch) {
            await push(staleError(args.clientEpoch, session?.attachedEpoch ?? null));
            break;
          }
        }
        if (next) {
          cursor = BigInt(next.throughSeq);
          // A full batch: the subscription is behind, so the next one is read while this one goes.
          if (next.events.length === limit) cache.readAhead(engine, args.sessionId, cursor, limit);
          await push(next);
          await yieldToEventLoop();
          continue;
        }
        const last = events[events.length - 1];
        if (last) {
          cursor = BigInt(last.seq);
          for (const event of events) {
            if (stopped) break;
            await push(event);
          }
          await yieldToEventLoop();
          continue;
        }
        if (!dirty && !stopped) await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
        // Live commits arrive a few at a time: gathering one frame's worth turns many small
        // pushes (and client cache writes) into one batch, for at most LIVE_COALESCE_MS latency.
        if (batch && !stopped) await cache.frame(args.sessionId);
      }
    } finally {
      unlisten();
      unclose();
    }
    stop();
  });
}

/** The app's sessions as they change (coalesced: each wake pushes the latest state once). */
export function sessionUpdates(engine: Engine, appId: string): Repeater<SessionView> {
  engine.requireApp(appId);
  return new Repeater<SessionView>(async (push, stop) => {
    const dirty = new Set<string>();
    let stopped = false;
    let wake: (() => void) | null = null;
    const unlisten = engine.notifier.onSessionUpdate((sessionId) => {
      dirty.add(sessionId);
      wake?.();
    });
    const unclose = engine.notifier.onClose(() => stop());
    void stop.then(() => {
      stopped = true;
      wake?.();
    });
    try {
      while (!stopped) {
        const next = dirty.values().next();
        if (!next.done) {
          dirty.delete(next.value);
          // The session and what its fields link to (runs, pending approvals) come from one
          // snapshot: on a store with concurrent writers, separate reads could mix two commits.
          const sessionId = next.value;
          const view = await engine.snapshot((reads) => readSessionWithLinks(reads, sessionId));
          if (view && view.appId === appId) await push(view);
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
        // A live session commits many times a second; one push per frame carries the latest state.
        if (!stopped) await new Promise<void>((resolve) => setTimeout(resolve, LIVE_COALESCE_MS));
      }
    } finally {
      unlisten();
      unclose();
    }
    stop();
  });
}
