import type { ExecutionResult, SubscriptionForwarder, SubscriptionOperation } from '@urql/core';
import { useMemo, useRef } from 'react';
import { useSubscription } from 'urql';
import { EVENT_BATCH_DEFAULT, EVENT_BATCH_MAX, HISTORY_PAGE_MAX } from '../../protocol/contract.ts';
import { EventBatchesSubscription } from './eventDocuments.ts';
import type { ScheduleFn } from './frame.ts';

type Row = Record<string, unknown>;
type FetchBody = SubscriptionOperation;
type ObservableLike<T> = ReturnType<SubscriptionForwarder> & {
  subscribe(observer: ObserverLike<T>): { unsubscribe(): void };
};
type ObserverLike<T> = { next(value: T): void; error(error: unknown): void; complete(): void };

/** Sends one GraphQL-over-WebSocket request; returns its disposer. */
export type SubscribeFn = (
  payload: FetchBody & { query: string },
  sink: ObserverLike<ExecutionResult>,
) => () => void;

/**
 * Reads History after a cursor (the events come back in seq order, with the current state of
 * the calls they name in `studioToolCalls`, as a batch carries them).
 */
export type FetchHistoryFn = (
  sessionId: string,
  afterSeq: string,
  first: number,
) => Promise<{ events: Row[]; hasMore: boolean; studioToolCalls?: readonly Row[] }>;

const BATCH_FIELD = 'studioAgentEventBatches';

/** How long a batch waits for the ones right behind it (about one frame at 60 Hz). */
export const MERGE_WINDOW_MS = 16;

/** A merged write is passed on at once when it reaches this many events. */
const MERGE_MAX_EVENTS = EVENT_BATCH_MAX;

export interface ResumableEventBatchesOptions {
  /** How long batches are held to be merged into one cache write (0 passes each on by itself). */
  mergeWindowMs?: number;
  /**
   * When held batches are passed on, instead of the window's timer: the app passes the next
   * animation frame (frame.ts), so the cache is written at most once per frame, right before
   * the frame renders what the write changed.
   */
  schedule?: ScheduleFn;
}

/** True when a forwarded request is the event-batch stream (the one the resume logic applies to). */
export function isEventBatchRequest(request: FetchBody): boolean {
  const variables = request.variables as Row | undefined;
  return (
    typeof request.query === 'string' &&
    request.query.includes(BATCH_FIELD) &&
    typeof variables?.sessionId === 'string' &&
    typeof variables.afterSeq === 'string'
  );
}

function seqOf(event: Row): bigint | null {
  return typeof event.seq === 'string' ? BigInt(event.seq) : null;
}

/**
 * Adds `incoming` calls (a batch's or a history page's `studioToolCalls`) to `calls`, by
 * toolCallId in order of first mention: a later state replaces an earlier one unless it is
 * older (its updatedAt), so a merged write leaves every call at the newest state it carried.
 */
function mergeCalls(calls: Map<string, Row>, incoming: unknown): void {
  if (!Array.isArray(incoming)) return;
  for (const call of incoming as Row[]) {
    if (!call || typeof call.toolCallId !== 'string') continue;
    const known = calls.get(call.toolCallId);
    if (
      known &&
      typeof known.updatedAt === 'string' &&
      typeof call.updatedAt === 'string' &&
      Date.parse(call.updatedAt) < Date.parse(known.updatedAt)
    )
      continue;
    calls.set(call.toolCallId, call);
  }
}

/**
 * Forwards a `studioAgentEventBatches` subscription so that it survives reconnects exactly:
 *
 * - the payload's `variables` is an enumerable getter, so when graphql-ws re-sends the payload
 *   after a reconnect, `afterSeq` is the last seq this stream applied, not the starting one;
 * - events at or below the last applied seq are dropped (replays, duplicates);
 * - when an event arrives past a hole, the hole is filled from History first, so nothing after
 *   a gap reaches the cache before the gap itself;
 * - batches are handled one at a time, in arrival order;
 * - batches that arrive before the next animation frame (`schedule`; else within `mergeWindowMs`
 *   of the first one waiting) are passed on as one
 *   (one cache write and one re-read of the pages watching it, not one per server message), and
 *   anything held is passed on before an error, the stream's end or a result that is no batch.
 *
 * The cursor lives in this closure, outside React state; every subscribe call gets its own.
 */
