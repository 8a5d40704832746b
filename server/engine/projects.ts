/**
 * Projects and checkpoints (rule module): project folders (registered, rescanned, unavailable
 * with a reason instead of failing), their workspaces, checkpoints (CHECKPOINT_CREATED with the
 * manifest stored apart), agent writes (expected revision, WORKSPACE lease, pre-image checkpoint,
 * atomic change), proposal diffs and garbage collection of stored content.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { CheckpointRecord, ProjectRecord, ToolCallRecord } from '../store/records.ts';
import { join } from 'node:path';
import { computeProposalDiff } from './proposalDiff.ts';
import type { ProposedFileChange } from './proposalDiff.ts';
import { StudioError } from './StudioError.ts';
import { selectedManifest } from './restoreSelection.ts';
import { canonicalManifestHash, diffManifests, sortManifest } from '../workspace/manifest.ts';
import { ContentStore } from '../workspace/contentStore.ts';
import { ProjectWorkspace } from '../workspace/ProjectWorkspace.ts';
import type { CapturePatterns } from '../workspace/ignoreRules.ts';
import type { ManifestFile } from '../workspace/manifest.ts';
import { WorkspaceError } from '../workspace/WorkspaceError.ts';
import { GC_GRACE_MS, eventFilesFor, isRetained, totalBytes } from './checkpointContent.ts';
import { ErrorCode } from '../../protocol/contract.ts';
import type { EngineCore } from './core.ts';
import type { Restores } from './restores.ts';

/** `contentHash` of the empty manifest `{"files":[]}`. */
const EMPTY_MANIFEST_HASH = canonicalManifestHash([]);

export interface ProjectsHost extends EngineCore {
  readonly dataDir: string;
  readonly checkpointMaxFileBytes: number | undefined;
  readonly restores: Pick<Restores, 'recoverRestores'>;
}

export class Projects {
  /** projectId -> its open workspace. */
  private readonly workspaces = new Map<string, ProjectWorkspace>();
  readonly contentStore: ContentStore;

  constructor(private readonly h: ProjectsHost) {
    mkdirSync(join(h.dataDir, 'blobs'), { recursive: true });
    mkdirSync(join(h.dataDir, 'journal'), { recursive: true });
    this.contentStore = new ContentStore(join(h.dataDir, 'blobs'));
  }

  /** True when the project's folder is open here. */
  isOpen(projectId: string): boolean {
    return this.workspaces.has(projectId);
  }

  /** Remembers a session's project (proposalDiffNow reads it without a store read). */
  noteSessionProject(sessionId: string, projectId: string | null): void {
    this.sessionProjects.set(sessionId, projectId);
  }

  /** Releases every open workspace's folder watcher (the engine is stopping). */
  close(): void {
    for (const ws of this.workspaces.values()) ws.close();
  }

  /** Every registered project folder, by name. */
  async listProjects(): Promise<ProjectRecord[]> {
    return this.h.kernel.read(async (tx) => {
      const found: ProjectRecord[] = [];
      for (const id of this.workspaces.keys()) {
        const project = await tx.getProject(id);
        if (project) found.push(project);
      }
      return found.sort((a, b) => a.name.localeCompare(b.name));
    });
  }

  async checkpointsSupported(
    sessionId: string,
  ): Promise<{ supported: boolean; reason: string | null }> {
    const session = await this.h.requireSession(sessionId);
    const source = this.h.source(session.source);
    if (session.projectId) {
      const unavailable = (await this.h.db.getProject(session.projectId))?.unavailableReason;
      if (unavailable)
        return { supported: false, reason: `The project is unavailable: ${unavailable}` };
      return { supported: true, reason: null };
    }
    if (source && !source.checkpointsSupported)
      return {
        supported: false,
        reason: source.checkpointsUnsupportedReason ?? 'This runtime has no checkpoints.',
      };
    return {
      supported: false,
      reason: 'This session has no project folder, so there is nothing to checkpoint.',
    };
  }

  /**
   * The diff of proposed file changes against the session's project folder, and the targets
   * (path + current content hash) the argument hash binds. Null when the session has no project.
   */
  async proposalDiff(sessionId: string, changes: ProposedFileChange[]) {
    const project = await this.projectOfSession(sessionId);
    if (!project) return null;
    const ws = await this.workspace(project.projectId);
    return diffAgainst(ws, (await ws.syncedState()).files, changes);
  }

