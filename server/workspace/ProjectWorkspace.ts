import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { canonicalJson } from './canonicalJson.ts';
import type { ContentStore, DeltaPiece } from './contentStore.ts';
import { TEMP_PREFIX, errnoOf, fsyncDir, isErrno, lstatOrNull, tempName } from './durableFs.ts';
import { FolderWatcher, type WatchDistrust } from './folderWatcher.ts';
import type { CapturePatterns } from './ignoreRules.ts';
import {
  DIGEST,
  canonicalManifestHash,
  canonicalManifestText,
  compareCodeUnits,
  describePath,
  diffManifests,
  markSorted,
  sha256Digest,
  sortManifest,
  validateRelativePath,
  type ManifestFile,
} from './manifest.ts';
import { SAMPLE_PROJECT_FILES } from './sampleProject.ts';
import { GIT_DIR, TreeScanner } from './scanTree.ts';
import { WorkspaceError } from './WorkspaceError.ts';

/** Largest file `readFile` returns (bytes): the agent's read tool, not the checkpoint cap. */
export const MAX_FILE_BYTES = 1024 * 1024;
/** Default per-file cap of a checkpoint: larger files are recorded as not captured. */
export const DEFAULT_MAX_CAPTURE_BYTES = 50 * 1024 * 1024;
/** Most changes in one `applyChanges` call. */
export const MAX_PATCH_CHANGES = 16;
/** Largest new content of one change in `applyChanges` (UTF-8 bytes). */
export const MAX_PATCH_CONTENT_BYTES = 64 * 1024;

const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MANIFEST_CACHE = 4;

export interface WorkspaceChange {
  path: string;
  /** The new UTF-8 content; null deletes the file. */
  content: string | null;
  /** The file's current `contentHash`, or 'ABSENT' when it must not exist yet. */
  expectedContentHash?: 'ABSENT' | string;
}

export interface WorkspaceState {
  files: ManifestFile[];
  contentHash: string;
}

export interface AppliedChanges extends WorkspaceState {
  /** Paths whose content actually changed (added, rewritten or deleted), sorted. */
  changedFiles: string[];
}

/** What a restore did besides making the folder equal to the manifest. */
export interface RestoreResult extends WorkspaceState {
  /** Files and links written (added or changed content), sorted by path. */
  written: ManifestFile[];
  /** Paths deleted. */
  removed: string[];
  /** Paths whose mode alone changed. */
  modeChanged: string[];
  /** Paths the restore could not put back (see {@link RestorePlan.notRestorable}). */
  notRestorable: { path: string; reason: string }[];
}

/** The effect a restore would have, computed without touching anything. */
export interface RestorePlan {
  added: ManifestFile[];
  changed: { from: ManifestFile; to: ManifestFile }[];
  removed: ManifestFile[];
  modeChanged: ManifestFile[];
  /**
   * Paths left as they are: content over the cap in the checkpoint (never stored), a file now
   * over the cap (the pre-image cannot keep it, so it is not overwritten or deleted), or a file
   * the project ignores standing where the checkpoint has one.
   */
  notRestorable: { path: string; reason: string }[];
}

/** How the workspace's last scan went (the checkpoint bench prints it; tests check it). */
export interface ScanReport {
  /** `WATCHER`: only paths the folder watcher named were stat'ed; `FULL`: every file was. */
  path: 'WATCHER' | 'FULL';
  /** Why it was a full scan (null for `WATCHER`). */
  distrust: WatchDistrust | null;
  /** Time waiting for the watcher's cookie (ms; 0 without one). */
  syncMs: number;
  /** Time walking the tree (ms): stats, listings, reading changed files. */
  walkMs: number;
  filesStatted: number;
  filesRead: number;
  dirsListed: number;
}

export interface ProjectWorkspaceOptions {
  /** Names the journal file; letters, digits, `.`, `_`, `-`, at most 128. */
  projectId: string;
  /** The real project folder. */
  root: string;
  contentStore: ContentStore;
  /** Where the journal lives: in the data dir, never inside the project folder. */
  journalDir: string;
  /** Per-file cap (bytes) of a checkpoint; default 50 MiB. */
  maxFileBytes?: number;
  /** The project's include/exclude patterns (`.gitignore` syntax), applied after ignore files. */
  patterns?: CapturePatterns;
  /**
   * Where the scan's stat cache persists across restarts (see statCacheFile.ts); default
   * `<journalDir>.stat-cache/<projectId>.tsv`, beside the journal in the data dir; null keeps it
   * in memory only.
   */
  statCacheFile?: string | null;
  /** Called at each named step of a change; tests throw from it to simulate a crash there. */
  faultInjector?: (step: string) => void;
}

export type JournalOp =
  | { op: 'delete'; path: string }
  | { op: 'write'; path: string; contentHash: string; byteLength: number; executable?: boolean }
  | { op: 'link'; path: string; contentHash: string; byteLength: number }
  | { op: 'chmod'; path: string; executable: boolean };

export interface JournalBody {
  version: 2;
  projectId: string;
  action: 'APPLY_CHANGES' | 'RESTORE';
  /** The real path of the project folder when the change was committed. */
  rootReal: string;
  target: { contentHash: string; fileCount: number };
  ops: JournalOp[];
}

/**
 * One project folder on disk: scans it into a manifest, snapshots it, and changes it atomically.
 *
 * Scans follow git's view of the folder (see {@link TreeScanner}): ignore files honoured, `.git`
 * never entered, links recorded as links, the execute bit kept, files over the cap recorded as
 * not captured. A snapshot stores every captured file's bytes and the canonical manifest text in
 * the content store (the manifest under its own sha256, which is the state's `contentHash`), so
 * `manifest(contentHash)` gives back any snapshot's full file list.
 *
 * Every change (`applyChanges`, `restore`) follows one protocol, so that a crash at any point
 * leaves the folder, after `recover()`, wholly before or wholly after the change:
 * 1. Validate everything and make sure every byte to be written is durably in the content store.
 *    Nothing in the folder has been touched; a failure here changes nothing.
 * 2. Write the journal (ops + the target's hash) to a temp file in `journalDir`, fsync, rename it
 *    to `<projectId>.journal.json`: the commit point.
 * 3. Roll forward: delete removed files, remove the directories that left empty, then write each
 *    file or link: one that replaces something goes to a temp name (`.studio-tmp-*`) next to it
 *    and is renamed into place; one whose path is free is created there directly (O_EXCL, as
 *    git's checkout does; its `file-staged` and `file-renamed` steps then coincide), since a
 *    crash mid-write leaves a torn file that recovery finds not applied and replaces. Then set
 *    modes and flush the file system once (`sync -f`, else an fsync per file).
 * 4. Delete the journal.
 *
 * Before every step of 3 the parent directory is checked: each component below the root must
 * be a real directory (not a symlink), and the root must still be the folder the journal was
 * written for, so neither a swapped directory symlink nor a crafted journal can make recovery
 * delete, rename or write outside the project.
 *
 * `recover()` (call it on startup, and whenever a change threw) rolls a committed journal forward
 * again; every op is idempotent (a file already equal to its op is left alone). Without a journal
 * it only sweeps temp files, which is the rollback of an uncommitted change.
 *
 * Fault steps, in order: `validated`, `blobs-stored` (applyChanges only), `journal-temp-written`,
 * `journal-written`, `file-deleted:<path>`..., `dirs-removed`, `file-staged:<path>`,
 * `file-renamed:<path>`..., `flushed`, `before-journal-delete`, `journal-deleted`.
 */