export function resumableEventBatches(
  request: FetchBody,
  subscribe: SubscribeFn,
  fetchHistory: FetchHistoryFn,
  { mergeWindowMs = MERGE_WINDOW_MS, schedule }: ResumableEventBatchesOptions = {},
): ObservableLike<ExecutionResult> {
  return {
    subscribe(sink) {
      const variables = (request.variables ?? {}) as Row;
      const sessionId = String(variables.sessionId);
      let lastApplied = BigInt(String(variables.afterSeq));
      let closed = false;
      let queue: Promise<void> = Promise.resolve();
      /**
       * Events applied but not passed on yet, with the result that brought the first of them and
       * the calls they name (by toolCallId, the newest state each result carried).
       */
      let held: {
        result: ExecutionResult;
        data: Row;
        batch: Row;
        events: Row[];
        calls: Map<string, Row>;
      } | null = null;
      let cancelHeld: (() => void) | null = null;
      const later: ScheduleFn =
        schedule ??
        ((run) => {
          const timer = setTimeout(run, mergeWindowMs);
          return () => clearTimeout(timer);
        });

      const release = () => {
        cancelHeld?.();
        cancelHeld = null;
        const merged = held;
        held = null;
        if (!merged || closed) return;
        const { result, data, batch, events, calls } = merged;
        sink.next({
          ...result,
          data: {
            ...data,
            [BATCH_FIELD]: {
              ...batch,
              fromSeq: events[0]?.seq,
              throughSeq: events[events.length - 1]?.seq,
              events,
              studioToolCalls: [...calls.values()],
            },
          },
        });
      };

      const hold = (
        result: ExecutionResult,
        data: Row,
        batch: Row,
        events: Row[],
        calls: Map<string, Row>,
      ) => {
        if (held) {
          held.events.push(...events);
          for (const call of calls.values()) mergeCalls(held.calls, [call]);
        } else held = { result, data, batch, events, calls };
        if (mergeWindowMs <= 0 || held.events.length >= MERGE_MAX_EVENTS) release();
        else cancelHeld ??= later(release);
      };

      const payload = { ...request, query: request.query ?? '' } as FetchBody & { query: string };
      Object.defineProperty(payload, 'variables', {
        enumerable: true,
        configurable: true,
        get: () => ({ ...variables, afterSeq: lastApplied.toString() }),
      });

      /** The events in (after, before) from History, and the calls they name into `calls`. */
      const fillGap = async (
        after: bigint,
        before: bigint,
        calls: Map<string, Row>,
      ): Promise<Row[]> => {
        const found: Row[] = [];
        let cursor = after;
        let stalls = 0;
        while (cursor + 1n < before && !closed && stalls < 2) {
          const page = await fetchHistory(sessionId, cursor.toString(), HISTORY_PAGE_MAX);
          mergeCalls(calls, page.studioToolCalls);
          let progressed = false;
          for (const event of page.events) {
            const seq = seqOf(event);
            if (seq === null || seq <= cursor || seq >= before) continue;
            found.push(event);
            cursor = seq;
            progressed = true;
          }
          if (!progressed) stalls += 1;
          if (!page.hasMore && cursor + 1n < before) stalls += 1;
        }
        return found;
      };

      const handle = async (result: ExecutionResult): Promise<void> => {
        if (closed) return;
        const data = result.data as Row | null | undefined;
        const batch = data?.[BATCH_FIELD] as Row | null | undefined;
        if (!batch || !Array.isArray(batch.events)) {
          release();
          sink.next(result);
          return;
        }
        const incoming = (batch.events as Row[])
          .filter((event) => seqOf(event) !== null)
          .sort((a, b) => {
            const x = seqOf(a) as bigint;
            const y = seqOf(b) as bigint;
            return x < y ? -1 : x > y ? 1 : 0;
          });
        const events: Row[] = [];
        // The calls gap fills bring, then the batch's own (current when it was read).
        const calls = new Map<string, Row>();
        let cursor = lastApplied;
        for (const event of incoming) {
          const seq = seqOf(event) as bigint;
          if (seq <= cursor) continue;
          if (seq > cursor + 1n) {
            const missing = await fillGap(cursor, seq, calls);
            if (closed) return;
            events.push(...missing);
          }
          events.push(event);
          cursor = seq;
        }
        if (events.length === 0) return;
        lastApplied = cursor;
        mergeCalls(calls, batch.studioToolCalls);
        hold(result, data as Row, batch, events, calls);
      };

      const enqueue = (task: () => Promise<void> | void) => {
        queue = queue.then(task).catch((error: unknown) => {
          release();
          if (!closed) sink.error(error);
        });
      };

      const dispose = subscribe(payload, {
        next: (result) => enqueue(() => handle(result)),
        error: (error) =>
          enqueue(() => {
            release();
            if (!closed) sink.error(error);
          }),
        complete: () =>
          enqueue(() => {
            release();
            if (!closed) sink.complete();
          }),
      });

      return {
        unsubscribe() {
          closed = true;
          cancelHeld?.();
          cancelHeld = null;
          held = null;
          dispose();
        },
      };
    },
  };
}

/**
 * Streams a session's events into the cache as an observer (no clientEpoch), starting after
 * `afterSeq` (the newest seq the timeline has loaded). `afterSeq` is read once: later changes
 * are ignored, because the stream itself resumes from the last applied seq on reconnect and a
 * moving variable would tear the subscription down on every event. Pass null to wait.
 */
export function useSessionEventStream(
  sessionId: string,
  afterSeq: string | null,
): {
  error: string | null;
  streaming: boolean;
} {
  const started = useRef<{ sessionId: string; afterSeq: string } | null>(null);
  if (afterSeq !== null && started.current?.sessionId !== sessionId) {
    started.current = { sessionId, afterSeq };
  }
  const start = started.current?.sessionId === sessionId ? started.current.afterSeq : null;
  const variables = useMemo(
    () => ({ sessionId, afterSeq: start ?? '0', maxBatch: EVENT_BATCH_DEFAULT }),
    [sessionId, start],
  );
  const [result] = useSubscription({
    query: EventBatchesSubscription,
    variables,
    pause: start === null,
  });
  return {
    error: result.error ? result.error.message : null,
    streaming: start !== null && !result.error,
  };
}