  /**
   * SourceHost.proposalDiff, synchronous for the bridges' mappers: the session's project from
   * what this process last read of the session (a project never changes for a session), the
   * files from the open workspace; no store read. Null when either is unknown here.
   */
  proposalDiffNow(sessionId: string, changes: ProposedFileChange[]) {
    const projectId = this.sessionProjects.get(sessionId);
    const ws = projectId ? this.workspaces.get(projectId) : undefined;
    if (!ws) return null;
    return diffAgainst(ws, ws.state().files, changes);
  }

  /** sessionId -> its projectId, as last read (see proposalDiffNow). */
  private readonly sessionProjects = new Map<string, string | null>();

  /** The target files whose content changed since the call's diff was made (by path). */
  async changedTargets(call: ToolCallRecord): Promise<string[]> {
    if (!call.diff || call.diff.files.length === 0) return [];
    const project = await this.projectOfSession(call.sessionId);
    const now = new Map(
      (project ? await this.projectFiles(project.projectId) : []).map((f) => [
        f.path,
        f.contentHash,
      ]),
    );
    return call.diff.files
      .filter((f) => (now.get(f.path) ?? null) !== f.beforeHash)
      .map((f) => f.path);
  }

  /**
   * Registers (or re-opens) a project folder; a folder edited while the studio was away gets a
   * new revision. A folder the workspace cannot read (missing, permissions, a name no manifest
   * can hold, an interrupted change it cannot finish safely) makes the project unavailable, with
   * the reason on the record and in the log: it never throws, so one odd project never stops
   * the studio. Every source registers its folders here (demo projects, `--leviath-workspace`,
   * a runtime's working directory).
   */
  async registerProject(input: {
    projectId: string;
    name: string;
    root: string;
    /** Include/exclude patterns (`.gitignore` syntax) on top of the folder's ignore files. */
    patterns?: CapturePatterns;
    /** Per-file cap (bytes); default the engine's `checkpointMaxFileBytes`, else 50 MiB. */
    maxFileBytes?: number;
  }): Promise<ProjectRecord> {
    const existing = await this.h.db.getProject(input.projectId);
    let ws: ProjectWorkspace;
    try {
      const maxFileBytes = input.maxFileBytes ?? this.h.checkpointMaxFileBytes;
      ws = new ProjectWorkspace({
        projectId: input.projectId,
        root: input.root,
        contentStore: this.contentStore,
        journalDir: join(this.h.dataDir, 'journal', input.projectId),
        ...(input.patterns ? { patterns: input.patterns } : {}),
        ...(maxFileBytes !== undefined ? { maxFileBytes } : {}),
      });
    } catch (error) {
      return await this.markUnavailable(input, existing, error);
    }
    // A re-registered project's old workspace lets its folder watcher go.
    this.workspaces.get(input.projectId)?.close();
    this.workspaces.set(input.projectId, ws);
    // Before the first scan, so that scan is the one the watcher's dirty paths start from.
    ws.startWatching();
    try {
      ws.recover();
      if (this.h.started()) await this.h.restores.recoverRestores();
      if (
        !existing ||
        existing.unavailableReason !== undefined ||
        existing.fileCount === undefined
      ) {
        const snap = ws.snapshot();
        const record: ProjectRecord = {
          projectId: input.projectId,
          name: input.name,
          root: input.root,
          revision: existing
            ? existing.contentHash === snap.contentHash
              ? existing.revision
              : (BigInt(existing.revision) + 1n).toString()
            : '1',
          contentHash: snap.contentHash,
          fileCount: snap.files.length,
          totalBytes: String(totalBytes(snap.files)),
          recordedContentHash: existing?.recordedContentHash ?? snap.contentHash,
          lastCheckpointContentHash: existing?.lastCheckpointContentHash ?? null,
          unavailableReason: null,
          updatedAt: this.h.iso(),
        };
        await this.h.db.putProject(record);
        return record;
      }
      return await this.syncProject(input.projectId);
    } catch (error) {
      return await this.markUnavailable(input, existing, error);
    }
  }