export class ProjectWorkspace {
  readonly projectId: string;
  readonly root: string;
  private readonly store: ContentStore;
  private readonly journalDir: string;
  private readonly journalName: string;
  private readonly journalPath: string;
  private readonly faultInjector: ((step: string) => void) | undefined;
  private readonly scanner: TreeScanner;
  private readonly manifests = new Map<string, ManifestFile[]>();
  /** The last manifest a snapshot stored whole: the next ones are stored as deltas against it. */
  private deltaBase: DeltaBase | null = null;
  private verifiedDirs = new Set<string>();
  private watcher: FolderWatcher | null = null;
  /** How the last scan went (null before the first). */
  lastScan: ScanReport | null = null;

  constructor(opts: ProjectWorkspaceOptions) {
    if (!PROJECT_ID.test(opts.projectId))
      throw new WorkspaceError(
        'PATH_INVALID',
        `Project id ${describePath(opts.projectId)} cannot name a journal file`,
      );
    this.projectId = opts.projectId;
    this.root = resolve(opts.root);
    this.store = opts.contentStore;
    this.journalDir = resolve(opts.journalDir);
    this.journalName = `${opts.projectId}.journal.json`;
    this.journalPath = join(this.journalDir, this.journalName);
    this.faultInjector = opts.faultInjector;
    const statCacheFile =
      opts.statCacheFile === undefined
        ? join(`${this.journalDir}.stat-cache`, `${opts.projectId}.tsv`)
        : opts.statCacheFile;
    this.scanner = new TreeScanner(this.root, {
      maxFileBytes: opts.maxFileBytes ?? DEFAULT_MAX_CAPTURE_BYTES,
      patterns: opts.patterns ?? {},
      ...(statCacheFile ? { cacheFile: resolve(statCacheFile) } : {}),
    });
  }

  /** Writes the sample project into `root` when `root` is missing or empty; otherwise does nothing. */
  static createSample(root: string): void {
    const existing = fs.statSync(root, { throwIfNoEntry: false });
    if (existing && (!existing.isDirectory() || fs.readdirSync(root).length > 0)) return;
    for (const [path, content] of Object.entries(SAMPLE_PROJECT_FILES)) {
      const abs = join(root, ...path.split('/'));
      fs.mkdirSync(dirname(abs), { recursive: true });
      fs.writeFileSync(abs, content);
    }
  }

  /**
   * Starts watching the folder (folderWatcher.ts): from the first full scan on, the `synced*`
   * methods re-stat only the paths events named, when the watcher can be trusted (see
   * docs/ARCHITECTURE.md). False when the folder cannot be watched (every scan stays a full
   * one). The cookies it writes to know it is up to date go to `<journalDir>.cookies`, in the
   * data dir. Release it with `close()`.
   */
  startWatching(): boolean {
    this.watcher ??= new FolderWatcher(this.root, `${this.journalDir}.cookies`, this.faultInjector);
    return this.watcher.status !== 'watch failed';
  }

