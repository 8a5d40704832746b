/**
 * Checkpoint fields the browser needs (issue 11): `StudioCheckpoint.studioMadeBy` (the event,
 * run and tool call that made a checkpoint, read from the log) and
 * `StudioCheckpoint.studioRestorePreview(paths)` (what a restore of the whole checkpoint, or of
 * some files and folders only, would change now: the same plan and the same counts the restore's
 * approval card states, from Engine.restorePreview).
 */
import { ErrorCode } from '../../protocol/contract.ts';
import type { Engine } from '../engine/Engine.ts';
import { normalizeRestorePaths } from '../engine/restoreSelection.ts';
import { StudioError } from '../engine/StudioError.ts';

type Args = Record<string, unknown>;
interface Ctx {
  engine: Engine;
}

/** Events after a checkpoint's own event searched for the tool call it was taken for. */
const ORIGIN_WINDOW = 32;

async function requireCheckpoint(engine: Engine, checkpointId: string) {
  const c = await engine.reads.getCheckpoint(checkpointId);
  if (!c) throw new StudioError(ErrorCode.CHECKPOINT_NOT_FOUND, `No checkpoint ${checkpointId}.`);
  return c;
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/**
 * What made a checkpoint. An AGENT_WRITE or RESTORE_PREIMAGE checkpoint is taken by the engine
 * just before the tool call of its run executes, so that call is the first tool event of the
 * same run after the checkpoint's event; a MANUAL one comes from a person in the studio.
 */
export async function checkpointOrigin(engine: Engine, checkpointId: string) {
  const c = await requireCheckpoint(engine, checkpointId);
  const seq = BigInt(c.createdSeq);
  const rows = await engine.reads.readEvents(c.sessionId, seq - 1n, ORIGIN_WINDOW + 1);
  const own = rows[0]?.seq === seq ? rows[0] : undefined;
  const runId = own?.runId ?? null;
  let toolCallId: string | null = null;
  let toolName: string | null = null;
  let restoredCheckpointId: string | null = null;
  if (runId && c.reason !== 'MANUAL') {
    for (const row of rows.slice(1)) {
      if (row.runId !== runId || !row.type.startsWith('TOOL_')) continue;
      const p = JSON.parse(row.payload) as Record<string, unknown>;
      toolCallId = str(p.toolCallId);
      toolName = str(p.toolName);
      if (c.reason === 'RESTORE_PREIMAGE' && typeof p.argumentsJson === 'string') {
        try {
          restoredCheckpointId = str(
            (JSON.parse(p.argumentsJson) as Record<string, unknown>).checkpointId,
          );
        } catch {
          restoredCheckpointId = null;
        }
      }
      break;
    }
  }
  const summary =
    c.reason === 'MANUAL'
      ? 'Taken by hand in the studio'
      : c.reason === 'RESTORE_PREIMAGE'
        ? restoredCheckpointId
          ? `Saved before restoring checkpoint ${restoredCheckpointId}`
          : 'Saved before a restore'
        : toolName
          ? `Taken before ${toolName} wrote to the project`
          : 'Taken before an agent write';
  return {
    __typename: 'StudioCheckpointOrigin' as const,
    seq: c.createdSeq,
    runId,
    toolCallId,
    toolName,
    restoredCheckpointId,
    summary,
  };
}

export async function restorePreviewOf(engine: Engine, checkpointId: string, pathsArg: unknown) {
  if (
    pathsArg !== null &&
    pathsArg !== undefined &&
    (!Array.isArray(pathsArg) || pathsArg.some((p) => typeof p !== 'string'))
  )
    throw new StudioError(ErrorCode.BAD_REQUEST, 'paths must be a list of paths.', {
      field: 'paths',
    });
  const paths = normalizeRestorePaths(pathsArg as string[] | null | undefined);
  const c = await requireCheckpoint(engine, checkpointId);
  const { plan, drifted } = await engine.restorePreview(c, paths);
  const touched = [
    ...plan.added.map((f) => f.path),
    ...plan.changed.map((x) => x.to.path),
    ...plan.removed.map((f) => f.path),
    ...plan.modeChanged.map((f) => f.path),
  ];
  const project = await engine.reads.getProject(c.projectId);
  return {
    __typename: 'StudioRestorePreview' as const,
    checkpointId: c.checkpointId,
    paths,
    projectRevision: project?.revision ?? '0',
    projectContentHash: project?.contentHash ?? '',
    changed: plan.changed.length,
    added: plan.added.length,
    removed: plan.removed.length,
    modeChanged: plan.modeChanged.length,
    notRestorable: plan.notRestorable.length,
    changedOutsideAgent: touched.filter((p) => drifted.has(p)).length,
  };
}

/** Field resolvers to merge into StudioCheckpoint (resolvers.ts wraps them in its guard). */
export const checkpointInsightResolvers = {
  studioMadeBy: (c: { checkpointId: string }, _a: Args, { engine }: Ctx) =>
    checkpointOrigin(engine, c.checkpointId),
  studioRestorePreview: (c: { checkpointId: string }, a: Args, { engine }: Ctx) =>
    restorePreviewOf(engine, c.checkpointId, a.paths),
};
