import * as fs from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { MAX_CHECKPOINT_FILES } from '../../protocol/contract.ts';
import { canonicalJson } from './canonicalJson.ts';
import type { ContentStore } from './contentStore.ts';
import {
  TEMP_PREFIX,
  errnoOf,
  fsyncDir,
  isErrno,
  lstatOrNull,
  tempName,
  writeFileDurably,
} from './durableFs.ts';
import {
  DIGEST,
  canonicalManifestHash,
  describePath,
  diffManifests,
  sha256Digest,
  sortManifest,
  validateRelativePath,
  type ManifestFile,
} from './manifest.ts';
import { SAMPLE_PROJECT_FILES } from './sampleProject.ts';
import { WorkspaceError } from './WorkspaceError.ts';

/** Largest file a scan accepts (bytes). */
export const MAX_FILE_BYTES = 1024 * 1024;
/** Most changes in one `applyChanges` call. */
export const MAX_PATCH_CHANGES = 16;
/** Largest new content of one change in `applyChanges` (UTF-8 bytes). */
export const MAX_PATCH_CONTENT_BYTES = 64 * 1024;

/** Directory names never scanned, restored or written, wherever they appear. */
const SKIPPED_NAMES: ReadonlySet<string> = new Set(['.git', 'node_modules']);
const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

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

export interface ProjectWorkspaceOptions {
  /** Names the journal file; letters, digits, `.`, `_`, `-`, at most 128. */
  projectId: string;
  /** The real project folder. */
  root: string;
  contentStore: ContentStore;
  /** Where the journal lives: in the data dir, never inside the project folder. */
  journalDir: string;
  /** Called at each named step of a change; tests throw from it to simulate a crash there. */
  faultInjector?: (step: string) => void;
}

type JournalOp =
  | { op: 'delete'; path: string }
  | { op: 'write'; path: string; contentHash: string; byteLength: number };

interface JournalBody {
  version: 1;
  projectId: string;
  action: 'APPLY_CHANGES' | 'RESTORE';
  target: WorkspaceState;
  ops: JournalOp[];
}

/**
 * One project folder on disk: scans it into a manifest, and changes it atomically.
 *
 * Every change (`applyChanges`, `restore`) follows one protocol, so that a crash at any point
 * leaves the folder, after `recover()`, wholly before or wholly after the change:
 * 1. Validate everything and make sure every byte to be written is in the content store.
 *    Nothing in the folder has been touched; a failure here changes nothing.
 * 2. Write the journal (target manifest + ops) to a temp file in `journalDir`, fsync, rename it
 *    to `<projectId>.journal.json`: the commit point.
 * 3. Roll forward: delete removed files, remove the directories that left empty, then for each
 *    written file stage a temp file (`.studio-tmp-*`) next to it, fsync and rename it into place.
 * 4. Delete the journal.
 *
 * `recover()` (call it on startup, and whenever a change threw) rolls a committed journal forward
 * again; every op is idempotent. Without a journal it only sweeps temp files, which is the
 * rollback of an uncommitted change since nothing else was touched.
 *
 * Fault steps, in order: `validated`, `blobs-stored` (applyChanges only), `journal-temp-written`,
 * `journal-written`, `file-deleted:<path>`..., `dirs-removed`, `file-staged:<path>`,
 * `file-renamed:<path>`..., `before-journal-delete`, `journal-deleted`.
 */
export class ProjectWorkspace {
  readonly projectId: string;
  readonly root: string;
  private readonly store: ContentStore;
  private readonly journalDir: string;
  private readonly journalName: string;
  private readonly journalPath: string;
  private readonly faultInjector: ((step: string) => void) | undefined;

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
   * Every regular file under `root` as a sorted manifest (target `SERVER`). Skips `.git/`,
   * `node_modules/` and the layer's temp files, follows symlinks to files inside `root`, skips
   * symlinks to directories, and refuses (`PATH_INVALID`) a symlink that resolves outside `root`.
   * Throws `TOO_MANY_FILES` past 128 files, `TOO_LARGE` for a file over 1 MiB, `NOT_FOUND`
   * when `root` does not exist.
   */
  scan(): ManifestFile[] {
    return this.guard(() => this.scanFolder(false));
  }