  /** Releases the folder watcher (scans after this are full ones, as without a watcher). */
  close(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  /** Null while the watcher can be trusted (after a sync), else why not (tests, the bench). */
  get watchStatus(): WatchDistrust | null {
    return this.watcher ? this.watcher.status : 'not watching';
  }

  /** How many directories the watcher watches (0 without one). */
  get watchedDirs(): number {
    return this.watcher?.watchCount ?? 0;
  }

  /**
   * `snapshot()` after making sure the folder watcher has seen every change made before the
   * call (its cookie came back), so the scan re-stats only what events named; a full scan,
   * exactly as `snapshot()`, whenever the watcher cannot be trusted.
   */
  async syncedSnapshot(): Promise<WorkspaceState> {
    const synced = await this.syncWatcher();
    return this.guard(() => {
      const state = this.scanFolder(false, true, synced);
      this.store.flush();
      return state;
    });
  }

  /** `state()` the way `syncedSnapshot` is `snapshot()`. */
  async syncedState(): Promise<WorkspaceState> {
    const synced = await this.syncWatcher();
    return this.guard(() => this.scanFolder(false, false, synced));
  }

  /** True when the watcher is trusted and its cookie came back (every earlier change is seen). */
  private async syncWatcher(): Promise<{ ms: number } | null> {
    const watcher = this.watcher;
    if (!watcher || watcher.status !== null) return null;
    const started = performance.now();
    const ok = await watcher.sync();
    return ok ? { ms: performance.now() - started } : null;
  }

  /** The per-file cap of this project's checkpoints (bytes). */
  get maxFileBytes(): number {
    return this.scanner.maxFileBytes;
  }

  /**
   * Every captured file and link under `root` as a sorted manifest (target `SERVER`). Throws
   * `NOT_FOUND` when `root` does not exist and `PATH_INVALID` for a name a manifest cannot hold.
   */
  scan(): ManifestFile[] {
    return this.guard(() => this.scanList(false));
  }

  /** The folder's current state without storing anything (what `studioProject` shows). */
  state(): WorkspaceState {
    return this.guard(() => this.scanFolder(false, false));
  }

  /**
   * `scan()`, with every captured file's bytes and the manifest itself durably in the content
   * store, so the state can be restored and listed later by its `contentHash`.
   */
  snapshot(): WorkspaceState {
    return this.guard(() => {
      const state = this.scanFolder(false, true);
      this.store.flush();
      return state;
    });
  }

  /** A stored snapshot's files by `contentHash` (`NOT_FOUND` when it was never stored or was collected). */
  manifest(contentHash: string): ManifestFile[] {
    return this.guard(() => {
      const hit = this.manifests.get(contentHash);
      if (hit) return hit;
      // The last manifest stored whole is held for the deltas (a first checkpoint, typically):
      // its own list, not a second copy parsed from the store.
      const base = this.deltaBase;
      if (base?.hash === contentHash) {
        const files = base.files as ManifestFile[];
        this.remember(contentHash, files);
        return files;
      }
      let text: Buffer;
      try {
        text = this.store.get(contentHash);
      } catch (err) {
        if (err instanceof WorkspaceError && err.code === 'NOT_FOUND')
          throw new WorkspaceError(
            'NOT_FOUND',
            `No stored manifest for ${contentHash} (the checkpoint's content was collected or never stored)`,
          );
        throw err;
      }
      const parsed = JSON.parse(text.toString('utf8')) as { files: ManifestFile[] };
      manifestHashes.set(parsed.files, contentHash);
      this.remember(contentHash, parsed.files);
      return parsed.files;
    });
  }

  /** True when `manifest(contentHash)` would find the snapshot. */
  hasManifest(contentHash: string): boolean {
    return this.manifests.has(contentHash) || this.store.has(contentHash);
  }

  /** Stores the manifest of `files` (already stored content) and returns its hash. */
  storeManifest(files: readonly ManifestFile[]): string {
    // A list whose hash this workspace knows (a restore's result, a scan, a stored manifest) and
    // whose text is stored: nothing to build (a whole tree's text is 3 MB).
    const known = manifestHashes.get(files);
    if (known && this.store.has(known)) {
      const list = checkedManifests.get(files) === files ? (files as ManifestFile[]) : null;
      if (list) this.remember(known, list);
      return known;
    }
    const sorted = sortManifest(files);
    const text = canonicalManifestText(sorted);
    const hash = sha256Digest(text);
    if (!this.store.has(hash)) {
      this.store.putHashed(hash, Buffer.from(text, 'utf8'));
      this.store.flush();
    }
    manifestHashes.set(sorted, hash);
    this.remember(hash, sorted);
    return hash;
  }

  /** The file's content as UTF-8 (`NOT_FOUND` if it is not a file, `TOO_LARGE` over 1 MiB). */
  readFile(path: string): string {
    validateRelativePath(path);
    return this.guard(() => {
      const abs = this.resolveInside(path);
      if (!abs) throw new WorkspaceError('NOT_FOUND', `No file ${describePath(path)}`, { path });
      const st = fs.statSync(abs);
      if (!st.isFile())
        throw new WorkspaceError('NOT_FOUND', `No file ${describePath(path)}`, { path });
      if (st.size > MAX_FILE_BYTES)
        throw new WorkspaceError('TOO_LARGE', `${describePath(path)} is over 1 MiB`, { path });
      return fs.readFileSync(abs, 'utf8');
    });
  }

  /** True when `path` is a file (or a symlink to a file inside the folder). */
  exists(path: string): boolean {
    validateRelativePath(path);
    return this.guard(() => {
      const abs = this.resolveInside(path);
      return abs !== null && fs.statSync(abs).isFile();
    });
  }

  /**
   * Applies up to 16 file writes and deletes as one atomic change (see the class comment).
   * Every path, size and `expectedContentHash` is checked before anything is written:
   * `HASH_MISMATCH` names the first path whose current content differs from the expectation,
   * `NOT_FOUND` a deleted path that does not exist. Returns the folder's new state (a fresh scan).
   */
  applyChanges(changes: readonly WorkspaceChange[]): AppliedChanges {
    return this.guard(() => {
      this.refuseIfPending();
      if (changes.length > MAX_PATCH_CHANGES)
        throw new WorkspaceError(
          'TOO_MANY_FILES',
          `At most ${MAX_PATCH_CHANGES} changes at once (got ${changes.length})`,
        );
      const seen = new Set<string>();
      for (const change of changes) {
        validateWritablePath(change.path);
        if (seen.has(change.path))
          throw new WorkspaceError(
            'PATH_INVALID',
            `${describePath(change.path)} is changed twice`,
            { path: change.path },
          );
        seen.add(change.path);
        if (
          change.content !== null &&
          Buffer.byteLength(change.content, 'utf8') > MAX_PATCH_CONTENT_BYTES
        )
          throw new WorkspaceError(
            'TOO_LARGE',
            `New content of ${describePath(change.path)} is over 64 KiB`,
            { path: change.path },
          );
      }

      const current = this.scanList(true);
      const byPath = new Map(current.map((f) => [f.path, f]));
      for (const change of changes) {
        const existing = byPath.get(change.path);
        const expected = change.expectedContentHash;
        if (
          expected !== undefined &&
          (expected === 'ABSENT' ? existing !== undefined : existing?.contentHash !== expected)
        )
          throw new WorkspaceError(
            'HASH_MISMATCH',
            `${describePath(change.path)} is ${existing ? existing.contentHash : 'absent'}, expected ${
              expected === 'ABSENT' ? 'absent' : JSON.stringify(expected.slice(0, 80))
            }`,
            { path: change.path },
          );
        if (change.content === null && !existing)
          throw new WorkspaceError(
            'NOT_FOUND',
            `Cannot delete ${describePath(change.path)}: no such file`,
            { path: change.path },
          );
        if (existing?.kind === 'SYMLINK' && change.content !== null)
          throw new WorkspaceError(
            'PATH_INVALID',
            `${describePath(change.path)} is a symbolic link; the patch tool writes files only`,
            { path: change.path },
          );
      }

      const next = new Map(byPath);
      const blobs: Buffer[] = [];
      for (const change of changes) {
        if (change.content === null) {
          next.delete(change.path);
          continue;
        }
        const bytes = Buffer.from(change.content, 'utf8');
        blobs.push(bytes);
        const old = byPath.get(change.path);
        next.set(change.path, {
          target: 'SERVER',
          path: change.path,
          contentHash: sha256Digest(bytes),
          byteLength: bytes.length,
          // Keep an executable script executable when its content is replaced.
          ...(old?.executable ? { executable: true as const } : {}),
        });
      }
      const target = sortManifest([...next.values()]);
      assertNoFileDirectoryClash(target);
      const { ops } = this.plan(current, target);
      this.fault('validated');
      if (ops.length === 0) return { ...stateOf(current), changedFiles: [] };

      for (const bytes of blobs) this.store.put(bytes);
      this.store.flush();
      this.fault('blobs-stored');
      this.commit({
        version: 2,
        projectId: this.projectId,
        action: 'APPLY_CHANGES',
        rootReal: this.rootRealOrCreate(),
        target: { contentHash: canonicalManifestHash(target), fileCount: target.length },
        ops,
      });
      const changedFiles = ops.map((op) => op.path).sort(compareCodeUnits);
      return { ...this.scanFolder(false, false), changedFiles };
    });
  }

  /** What `restore(files)` would do to the folder as it is now; touches nothing. */
  previewRestore(files: readonly ManifestFile[]): RestorePlan {
    return this.guard(() => {
      const target = this.restoreTarget(files);
      return this.plan(this.scanList(true), target).summary;
    });
  }

  /**
   * Makes the folder's files exactly those of `files`, writing only what differs: added and
   * changed files and links from the content store, deletions (and the directories they left
   * empty), and execute-bit changes. Files the restore cannot put back are left as they are and
   * listed in `notRestorable` (see {@link RestorePlan}). Every blob to write must be in the store
   * (`NOT_FOUND`, nothing touched) and match its manifest entry (`HASH_MISMATCH`). Atomic as
   * described on the class. Returns the folder's new state, whose `contentHash` equals
   * `canonicalManifestHash(files)` unless something was not restorable.
   */
  restore(files: readonly ManifestFile[]): RestoreResult {
    return this.guard(() => {
      this.refuseIfPending();
      const target = this.restoreTarget(files);
      const current = this.scanList(true);
      const { ops, summary, written } = this.plan(current, target);
      for (const op of ops) {
        if (op.op !== 'write' && op.op !== 'link') continue;
        if (!this.store.has(op.contentHash))
          throw new WorkspaceError(
            'NOT_FOUND',
            `No stored content for ${describePath(op.path)} (${op.contentHash})`,
            { path: op.path },
          );
      }
      this.fault('validated');
      const targetHash = manifestHashes.get(target) ?? canonicalManifestHash(target);
      manifestHashes.set(target, targetHash);
      if (ops.length > 0)
        this.commit(
          {
            version: 2,
            projectId: this.projectId,
            action: 'RESTORE',
            rootReal: this.rootRealOrCreate(),
            target: { contentHash: targetHash, fileCount: target.length },
            ops,
          },
          written,
        );
      // Everything was put back: the folder is the target (its written files are in the scan
      // cache already), so the target's own hash is the state; otherwise scan what is there.
      const after =
        summary.notRestorable.length === 0
          ? { files: target, contentHash: targetHash }
          : this.scanFolder(false, false);
      return {
        ...after,
        written: written.files,
        removed: summary.removed.map((f) => f.path),
        modeChanged: summary.modeChanged.map((f) => f.path),
        notRestorable: summary.notRestorable,
      };
    });
  }

  /**
   * Finishes or undoes an interrupted change: a committed journal is rolled forward (the folder
   * ends wholly after the change), otherwise leftover temp files are removed (wholly before).
   * Throws `JOURNAL_CORRUPT` for a journal it cannot trust and `PATH_INVALID` when the folder
   * moved or a directory in it became a symlink, leaving the journal in place either way.
   */
  recover(): { rolledForward: boolean } {
    return this.guard(() => {
      this.sweepJournalTemps();
      const body = this.readJournal();
      if (!body) {
        this.sweepFolderTemps();
        return { rolledForward: false };
      }
      this.rollForward(body, true);
      return { rolledForward: true };
    });
  }

  /** True while a committed change has not been fully applied; `recover()` completes it. */
  hasPendingJournal(): boolean {
    return fs.existsSync(this.journalPath);
  }

  /**
   * `files` checked and reduced to manifest fields (see validateRestoreManifest); a list this
   * workspace produced itself (a scan, a stored manifest it read back, a list it checked before)
   * is used as it is. Those lists are never mutated: they are shared with the scan cache.
   */
  private restoreTarget(files: readonly ManifestFile[]): ManifestFile[] {
    const known = checkedManifests.get(files);
    if (known) return known as ManifestFile[];
    const checked = markSorted(validateRestoreManifest(files));
    checkedManifests.set(files, checked);
    checkedManifests.set(checked, checked);
    const hash = manifestHashes.get(files);
    if (hash) manifestHashes.set(checked, hash);
    return checked;
  }

  /** A named step (`path`: of a file, appended to the name, built only when someone listens). */
  private fault(step: string, path?: string): void {
    if (this.faultInjector) this.faultInjector(path === undefined ? step : step + path);
  }

  private remember(hash: string, files: ManifestFile[]): void {
    this.manifests.delete(hash);
    this.manifests.set(hash, files);
    while (this.manifests.size > MANIFEST_CACHE) {
      const oldest = this.manifests.keys().next().value;
      if (oldest === undefined) break;
      this.manifests.delete(oldest);
    }
  }

  /** Turns system errors into `IO` errors with no absolute path in the message; passes the rest. */
  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof WorkspaceError) throw err;
      const sys = err as NodeJS.ErrnoException | null;
      if (typeof sys === 'object' && sys !== null && typeof sys.syscall === 'string')
        throw new WorkspaceError(
          'IO',
          `Project ${this.projectId}: ${sys.syscall} failed with ${errnoOf(err)}`,
          { cause: err },
        );
      throw err;
    }
  }

  private refuseIfPending(): void {
    if (this.hasPendingJournal())
      throw new WorkspaceError(
        'IO',
        `Project ${this.projectId} has an interrupted change; call recover() first`,
      );
  }

  private abs(rel: string): string {
    if (rel === '') return this.root;
    // A checked path has no empty, `.` or `..` segments: with `/` as the separator, joining is
    // appending (path.join would normalize it again, for every file of a restore).
    if (sep === '/') return this.root.endsWith('/') ? this.root + rel : `${this.root}/${rel}`;
    return join(this.root, ...rel.split('/'));
  }

  private rootReal(): string | null {
    try {
      return fs.realpathSync(this.root);
    } catch (err) {
      if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return null;
      throw err;
    }
  }

  private rootRealOrCreate(): string {
    fs.mkdirSync(this.root, { recursive: true });
    return fs.realpathSync(this.root);
  }

  /** The real path of `rel` if it exists and stays inside the folder; PATH_INVALID if it escapes. */
  private resolveInside(rel: string): string | null {
    const rootReal = this.rootReal();
    if (!rootReal)
      throw new WorkspaceError(
        'NOT_FOUND',
        `The folder of project ${this.projectId} does not exist`,
      );
    let real: string;
    try {
      real = fs.realpathSync(this.abs(rel));
    } catch (err) {
      if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return null;
      throw err;
    }
    if (!isInside(real, rootReal))
      throw new WorkspaceError(
        'PATH_INVALID',
        `${describePath(rel)} resolves outside the project folder`,
        { path: rel },
      );
    return real;
  }

  /**
   * The folder's files without their manifest hash (what a restore or a patch compares with):
   * neither the 3 MB text of a 20,000-file tree is built and hashed nor the list remembered.
   */
  private scanList(allowMissing: boolean): ManifestFile[] {
    if (!this.rootIsDirectory(allowMissing)) return [];
    const { files } = this.watchedScan({}, null);
    checkedManifests.set(files, files);
    return markSorted(files);
  }

  /** True when the root is a directory; false when it is missing and `allowMissing`; else NOT_FOUND. */
  private rootIsDirectory(allowMissing: boolean): boolean {
    const rootSt = lstatOrNull(this.root);
    if (!rootSt || !fs.statSync(this.root, { throwIfNoEntry: false })?.isDirectory()) {
      if (allowMissing && !rootSt) return false;
      throw new WorkspaceError(
        'NOT_FOUND',
        `The folder of project ${this.projectId} does not exist`,
      );
    }
    return true;
  }

  /**
   * One scan through the watcher when there is one (`synced`: its cookie came back since the
   * caller was asked), recorded in `lastScan`.
   */
  private watchedScan(
    hooks: Parameters<TreeScanner['scan']>[0],
    synced: { ms: number } | null,
  ): ReturnType<TreeScanner['scan']> {
    const watch = this.watcher?.begin(synced !== null) ?? null;
    const started = performance.now();
    let result: ReturnType<TreeScanner['scan']>;
    try {
      result = this.scanner.scan(hooks, watch);
    } catch (err) {
      watch?.end(false);
      throw err;
    }
    const distrust = result.distrust === undefined ? 'not watching' : result.distrust;
    this.lastScan = {
      path: distrust === null ? 'WATCHER' : 'FULL',
      distrust,
      syncMs: synced?.ms ?? 0,
      walkMs: performance.now() - started,
      filesStatted: result.filesStatted,
      filesRead: result.filesRead,
      dirsListed: result.dirsListed,
    };
    return result;
  }

  private scanFolder(
    allowMissing: boolean,
    storeContent: boolean,
    synced: { ms: number } | null = null,
  ): WorkspaceState {
    if (!this.rootIsDirectory(allowMissing)) return stateOf([]);
    const store = this.store;
    const result = this.watchedScan(
      storeContent
        ? {
            onContent: (file, bytes) => store.putHashed(file.contentHash, bytes),
            needsContent: (file) => !file.notCaptured && !store.has(file.contentHash),
            storedMark: store.removals,
          }
        : {},
      synced,
    );
    // Most scans differ from the last manifest stored whole in a few entries: their text is
    // hashed as pieces of that one's bytes and their own, never joined into a 3 MB string.
    const delta = this.deltaBase ? deltaText(this.deltaBase, result.files, result.canonical) : null;
    let text: string | null = null;
    let contentHash: string;
    if (delta) contentHash = delta.hash;
    else {
      text = '{"files":[' + result.canonical.join(',') + ']}';
      contentHash = sha256Digest(text);
    }
    if (storeContent && !store.has(contentHash))
      this.storeScannedManifest(contentHash, text, delta, result.files, result.canonical);
    // A scan's list holds only valid, sorted, unique paths (the walk checks each name).
    checkedManifests.set(result.files, result.files);
    markSorted(result.files);
    manifestHashes.set(result.files, contentHash);
    this.remember(contentHash, result.files);
    return { files: result.files, contentHash };
  }

  /**
   * Stores a scan's manifest text: as a delta against the last manifest stored whole when that
   * is allowed and small (at most a quarter of the base's bytes of its own), else whole, which
   * then becomes the base. A one-file checkpoint of a 20,000-file tree thus writes a few hundred
   * bytes instead of deflating and writing its 3 MB manifest.
   */
  private storeScannedManifest(
    hash: string,
    text: string | null,
    delta: { pieces: DeltaPiece[]; length: number } | null,
    files: readonly ManifestFile[],
    canonical: readonly string[],
  ): void {
    const base = this.deltaBase;
    if (
      base &&
      delta &&
      this.store.putDelta(hash, delta.length, base.hash, base.bytes, delta.pieces)
    )
      return;
    const bytes = Buffer.from(text ?? '{"files":[' + canonical.join(',') + ']}', 'utf8');
    this.store.putHashed(hash, bytes);
    const starts = new Float64Array(canonical.length);
    let at = MANIFEST_PREFIX.length;
    for (let k = 0; k < canonical.length; k++) {
      starts[k] = at;
      at += Buffer.byteLength(canonical[k]!, 'utf8') + 1;
    }
    this.deltaBase = { hash, bytes, files, canonical, starts };
  }

  /**
   * The ops turning `current` into `target`: deletes first, then writes, links and mode changes.
   * Refuses (PATH_INVALID) writes the folder could not take without touching files outside both
   * manifests: a parent that is a file or symlink staying in place, or a directory that would
   * not end up empty.
   */
  private plan(
    current: readonly ManifestFile[],
    target: readonly ManifestFile[],
  ): { ops: JournalOp[]; summary: RestorePlan; written: PlannedWrites } {
    const diff = diffManifests(current, target);
    const summary: RestorePlan = {
      added: [],
      changed: [],
      removed: [],
      modeChanged: [],
      notRestorable: [],
    };
    const cantPutBack = (path: string, reason: string) =>
      summary.notRestorable.push({ path, reason });

    for (const f of diff.removed) {
      if (f.notCaptured) cantPutBack(f.path, 'over the per-file cap now, so it is kept as it is');
      else summary.removed.push(f);
    }
    // Paths in the folder's manifest that the change deletes (those are all it loses).
    const removedPaths = new Set(summary.removed.map((f) => f.path));
    const goingAway = (rel: string): boolean => removedPaths.has(rel);
    const changedPaths = new Set(diff.changed.map((c) => c.path));
    for (const f of diff.added) {
      if (f.notCaptured) cantPutBack(f.path, 'not captured: over the cap');
      else summary.added.push(f);
    }
    for (const c of diff.changed) {
      if (c.to.notCaptured) cantPutBack(c.path, 'not captured: over the cap');
      else if (c.from.notCaptured)
        cantPutBack(c.path, 'over the per-file cap now, so it is kept as it is');
      else if (
        c.from.contentHash === c.to.contentHash &&
        c.from.byteLength === c.to.byteLength &&
        (c.from.kind ?? null) === (c.to.kind ?? null)
      )
        summary.modeChanged.push(c.to);
      else summary.changed.push({ from: c.from, to: c.to });
    }

    const ops: JournalOp[] = summary.removed.map((f) => ({ op: 'delete', path: f.path }));
    const written: ManifestFile[] = [];
    const targetCanonical = this.canonicalOf(target);
    const writtenCanonical: (string | undefined)[] | null = targetCanonical ? [] : null;
    let k = 0;
    /** 0: a directory, 1: missing, 2: a file the change deletes, 3: in the way (not a directory). */
    const dirState = new Map<string, 0 | 1 | 2 | 3>();
    let lastParent: string | null = null;
    let parentMissing = false;
    const ignoredInPlace = new Set<string>();
    // Added and changed files merged in path order (both are sorted runs of the target).
    let ia = 0;
    let ic = 0;
    for (;;) {
      const a = summary.added[ia];
      const c = summary.changed[ic]?.to;
      if (a === undefined && c === undefined) break;
      const f =
        c === undefined || (a !== undefined && compareCodeUnits(a.path, c.path) < 0) ? a! : c;
      if (f === a) ia += 1;
      else ic += 1;
      // Every ancestor directory once per run of files in the same directory.
      const slash = f.path.lastIndexOf('/');
      const parent = slash < 0 ? '' : f.path.slice(0, slash);
      if (parent !== lastParent) {
        lastParent = parent;
        parentMissing = false;
        for (let at = f.path.indexOf('/'); at >= 0; at = f.path.indexOf('/', at + 1)) {
          const ancestor = f.path.slice(0, at);
          let state = dirState.get(ancestor);
          if (state === undefined) {
            const st = lstatOrNull(this.abs(ancestor));
            state = !st ? 1 : goingAway(ancestor) ? 2 : st.isDirectory() ? 0 : 3;
            dirState.set(ancestor, state);
          }
          if (state === 3)
            throw new WorkspaceError(
              'PATH_INVALID',
              `Cannot write ${describePath(f.path)}: ${describePath(ancestor)} is not a directory`,
              { path: f.path },
            );
          if (state === 1) parentMissing = true;
          // Nothing below a missing directory or a deleted file is there to check.
          if (state !== 0) break;
        }
      }
      const here = parentMissing ? null : lstatOrNull(this.abs(f.path));
      if (here?.isDirectory() && !this.emptiesOut(f.path, goingAway))
        throw new WorkspaceError(
          'PATH_INVALID',
          `Cannot write ${describePath(f.path)}: a non-empty directory is there`,
          { path: f.path },
        );
      if (here && !here.isDirectory() && !changedPaths.has(f.path)) {
        // Something the project ignores is there: a restore never overwrites what it did not capture.
        cantPutBack(f.path, 'a file the project ignores is in its place');
        ignoredInPlace.add(f.path);
        continue;
      }
      ops.push(
        f.kind === 'SYMLINK'
          ? { op: 'link', path: f.path, contentHash: f.contentHash, byteLength: f.byteLength }
          : {
              op: 'write',
              path: f.path,
              contentHash: f.contentHash,
              byteLength: f.byteLength,
              ...(f.executable ? { executable: true } : {}),
            },
      );
      written.push(f);
      if (writtenCanonical && targetCanonical) {
        // `f` is an entry of the sorted target, after the last one found.
        while (k < target.length && target[k] !== f) k += 1;
        writtenCanonical.push(k < target.length ? targetCanonical[k] : undefined);
      }
    }
    if (ignoredInPlace.size > 0)
      summary.added = summary.added.filter((a) => !ignoredInPlace.has(a.path));
    for (const f of summary.modeChanged)
      ops.push({ op: 'chmod', path: f.path, executable: f.executable === true });
    summary.notRestorable.sort((a, b) => compareCodeUnits(a.path, b.path));
    return { ops, summary, written: { files: written, canonical: writtenCanonical } };
  }

  /**
   * The canonical JSON of each entry of `files` (parallel to it) when this workspace holds it
   * anyway: for the last manifest stored whole. Else null (a seed then writes its own).
   */
  private canonicalOf(files: readonly ManifestFile[]): readonly string[] | null {
    const base = this.deltaBase;
    return base && base.files === files ? base.canonical : null;
  }

  /** True when every file under the directory `rel` is deleted by the change. */
  private emptiesOut(rel: string, goingAway: (rel: string) => boolean): boolean {
    for (const entry of fs.readdirSync(this.abs(rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (entry.name === GIT_DIR) return false;
      if (entry.name.startsWith(TEMP_PREFIX) && !entry.isDirectory()) continue;
      if (entry.isDirectory() ? !this.emptiesOut(child, goingAway) : !goingAway(child))
        return false;
    }
    return true;
  }

  private commit(body: JournalBody, planned?: PlannedWrites): void {
    fs.mkdirSync(this.journalDir, { recursive: true });
    const temp = join(this.journalDir, `${this.journalName}.${tempName()}`);
    writeJournalDurably(temp, body);
    this.fault('journal-temp-written');
    fs.renameSync(temp, this.journalPath);
    fsyncDir(this.journalDir);
    this.fault('journal-written');
    this.rollForward(body, false, planned);
  }

  /**
   * Checks (and with `create`, makes) the directory `rel`: the root must be the folder the
   * journal was written for and every component below it a real directory. Returns false when
   * it does not exist and `create` is false.
   */
  private safeDir(rel: string, rootReal: string, create: boolean): boolean {
    if (this.verifiedDirs.has(rel)) {
      // Re-check the directory itself before each step: it may have been swapped since.
      const st = lstatOrNull(this.abs(rel));
      if (st && st.isDirectory() && !st.isSymbolicLink()) return true;
      this.verifiedDirs.delete(rel);
    }
    const real = this.rootReal();
    if (real !== rootReal)
      throw new WorkspaceError(
        'PATH_INVALID',
        `The folder of project ${this.projectId} is not the one the interrupted change was for; nothing more is written`,
      );
    if (rel === '') return true;
    const segments = rel.split('/');
    for (let i = 1; i <= segments.length; i++) {
      const part = segments.slice(0, i).join('/');
      if (this.verifiedDirs.has(part) && i < segments.length) continue;
      const st = lstatOrNull(this.abs(part));
      if (!st) {
        if (!create) return false;
        fs.mkdirSync(this.abs(part));
      } else if (!create && !st.isSymbolicLink() && !st.isDirectory()) {
        // A file where a directory was: nothing below it exists to delete.
        return false;
      } else if (st.isSymbolicLink() || !st.isDirectory()) {
        throw new WorkspaceError(
          'PATH_INVALID',
          `${describePath(part)} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a directory'}; nothing is written through it`,
          { path: part },
        );
      }
      this.verifiedDirs.add(part);
    }
    return true;
  }

  /** Applies a committed journal; safe to run again after a crash at any step. */
  private rollForward(body: JournalBody, recovering: boolean, planned?: PlannedWrites): void {
    this.verifiedDirs = new Set();
    const rootReal = body.rootReal;
    fs.mkdirSync(this.root, { recursive: true });
    this.safeDir('', rootReal, false);
    // Temp files of an interrupted change are recovery's to sweep: a change that follows a clean
    // run (or a recover()) has none to meet, and scans skip the prefix anyway.
    if (recovering) this.sweepFolderTemps();
    const touchedDirs = new Set<string>(['']);
    const touchedFiles: string[] = [];
    const deletes = body.ops.filter((op) => op.op === 'delete');
    /** The index in `planned` of the next write or link op (they are in the same order). */
    let nextPlanned = 0;
    const others = body.ops.filter((op) => op.op !== 'delete');

    for (const op of deletes) {
      const parent = parentOf(op.path);
      if (this.safeDir(parent, rootReal, false)) {
        const abs = this.abs(op.path);
        // A directory here means an earlier run already replaced the file by a written subtree.
        const st = lstatOrNull(abs);
        if (st && !st.isDirectory()) {
          fs.unlinkSync(abs);
          touchedDirs.add(parent);
        }
      }
      this.fault('file-deleted:', op.path);
    }
    for (const op of deletes) this.removeEmptyParents(op.path, rootReal, touchedDirs);
    this.fault('dirs-removed');

    for (const op of others) {
      const parent = parentOf(op.path);
      this.safeDir(parent, rootReal, true);
      const abs = this.abs(op.path);
      const existing = lstatOrNull(abs);
      if (op.op === 'chmod') {
        if (existing?.isFile()) {
          const mode = op.executable ? existing.mode | 0o111 : existing.mode & ~0o111;
          fs.chmodSync(abs, mode & 0o7777);
          touchedFiles.push(op.path);
        }
        continue;
      }
      if (recovering && existing && this.alreadyApplied(abs, existing, op)) continue;
      // plan() checked that the deletes above emptied this directory.
      if (existing?.isDirectory()) fs.rmdirSync(abs);
      // Nothing in the way: write under the final name at once (O_EXCL, so never through
      // anything that appeared there). A crash mid-write leaves a torn file that recovery finds
      // not applied and replaces. Something there: stage beside it and rename over it.
      const direct = !existing || existing.isDirectory();
      const temp = direct ? abs : join(this.abs(parent), tempName());
      let written: fs.Stats | null = null;
      if (op.op === 'link') {
        const bytes = this.store.get(op.contentHash);
        if (bytes.length !== op.byteLength) throw lengthMismatch(op);
        fs.symlinkSync(bytes.toString('utf8'), temp);
      } else {
        const length = this.store.rawLength(op.contentHash);
        // Not stored: get() names the reason (NOT_FOUND).
        if (length === null) this.store.get(op.contentHash);
        if (length !== op.byteLength) throw lengthMismatch(op);
        written = writeBlobNoSync(temp, this.store, op.contentHash, op.executable ? 0o777 : 0o666);
      }
      this.fault('file-staged:', op.path);
      if (!direct) {
        this.safeDir(parent, rootReal, false);
        fs.renameSync(temp, abs);
        // A rename moves the file's ctime: stat it where it is now.
        written = null;
      }
      // The target's own entry (and its canonical JSON) when this process planned the op: no
      // second copy of the manifest.
      const file = planned?.files[nextPlanned];
      const mine = file !== undefined && file.path === op.path;
      this.scanner.seed(
        op.path,
        written ?? fs.lstatSync(abs),
        mine
          ? file
          : {
              target: 'SERVER',
              path: op.path,
              contentHash: op.contentHash,
              byteLength: op.byteLength,
              ...(op.op === 'link' ? { kind: 'SYMLINK' as const } : {}),
              ...(op.op === 'write' && op.executable ? { executable: true as const } : {}),
            },
        mine ? planned?.canonical?.[nextPlanned] : undefined,
      );
      nextPlanned += 1;
      touchedDirs.add(parent);
      touchedFiles.push(op.path);
      this.fault('file-renamed:', op.path);
    }
    this.flushTree(touchedFiles, touchedDirs);
    this.fault('flushed');

    this.fault('before-journal-delete');
    fs.rmSync(this.journalPath, { force: true });
    fsyncDir(this.journalDir);
    this.fault('journal-deleted');
    this.verifiedDirs = new Set();
  }

  /** True when the path already holds exactly what the op writes (recovery skips it). */
  private alreadyApplied(abs: string, st: fs.Stats, op: JournalOp): boolean {
    if (op.op === 'link') {
      if (!st.isSymbolicLink()) return false;
      return sha256Digest(fs.readlinkSync(abs, 'utf8')) === op.contentHash;
    }
    if (op.op !== 'write' || !st.isFile() || st.size !== op.byteLength) return false;
    if (((st.mode & 0o100) !== 0) !== (op.executable === true)) return false;
    return sha256Digest(fs.readFileSync(abs)) === op.contentHash;
  }

  /** Makes the renames and writes durable: one `sync -f` of the file system, else fsync each. */
  private flushTree(files: readonly string[], dirs: ReadonlySet<string>): void {
    if (files.length === 0 && dirs.size <= 1) {
      fsyncDir(this.root);
      return;
    }
    if (files.length > 64) {
      const r = spawnSync('sync', ['-f', this.root], { stdio: 'ignore', timeout: 60_000 });
      if (r.status === 0) return;
    }
    for (const rel of files) fsyncPath(this.abs(rel));
    for (const dir of dirs) if (fs.existsSync(this.abs(dir))) fsyncDir(this.abs(dir));
  }

  private removeEmptyParents(rel: string, rootReal: string, touched: Set<string>): void {
    const parts = rel.split('/');
    parts.pop();
    for (; parts.length > 0; parts.pop()) {
      const dir = parts.join('/');
      if (!this.safeDir(parentOf(dir), rootReal, false)) continue;
      const st = lstatOrNull(this.abs(dir));
      if (!st) continue;
      if (st.isSymbolicLink() || !st.isDirectory()) return;
      try {
        fs.rmdirSync(this.abs(dir));
        this.verifiedDirs.delete(dir);
        touched.add(parentOf(dir));
      } catch (err) {
        if (isErrno(err, 'ENOENT')) continue;
        if (isErrno(err, 'ENOTEMPTY') || isErrno(err, 'EEXIST') || isErrno(err, 'ENOTDIR')) return;
        throw err;
      }
    }
  }

  /** Removes staged temp files left in the folder by an interrupted change (never through links). */
  private sweepFolderTemps(): void {
    if (!fs.existsSync(this.root)) return;
    const visit = (absDir: string): void => {
      for (const entry of fs.readdirSync(absDir, { withFileTypes: true })) {
        if (entry.name === GIT_DIR) continue;
        const abs = join(absDir, entry.name);
        if (entry.isDirectory()) visit(abs);
        else if (entry.name.startsWith(TEMP_PREFIX)) fs.rmSync(abs, { force: true });
      }
    };
    visit(this.root);
  }

  private sweepJournalTemps(): void {
    if (!fs.existsSync(this.journalDir)) return;
    const prefix = `${this.journalName}.${TEMP_PREFIX}`;
    for (const name of fs.readdirSync(this.journalDir))
      if (name.startsWith(prefix)) fs.rmSync(join(this.journalDir, name), { force: true });
  }

  private readJournal(): JournalBody | null {
    let text: string;
    try {
      text = fs.readFileSync(this.journalPath, 'utf8');
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return null;
      throw err;
    }
    const corrupt = (why: string): never => {
      throw new WorkspaceError(
        'JOURNAL_CORRUPT',
        `Journal of project ${this.projectId} is unusable: ${why}`,
      );
    };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return corrupt('not JSON');
    }
    if (!isRecord(parsed) || !isRecord(parsed.body)) return corrupt('unexpected shape');
    let checksum: string;
    try {
      checksum = sha256Digest(canonicalJson(parsed.body));
    } catch {
      return corrupt('not canonical JSON');
    }
    if (parsed.checksum !== checksum) return corrupt('checksum mismatch');
    const body = parsed.body;
    if (body.projectId !== this.projectId || !Array.isArray(body.ops))
      return corrupt('unexpected header');
    if (body.version === 1) {
      // Written before journals named the folder: the folder it was written for is this one.
      body.rootReal = this.rootReal() ?? this.root;
    } else if (body.version !== 2 || typeof body.rootReal !== 'string') {
      return corrupt('unexpected header');
    }
    for (const op of body.ops as unknown[]) {
      if (!isRecord(op) || typeof op.path !== 'string') return corrupt('bad op');
      // A journal is data from disk: its paths get the same checks as a caller's.
      try {
        validateWritablePath(op.path);
      } catch {
        return corrupt(`bad path ${describePath(op.path)}`);
      }
      if (op.op === 'delete') continue;
      if (op.op === 'chmod') {
        if (typeof op.executable !== 'boolean') return corrupt('bad op');
        continue;
      }
      if (
        (op.op !== 'write' && op.op !== 'link') ||
        typeof op.contentHash !== 'string' ||
        !DIGEST.test(op.contentHash)
      )
        return corrupt('bad op');
      if (!Number.isSafeInteger(op.byteLength)) return corrupt('bad op');
    }
    return body as unknown as JournalBody;
  }
}

