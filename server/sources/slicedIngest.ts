/**
 * Bridge ingest in bounded slices with group commit. A bridge that applied a burst of frames one
 * promise after another kept the event loop busy for seconds (no HTTP request answered) and paid
 * one fsync'd transaction per frame. Here frames wait in an inbox; a drain applies them in slices
 * of at most `maxItems` items or `maxMs` milliseconds, each slice inside one store transaction
 * (`SourceHost.groupCommit`: every append in it joins, one fsync), and yields to the event loop
 * (setImmediate, so timers, sockets and HTTP run) before the next slice.
 *
 * Items are applied strictly in order. An item whose application needs asynchronous work first
 * (`prepare`, e.g. reading a new run over REST) ends the slice; the work runs outside any
 * transaction and the item is applied in the next slice. Asynchronous work after an item (`apply`
 * returning a function, e.g. a checkpoint after a finished tool call) runs after the slice
 * committed, before the next item.
 */
import type { EventDraft, StoredEvent } from '../engine/eventDrafts.ts';
import { yieldToEventLoop } from '../eventLoop.ts';
import { appendSafely } from './bridgeSupport.ts';
import type { GroupCommitOptions, SourceHost } from './Source.ts';

export interface SlicedIngestOptions<T> {
  host: SourceHost;
  /**
   * Applies one item (its appends join the slice's transaction; it awaits nothing but the
   * host); may return work to run after the commit.
   */
  apply: (item: T) => Promise<void | (() => Promise<void>)>;
  /** Work that must finish before the item can be applied (null when none). Called once per item. */
  prepare?: (item: T) => (() => Promise<void>) | null;
  /** A failure of one item (it is logged and skipped; the others go on). */
  onError: (error: unknown) => void;
  /** Items per slice (default 2,000). */
  maxItems?: number;
  /**
   * Milliseconds of applying per slice (default 25). The slice's commit (its one fsync) comes on
   * top, and every slice pays one: 8 ms slices spent about a quarter of a burst's time in
   * commits (bench:ingest profile); 25 ms plus a commit still answers /healthz well within 100 ms.
   */
  maxMs?: number;
}

export const DEFAULT_SLICE_ITEMS = 2_000;
export const DEFAULT_SLICE_MS = 25;

/**
 * A host whose appends, inside a slice, are gathered and handed to the engine as one append per
 * run of consecutive drafts of one session (a burst of 500 frames is a few appends, not 500:
 * each append costs a validation pass, a savepoint and the engine's per-append bookkeeping).
 * Order is kept: a draft for another session, or any read of the store through this host other
 * than `hasForeignId` (which also looks at what is gathered), first hands over what was gathered.
 * The engine applies a gathered append draft by draft, exactly as it applies separate appends
 * (its own foreignId check, revocations and rules per draft); a refused one falls back to draft
 * by draft through appendSafely. Outside a slice every call goes straight to the host.
 */
/** Drafts gathered before they are handed to the engine as one append. */
const GATHER_MAX_DRAFTS = 50;

class BatchingHost {
  readonly host: SourceHost;
  private readonly inner: SourceHost;
  private batching = false;
  private sessionId: string | null = null;
  private drafts: EventDraft[] = [];
  private foreignIds = new Set<string>();