  private async markUnavailable(
    input: { projectId: string; name: string; root: string },
    existing: ProjectRecord | null,
    error: unknown,
  ): Promise<ProjectRecord> {
    const reason =
      error instanceof WorkspaceError || error instanceof StudioError
        ? error.message
        : String(error);
    this.h.logger.error('project unavailable', { projectId: input.projectId, reason });
    const record: ProjectRecord = {
      projectId: input.projectId,
      name: input.name,
      root: input.root,
      revision: existing?.revision ?? '1',
      contentHash: existing?.contentHash ?? EMPTY_MANIFEST_HASH,
      fileCount: existing?.fileCount ?? 0,
      totalBytes: existing?.totalBytes ?? '0',
      recordedContentHash: existing?.recordedContentHash ?? null,
      lastCheckpointContentHash: existing?.lastCheckpointContentHash ?? null,
      unavailableReason: reason,
      updatedAt: this.h.iso(),
    };
    await this.h.db.putProject(record);
    return record;
  }

  async workspace(projectId: string): Promise<ProjectWorkspace> {
    const ws = this.workspaces.get(projectId);
    const unavailable = (await this.h.db.getProject(projectId))?.unavailableReason;
    if (unavailable)
      throw new StudioError(
        ErrorCode.HOST_UNAVAILABLE,
        `Project ${projectId} is unavailable: ${unavailable}`,
      );
    if (!ws)
      throw new StudioError(ErrorCode.CHECKPOINT_NOT_FOUND, `Project ${projectId} is not open.`);
    return ws;
  }

  /**
   * Rescans the folder (the stat cache makes this cheap); if a human changed it, the project
   * moves to a new revision. A scan failure marks the project unavailable (and a later scan
   * that succeeds makes it available again); the record is returned either way.
   */
  async syncProject(projectId: string): Promise<ProjectRecord> {
    const record = await this.h.db.getProject(projectId);
    if (!record) throw new StudioError(ErrorCode.BAD_REQUEST, `No project ${projectId}.`);
    const ws = this.workspaces.get(projectId);
    if (!ws) return record;
    let snap: { files: ManifestFile[]; contentHash: string };
    try {
      if (ws.hasPendingJournal()) ws.recover();
      snap = await ws.syncedState();
    } catch (error) {
      if (record.unavailableReason) return record;
      return await this.markUnavailable(record, record, error);
    }
    if (snap.contentHash === record.contentHash && !record.unavailableReason) return record;
    const next: ProjectRecord = {
      ...record,
      revision:
        snap.contentHash === record.contentHash
          ? record.revision
          : (BigInt(record.revision) + 1n).toString(),
      contentHash: snap.contentHash,
      fileCount: snap.files.length,
      totalBytes: String(totalBytes(snap.files)),
      unavailableReason: null,
      updatedAt: this.h.iso(),
    };
    await this.h.db.putProject(next);
    return next;
  }

  async projectOfSession(sessionId: string): Promise<ProjectRecord | null> {
    const session = await this.h.requireSession(sessionId);
    if (!session.projectId) return null;
    return await this.syncProject(session.projectId);
  }

  /** The project's files now, sorted by path (served paged by `StudioProject.files`). */
  async projectFiles(projectId: string): Promise<ManifestFile[]> {
    return (await (await this.workspace(projectId)).syncedState()).files;
  }

  /**
   * A checkpoint's whole manifest. Checkpoints recorded before manifests were stored apart
   * carry it in their record (at most 128 files then).
   */
  async checkpointFiles(checkpoint: CheckpointRecord): Promise<ManifestFile[]> {
    const ws = await this.workspace(checkpoint.projectId);
    if (ws.hasManifest(checkpoint.contentHash)) return ws.manifest(checkpoint.contentHash);
    if (canonicalManifestHash(checkpoint.files) === checkpoint.contentHash)
      return sortManifest(checkpoint.files);
    throw new StudioError(
      ErrorCode.CHECKPOINT_NOT_FOUND,
      `The content of checkpoint ${checkpoint.checkpointId} is no longer stored.`,
    );
  }

  /**
   * What restoring `checkpoint` would do now: counts, every path, what cannot be put back, and
   * which of the paths changed on disk since the studio last recorded the project
   * ("changed outside the agent": the restore would throw that work away).
   */
  async restorePreview(checkpoint: CheckpointRecord, paths: readonly string[] | null = null) {
    const ws = await this.workspace(checkpoint.projectId);
    const target = paths
      ? selectedManifest(ws.state().files, await this.checkpointFiles(checkpoint), paths)
      : await this.checkpointFiles(checkpoint);
    const plan = ws.previewRestore(target);
    const project = await this.syncProject(checkpoint.projectId);
    const drifted = new Set<string>();
    if (project.recordedContentHash && project.recordedContentHash !== project.contentHash) {
      if (ws.hasManifest(project.recordedContentHash)) {
        const diff = diffManifests(ws.manifest(project.recordedContentHash), ws.state().files);
        for (const f of [...diff.added, ...diff.removed]) drifted.add(f.path);
        for (const c of diff.changed) drifted.add(c.path);
      }
    }
    return { plan, drifted };
  }