/**
 * The target's entries a restore's write and link ops were planned from, in op order (what the
 * scan cache is seeded with), and their canonical JSON when the workspace held it already.
 */
interface PlannedWrites {
  files: ManifestFile[];
  canonical: readonly (string | undefined)[] | null;
}

/** A manifest stored whole, with what is needed to write the next ones as deltas against it. */
interface DeltaBase {
  hash: string;
  /** Its canonical text (UTF-8). */
  bytes: Buffer;
  files: readonly ManifestFile[];
  /** Canonical JSON of each file (as in the text), parallel to `files`. */
  canonical: readonly string[];
  /** Byte offset in `bytes` where each file's canonical JSON starts. */
  starts: Float64Array;
}

const MANIFEST_PREFIX = '{"files":[';

/**
 * The canonical manifest text of `files` as a delta against `base` (see manifestDelta), with its
 * sha256 and byte length, or null when it is not small. Its length is checked against the
 * entries' own (every entry, comma and bracket exactly once), so pieces that lost or doubled an
 * entry are refused (the caller then joins and hashes the text itself).
 */
function deltaText(
  base: DeltaBase,
  files: readonly ManifestFile[],
  canonical: readonly string[],
): { pieces: DeltaPiece[]; length: number; hash: string } | null {
  const pieces = manifestDelta(base, files, canonical);
  if (!pieces) return null;
  const digest = createHash('sha256');
  let length = 0;
  for (const piece of pieces) {
    const bytes =
      'copy' in piece ? base.bytes.subarray(piece.copy, piece.copy + piece.length) : piece.bytes;
    digest.update(bytes);
    length += bytes.length;
  }
  let expected = MANIFEST_PREFIX.length + 2 + Math.max(0, canonical.length - 1);
  for (const c of canonical) expected += Buffer.byteLength(c, 'utf8');
  if (length !== expected) return null;
  return { pieces, length, hash: 'sha256:' + digest.digest('hex') };
}

