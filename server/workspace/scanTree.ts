import * as fs from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve, sep } from 'node:path';
import { TEMP_PREFIX } from './durableFs.ts';
import type { WatchScan } from './folderWatcher.ts';
import {
  appendStatCacheLog,
  readStatCache,
  sweepStatCacheTemps,
  writeStatCache,
  type StatCacheEntry,
  type StatCacheIdentity,
  type StatCacheOnDisk,
} from './statCacheFile.ts';
import {
  IgnoreFileCache,
  isIgnored,
  projectLayer,
  type CapturePatterns,
  type IgnoreLayer,
} from './ignoreRules.ts';
import {
  canonicalEntry,
  sha256Digest,
  validateRelativePath,
  type ManifestFile,
} from './manifest.ts';

/** The one name never captured, restored or written: git's own folder (or `.git` file). */
export const GIT_DIR = '.git';
/** The studio's own ignore file in a project root (`.gitignore` syntax, wins over the others). */
export const STUDIO_IGNORE = '.studioignore';

const HASH_CHUNK = 1024 * 1024;
/**
 * Largest read buffer kept between files (a bigger one is used for its file, then dropped): a
 * source tree's files are small, and a buffer grown for one 4 MB binary would stay for good.
 */
const SCRATCH_KEEP = 1024 * 1024;

/** A file as the last scan saw it: when its stat still matches, its bytes are not read again. */
interface CacheEntry extends StatCacheEntry {
  /** The scan that last saw the file (entries no scan saw are dropped at its end). */
  seen?: number;
  /** The hooks' `storedMark` when the file's content was last known to be stored. */
  stored?: number;
}

/** A captured entry of a directory listing (not ignored, not `.git`, not a temp file). */
interface DirChild {
  rel: string;
  dir: boolean;
}

/**
 * A directory as the last scan listed it: while its mtime, ctime and inode are unchanged its
 * names are (creating, deleting or renaming an entry changes the directory's mtime), and while
 * the ignore layers above it are the same, so are the decisions; the scan then neither lists it
 * nor matches its names again (git's untracked cache does the same).
 */
interface DirListing {
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  hasGitignore: boolean;
  hasStudioIgnore: boolean;
  layersKey: string;
  children: readonly DirChild[];
  /**
   * Listed within 1 s of its mtime: a scan that checks stats does not trust it (its mtime may
   * not have ticked since), but one that trusts the watcher does (events say what changed).
   */
  racy: boolean;
  /** The layers it inherits (their ids), so a subtree is reused only under the same rules. */
  inheritedKey: string;
  /**
   * With a watcher: where the directory's whole subtree is in the last scan's lists
   * (`TreeScanner.last`, from `from` to before `to`); a scan trusting the watcher takes it as it
   * is when no event named anything below.
   */
  from: number;
  to: number;
  /** The `storedMark` under which every file of `subtree` was known stored (if any). */
  subtreeMark: number | null;
}

export interface ScanOptions {
  /** Files larger than this are recorded with `notCaptured: 'OVER_CAP'`, never read whole. */
  maxFileBytes: number;
  patterns: CapturePatterns;
  /**
   * Where the stat cache persists between runs (in the data dir; see statCacheFile.ts). Without
   * it the cache lives in memory only and the first scan of a process reads every file.
   */
  cacheFile?: string;
}

export interface ScanResult {
  /** Sorted by path in UTF-16 code-unit order (the walk produces that order directly). */
  files: ManifestFile[];
  /** Canonical JSON of each file, parallel to `files` (for the manifest text and hash). */
  canonical: string[];
  /** How many files were read (stat cache misses). */
  filesRead: number;
  /** How many directories were listed (listing cache misses). */
  dirsListed: number;
  /** How many files and links were lstat'ed (with a trusted watcher, only those events named). */
  filesStatted: number;
  /** Why the watcher's dirty paths were not used (null: they were; undefined: no watcher). */
  distrust?: WatchScan['distrust'];
}

/**
 * Walks a project folder the way git sees it: `.gitignore` files at every level,
 * `.git/info/exclude`, `.studioignore` and the project's patterns decide what is captured;
 * `.git` and the layer's temp files are never entered. Symlinks are recorded as links (their
 * target text is the content), never followed; regular files keep their owner-execute bit;
 * other kinds (sockets, fifos, devices) are not content and are left out, as git does.
 *
 * A stat cache (size, mtime, ctime, inode, mode) remembers every file's entry: a file whose stat
 * did not change is not read. A file modified within 1 s of the scan is not cached (its mtime
 * may not have ticked yet), so a quick second write is never missed. With `cacheFile` the cache
 * is loaded by the first scan and written back after a scan that changed it, so a restart does
 * not read the whole tree again. Directory listings are cached the same way in memory (see
 * {@link DirListing}): a rescan of an unchanged tree lstats every directory and file but lists
 * and matches ignore rules only in directories whose entries changed.
 */