  /** Takes a checkpoint of the session's project now and appends CHECKPOINT_CREATED. */
  async checkpoint(
    sessionId: string,
    reason: 'AGENT_WRITE' | 'RESTORE_PREIMAGE' | 'MANUAL' | 'STUDIO_AFTER_TOOL',
    options: { runId?: string | null; exactPreImage?: boolean } = {},
  ): Promise<CheckpointRecord> {
    const project = await this.projectOfSession(sessionId);
    if (!project)
      throw new StudioError(
        ErrorCode.STUDIO_CHECKPOINTS_UNSUPPORTED,
        (await this.checkpointsSupported(sessionId)).reason ?? 'No project.',
      );
    const ws = await this.workspace(project.projectId);
    const snap = await ws.syncedSnapshot();
    const eventFiles = eventFilesFor(this.previousManifest(ws, project), snap.files);
    const checkpointId = `cp_${randomUUID()}`;
    await this.h.append(sessionId, [
      {
        type: 'CHECKPOINT_CREATED',
        runId: options.runId ?? null,
        checkpointId,
        projectRevision: project.revision,
        contentHash: snap.contentHash,
        reason,
        ...eventFiles,
        exactPreImage: options.exactPreImage ?? false,
      },
    ]);
    await this.h.db.putProject({
      ...((await this.h.db.getProject(project.projectId)) ?? project),
      recordedContentHash: snap.contentHash,
      lastCheckpointContentHash: snap.contentHash,
    });
    const record = await this.h.db.getCheckpoint(checkpointId);
    if (!record) throw new Error('checkpoint vanished');
    return record;
  }

  /** The manifest the next checkpoint event is compared with (empty when none is stored). */
  private previousManifest(ws: ProjectWorkspace, project: ProjectRecord): ManifestFile[] {
    const hash = project.lastCheckpointContentHash;
    if (!hash || !ws.hasManifest(hash)) return [];
    return ws.manifest(hash);
  }

  /**
   * Removes stored content no retained checkpoint refers to (the rule: `isRetained` in
   * checkpointContent.ts, plus every project's current and recorded state). Never runs while a
   * restore job or an interrupted change is pending; content younger than an hour is never
   * removed, so a checkpoint being written is safe. Returns null when it did not run.
   */
  async collectGarbage(options: { graceMs?: number } = {}) {
    if ((await this.h.db.listRestoreJobs()).length > 0) return null;
    for (const ws of this.workspaces.values()) if (ws.hasPendingJournal()) return null;
    const live = new Set<string>();
    const now = this.h.now();
    const keepManifest = (ws: ProjectWorkspace, hash: string | null): void => {
      if (!hash || live.has(hash) || !ws.hasManifest(hash)) return;
      live.add(hash);
      for (const f of ws.manifest(hash)) if (!f.notCaptured) live.add(f.contentHash);
    };
    for (const [projectId, ws] of this.workspaces) {
      const project = await this.h.db.getProject(projectId);
      // An unavailable project's stored states are kept like any other's.
      if (!project) continue;
      keepManifest(ws, project.contentHash);
      keepManifest(ws, project.recordedContentHash);
      keepManifest(ws, project.lastCheckpointContentHash);
      const checkpoints = await this.h.db.listCheckpointsOfProject(projectId);
      checkpoints.forEach((c, i) => {
        if (isRetained(c, i === 0, now)) keepManifest(ws, c.contentHash);
        for (const f of c.files) if (!ws.hasManifest(c.contentHash)) live.add(f.contentHash);
      });
    }
    return this.contentStore.collectGarbage({ live, graceMs: options.graceMs ?? GC_GRACE_MS, now });
  }