/**
 * The canonical text of the sorted manifest `files` as pieces of `base`'s text (the runs of
 * entries both share) and bytes of its own (the entries that differ), or null when more than a
 * quarter of the base's bytes would be its own (then storing it whole is as cheap). The pieces
 * join to exactly the text canonicalManifestText gives; putDelta checks that against the hash.
 */
function manifestDelta(
  base: DeltaBase,
  files: readonly ManifestFile[],
  canonical: readonly string[],
): DeltaPiece[] | null {
  const pieces: DeltaPiece[] = [];
  const budget = base.bytes.length >> 2;
  let ownBytes = 0;
  /** What is pending: a range of the base being extended, or text of its own (never both). */
  let pending: { from: number; to: number } | null = { from: 0, to: MANIFEST_PREFIX.length };
  let own: string[] = [];
  const flush = (): void => {
    if (pending) pieces.push({ copy: pending.from, length: pending.to - pending.from });
    else if (own.length > 0) pieces.push({ bytes: Buffer.from(own.join(''), 'utf8') });
    pending = null;
    own = [];
  };
  const copy = (from: number, to: number): void => {
    if (pending && pending.to === from) {
      pending.to = to;
      return;
    }
    flush();
    pending = { from, to };
  };
  const write = (text: string): void => {
    if (pending) flush();
    own.push(text);
    ownBytes += text.length;
  };
  const n = base.files.length;
  let i = 0;
  for (let j = 0; j < files.length; j++) {
    const file = files[j]!;
    while (i < n && base.files[i] !== file && compareCodeUnits(base.files[i]!.path, file.path) < 0)
      i += 1;
    if (i < n && (base.files[i] === file || base.canonical[i] === canonical[j])) {
      // The same entry: its bytes in the base, with the comma before it when both have one.
      const start = base.starts[i]!;
      // It ends before the next entry's comma (the last one before the closing `]}`).
      const end = i + 1 < n ? base.starts[i + 1]! - 1 : base.bytes.length - 2;
      if (j === 0) copy(start, end);
      else if (i > 0) copy(start - 1, end);
      else {
        write(',');
        copy(start, end);
      }
      i += 1;
    } else {
      if (i < n && base.files[i]!.path === file.path) i += 1;
      write(j === 0 ? canonical[j]! : ',' + canonical[j]!);
    }
    if (ownBytes > budget) return null;
  }
  const closeAt = base.bytes.length - 2;
  copy(closeAt, closeAt + 2);
  flush();
  return pieces;
}

