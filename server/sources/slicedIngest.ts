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
import type { SourceHost } from './Source.ts';

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
  /** Items per slice (default 500). */
  maxItems?: number;
  /** Milliseconds per slice (default 8). */
  maxMs?: number;
}

export const DEFAULT_SLICE_ITEMS = 500;
export const DEFAULT_SLICE_MS = 8;

/** Resolves on the next turn of the event loop, after pending I/O callbacks. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class SlicedIngest<T> {
  private readonly options: SlicedIngestOptions<T>;
  private inbox: T[] = [];
  private head = 0;
  /** The index of the item whose `prepare` already ran (it is applied without asking again). */
  private prepared = -1;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(options: SlicedIngestOptions<T>) {
    this.options = options;
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

  /** Settles once everything queued so far was applied. */
  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  /** Drops what is still queued; the drain ends after its current slice. */
  stop(): void {
    this.stopped = true;
    this.inbox = [];
    this.head = 0;
  }

  private async drain(): Promise<void> {
    const maxItems = this.options.maxItems ?? DEFAULT_SLICE_ITEMS;
    const maxMs = this.options.maxMs ?? DEFAULT_SLICE_MS;
    for (;;) {
      // Yield first: the caller's synchronous code finishes and pending I/O gets its turn.
      await yieldToEventLoop();
      if (this.stopped || this.head >= this.inbox.length) {
        // Checked and cleared in one synchronous step, so a push after this starts a new drain.
        this.running = null;
        this.inbox = [];
        this.head = 0;
        this.prepared = -1;
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
      try {
        const host = this.options.host;
        if (host.groupCommit) await host.groupCommit(slice);
        else await slice();
      } catch (error) {
        // The slice's transaction failed as a whole (disk full, say): logged; the rest goes on.
        this.options.onError(error);
        // Never retry forever an item that fails before it could be applied.
        if (this.head === headBefore && !before) this.head += 1;
      }
      if (this.head > 4096 && this.head * 2 > this.inbox.length) {
        this.inbox = this.inbox.slice(this.head);
        if (this.prepared >= this.head) this.prepared -= this.head;
        else this.prepared = -1;
        this.head = 0;
      }
      const work: (() => Promise<void>) | null = after ?? before;
      if (work) {
        try {
          await (work as () => Promise<void>)();
        } catch (error) {
          this.options.onError(error);
        }
      }
    }
  }
}