  async collectGarbageSafely(): Promise<void> {
    try {
      const result = await this.collectGarbage();
      if (result && result.blobsRemoved > 0)
        this.h.logger.info('checkpoint content collected', { ...result });
    } catch (error) {
      this.h.logger.error('checkpoint garbage collection failed', { error: String(error) });
    }
  }

  /** studioCreateCheckpoint: a MANUAL checkpoint (needs the attached epoch). */
  async createManualCheckpoint(input: {
    sessionId: string;
    clientEpoch: string;
  }): Promise<CheckpointRecord> {
    const session = await this.h.requireAttached(input.sessionId, input.clientEpoch);
    this.h.requireOpen(session);
    return await this.checkpoint(session.sessionId, 'MANUAL');
  }

  /**
   * workspace.file.patch for a run: expectedRevision check, WORKSPACE lease, AGENT_WRITE
   * pre-image checkpoint, the change applied atomically, revision + 1. A conflict changes nothing.
   * `changes[].content === null` deletes the file.
   */
  async patchProject(input: {
    sessionId: string;
    runId: string | null;
    toolCallId: string;
    toolName: string;
    expectedRevision: string;
    changes: { path: string; content: string | null; expectedContentHash?: string }[];
  }): Promise<{ projectRevision: string; checkpointId: string; changedFiles: string[] }> {
    const project = await this.projectOfSession(input.sessionId);
    if (!project) throw new StudioError(ErrorCode.BAD_REQUEST, 'This session has no project.');
    if (project.revision !== input.expectedRevision)
      throw new StudioError(
        ErrorCode.REVISION_CONFLICT,
        `The project is at revision ${project.revision}, not ${input.expectedRevision}; nothing was changed.`,
        { remediation: 'Read the project again and retry against the current revision.' },
      );
    await this.ensureWorkspaceLease(input.sessionId, input.runId, project.revision);
    const preImage = await this.checkpoint(input.sessionId, 'AGENT_WRITE', { runId: input.runId });
    const ws = await this.workspace(project.projectId);
    const applied = ws.applyChanges(
      input.changes.map((c) => ({
        path: c.path,
        content: c.content,
        ...(c.expectedContentHash ? { expectedContentHash: c.expectedContentHash } : {}),
      })),
    );
    const next: ProjectRecord = {
      ...((await this.h.db.getProject(project.projectId)) ?? project),
      revision: (BigInt(project.revision) + 1n).toString(),
      contentHash: applied.contentHash,
      fileCount: applied.files.length,
      totalBytes: String(totalBytes(applied.files)),
      recordedContentHash: ws.storeManifest(applied.files),
      updatedAt: this.h.iso(),
    };
    await this.h.db.putProject(next);
    return {
      projectRevision: next.revision,
      checkpointId: preImage.checkpointId,
      changedFiles: applied.changedFiles,
    };
  }

  private async ensureWorkspaceLease(
    sessionId: string,
    runId: string | null,
    revision: string,
  ): Promise<void> {
    const active = (await this.h.db.listActiveLeases(sessionId)).find(
      (l) => l.kind === 'WORKSPACE',
    );
    if (active && Date.parse(active.expiresAt) > this.h.now()) return;
    const session = await this.h.requireSession(sessionId);
    const now = this.h.now();
    await this.h.append(sessionId, [
      {
        type: 'LEASE_GRANTED',
        runId,
        leaseId: `ls_${randomUUID()}`,
        kind: 'WORKSPACE',
        status: 'ACTIVE',
        clientEpoch: session.currentClientEpoch,
        scopes: ['studio.project.write.server'],
        holder: `agent:${session.source}`,
        contextVersion: session.contextVersion,
        expectedProjectRevision: revision,
        grantedAt: this.h.iso(now),
        expiresAt: this.h.iso(now + this.h.workspaceLeaseMs),
      },
    ]);
  }
}

/** The diff of proposed file changes against a workspace's files (see Projects.proposalDiff). */
function diffAgainst(ws: ProjectWorkspace, files: ManifestFile[], changes: ProposedFileChange[]) {
  const hashes = new Map(files.map((f) => [f.path, f.contentHash]));
  return computeProposalDiff(changes, (path) => {
    const contentHash = hashes.get(path) ?? null;
    if (contentHash === null) return { text: null, contentHash: null, opaque: false };
    try {
      const text = ws.readFile(path);
      return { text, contentHash, opaque: text.includes('\u0000') };
    } catch {
      return { text: null, contentHash, opaque: true };
    }
  });
}