/**
 * Manifest lists the workspace handed out or checked (never mutated afterwards): what
 * validateRestoreManifest made of each, and the hashes of those whose hash is known.
 */
const checkedManifests = new WeakMap<readonly ManifestFile[], readonly ManifestFile[]>();
const manifestHashes = new WeakMap<readonly ManifestFile[], string>();

function stateOf(files: ManifestFile[]): WorkspaceState {
  return { files, contentHash: canonicalManifestHash(files) };
}

/**
 * canonicalJson(body), as the reader checks it: every object below is written with its keys in
 * sorted order and holds only strings, booleans and safe integers, so the text is the same
 * (ProjectWorkspace.test.ts checks it), without the generic writer's garbage for 20,000 ops.
 */
export function journalBodyText(body: JournalBody): string {
  const pieces: string[] = [];
  emitJournalBody(body, (text) => pieces.push(text));
  return pieces.join('');
}

/**
 * The text of journalBodyText as pieces in order (a header, one per op, a trailer), so a
 * 20,000-op journal is written and hashed as it is made instead of as one 3 MB string.
 */
function emitJournalBody(body: JournalBody, emit: (text: string) => void): void {
  const safe = (n: number): number => {
    if (!Number.isSafeInteger(n))
      throw new TypeError(`canonicalJson: a byteLength is not a safe integer (${n})`);
    return n;
  };
  emit(`{"action":${JSON.stringify(body.action)},"ops":[`);
  const ops = body.ops;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    let text: string;
    switch (op.op) {
      case 'delete':
        text = JSON.stringify({ op: op.op, path: op.path });
        break;
      case 'chmod':
        text = JSON.stringify({ executable: op.executable, op: op.op, path: op.path });
        break;
      case 'link':
        text = JSON.stringify({
          byteLength: safe(op.byteLength),
          contentHash: op.contentHash,
          op: op.op,
          path: op.path,
        });
        break;
      case 'write':
        text = JSON.stringify(
          op.executable === undefined
            ? {
                byteLength: safe(op.byteLength),
                contentHash: op.contentHash,
                op: op.op,
                path: op.path,
              }
            : {
                byteLength: safe(op.byteLength),
                contentHash: op.contentHash,
                executable: op.executable,
                op: op.op,
                path: op.path,
              },
        );
        break;
    }
    emit(i === 0 ? text : ',' + text);
  }
  emit(
    `],"projectId":${JSON.stringify(body.projectId)},"rootReal":${JSON.stringify(body.rootReal)}` +
      `,"target":{"contentHash":${JSON.stringify(body.target.contentHash)},"fileCount":${safe(body.target.fileCount)}}` +
      `,"version":${safe(body.version)}}`,
  );
}