  /** `scan()`, with every file's bytes put in the content store so the state can be restored. */
  snapshot(): WorkspaceState {
    return this.guard(() => stateOf(this.scanFolder(false, (bytes) => this.store.put(bytes))));
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
            {
              path: change.path,
            },
          );
      }

      const current = this.scanFolder(true);
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
            {
              path: change.path,
            },
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
        next.set(change.path, {
          target: 'SERVER',
          path: change.path,
          contentHash: sha256Digest(bytes),
          byteLength: bytes.length,
        });
      }
      const target = sortManifest([...next.values()]);
      if (target.length > MAX_CHECKPOINT_FILES)
        throw new WorkspaceError(
          'TOO_MANY_FILES',
          `The project would have ${target.length} files (at most ${MAX_CHECKPOINT_FILES})`,
        );
      assertNoFileDirectoryClash(target);
      const ops = this.plan(current, target, false);
      this.fault('validated');
      if (ops.length === 0) return { ...stateOf(current), changedFiles: [] };

      for (const bytes of blobs) this.store.put(bytes);
      this.fault('blobs-stored');
      this.commit({
        version: 1,
        projectId: this.projectId,
        action: 'APPLY_CHANGES',
        target: stateOf(target),
        ops,
      });
      const changedFiles = ops.map((op) => op.path).sort(compareCodeUnits);
      return { ...stateOf(this.scanFolder(false)), changedFiles };
    });
  }

  /**
   * Makes the folder's files exactly those of `files`: writes added and changed files from the
   * content store, deletes files the manifest lacks, removes directories those deletions left
   * empty, and replaces symlinked files by regular files. Every blob must be in the store
   * (`NOT_FOUND`, nothing touched) and match its manifest entry (`HASH_MISMATCH`). Atomic as
   * described on the class. Returns the folder's new state (a fresh scan), whose `contentHash`
   * equals `canonicalManifestHash(files)`.
   */
  restore(files: readonly ManifestFile[]): WorkspaceState {
    return this.guard(() => {
      this.refuseIfPending();
      const target = validateRestoreManifest(files);
      for (const f of target)
        if (!this.store.has(f.contentHash))
          throw new WorkspaceError(
            'NOT_FOUND',
            `No stored content for ${describePath(f.path)} (${f.contentHash})`,
            {
              path: f.path,
            },
          );
      const current = this.scanFolder(true);
      const ops = this.plan(current, target, true);
      for (const op of ops) {
        if (op.op !== 'write') continue;
        if (this.store.get(op.contentHash).length !== op.byteLength)
          throw new WorkspaceError(
            'HASH_MISMATCH',
            `${describePath(op.path)}: byteLength does not match ${op.contentHash}`,
            {
              path: op.path,
            },
          );
      }
      this.fault('validated');
      if (ops.length > 0)
        this.commit({
          version: 1,
          projectId: this.projectId,
          action: 'RESTORE',
          target: stateOf(target),
          ops,
        });
      return stateOf(this.scanFolder(false));
    });
  }

  /**
   * Finishes or undoes an interrupted change: a committed journal is rolled forward (the folder
   * ends wholly after the change), otherwise leftover temp files are removed (wholly before).
   * Throws `JOURNAL_CORRUPT` for a journal it cannot trust, leaving it in place.
   */
  recover(): { rolledForward: boolean } {
    return this.guard(() => {
      this.sweepJournalTemps();
      const body = this.readJournal();
      if (!body) {
        this.sweepFolderTemps();
        return { rolledForward: false };
      }
      this.rollForward(body);
      return { rolledForward: true };
    });
  }

  /** True while a committed change has not been fully applied; `recover()` completes it. */
  hasPendingJournal(): boolean {
    return fs.existsSync(this.journalPath);
  }

  private fault(step: string): void {
    this.faultInjector?.(step);
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
          {
            cause: err,
          },
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

  private scanFolder(allowMissing: boolean, onFile?: (bytes: Buffer) => void): ManifestFile[] {
    const rootReal = this.rootReal();
    if (!rootReal) {
      if (allowMissing) return [];
      throw new WorkspaceError(
        'NOT_FOUND',
        `The folder of project ${this.projectId} does not exist`,
      );
    }
    const files: ManifestFile[] = [];
    const visit = (absDir: string, relDir: string): void => {
      const entries = fs
        .readdirSync(absDir, { withFileTypes: true })
        .sort((a, b) => compareCodeUnits(a.name, b.name));
      for (const entry of entries) {
        if (SKIPPED_NAMES.has(entry.name) || entry.name.startsWith(TEMP_PREFIX)) continue;
        const rel = relDir ? `${relDir}/${entry.name}` : entry.name;
        const abs = join(absDir, entry.name);
        if (entry.isDirectory()) {
          visit(abs, rel);
          continue;
        }
        if (entry.isSymbolicLink()) {
          let real: string;
          try {
            real = fs.realpathSync(abs);
          } catch (err) {
            // A dangling link names no content; there is nothing to checkpoint.
            if (isErrno(err, 'ENOENT') || isErrno(err, 'ELOOP')) continue;
            throw err;
          }
          if (!isInside(real, rootReal))
            throw new WorkspaceError(
              'PATH_INVALID',
              `Symlink ${describePath(rel)} points outside the project folder`,
              {
                path: rel,
              },
            );
          // Links to directories are not followed: they would list files twice or loop.
          if (!fs.statSync(real).isFile()) continue;
        } else if (!entry.isFile()) {
          continue;
        }
        validateRelativePath(rel);
        if (files.length >= MAX_CHECKPOINT_FILES)
          throw new WorkspaceError(
            'TOO_MANY_FILES',
            `The project has more than ${MAX_CHECKPOINT_FILES} files`,
          );
        if (fs.statSync(abs).size > MAX_FILE_BYTES)
          throw new WorkspaceError('TOO_LARGE', `${describePath(rel)} is over 1 MiB`, {
            path: rel,
          });
        const bytes = fs.readFileSync(abs);
        // The file may have grown between stat and read.
        if (bytes.length > MAX_FILE_BYTES)
          throw new WorkspaceError('TOO_LARGE', `${describePath(rel)} is over 1 MiB`, {
            path: rel,
          });
        files.push({
          target: 'SERVER',
          path: rel,
          contentHash: sha256Digest(bytes),
          byteLength: bytes.length,
        });
        onFile?.(bytes);
      }
    };
    visit(this.root, '');
    return sortManifest(files);
  }

  /**
   * The ops turning `current` into `target`: deletes first, then writes. Refuses (PATH_INVALID)
   * writes the folder could not take without touching files outside both manifests: a parent
   * that is a file or symlink staying in place, or a directory that would not end up empty.
   */
  private plan(
    current: readonly ManifestFile[],
    target: readonly ManifestFile[],
    materializeLinks: boolean,
  ): JournalOp[] {
    const diff = diffManifests(current, target);
    const currentPaths = new Set(current.map((f) => f.path));
    const targetPaths = new Set(target.map((f) => f.path));
    const goingAway = (rel: string): boolean => currentPaths.has(rel) && !targetPaths.has(rel);

    const toWrite = [...diff.added, ...diff.changed.map((c) => c.to)];
    // A symlinked file reads its target's bytes; restoring that target would silently change
    // the link's content too, so a restore replaces such links by regular files.
    if (materializeLinks)
      for (const f of diff.unchanged)
        if (lstatOrNull(this.abs(f.path))?.isSymbolicLink()) toWrite.push(f);

    const ops: JournalOp[] = diff.removed.map((f) => ({ op: 'delete', path: f.path }));
    for (const f of sortManifest(toWrite)) {
      const segments = f.path.split('/');
      for (let i = 1; i < segments.length; i++) {
        const ancestor = segments.slice(0, i).join('/');
        const st = lstatOrNull(this.abs(ancestor));
        if (!st || goingAway(ancestor)) break;
        if (st.isDirectory()) continue;
        throw new WorkspaceError(
          'PATH_INVALID',
          `Cannot write ${describePath(f.path)}: ${describePath(ancestor)} is not a directory`,
          {
            path: f.path,
          },
        );
      }
      if (lstatOrNull(this.abs(f.path))?.isDirectory() && !this.emptiesOut(f.path, goingAway))
        throw new WorkspaceError(
          'PATH_INVALID',
          `Cannot write ${describePath(f.path)}: a non-empty directory is there`,
          {
            path: f.path,
          },
        );
      ops.push({ op: 'write', path: f.path, contentHash: f.contentHash, byteLength: f.byteLength });
    }
    return ops;
  }

  /** True when every file under the directory `rel` is deleted by the change. */
  private emptiesOut(rel: string, goingAway: (rel: string) => boolean): boolean {
    for (const entry of fs.readdirSync(this.abs(rel), { withFileTypes: true })) {
      const child = `${rel}/${entry.name}`;
      if (SKIPPED_NAMES.has(entry.name)) return false;
      if (entry.name.startsWith(TEMP_PREFIX) && !entry.isDirectory()) continue;
      if (entry.isDirectory() ? !this.emptiesOut(child, goingAway) : !goingAway(child))
        return false;
    }
    return true;
  }

  private commit(body: JournalBody): void {
    const text = canonicalJson({ body, checksum: sha256Digest(canonicalJson(body)) });
    fs.mkdirSync(this.journalDir, { recursive: true });
    const temp = join(this.journalDir, `${this.journalName}.${tempName()}`);
    writeFileDurably(temp, text);
    this.fault('journal-temp-written');
    fs.renameSync(temp, this.journalPath);
    fsyncDir(this.journalDir);
    this.fault('journal-written');
    this.rollForward(body);
  }

  /** Applies a committed journal; safe to run again after a crash at any step. */
  private rollForward(body: JournalBody): void {
    fs.mkdirSync(this.root, { recursive: true });
    this.sweepFolderTemps();
    const touched = new Set<string>([this.root]);
    const deletes = body.ops.filter((op) => op.op === 'delete');
    const writes = body.ops.filter((op) => op.op === 'write');

    for (const op of deletes) {
      const abs = this.abs(op.path);
      // A directory here means an earlier run already replaced the file by a written subtree.
      const st = lstatOrNull(abs);
      if (st && !st.isDirectory()) {
        fs.unlinkSync(abs);
        touched.add(dirname(abs));
      }
      this.fault(`file-deleted:${op.path}`);
    }
    for (const op of deletes) this.removeEmptyParents(op.path, touched);
    this.fault('dirs-removed');

    for (const op of writes) {
      const abs = this.abs(op.path);
      const dir = dirname(abs);
      fs.mkdirSync(dir, { recursive: true });
      const existing = lstatOrNull(abs);
      // plan() checked that the deletes above emptied this directory.
      if (existing?.isDirectory()) fs.rmdirSync(abs);
      const bytes = this.store.get(op.contentHash);
      if (bytes.length !== op.byteLength)
        throw new WorkspaceError(
          'HASH_MISMATCH',
          `${describePath(op.path)}: byteLength does not match ${op.contentHash}`,
          {
            path: op.path,
          },
        );
      const temp = join(dir, tempName());
      // Keep an executable script executable when its content is replaced.
      writeFileDurably(temp, bytes, existing?.isFile() ? existing.mode & 0o777 : undefined);
      this.fault(`file-staged:${op.path}`);
      fs.renameSync(temp, abs);
      touched.add(dir);
      this.fault(`file-renamed:${op.path}`);
    }
    for (const dir of touched) if (fs.existsSync(dir)) fsyncDir(dir);

    this.fault('before-journal-delete');
    fs.rmSync(this.journalPath, { force: true });
    fsyncDir(this.journalDir);
    this.fault('journal-deleted');
  }

  private removeEmptyParents(rel: string, touched: Set<string>): void {
    const parts = rel.split('/');
    parts.pop();
    for (; parts.length > 0; parts.pop()) {
      const abs = this.abs(parts.join('/'));
      try {
        fs.rmdirSync(abs);
        touched.add(dirname(abs));
      } catch (err) {
        if (isErrno(err, 'ENOENT')) continue;
        if (isErrno(err, 'ENOTEMPTY') || isErrno(err, 'EEXIST') || isErrno(err, 'ENOTDIR')) return;
        throw err;
      }
    }
  }

  /** Removes staged temp files left in the folder by an interrupted change. */
  private sweepFolderTemps(): void {
    if (!fs.existsSync(this.root)) return;
    const visit = (absDir: string): void => {
      for (const entry of fs.readdirSync(absDir, { withFileTypes: true })) {
        if (SKIPPED_NAMES.has(entry.name)) continue;
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
    if (body.version !== 1 || body.projectId !== this.projectId || !Array.isArray(body.ops))
      return corrupt('unexpected header');
    for (const op of body.ops as unknown[]) {
      if (!isRecord(op) || typeof op.path !== 'string') return corrupt('bad op');
      // A journal is data from disk: its paths get the same checks as a caller's.
      try {
        validateWritablePath(op.path);
      } catch {
        return corrupt(`bad path ${describePath(op.path)}`);
      }
      if (op.op === 'delete') continue;
      if (op.op !== 'write' || typeof op.contentHash !== 'string' || !DIGEST.test(op.contentHash))
        return corrupt('bad op');
      if (!Number.isSafeInteger(op.byteLength)) return corrupt('bad op');
    }
    return body as unknown as JournalBody;
  }
}

function stateOf(files: ManifestFile[]): WorkspaceState {
  return { files, contentHash: canonicalManifestHash(files) };
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isInside(real: string, rootReal: string): boolean {
  return real === rootReal || real.startsWith(rootReal.endsWith(sep) ? rootReal : rootReal + sep);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A valid relative path that also avoids the names the workspace never writes. */
function validateWritablePath(path: string): string {
  validateRelativePath(path);
  for (const segment of path.split('/'))
    if (SKIPPED_NAMES.has(segment) || segment.startsWith(TEMP_PREFIX))
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
    const segments = f.path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const ancestor = segments.slice(0, i).join('/');
      if (paths.has(ancestor))
        throw new WorkspaceError(
          'PATH_INVALID',
          `${describePath(ancestor)} cannot be both a file and a directory`,
          {
            path: f.path,
          },
        );
    }
  }
}

/** Checks a manifest to restore and returns it sorted, reduced to the four manifest fields. */
function validateRestoreManifest(files: readonly ManifestFile[]): ManifestFile[] {
  if (files.length > MAX_CHECKPOINT_FILES)
    throw new WorkspaceError(
      'TOO_MANY_FILES',
      `A checkpoint has at most ${MAX_CHECKPOINT_FILES} files (got ${files.length})`,
    );
  const seen = new Set<string>();
  const out: ManifestFile[] = [];
  for (const f of files) {
    validateWritablePath(f.path);
    if (f.target !== 'SERVER')
      throw new WorkspaceError(
        'PATH_INVALID',
        `${describePath(f.path)}: only SERVER files live in a project folder`,
        {
          path: f.path,
        },
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
    if (f.byteLength > MAX_FILE_BYTES)
      throw new WorkspaceError('TOO_LARGE', `${describePath(f.path)} is over 1 MiB`, {
        path: f.path,
      });
    out.push({
      target: 'SERVER',
      path: f.path,
      contentHash: f.contentHash,
      byteLength: f.byteLength,
    });
  }
  const sorted = sortManifest(out);
  assertNoFileDirectoryClash(sorted);
  return sorted;
}