export class TreeScanner {
  private cache = new Map<string, CacheEntry>();
  private dirs = new Map<string, DirListing>();
  private generation = 0;
  private scratch: Buffer = Buffer.alloc(0);
  /** The identity the persisted cache was loaded for (null: not loaded yet). */
  private loadedFor: string | null = null;
  /** True when `cache` differs from what `cacheFile` holds. */
  private dirty = false;
  /** What `cacheFile` holds when it equals `cache` but for the scans since (null: unknown). */
  private onDisk: StatCacheOnDisk | null = null;
  /** Paths `seed` changed since the file was last written. */
  private readonly seeded = new Set<string>();
  private readonly ignoreFiles = new IgnoreFileCache();
  /** The lists of the last completed scan with a watcher (what listings' ranges point into). */
  private last: { files: readonly ManifestFile[]; canonical: readonly string[] } | null = null;
  private readonly root: string;
  private readonly options: ScanOptions;
  private readonly patternLayer: IgnoreLayer | null;

  constructor(root: string, options: ScanOptions) {
    this.root = resolve(root);
    this.options = options;
    this.patternLayer = projectLayer(options.patterns);
  }

  get maxFileBytes(): number {
    return this.options.maxFileBytes;
  }

  /**
   * Records what the workspace itself just wrote at `rel` (its stat right after the rename), so
   * the scan that follows a restore does not read it back. Such entries are as racy as any fresh
   * write: the scan after that one reads them again (see the class comment).
   */
  seed(rel: string, st: fs.Stats, file: ManifestFile, canonical?: string): void {
    this.dirty = true;
    this.seeded.add(rel);
    this.cache.set(rel, {
      size: st.size,
      mtimeMs: st.mtimeMs,
      ctimeMs: st.ctimeMs,
      ino: st.ino,
      mode: st.mode,
      file,
      canonical: canonical ?? canonicalEntry(file),
    });
  }

  /**
   * The file's bytes in a buffer reused from file to file (a view valid until the next read), so
   * a scan of 300 MB does not leave 300 MB of garbage Buffers for the collector: memory stays at
   * the largest file read, and a buffer grown for a big file is dropped after it.
   */
  private readScratch(abs: string, sizeHint: number): Buffer {
    const fd = fs.openSync(abs, 'r');
    try {
      let length = 0;
      for (;;) {
        if (this.scratch.length < Math.max(sizeHint, length) + 1) {
          const grown = Buffer.allocUnsafe(
            Math.max(sizeHint + 1, this.scratch.length * 2, 64 * 1024),
          );
          this.scratch.copy(grown, 0, 0, length);
          this.scratch = grown;
        }
        const n = fs.readSync(fd, this.scratch, length, this.scratch.length - length, null);
        if (n === 0) break;
        length += n;
      }
      const view = this.scratch.subarray(0, length);
      if (this.scratch.length > SCRATCH_KEEP) {
        // Hand this big buffer out, keep nothing that large for the next (small) files.
        this.scratch = Buffer.alloc(0);
      }
      return view;
    } finally {
      fs.closeSync(fd);
    }
  }

  /** The absolute path of a walked entry (its `rel` is made of names readdir gave). */
  private absOf(rel: string): string {
    if (sep !== '/') return join(this.root, ...rel.split('/'));
    return this.root.endsWith('/') ? this.root + rel : `${this.root}/${rel}`;
  }

  /** `layers` and the ignore file at `abs` (unchanged when it is not a readable file). */
  private withLayer(layers: IgnoreLayer[], abs: string, base: string): IgnoreLayer[] {
    const layer = this.ignoreFiles.layerFor(abs, base);
    return layer ? [...layers, layer] : layers;
  }

  /** Forgets every cached stat (the next scan reads every file). */
  invalidate(): void {
    this.cache = new Map();
    this.dirs = new Map();
    this.onDisk = null;
    this.dirty = true;
  }