/** Journal text goes to its file through one buffer of this size. */
const JOURNAL_CHUNK = 64 * 1024;

/**
 * Writes canonicalJson({ body, checksum }) ("body" < "checksum") to a new file at `path` and
 * fsyncs it: the body's pieces are hashed and written through one 64 KiB buffer as they are
 * made, so the journal of a whole-tree restore never exists as one string (or its UTF-8 copy).
 */
function writeJournalDurably(path: string, body: JournalBody): void {
  const fd = fs.openSync(path, 'wx', 0o666);
  try {
    const buf = Buffer.allocUnsafe(JOURNAL_CHUNK);
    let at = 0;
    const flush = (): void => {
      let done = 0;
      while (done < at) done += fs.writeSync(fd, buf, done, at - done);
      at = 0;
    };
    const write = (text: string): void => {
      // (A UTF-16 code unit is at most 3 bytes of UTF-8.)
      if (at + text.length * 3 > buf.length) flush();
      if (text.length * 3 > buf.length) {
        const bytes = Buffer.from(text, 'utf8');
        let done = 0;
        while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done);
        return;
      }
      at += buf.write(text, at, 'utf8');
    };
    const digest = createHash('sha256');
    write('{"body":');
    emitJournalBody(body, (text) => {
      digest.update(text, 'utf8');
      write(text);
    });
    write(`,"checksum":${JSON.stringify('sha256:' + digest.digest('hex'))}}`);
    flush();
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function lengthMismatch(op: { path: string; contentHash: string }): WorkspaceError {
  return new WorkspaceError(
    'HASH_MISMATCH',
    `${describePath(op.path)}: byteLength does not match ${op.contentHash}`,
    { path: op.path },
  );
}

function parentOf(rel: string): string {
  const i = rel.lastIndexOf('/');
  return i < 0 ? '' : rel.slice(0, i);
}

function isInside(real: string, rootReal: string): boolean {
  return real === rootReal || real.startsWith(rootReal.endsWith(sep) ? rootReal : rootReal + sep);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Writes a stored blob to a new file without fsync (`rollForward` flushes all of them once at
 * the end), streamed and checked by the store; a blob that proves damaged leaves no file.
 * Returns the new file's stat, taken once its mode is final.
 */
function writeBlobNoSync(path: string, store: ContentStore, hash: string, mode: number): fs.Stats {
  const fd = fs.openSync(path, 'wx', mode);
  let st: fs.Stats;
  try {
    store.writeTo(hash, fd);
    // The umask may have cleared bits the manifest asks for.
    if (mode & 0o100) fs.fchmodSync(fd, fs.fstatSync(fd).mode | 0o100);
    st = fs.fstatSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(path, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  return st;
}

function fsyncPath(path: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(path, 'r');
    fs.fsyncSync(fd);
  } catch {
    // A link (or a file gone since) has nothing of its own to flush; its directory is synced.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** A valid relative path that also avoids the names the workspace never writes. */
function validateWritablePath(path: string): string {
  validateRelativePath(path);
  for (const segment of path.split('/'))
    if (segment === GIT_DIR || segment.startsWith(TEMP_PREFIX))
      throw new WorkspaceError(
        'PATH_INVALID',
        `${describePath(path)} is inside a reserved name (${segment})`,
        { path },
      );
  return path;
}

/** Refuses a manifest listing both `a` and `a/b`: no folder can hold both. */
function assertNoFileDirectoryClash(files: readonly ManifestFile[]): void {
  const paths = new Set(files.map((f) => f.path));
  for (const f of files) {
    let at = f.path.indexOf('/');
    while (at >= 0) {
      const ancestor = f.path.slice(0, at);
      if (paths.has(ancestor))
        throw new WorkspaceError(
          'PATH_INVALID',
          `${describePath(ancestor)} cannot be both a file and a directory`,
          { path: f.path },
        );
      at = f.path.indexOf('/', at + 1);
    }
  }
}

/** Checks a manifest to restore and returns it sorted, reduced to the manifest fields. */
function validateRestoreManifest(files: readonly ManifestFile[]): ManifestFile[] {
  const seen = new Set<string>();
  const out: ManifestFile[] = [];
  for (const f of files) {
    validateWritablePath(f.path);
    if (f.target !== 'SERVER')
      throw new WorkspaceError(
        'PATH_INVALID',
        `${describePath(f.path)}: only SERVER files live in a project folder`,
        { path: f.path },
      );
    if (seen.has(f.path))
      throw new WorkspaceError('PATH_INVALID', `${describePath(f.path)} is listed twice`, {
        path: f.path,
      });
    seen.add(f.path);
    if (typeof f.contentHash !== 'string' || !DIGEST.test(f.contentHash))
      throw new WorkspaceError('NOT_FOUND', `${describePath(f.path)} has no valid contentHash`, {
        path: f.path,
      });
    if (!Number.isSafeInteger(f.byteLength) || f.byteLength < 0)
      throw new WorkspaceError(
        'HASH_MISMATCH',
        `${describePath(f.path)} has an invalid byteLength`,
        { path: f.path },
      );
    out.push({
      target: 'SERVER',
      path: f.path,
      contentHash: f.contentHash,
      byteLength: f.byteLength,
      ...(f.kind === 'SYMLINK' ? { kind: 'SYMLINK' as const } : {}),
      ...(f.executable && f.kind !== 'SYMLINK' ? { executable: true as const } : {}),
      ...(f.notCaptured === 'OVER_CAP' ? { notCaptured: 'OVER_CAP' as const } : {}),
    });
  }
  const sorted = sortManifest(out);
  assertNoFileDirectoryClash(sorted);
  return sorted;
}
