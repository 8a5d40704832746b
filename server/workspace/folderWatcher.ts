/**
 * A project folder's watcher (Linux inotify through Node's own `fs.watch`, one watch per
 * directory the scan walks): it records the paths events named since the last scan, so a
 * checkpoint whose watcher is known complete re-stats only those, not every file (the way git's
 * fsmonitor and watchman spare a full rescan). TreeScanner decides what a dirty path means; this
 * file only keeps the watches, the dirty paths and whether they can be trusted.
 *
 * Trust (see docs/ARCHITECTURE.md, "The folder watcher"): the dirty paths are used only when
 * - a full scan has completed with the watcher in place (every directory the scan walks is
 *   watched before it is listed, so nothing it did not see can change unnoticed afterwards);
 * - a cookie has come back since the checkpoint was asked for: a uniquely named file created in
 *   a studio-owned side folder, watched by the same inotify instance (libuv has one per event
 *   loop and the kernel queues its events in order), so every event of a change made before the
 *   checkpoint has been read when the cookie's is ([sync]);
 * - nothing since the last full scan can have lost an event: no watch failed, no watcher
 *   reported an error, no possible queue overflow. libuv reads the inotify queue whole on each
 *   wake-up and drops the kernel's IN_Q_OVERFLOW (it names no watch), so an overflow is inferred:
 *   the kernel queues at most `max_queued_events` (16,384 here) before it overflows, so a single
 *   drain of at least half that many events is taken as a possible overflow.
 * Otherwise the scan is a full one, exactly as without a watcher. A watch that cannot be added
 * (the watch limit, a folder inotify cannot watch) turns the watcher off for good: full scans.
 *
 * Watches are not `persistent` (a leaked one never keeps the process alive) and are all released
 * by [close].
 */
import * as fs from 'node:fs';
import { basename, join } from 'node:path';
import { TEMP_PREFIX } from './durableFs.ts';

/** Why the last scan could not trust the watcher (null: it did). */
export type WatchDistrust =
  | 'not watching'
  | 'no full scan yet'
  | 'possible overflow'
  | 'watcher error'
  | 'scan failed'
  | 'cookie timeout'
  | 'cookie failed'
  | 'not synced'
  | 'watch failed'
  | 'closed';

/** What one scan may use: the dirty paths when it may trust them, else null (a full scan). */
export interface WatchScan {
  /** Paths (relative, `/`-separated) events named since the previous scan; null: full scan. */
  dirty: ReadonlySet<string> | null;
  /** Why `dirty` is null. */
  distrust: WatchDistrust | null;
  /**
   * Watches `rel` (before it is listed) unless it already is, as the directory `id`
   * (`dev:ino`); `force` replaces a watch that exists. True when the watch is new: events before
   * it were not seen, so the caller walks the directory whole. Never throws: a failure turns the
   * watcher off (full scans from then on) and still answers true.
   */
  ensure(rel: string, id: string | null, force: boolean): boolean;
  /** True when `rel` has a watch that no event has put in doubt (it is kept after the scan). */
  has(rel: string): boolean;
  /** `has` without keeping the watch. */
  peek(rel: string): boolean;
  /** Ends the scan: `ok` false (it threw) makes the next scan a full one. */
  end(ok: boolean): void;
}

interface Watch {
  handle: fs.FSWatcher;
  /** `dev:ino` of the directory when the watch was added. */
  id: string | null;
  /** The scan that last walked the directory (others are closed at the end of a scan). */
  mark: number;
  /** An event may have been about the directory itself (deleted, moved): replace the watch. */
  suspect: boolean;
}

/** Events drained in one go from which an overflow is assumed (half the kernel's queue). */
const OVERFLOW_BURST = (() => {
  try {
    const n = Number(fs.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim());
    if (Number.isSafeInteger(n) && n > 0) return Math.max(1, n >> 1);
  } catch {
    // Not Linux, or no procfs: the kernel default.
  }
  return 8192;
})();