  /**
   * Writes the cache back: the entries the scan set (`fresh`) or dropped since the file was
   * written, as a log append while the log is short, else the whole file. True when the file
   * equals the cache.
   */
  private persist(
    file: string,
    identity: StatCacheIdentity,
    fresh: readonly string[],
    dropped: readonly string[],
  ): boolean {
    const next = this.cache;
    if (this.onDisk) {
      const set: CacheEntry[] = [];
      for (const rel of new Set([...fresh, ...this.seeded])) {
        const entry = next.get(rel);
        if (entry) set.push(entry);
      }
      const lines = this.onDisk.logLines + set.length + dropped.length;
      if (lines <= Math.max(1024, next.size >> 2)) {
        if (set.length + dropped.length === 0) return true;
        if (appendStatCacheLog(file, this.onDisk, set, dropped)) {
          this.onDisk = { ...this.onDisk, logLines: lines };
          this.seeded.clear();
          return true;
        }
      }
    }
    this.onDisk = writeStatCache(file, identity, next);
    if (this.onDisk) this.seeded.clear();
    return this.onDisk !== null;
  }

  /** Loads the persisted cache on the first scan of this folder identity (a moved root reloads). */
  private loadPersisted(identity: StatCacheIdentity | null): void {
    const file = this.options.cacheFile;
    if (!file || !identity) return;
    const key = JSON.stringify(identity);
    if (this.loadedFor === key) return;
    if (this.loadedFor !== null) this.cache = new Map();
    this.loadedFor = key;
    this.onDisk = null;
    sweepStatCacheTemps(file);
    const stored = readStatCache(file, identity);
    if (!stored) {
      this.dirty = true;
      return;
    }
    // What this process already knows (its own writes) wins over the file; the file then
    // differs from the cache, so the next write rewrites it whole.
    if (this.cache.size === 0) this.onDisk = stored.onDisk;
    else this.dirty = true;
    for (const [rel, entry] of this.cache) stored.entries.set(rel, entry);
    this.cache = stored.entries;
  }

  private identity(): StatCacheIdentity | null {
    try {
      const rootReal = fs.realpathSync(this.root);
      const st = fs.statSync(rootReal);
      return {
        rootReal,
        rootDev: st.dev,
        rootIno: st.ino,
        maxFileBytes: this.options.maxFileBytes,
      };
    } catch {
      return null;
    }
  }

