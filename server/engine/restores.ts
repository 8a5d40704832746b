/**
 * Checkpoint restores (rule module, with projects.ts): a restore is requested as an approval of
 * project.checkpoint.restore; once granted, the outbox's 'decision' job runs it idempotently
 * (RUNNING + pre-image checkpoint + restore job record in one commit, the folder written, then
 * revision + 1, CHECKPOINT_RESTORED and TOOL_SUCCEEDED in one commit). A restart finishes a
 * restore whose job record exists, or ends the call with TOOL_FAILED; never left RUNNING.
 */
import type {
  ApprovalRecord,
  CheckpointRecord,
  ProjectRecord,
  ToolCallRecord,
} from '../store/records.ts';
import { approvalFieldsOf } from './recordDrafts.ts';
import { StudioError } from './StudioError.ts';
import { normalizeRestorePaths, selectedManifest } from './restoreSelection.ts';
import { canonicalJson } from '../workspace/canonicalJson.ts';
import { type RestoreResult } from '../workspace/ProjectWorkspace.ts';
import { eventFilesFor, totalBytes, type EventFiles } from './checkpointContent.ts';
import { ErrorCode } from '../../protocol/contract.ts';
import { TERMINAL_TOOL_STATUSES } from '../../protocol/events.ts';
import type { EngineCore } from './core.ts';
import type { Decisions } from './decisions.ts';
import type { Projects } from './projects.ts';

export interface RestoresHost extends EngineCore {
  readonly decisions: Pick<Decisions, 'proposeWithApproval'>;
  readonly projects: Pick<
    Projects,
    | 'checkpoint'
    | 'checkpointFiles'
    | 'projectOfSession'
    | 'restorePreview'
    | 'workspace'
    | 'isOpen'
  >;
}

export class Restores {
  constructor(private readonly h: RestoresHost) {}

  /**
   * studioRequestCheckpointRestore: checks the checkpoint, its hash and the revision, then
   * proposes project.checkpoint.restore and returns its PENDING approval.
   */
  async requestRestore(input: {
    requestedBy?: string | null;
    sessionId: string;
    clientEpoch: string;
    checkpointId: string;
    checkpointContentHash: string;
    expectedRevision: string;
    /** Restore only these files and folders (issue 11); null or absent: every file. */
    paths?: readonly string[] | null;
  }): Promise<ApprovalRecord> {
    const session = await this.h.requireAttached(input.sessionId, input.clientEpoch);
    this.h.requireOpen(session);
    const { checkpoint, project } = await this.checkRestorable(session.sessionId, input);
    const paths = normalizeRestorePaths(input.paths);
    const diff = await this.workspaceDiffSummary(checkpoint, paths);
    const summary =
      (paths
        ? `Restore ${paths.length} path(s) of project "${project.name}" (${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}) from checkpoint ${checkpoint.checkpointId} `
        : `Restore project "${project.name}" to checkpoint ${checkpoint.checkpointId} `) +
      `(${checkpoint.reason}, revision ${checkpoint.projectRevision}, ${checkpoint.contentHash.slice(0, 19)}…): ${diff}. ` +
      `The current state (revision ${project.revision}) is saved first as a RESTORE_PREIMAGE checkpoint.`;
    return await this.h.decisions.proposeWithApproval({
      sessionId: session.sessionId,
      runId: null,
      toolName: 'project.checkpoint.restore',
      // The argument hash covers the selection: approving it approves exactly these paths.
      arguments: {
        checkpointContentHash: checkpoint.contentHash,
        checkpointId: checkpoint.checkpointId,
        expectedRevision: project.revision,
        ...(paths ? { paths } : {}),
      },
      safeSummary: summary,
      reasons: ['Restore replaces the current project snapshot.'],
      askedBy: input.requestedBy ?? null,
    });
  }