  constructor(inner: SourceHost) {
    this.inner = inner;
    const flushing =
      <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        await this.flush();
        return fn(...args);
      };
    this.host = {
      logger: inner.logger,
      now: () => inner.now(),
      ensureSession: flushing((spec) => inner.ensureSession(spec)),
      findSession: flushing((id) => inner.findSession(id)),
      append: (id, drafts) => this.append(id, drafts),
      hasForeignId: async (id, foreignId) =>
        (this.sessionId === id && this.foreignIds.has(foreignId)) ||
        inner.hasForeignId(id, foreignId),
      findQuestion: flushing((id, questionId) => inner.findQuestion(id, questionId)),
      ...(inner.findApproval
        ? {
            findApproval: flushing((id: string, toolCallId: string) =>
              inner.findApproval!(id, toolCallId),
            ),
          }
        : {}),
      ...(inner.groupCommit
        ? {
            groupCommit: <R>(fn: () => Promise<R>, options?: GroupCommitOptions) =>
              this.groupCommit(fn, options),
          }
        : {}),
      ...(inner.proposalDiff
        ? {
            proposalDiff: (
              id: string,
              changes: Parameters<NonNullable<SourceHost['proposalDiff']>>[1],
            ) => inner.proposalDiff!(id, changes),
          }
        : {}),
      setStatus: (status, detail) => inner.setStatus(status, detail),
    };
  }

  /** Runs one slice: inside the host's group commit, gathering appends, handed over at its end. */
  async groupCommit<R>(fn: () => Promise<R>, options?: GroupCommitOptions): Promise<R> {
    if (this.batching || !this.inner.groupCommit) return fn();
    return this.inner.groupCommit(async () => {
      this.batching = true;
      let result: R;
      try {
        result = await fn();
      } finally {
        this.batching = false;
      }
      await this.flush();
      return result;
    }, options);
  }

  private async append(sessionId: string, drafts: EventDraft[]): Promise<StoredEvent[]> {
    if (!this.batching) return this.inner.append(sessionId, drafts);
    if (this.sessionId !== sessionId) await this.flush();
    this.sessionId = sessionId;
    for (const draft of drafts) {
      this.drafts.push(draft);
      if (draft.foreignId !== undefined) this.foreignIds.add(draft.foreignId);
    }
    // Handed over in bounded appends, so the slice's time bound still sees the cost of its work.
    if (this.drafts.length >= GATHER_MAX_DRAFTS) await this.flush();
    // Gathered, not stored yet: nothing is stored to return (the bridges ignore it).
    return [];
  }

  private async flush(): Promise<void> {
    const sessionId = this.sessionId;
    const drafts = this.drafts;
    this.sessionId = null;
    this.drafts = [];
    this.foreignIds = new Set();
    if (sessionId === null || drafts.length === 0) return;
    // The drafts were scrubbed by the appendSafely that gathered them; this one keeps its fallback.
    await appendSafely(this.inner, sessionId, drafts);
  }
}

export class SlicedIngest<T> {
  private readonly options: SlicedIngestOptions<T>;
  private readonly batching: BatchingHost;
  private inbox: T[] = [];
  private head = 0;
  /** The index of the item whose `prepare` already ran (it is applied without asking again). */
  private prepared = -1;
  private running: Promise<void> | null = null;
  private stopped = false;
  /** Who waits for the inbox to shrink (`whenPendingAtMost`), checked after every slice. */
  private waiters: { atMost: number; resolve: () => void }[] = [];

  constructor(options: SlicedIngestOptions<T>) {
    this.options = options;
    this.batching = new BatchingHost(options.host);
  }

  /**
   * The host a source should use for everything it does (in and out of slices): inside a slice
   * its appends are gathered into few engine appends, in order; outside, it is the host itself.
   */
  get host(): SourceHost {
    return this.batching.host;
  }

  /** Items waiting to be applied. */
  get pending(): number {
    return this.inbox.length - this.head;
  }

  /** Queues items; the returned promise settles once the inbox is empty (never rejects). */
  push(...items: T[]): Promise<void> {
    if (this.stopped) return Promise.resolve();
    for (const item of items) this.inbox.push(item);
    if (!this.running) this.running = this.drain();
    return this.running;
  }