  /**
   * Scans the folder. `onContent(file, bytes)` is called for every captured file or link whose
   * bytes were read, and for cached entries `needsContent(file)` says are missing elsewhere (so
   * the caller can store them). `bytes` is valid only during the call (the buffer is reused for
   * the next file): store or copy it there. Throws `PATH_INVALID` for a name no manifest can hold.
   */
  scan(
    hooks: {
      onContent?: (file: ManifestFile, bytes: Buffer) => void;
      needsContent?: (file: ManifestFile) => boolean;
      /**
       * A number that changes whenever stored content may have gone (the store's `removals`):
       * while it is the one an entry was last checked under, `needsContent` is not asked again.
       */
      storedMark?: number;
    },
    /**
     * The folder watcher's view for this scan (folderWatcher.ts): with dirty paths, only those
     * (and directories new to the watcher) are stat'ed, the rest is what the last scan saw;
     * without, every directory walked is watched before it is listed, so the next scan can
     * trust it.
     */
    watch: WatchScan | null = null,
  ): ScanResult {
    const startedAt = Date.now();
    const identity = this.options.cacheFile ? this.identity() : null;
    this.loadPersisted(identity);
    // The cache is updated in place: a rescan of an unchanged tree writes nothing to it.
    const cache = this.cache;
    const generation = ++this.generation;
    // (-1 never equals an entry's mark: without the hook every entry is asked.)
    const storedMark = hooks.storedMark ?? -1;
    let kept = 0;
    /** Paths whose cached entry this scan set or dropped. */
    const fresh: string[] = [];
    const dropped: string[] = [];
    let changed = false;
    const files: ManifestFile[] = [];
    const canonical: string[] = [];
    let filesRead = 0;
    let dirsListed = 0;
    let filesStatted = 0;
    const dirty = watch?.dirty ?? null;
    /** Directories an event named an entry of (their listing is checked by its stat). */
    const dirtyParents = new Set<string>();
    /** Directories with something an event named below them (their subtree is walked). */
    const dirtyAncestors = new Set<string>();
    if (dirty)
      for (const rel of dirty) {
        let at = rel.lastIndexOf('/');
        dirtyParents.add(at < 0 ? '' : rel.slice(0, at));
        for (; at > 0; at = rel.lastIndexOf('/', at - 1)) dirtyAncestors.add(rel.slice(0, at));
      }
    /**
     * Drops the cached entries of what a re-listed directory no longer holds (a scan trusting
     * the watcher does not sweep what it did not see: it skips unchanged subtrees).
     */
    const dropGone = (before: readonly DirChild[], after: readonly DirChild[]): void => {
      const key = (c: DirChild): string => (c.dir ? `${c.rel}/` : c.rel);
      const still = new Set(after.map(key));
      const dropUnder = (rel: string): void => {
        const held = this.dirs.get(rel);
        if (!held) {
          for (const key of [...cache.keys()])
            if (key.startsWith(`${rel}/`)) {
              cache.delete(key);
              dropped.push(key);
            }
          return;
        }
        for (const c of held.children) drop(c);
      };
      const drop = (c: DirChild): void => {
        if (c.dir) dropUnder(c.rel);
        else if (cache.delete(c.rel)) dropped.push(c.rel);
      };
      for (const c of before) if (!still.has(key(c))) drop(c);
    };
    const rootLayers: IgnoreLayer[] = [];
    const exclude = this.ignoreFiles.layerFor(join(this.root, GIT_DIR, 'info', 'exclude'), '');
    if (exclude) rootLayers.push(exclude);

    const readContent = (abs: string, rel: string, st: fs.Stats): ManifestFile => {
      filesRead += 1;
      if (st.isSymbolicLink()) {
        const text = Buffer.from(fs.readlinkSync(abs, 'utf8'), 'utf8');
        const file: ManifestFile = {
          target: 'SERVER',
          path: rel,
          contentHash: sha256Digest(text),
          byteLength: text.length,
          kind: 'SYMLINK',
        };
        hooks.onContent?.(file, text);
        return file;
      }
      const executable = (st.mode & 0o100) !== 0;
      if (st.size > this.options.maxFileBytes) {
        const { hash, length } = hashFile(abs);
        return {
          target: 'SERVER',
          path: rel,
          contentHash: hash,
          byteLength: length,
          ...(executable ? { executable: true as const } : {}),
          notCaptured: 'OVER_CAP',
        };
      }
      const bytes = this.readScratch(abs, st.size);
      const file: ManifestFile = {
        target: 'SERVER',
        path: rel,
        contentHash: sha256Digest(bytes),
        byteLength: bytes.length,
        ...(executable ? { executable: true as const } : {}),
      };
      hooks.onContent?.(file, bytes);
      return file;
    };

    const nextDirs = new Map<string, DirListing>();
    /** The captured entries of a directory, in walk order: from the listing cache while it holds. */
    /** `dirSt` null: the watcher says the directory's names are unchanged (a listing is held). */
    const listing = (
      absDir: string,
      relDir: string,
      dirSt: fs.Stats | null,
      inherited: IgnoreLayer[],
    ): { entry: DirListing; layers: IgnoreLayer[]; layersKey: string } => {
      const prior = this.dirs.get(relDir);
      let held = prior;
      if (
        held &&
        dirSt &&
        (held.racy ||
          !(
            held.mtimeMs === dirSt.mtimeMs &&
            held.ctimeMs === dirSt.ctimeMs &&
            held.ino === dirSt.ino
          ))
      )
        held = undefined;
      let entries: fs.Dirent[] | null = null;
      let hasGitignore: boolean;
      let hasStudioIgnore: boolean;
      if (held) {
        ({ hasGitignore, hasStudioIgnore } = held);
      } else {
        entries = fs.readdirSync(absDir, { withFileTypes: true });
        hasGitignore = entries.some((e) => e.name === '.gitignore');
        hasStudioIgnore = relDir === '' && entries.some((e) => e.name === STUDIO_IGNORE);
      }
      let layers = inherited;
      if (hasGitignore) layers = this.withLayer(layers, join(absDir, '.gitignore'), relDir);
      if (relDir === '') {
        if (hasStudioIgnore) layers = this.withLayer(layers, join(absDir, STUDIO_IGNORE), '');
        if (this.patternLayer) layers = [...layers, this.patternLayer];
      }
      // Decisions hold while every layer above is the same (an edited ignore file is a new layer).
      const layersKey = layers.map((l) => l.id).join(',');
      const inheritedKey = inherited.map((l) => l.id).join(',');
      if (held && held.layersKey === layersKey) {
        held.inheritedKey = inheritedKey;
        nextDirs.set(relDir, held);
        return { entry: held, layers, layersKey };
      }
      entries ??= fs.readdirSync(absDir, { withFileTypes: true });
      dirsListed += 1;
      // Directories sort as `name/`, so a depth-first walk lists paths in code-unit order.
      const keyed = entries.map((e) => ({ e, key: e.isDirectory() ? `${e.name}/` : e.name }));
      keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      const children: DirChild[] = [];
      for (const { e } of keyed) {
        const name = e.name;
        if (name === GIT_DIR || name.startsWith(TEMP_PREFIX)) continue;
        const rel = relDir ? `${relDir}/${name}` : name;
        const dir = e.isDirectory();
        if (!dir && !e.isFile() && !e.isSymbolicLink()) continue;
        if (isIgnored(layers, rel, dir)) continue;
        children.push({ rel, dir });
      }
      // As for files: a directory changed within 1 s may change again within its mtime's tick,
      // so a scan that checks stats lists it again (one that trusts the watcher need not).
      const stat = dirSt ?? held!;
      const entry: DirListing = {
        mtimeMs: stat.mtimeMs,
        ctimeMs: stat.ctimeMs,
        ino: stat.ino,
        hasGitignore,
        hasStudioIgnore,
        layersKey,
        children,
        racy: dirSt ? !(startedAt - dirSt.mtimeMs > 1000) : held!.racy,
        inheritedKey,
        from: -1,
        to: -1,
        subtreeMark: prior?.subtreeMark ?? null,
      };
      nextDirs.set(relDir, entry);
      if (dirty && prior) dropGone(prior.children, children);
      return { entry, layers, layersKey };
    };

    /**
     * `fast`: the watcher is trusted here, so entries no event named are taken as the last scan
     * saw them; `force`: an event named this directory itself (created, moved in, replaced), so
     * its watches are replaced and it is walked whole.
     */
    const visit = (
      absDir: string,
      relDir: string,
      inherited: IgnoreLayer[],
      fast: boolean,
      force: boolean,
    ): void => {
      let dirSt: fs.Stats | null = null;
      // Untouched since the last scan (no event named an entry of it): its listing holds.
      const untouched =
        fast &&
        relDir !== '' &&
        !dirtyParents.has(relDir) &&
        this.dirs.has(relDir) &&
        watch!.has(relDir);
      if (!untouched) {
        // The root may be a link to the folder; below it, links are never followed.
        dirSt = relDir === '' ? fs.statSync(absDir) : fs.lstatSync(absDir);
        // Swapped for a link or a file since its parent was listed: nothing to walk through.
        if (!dirSt.isDirectory()) return;
        // Watched before it is listed, so no change after the listing goes unseen; a new watch
        // saw nothing before it, so the directory is walked whole.
        if (watch && watch.ensure(relDir, `${dirSt.dev}:${dirSt.ino}`, force)) fast = false;
      }
      const { entry: here, layers, layersKey } = listing(absDir, relDir, dirSt, inherited);
      const start = files.length;
      const readBefore = filesRead;
      for (const { rel, dir } of here.children) {
        // (Not kept in the listing: 20,000 absolute paths are 2 MB of heap.)
        const abs = this.absOf(rel);
        if (dir) {
          const named = fast && dirty!.has(rel);
          if (fast && !named && !dirtyAncestors.has(rel) && reuseSubtree(rel, layersKey)) continue;
          visit(abs, rel, layers, fast && !named, force || named);
          continue;
        }
        if (fast && !dirty!.has(rel)) {
          const hit = cache.get(rel);
          // No event named it since the last scan saw it: unchanged (unless its content must be
          // checked in the store again, which the stat path below does).
          if (hit && (!hooks.needsContent || hit.stored === storedMark)) {
            hit.seen = generation;
            kept += 1;
            files.push(hit.file);
            canonical.push(hit.canonical);
            continue;
          }
        }
        filesStatted += 1;
        const st = fs.lstatSync(abs);
        // The entry may have changed kind between readdir and lstat.
        if (!st.isFile() && !st.isSymbolicLink()) {
          if (dirty && cache.delete(rel)) dropped.push(rel);
          continue;
        }
        const hit = cache.get(rel);
        let entry: CacheEntry;
        if (
          hit &&
          hit.size === st.size &&
          hit.mtimeMs === st.mtimeMs &&
          hit.ctimeMs === st.ctimeMs &&
          hit.ino === st.ino &&
          hit.mode === st.mode
        ) {
          entry = hit;
          if (hooks.needsContent && hit.stored !== storedMark) {
            if (hooks.needsContent(hit.file)) {
              const reread = readContent(abs, rel, st);
              if (reread.contentHash !== hit.file.contentHash) {
                entry = { ...hit, file: reread, canonical: canonicalEntry(reread) };
                changed = true;
              }
            }
            entry.stored = storedMark;
          }
        } else {
          // Cached paths were checked when they entered the cache (or the cache file).
          validateRelativePath(rel);
          changed = true;
          const file = readContent(abs, rel, st);
          entry = {
            size: st.size,
            mtimeMs: st.mtimeMs,
            ctimeMs: st.ctimeMs,
            ino: st.ino,
            mode: st.mode,
            file,
            canonical: canonicalEntry(file),
            ...(hooks.onContent ? { stored: storedMark } : {}),
          };
        }
        if (startedAt - st.mtimeMs > 1000) {
          if (entry !== hit) {
            cache.set(rel, entry);
            fresh.push(rel);
          }
          entry.seen = generation;
          kept += 1;
        } else if (hit) {
          cache.delete(rel);
          dropped.push(rel);
        }
        files.push(entry.file);
        canonical.push(entry.canonical);
      }
      if (watch) {
        here.from = start;
        here.to = files.length;
        // Known stored: everything below was checked under this mark (a storing scan), or was
        // not read again since it last was.
        here.subtreeMark = hooks.needsContent
          ? storedMark
          : filesRead === readBefore
            ? here.subtreeMark
            : null;
      }
    };

    /**
     * Takes the subtree of `rel` as the last scan found it when nothing below it changed: its
     * listings held, every directory in it watched with no doubt, the same ignore rules above,
     * and (for a storing scan) its content known stored under the current mark.
     */
    const reuseSubtree = (rel: string, parentKey: string): boolean => {
      const top = this.dirs.get(rel);
      const last = this.last;
      if (!top || !last || top.from < 0 || top.inheritedKey !== parentKey) return false;
      if (hooks.needsContent && top.subtreeMark !== storedMark) return false;
      const held: [string, DirListing][] = [];
      const collect = (dir: string, listed: DirListing): boolean => {
        if (!watch!.peek(dir)) return false;
        held.push([dir, listed]);
        for (const c of listed.children) {
          if (!c.dir) continue;
          const below = this.dirs.get(c.rel);
          if (!below || !collect(c.rel, below)) return false;
        }
        return true;
      };
      if (!collect(rel, top)) return false;
      // Every range below moves to where the subtree lands in this scan's lists.
      const shift = files.length - top.from;
      const { from, to } = top;
      for (const [dir, listed] of held) {
        nextDirs.set(dir, listed);
        watch!.has(dir);
        listed.from += shift;
        listed.to += shift;
      }
      for (let i = from; i < to; i++) {
        files.push(last.files[i]!);
        canonical.push(last.canonical[i]!);
      }
      return true;
    };
    try {
      visit(this.root, '', rootLayers, dirty !== null, false);
    } catch (err) {
      // Entries this scan set or dropped are not all logged: the next write rewrites the file.
      this.onDisk = null;
      this.dirty = true;
      watch?.end(false);
      throw err;
    }
    watch?.end(true);
    this.dirs = nextDirs;
    this.last = watch ? { files, canonical } : null;
    // Every entry left was seen unless some file is gone: then drop what no scan saw. (A scan
    // trusting the watcher dropped what it found gone as it went: it did not see everything.)
    if (!dirty && kept !== cache.size)
      for (const [rel, entry] of cache)
        if (entry.seen !== generation) {
          cache.delete(rel);
          dropped.push(rel);
        }
    if (changed || fresh.length > 0 || dropped.length > 0) this.dirty = true;
    if (this.dirty && identity && this.options.cacheFile)
      this.dirty = !this.persist(this.options.cacheFile, identity, fresh, dropped);
    return {
      files,
      canonical,
      filesRead,
      dirsListed,
      filesStatted,
      ...(watch ? { distrust: watch.distrust } : {}),
    };
  }
}

/** sha256 and length of a file read in 1 MiB chunks (for files over the cap: memory stays flat). */
function hashFile(abs: string): { hash: string; length: number } {
  const hash = createHash('sha256');
  const fd = fs.openSync(abs, 'r');
  const buf = Buffer.allocUnsafe(HASH_CHUNK);
  let length = 0;
  try {
    for (;;) {
      const n = fs.readSync(fd, buf, 0, HASH_CHUNK, null);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
      length += n;
    }
  } finally {
    fs.closeSync(fd);
  }
  return { hash: 'sha256:' + hash.digest('hex'), length };
}