  private async workspaceDiffSummary(
    checkpoint: CheckpointRecord,
    paths: readonly string[] | null = null,
  ): Promise<string> {
    const { plan, drifted } = await this.h.projects.restorePreview(checkpoint, paths);
    const touched = [
      ...plan.added.map((f) => f.path),
      ...plan.changed.map((c) => c.to.path),
      ...plan.removed.map((f) => f.path),
      ...plan.modeChanged.map((f) => f.path),
    ];
    const outside = touched.filter((p) => drifted.has(p)).length;
    let text =
      `${plan.changed.length} file(s) change, ${plan.added.length} come back, ` +
      `${plan.removed.length} are removed, ${plan.modeChanged.length} change mode`;
    if (outside > 0)
      text += `; ${outside} of them changed outside the agent since the last checkpoint`;
    if (plan.notRestorable.length > 0)
      text += `; ${plan.notRestorable.length} cannot be put back (${plan.notRestorable
        .slice(0, 3)
        .map((n) => `${n.path}: ${n.reason}`)
        .join('; ')}${plan.notRestorable.length > 3 ? '; …' : ''})`;
    return text;
  }

  private async checkRestorable(
    sessionId: string,
    input: { checkpointId: string; checkpointContentHash: string; expectedRevision: string },
  ): Promise<{ checkpoint: CheckpointRecord; project: ProjectRecord }> {
    const checkpoint = await this.h.db.getCheckpoint(input.checkpointId);
    const session = await this.h.requireSession(sessionId);
    if (!checkpoint || checkpoint.projectId !== session.projectId)
      throw new StudioError(
        ErrorCode.CHECKPOINT_NOT_FOUND,
        `No checkpoint ${input.checkpointId} for this project.`,
      );
    if (checkpoint.contentHash !== input.checkpointContentHash)
      throw new StudioError(
        ErrorCode.CHECKPOINT_NOT_FOUND,
        `Checkpoint ${input.checkpointId} has content hash ${checkpoint.contentHash}, not ${input.checkpointContentHash}.`,
        { field: 'checkpointContentHash' },
      );
    const project = await this.h.projects.projectOfSession(sessionId);
    if (!project)
      throw new StudioError(ErrorCode.CHECKPOINT_NOT_FOUND, 'This session has no project.');
    if (project.revision !== input.expectedRevision)
      throw new StudioError(
        ErrorCode.REVISION_CONFLICT,
        `The project moved on: it is at revision ${project.revision}, not ${input.expectedRevision}. Nothing was changed.`,
        {
          field: 'expectedRevision',
          remediation: 'Refresh the project and review the restore again.',
        },
      );
    return { checkpoint, project };
  }

