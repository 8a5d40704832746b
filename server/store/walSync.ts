/**
 * Group commit for the SQLite writer: its COMMIT writes the WAL frames (synchronous=NORMAL, no
 * fsync on the event loop) and this makes them durable with `fdatasync` of the WAL file on
 * libuv's thread pool. A transaction is acknowledged, and its notifications delivered, only once
 * a sync that started after its COMMIT has finished, so "nothing acknowledged before it is on
 * disk" holds as it did with synchronous=FULL; commits made while one sync runs share the next.
 *
 * Why not FULL: FULL fsyncs the WAL inside COMMIT, on the event loop. Under disk contention (the
 * checkpoint worker's fsync of the database file, other processes) one such fsync held the loop
 * for 100–1,000 ms during a bridge burst, and `/healthz` with it (issue 9, bench:ingest).
 *
 * The descriptor stays open for the store's lifetime: SQLite keeps the WAL file (it truncates
 * or deletes it only when the last connection closes), and fsync of any descriptor of a file
 * flushes every write made to it through any other (Linux: the page cache is per file).
 */
import { closeSync, fdatasync, fdatasyncSync, openSync } from 'node:fs';

export class WalSync {
  private readonly fd: number;
  /** Commits counted so far, and how many of them a finished sync covers. */
  private committed = 0;
  private synced = 0;
  private running: Promise<void> | undefined;
  private closed = false;

  constructor(walFile: string) {
    this.fd = openSync(walFile, 'r');
  }

  /** Counts a COMMIT that just returned; `durable(n)` resolves once it is on disk. */
  commit(): number {
    return ++this.committed;
  }

  /** True when every counted commit is on disk (a reader may start without waiting). */
  get idle(): boolean {
    return this.synced >= this.committed;
  }

  /** Resolves once commit number `upTo` (and every one before it) is on disk. */
  async durable(upTo: number = this.committed): Promise<void> {
    while (this.synced < upTo) {
      this.running ??= this.syncOnce();
      await this.running;
    }
  }

  /** One fdatasync covering every commit counted before it started. */
  private async syncOnce(): Promise<void> {
    const covers = this.committed;
    try {
      await new Promise<void>((resolve, reject) => {
        fdatasync(this.fd, (error) => (error ? reject(error) : resolve()));
      });
    } catch (error) {
      // A thread-pool sync that failed gets one retry here, synchronously; if that fails too
      // the commit's caller hears it (the write is in the WAL but not known to be on disk).
      try {
        fdatasyncSync(this.fd);
      } catch {
        throw new Error(
          `could not make the commit durable (fdatasync of the WAL failed: ${String((error as Error).message)})`,
        );
      }
    } finally {
      this.running = undefined;
    }
    if (covers > this.synced) this.synced = covers;
  }

  /** Syncs now, on this thread (start-up migrations, before the store serves anything). */
  syncNow(): void {
    fdatasyncSync(this.fd);
    this.synced = this.committed;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}