/** Every open watcher of this process: they share libuv's one inotify queue. */
const open = new Set<FolderWatcher>();
let burst = 0;

/** Counts one event of the current drain (all of it runs before the loop's check phase). */
function countEvent(): void {
  if (burst === 0)
    setImmediate(() => {
      burst = 0;
    });
  burst += 1;
  if (burst === OVERFLOW_BURST) for (const w of open) w.lapse('possible overflow');
}

let cookieSeq = 0;

export class FolderWatcher {
  private readonly root: string;
  private readonly cookieDir: string;
  private readonly watches = new Map<string, Watch>();
  private dirty = new Set<string>();
  private cookieWatch: fs.FSWatcher | null = null;
  private readonly waiters = new Map<string, (ok: boolean) => void>();
  private scans = 0;
  /** A full scan has completed with the watcher in place. */
  private baselined = false;
  /** Set when events may have been lost since the last full scan (the next scan is full). */
  private lapsed: WatchDistrust | null = null;
  /** Events may have been lost, so watches may be dead: the next full scan replaces them all. */
  private rewatch = false;
  /** Off for good (a watch could not be added, or closed): every scan is a full one. */
  private off: WatchDistrust | null = null;
  private readonly fault: ((step: string) => void) | undefined;

  /**
   * `cookieDir` is a studio-owned folder (created if missing; the data dir, never the project)
   * where [sync] writes its cookies.
   */
  constructor(root: string, cookieDir: string, fault?: (step: string) => void) {
    this.root = root;
    this.cookieDir = cookieDir;
    this.fault = fault;
    try {
      fs.mkdirSync(cookieDir, { recursive: true });
      this.cookieWatch = fs.watch(cookieDir, { persistent: false }, (_type, name) => {
        countEvent();
        const done = typeof name === 'string' ? this.waiters.get(name) : undefined;
        if (done) {
          this.waiters.delete(name as string);
          done(true);
        }
      });
      this.cookieWatch.on('error', () => this.lapse('watcher error'));
      open.add(this);
    } catch {
      this.turnOff('watch failed');
    }
  }

  /** Null while the watcher can be trusted after a sync; else why not. */
  get status(): WatchDistrust | null {
    return this.off ?? this.lapsed ?? (this.baselined ? null : 'no full scan yet');
  }

  /** How many directories are watched (tests, the bench). */
  get watchCount(): number {
    return this.watches.size;
  }

  /** Makes the next scan a full one (and replace every watch): events may have been lost. */
  lapse(why: WatchDistrust): void {
    this.lapsed ??= why;
    this.rewatch = true;
  }