  /**
   * Executes an approved engine tool (project.checkpoint.restore); the 'decision' job runs it, so
   * it is idempotent: run again after a crash it does only what is left.
   * - GRANTED: one commit moves the call to RUNNING (APPROVAL_CONSUMED, TOOL_DISPATCHED), takes
   *   the RESTORE_PREIMAGE checkpoint and writes the restore job record; then finishRestore.
   * - RUNNING with a restore job record: finishRestore (writing the files again is idempotent).
   * - RUNNING without one (a data dir of an older server): TOOL_FAILED, nothing was written.
   * - already ended: nothing.
   * A failure before the restore job record ends the call with TOOL_FAILED; after it, the record
   * stays and a restart finishes the restore or ends the call with TOOL_FAILED (recoverRestores).
   */
  async runEngineTool(toolCallId: string): Promise<void> {
    const call = await this.h.db.getToolCall(toolCallId);
    if (!call || !call.argumentsJson || !call.approvalId) return;
    if (TERMINAL_TOOL_STATUSES.has(call.status)) return;
    const fail = (error: unknown) => this.failEngineTool(call, error);
    if (call.status === 'RUNNING' && (await this.h.db.getRestoreJob(toolCallId)))
      return this.finishRestore(toolCallId);
    let started: boolean;
    try {
      if (call.status === 'RUNNING') {
        return await fail(
          new StudioError(
            ErrorCode.TOOL_FAILED,
            'The restore was interrupted by a restart before it wrote anything; the project is unchanged.',
            { remediation: 'Request the restore again.' },
          ),
        );
      }
      const approval = await this.h.db.getApproval(call.approvalId);
      if (!approval || approval.status !== 'GRANTED') return;
      const args = JSON.parse(call.argumentsJson) as {
        checkpointId: string;
        checkpointContentHash: string;
        expectedRevision: string;
        paths?: string[];
      };
      const { checkpoint, project } = await this.checkRestorable(call.sessionId, args);
      started = await this.h.kernel.write(async () => {
        const again = await this.h.db.getApproval(call.approvalId!);
        if (again?.status !== 'GRANTED') return false;
        await this.h.append(call.sessionId, [
          {
            type: 'APPROVAL_CONSUMED',
            status: 'CONSUMED',
            ...approvalFieldsOf(again),
            runId: call.runId,
          },
          {
            type: 'TOOL_DISPATCHED',
            runId: call.runId,
            toolCallId,
            toolName: call.toolName,
            toolVersion: call.toolVersion,
            status: 'RUNNING',
            executor: 'SERVER',
          },
        ]);
        const preImage = await this.h.projects.checkpoint(call.sessionId, 'RESTORE_PREIMAGE', {
          runId: call.runId,
          exactPreImage: true,
        });
        await this.h.db.putRestoreJob({
          toolCallId,
          sessionId: call.sessionId,
          projectId: project.projectId,
          checkpointId: checkpoint.checkpointId,
          preImageCheckpointId: preImage.checkpointId,
          startedAt: this.h.iso(),
          ...(args.paths ? { paths: args.paths } : {}),
        });
        return true;
      });
    } catch (error) {
      await fail(error);
      return;
    }
    // Past this point the restore job record exists: a failure writing the folder leaves it, so
    // a restart finishes the restore (recoverRestores), or ends the call with TOOL_FAILED.
    if (!started) return;
    this.h.fault('restore-started');
    await this.finishRestore(toolCallId);
    this.h.fault('restore-committed');
  }

  /** Ends an engine tool call with TOOL_FAILED (consuming its grant), unless it already ended. */
  private async failEngineTool(call: ToolCallRecord, error: unknown): Promise<void> {
    const toolCallId = call.toolCallId;
    const e =
      error instanceof StudioError
        ? error
        : new StudioError(
            ErrorCode.TOOL_FAILED,
            error instanceof Error ? error.message : String(error),
          );
    await this.h.kernel.write(async () => {
      const now = await this.h.db.getToolCall(toolCallId);
      if (!now || TERMINAL_TOOL_STATUSES.has(now.status)) return;
      const approval = await this.h.db.getApproval(call.approvalId!);
      await this.h.append(call.sessionId, [
        ...(approval?.status === 'GRANTED'
          ? [
              {
                type: 'APPROVAL_CONSUMED' as const,
                status: 'CONSUMED' as const,
                ...approvalFieldsOf(approval),
                runId: call.runId,
              },
              {
                type: 'TOOL_DISPATCHED' as const,
                runId: call.runId,
                toolCallId,
                toolName: call.toolName,
                toolVersion: call.toolVersion,
                status: 'RUNNING' as const,
                executor: 'SERVER' as const,
              },
            ]
          : []),
        {
          type: 'TOOL_FAILED',
          runId: call.runId,
          toolCallId,
          toolName: call.toolName,
          toolVersion: call.toolVersion,
          status: 'FAILED',
          error: {
            code: e.code,
            message: e.message,
            retryable: false,
            remediation: e.remediation,
          },
        },
      ]);
      await this.h.db.deleteRestoreJob(toolCallId);
    });
  }

