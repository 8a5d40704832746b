/**
 * `studioRecentRestores(first)` (issue 11's home page): the checkpoints restored most recently,
 * across sessions, newest restore first, each with its session. A checkpoint keeps the time of
 * its last restore (`restoredAt`), so a checkpoint restored twice appears once, at the later.
 */
import { ErrorCode } from '../../protocol/contract.ts';
import type { Engine } from '../engine/Engine.ts';
import { StudioError } from '../engine/StudioError.ts';
import { chargeRows } from './inputLimits.ts';
import { checkpointView, sessionView } from './views.ts';

export const RECENT_RESTORES_DEFAULT = 10;
export const RECENT_RESTORES_MAX = 50;
/** Checkpoints looked at per session (its newest): an older restored one is left out. */
const CHECKPOINTS_PER_SESSION = 200;

export async function recentRestores(engine: Engine, ctx: object, firstArg: unknown) {
  const first = firstArg ?? RECENT_RESTORES_DEFAULT;
  if (typeof first !== 'number' || !Number.isInteger(first) || first < 1)
    throw new StudioError(ErrorCode.BAD_REQUEST, 'first must be at least 1.', { field: 'first' });
  const limit = Math.min(first, RECENT_RESTORES_MAX);
  const found: {
    restoredAt: string;
    view: ReturnType<typeof checkpointView>;
    sessionId: string;
  }[] = [];
  // One read-only snapshot for the whole list.
  return engine.snapshot(async (reads) => {
    for (const session of await reads.listAllSessions()) {
      for (const { record } of await reads.listCheckpoints(
        session.sessionId,
        null,
        CHECKPOINTS_PER_SESSION,
      )) {
        if (record.restoredAt)
          found.push({
            restoredAt: record.restoredAt,
            view: checkpointView(record),
            sessionId: session.sessionId,
          });
      }
    }
    // ISO-8601 UTC times of one format sort as text.
    found.sort((a, b) => (a.restoredAt < b.restoredAt ? 1 : a.restoredAt > b.restoredAt ? -1 : 0));
    const out = found.slice(0, limit);
    chargeRows(ctx, out.length * 2, 'first');
    const rows = [];
    for (const r of out) {
      const session = (await reads.getSession(r.sessionId))!;
      rows.push({
        __typename: 'StudioRecentRestore' as const,
        restoredAt: r.restoredAt,
        checkpoint: r.view,
        session: sessionView(session),
      });
    }
    return rows;
  });
}

type Args = Record<string, unknown>;

export const recentRestoreQueryResolvers = {
  studioRecentRestores: (_p: unknown, a: Args, ctx: { engine: Engine }) =>
    recentRestores(ctx.engine, ctx, a.first),
};