  /**
   * Resolves once at most `atMost` items wait (at once if that is so now): a source that reads
   * a socket pauses it on a backlog and resumes here, so a burst waits in the peer's socket
   * buffers (TCP backpressure) instead of being parsed into this process all at once.
   */
  whenPendingAtMost(atMost: number): Promise<void> {
    if (this.stopped || this.pending <= atMost) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ atMost, resolve }));
  }

  private wakeWaiters(): void {
    if (this.waiters.length === 0) return;
    const pending = this.stopped ? 0 : this.pending;
    const still: typeof this.waiters = [];
    for (const waiter of this.waiters)
      if (pending <= waiter.atMost) waiter.resolve();
      else still.push(waiter);
    this.waiters = still;
  }

  /** Settles once everything queued so far was applied. */
  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  /** Drops what is still queued; the drain ends after its current slice. */
  stop(): void {
    this.stopped = true;
    this.inbox = [];
    this.head = 0;
    this.wakeWaiters();
  }

  private async drain(): Promise<void> {
    const maxItems = this.options.maxItems ?? DEFAULT_SLICE_ITEMS;
    const maxMs = this.options.maxMs ?? DEFAULT_SLICE_MS;
    // The last slice: committed, its sync (SQLite's WAL fdatasync, off the event loop) maybe
    // still running. The next slice applies meanwhile; the one after waits for it, so at most
    // two slices are ever committed but not yet on disk. Nothing is acknowledged by a slice.
    let syncing: Promise<void> | null = null;
    for (;;) {
      // Yield first: the caller's synchronous code finishes and pending I/O gets its turn.
      await yieldToEventLoop();
      if (syncing && (this.stopped || this.head >= this.inbox.length)) {
        // The inbox settles only once what it applied is on disk; then look again.
        await syncing;
        syncing = null;
        continue;
      }
      if (this.stopped || this.head >= this.inbox.length) {
        // Checked and cleared in one synchronous step, so a push after this starts a new drain.
        this.running = null;
        this.inbox = [];
        this.head = 0;
        this.prepared = -1;
        this.wakeWaiters();
        return;
      }
      let after: (() => Promise<void>) | null = null;
      let before: (() => Promise<void>) | null = null;
      const deadline = performance.now() + maxMs;
      const slice = async () => {
        for (let n = 0; n < maxItems && this.head < this.inbox.length; n += 1) {
          if (n > 0 && performance.now() >= deadline) break;
          const item = this.inbox[this.head] as T;
          if (this.prepared !== this.head) {
            const work = this.options.prepare?.(item) ?? null;
            if (work) {
              this.prepared = this.head;
              before = work;
              return;
            }
          }
          this.head += 1;
          try {
            const work = await this.options.apply(item);
            if (work) {
              after = work;
              return;
            }
          } catch (error) {
            this.options.onError(error);
          }
        }
      };
      const headBefore = this.head;
      let committed!: () => void;
      const commitSeen = new Promise<void>((resolve) => (committed = resolve));
      const done = (
        this.options.host.groupCommit
          ? this.batching.groupCommit(slice, { onCommitted: committed })
          : slice()
      ).then(
        () => undefined,
        (error: unknown) => {
          // The slice's transaction failed as a whole (disk full, say): logged; the rest goes on.
          this.options.onError(error);
          // Never retry forever an item that fails before it could be applied.
          if (this.head === headBefore && !before) this.head += 1;
        },
      );
      // On as soon as the slice committed (or settled, for a host that does not say).
      await Promise.race([commitSeen, done]);
      if (syncing) await syncing;
      syncing = done;
      if (this.head > 4096 && this.head * 2 > this.inbox.length) {
        this.inbox = this.inbox.slice(this.head);
        if (this.prepared >= this.head) this.prepared -= this.head;
        else this.prepared = -1;
        this.head = 0;
      }
      this.wakeWaiters();
      const work: (() => Promise<void>) | null = after ?? before;
      if (work) {
        // Work between items runs once what came before it is on disk, as it always did.
        await syncing;
        syncing = null;
        try {
          await (work as () => Promise<void>)();
        } catch (error) {
          this.options.onError(error);
        }
      }
    }
  }
}

/** A stream that can stop and restart reading (a `ws` WebSocket, a net.Socket, a Readable). */
export interface Pausable {
  pause(): void;
  resume(): void;
}

/**
 * Backpressure from an inbox to the socket that fills it: past `high` waiting items the socket
 * is paused (the peer's sends wait in the kernel's buffers and then its own), and resumed once
 * the inbox is down to `low`. Without it a burst was read and parsed into the process as fast
 * as it arrived, for hundreds of milliseconds at a time while nothing else ran (bench:ingest).
 */
export class SocketBackpressure {
  private paused = false;
  private armed = false;

  constructor(
    private readonly ingest: Pick<SlicedIngest<unknown>, 'pending' | 'whenPendingAtMost'>,
    private readonly stream: Pausable,
    private readonly high = 2 * DEFAULT_SLICE_ITEMS,
    private readonly low = DEFAULT_SLICE_ITEMS,
  ) {}

  /**
   * Call after each item is queued. `outside`: items that wait outside the inbox, not handed to
   * it yet (a bridge catching up buffers frames); the socket then resumes after `handedOver`.
   */
  check(outside = 0): void {
    if (this.paused || outside + this.ingest.pending < this.high) return;
    this.paused = true;
    this.stream.pause();
    if (outside === 0) this.resumeWhenDrained();
  }

  /** The items that waited outside are in the inbox now. */
  handedOver(): void {
    if (this.paused) this.resumeWhenDrained();
  }

  private resumeWhenDrained(): void {
    if (this.armed) return;
    this.armed = true;
    void this.ingest.whenPendingAtMost(this.low).then(() => {
      this.armed = false;
      this.paused = false;
      this.stream.resume();
    });
  }
}