  /** Writes the restore (idempotent) and commits revision + 1, CHECKPOINT_RESTORED and TOOL_SUCCEEDED. */
  private async finishRestore(toolCallId: string): Promise<void> {
    const job = await this.h.db.getRestoreJob(toolCallId);
    const call = await this.h.db.getToolCall(toolCallId);
    if (!job || !call) return;
    const checkpoint = await this.h.db.getCheckpoint(job.checkpointId);
    const preImage = await this.h.db.getCheckpoint(job.preImageCheckpointId);
    const project = await this.h.db.getProject(job.projectId);
    if (!checkpoint || !preImage || !project)
      throw new Error(`restore job ${toolCallId} refers to missing records`);
    // A per-file restore writes the pre-image with the selected paths taken from the
    // checkpoint: computed from two stored checkpoints, so a restart computes the same files.
    const ws = await this.h.projects.workspace(job.projectId);
    const targetFiles = job.paths
      ? selectedManifest(
          await this.h.projects.checkpointFiles(preImage),
          await this.h.projects.checkpointFiles(checkpoint),
          job.paths,
        )
      : await this.h.projects.checkpointFiles(checkpoint);
    const restored: RestoreResult = ws.restore(targetFiles);
    this.h.fault('restore-written');
    const written: EventFiles = eventFilesFor([], restored.written);
    const recorded = ws.storeManifest(restored.files);
    const restoredAt = this.h.iso();
    await this.h.kernel.write(async () => {
      const next: ProjectRecord = {
        ...project,
        revision: (BigInt(preImage.projectRevision) + 1n).toString(),
        contentHash: restored.contentHash,
        fileCount: restored.files.length,
        totalBytes: String(totalBytes(restored.files)),
        recordedContentHash: recorded,
        unavailableReason: null,
        updatedAt: restoredAt,
      };
      await this.h.db.putProject(next);
      await this.h.append(job.sessionId, [
        {
          type: 'CHECKPOINT_RESTORED',
          runId: call.runId,
          checkpointId: checkpoint.checkpointId,
          projectRevision: checkpoint.projectRevision,
          contentHash: checkpoint.contentHash,
          reason: checkpoint.reason,
          files: written.files,
          studioFilesOmitted: written.studioFilesOmitted,
          studioFilesRemoved: restored.removed.length,
          studioFileCount: restored.files.length,
          studioTotalBytes: String(totalBytes(restored.files)),
          restoredAt,
        },
        {
          type: 'TOOL_SUCCEEDED',
          runId: call.runId,
          toolCallId,
          toolName: call.toolName,
          toolVersion: call.toolVersion,
          status: 'SUCCEEDED',
          resultJson: canonicalJson({
            preRestoreCheckpoint: {
              checkpointId: preImage.checkpointId,
              contentHash: preImage.contentHash,
              createdAt: preImage.createdAt,
              projectRevision: preImage.projectRevision,
              reason: preImage.reason,
            },
            project: {
              contentHash: next.contentHash,
              name: next.name,
              projectId: next.projectId,
              revision: next.revision,
            },
            restoredCheckpointId: checkpoint.checkpointId,
          }),
        },
      ]);
      await this.h.db.deleteRestoreJob(toolCallId);
    });
  }

  /**
   * A restart mid-restore finishes the restore the human approved. Jobs whose project folder is
   * not open yet are finished when the project is registered.
   */
  async recoverRestores(): Promise<void> {
    for (const job of await this.h.db.listRestoreJobs()) {
      if (!this.h.projects.isOpen(job.projectId)) continue;
      this.h.logger.warn('finishing a restore interrupted by a restart', {
        toolCallId: job.toolCallId,
      });
      try {
        await this.finishRestore(job.toolCallId);
      } catch (error) {
        this.h.logger.error('could not finish an interrupted restore', {
          toolCallId: job.toolCallId,
          error: String(error),
        });
        // Tried once more after the restart: the call ends, it is not left RUNNING.
        const call = await this.h.db.getToolCall(job.toolCallId);
        if (call)
          await this.failEngineTool(
            call,
            new StudioError(
              ErrorCode.TOOL_FAILED,
              `The restore could not be finished after a restart: ${error instanceof Error ? error.message : String(error)}`,
            ),
          );
      }
    }
  }
}