  /**
   * Resolves true once every event of a change made before the call has been recorded (the
   * cookie's own event came back), false when that is unknown: the watcher is off, the cookie
   * could not be written, or it did not come back within `timeoutMs`.
   */
  sync(timeoutMs = 2000): Promise<boolean> {
    if (this.off || !this.cookieWatch) return Promise.resolve(false);
    const name = `${TEMP_PREFIX}cookie-${process.pid}-${++cookieSeq}`;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(name);
        this.lapsed ??= 'cookie timeout';
        resolve(false);
      }, timeoutMs);
      this.waiters.set(name, (ok) => {
        clearTimeout(timer);
        resolve(ok);
      });
      const abs = join(this.cookieDir, name);
      try {
        this.fault?.('watch-cookie');
        fs.writeFileSync(abs, '', { flag: 'wx' });
        fs.unlinkSync(abs);
      } catch {
        clearTimeout(timer);
        this.waiters.delete(name);
        this.lapsed ??= 'cookie failed';
        resolve(false);
      }
    });
  }

  /**
   * Starts a scan. `synced`: a [sync] since the checkpoint was asked for came back true. The
   * dirty paths are handed over (events from now on go to the next scan).
   */
  begin(synced: boolean): WatchScan {
    const dirty = this.dirty;
    this.dirty = new Set();
    const scan = ++this.scans;
    const distrust: WatchDistrust | null =
      this.off ??
      this.lapsed ??
      (!this.baselined ? 'no full scan yet' : synced ? null : 'not synced');
    const full = distrust !== null;
    const force = full && this.rewatch;
    if (full) {
      this.lapsed = null;
      this.rewatch = false;
    }
    let ended = false;
    return {
      dirty: full ? null : dirty,
      distrust,
      ensure: (rel, id, forceOne) => this.ensure(rel, id, forceOne || force, scan),
      has: (rel) => {
        const w = this.watches.get(rel);
        if (!w || w.suspect) return false;
        w.mark = scan;
        return true;
      },
      peek: (rel) => {
        const w = this.watches.get(rel);
        return w !== undefined && !w.suspect;
      },
      end: (ok) => {
        if (ended || this.off) return;
        ended = true;
        if (!ok) {
          // The dirty paths were handed to a scan that did not finish.
          this.lapsed ??= 'scan failed';
          return;
        }
        if (full && this.scans === scan && !this.lapsed) this.baselined = true;
        // Directories no longer walked (deleted, moved, newly ignored) are not watched.
        for (const [rel, w] of this.watches)
          if (w.mark < scan) {
            w.handle.close();
            this.watches.delete(rel);
          }
      },
    };
  }

  private ensure(rel: string, id: string | null, force: boolean, scan: number): boolean {
    if (this.off) return true;
    const held = this.watches.get(rel);
    if (held && !force && !held.suspect && (id === null || held.id === id)) {
      held.mark = scan;
      return false;
    }
    if (held) {
      held.handle.close();
      this.watches.delete(rel);
    }
    const abs = rel === '' ? this.root : join(this.root, rel);
    try {
      this.fault?.(`watch:${rel}`);
      const watch: Watch = {
        handle: fs.watch(abs, { persistent: false }, (_type, name) =>
          this.onEvent(watch, rel, name),
        ),
        id,
        mark: scan,
        suspect: false,
      };
      watch.handle.on('error', () => {
        watch.suspect = true;
        this.lapse('watcher error');
      });
      this.watches.set(rel, watch);
      // Swapped between the caller's lstat and the watch: what is watched is not what is walked.
      if (id !== null) {
        const st = fs.lstatSync(abs, { throwIfNoEntry: false });
        if (!st || `${st.dev}:${st.ino}` !== id) this.lapse('watcher error');
      }
    } catch {
      // ENOSPC (the watch limit), EMFILE, a folder inotify cannot watch: full scans from now on.
      this.turnOff('watch failed');
    }
    return true;
  }

  private onEvent(watch: Watch, dir: string, name: string | Buffer | null): void {
    countEvent();
    if (typeof name !== 'string') {
      // Nothing says what changed in the directory: walk it whole (the root: a full scan).
      if (dir === '') this.lapse('watcher error');
      else this.dirty.add(dir);
      watch.suspect = true;
      return;
    }
    this.dirty.add(dir === '' ? name : `${dir}/${name}`);
    // libuv names events on the watched directory itself (deleted, moved away, its watch gone)
    // by the directory's own name: such a watch is replaced and the directory walked whole.
    if (name === basename(dir === '' ? this.root : dir)) {
      watch.suspect = true;
      if (dir === '') this.lapse('watcher error');
      else this.dirty.add(dir);
    }
  }

  private turnOff(why: WatchDistrust): void {
    this.off ??= why;
    for (const w of this.watches.values()) w.handle.close();
    this.watches.clear();
    this.dirty.clear();
  }

  /** Releases every watch; scans after this are full ones. */
  close(): void {
    this.turnOff('closed');
    this.off = 'closed';
    this.cookieWatch?.close();
    this.cookieWatch = null;
    for (const done of this.waiters.values()) done(false);
    this.waiters.clear();
    open.delete(this);
  }
}
