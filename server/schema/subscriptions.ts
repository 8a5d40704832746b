/**
 * Replay-then-live subscriptions. Each one registers its wake-up listener before its first read,
 * then loops: read the next rows after its cursor from the store, push them, and sleep only when
 * nothing new was committed. `await push` waits for the consumer (the socket), which is the
 * backpressure: a slow client is read for less often instead of buffered for.
 */
import { Repeater } from '@repeaterjs/repeater';
import type { Engine } from '../engine/Engine.ts';
import { StudioError } from '../engine/StudioError.ts';
import { eventView, sessionView } from './views.ts';
import type { EventView, SessionView } from './views.ts';
import { EVENT_BATCH_DEFAULT, EVENT_BATCH_MAX, ErrorCode } from '../../protocol/contract.ts';

export interface EventBatch {
  sessionId: string;
  fromSeq: string;
  throughSeq: string;
  events: EventView[];
}

/** A value a subscription yields when it has to end with an error (the resolver throws it). */
export type Terminal = StudioError;

function checkCursor(engine: Engine, sessionId: string, afterSeq: string, clientEpoch: string | null) {
  const session = engine.requireSession(sessionId);
  if (clientEpoch !== null) engine.requireAttached(sessionId, clientEpoch);
  if (BigInt(afterSeq) > BigInt(session.lastEventSeq))
    throw new StudioError(
      ErrorCode.EVENT_CURSOR_INVALID,
      `afterSeq ${afterSeq} is past the committed history (last seq ${session.lastEventSeq}).`,
      { field: 'afterSeq', remediation: 'Resume from the last seq you applied.' },
    );
}

function staleError(clientEpoch: string, attached: string | null): StudioError {
  return new StudioError(
    ErrorCode.CLIENT_EPOCH_STALE,
    attached
      ? `Epoch ${clientEpoch} was fenced by a newer attachment (epoch ${attached}).`
      : `Epoch ${clientEpoch} is no longer attached.`,
    { remediation: 'Attach again to act on this session.' },
  );
}

/**
 * Events with seq > afterSeq, in order, then live commits. `batch` delivers arrays of up to
 * maxBatch events; otherwise one event per push. With a clientEpoch the stream ends with
 * AGENT_CLIENT_EPOCH_STALE as soon as that epoch is fenced or detached.
 */
export function eventStream(
  engine: Engine,
  args: { sessionId: string; afterSeq: string; clientEpoch: string | null; maxBatch: number | null },
  batch: boolean,
): Repeater<EventBatch | EventView | Terminal> {
  checkCursor(engine, args.sessionId, args.afterSeq, args.clientEpoch);
  const limit = Math.max(1, Math.min(args.maxBatch ?? EVENT_BATCH_DEFAULT, EVENT_BATCH_MAX));
  return new Repeater<EventBatch | EventView | Terminal>(async (push, stop) => {
    let dirty = true;
    let stopped = false;
    let wake: (() => void) | null = null;
    const unlisten = engine.notifier.onSession(args.sessionId, () => {
      dirty = true;
      wake?.();
    });
    const unclose = engine.notifier.onClose(() => stop());
    void stop.then(() => {
      stopped = true;
      wake?.();
    });
    let cursor = BigInt(args.afterSeq);
    try {
      while (!stopped) {
        dirty = false;
        if (args.clientEpoch !== null) {
          const session = engine.store.getSession(args.sessionId);
          if (session?.attachedEpoch !== args.clientEpoch) {
            await push(staleError(args.clientEpoch, session?.attachedEpoch ?? null));
            break;
          }
        }
        const rows = engine.store.readEvents(args.sessionId, cursor, limit);
        const last = rows[rows.length - 1];
        if (last) {
          const first = rows[0]!;
          cursor = last.seq;
          if (batch) {
            await push({
              sessionId: args.sessionId,
              fromSeq: first.seq.toString(),
              throughSeq: last.seq.toString(),
              events: rows.map(eventView),
            });
          } else {
            for (const row of rows) {
              if (stopped) break;
              await push(eventView(row));
            }
          }
          continue;
        }
        if (!dirty && !stopped) await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    } finally {
      unlisten();
      unclose();
    }
    stop();
  });
}

/** The app's sessions as they change (coalesced: each wake pushes the latest state once). */
export function sessionUpdates(engine: Engine, appId: string): Repeater<SessionView> {
  engine.requireApp(appId);
  return new Repeater<SessionView>(async (push, stop) => {
    const dirty = new Set<string>();
    let stopped = false;
    let wake: (() => void) | null = null;
    const unlisten = engine.notifier.onSessionUpdate((sessionId) => {
      dirty.add(sessionId);
      wake?.();
    });
    const unclose = engine.notifier.onClose(() => stop());
    void stop.then(() => {
      stopped = true;
      wake?.();
    });
    try {
      while (!stopped) {
        const next = dirty.values().next();
        if (!next.done) {
          dirty.delete(next.value);
          const record = engine.store.getSession(next.value);
          if (record && record.appId === appId) await push(sessionView(record));
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    } finally {
      unlisten();
      unclose();
    }
    stop();
  });
}
