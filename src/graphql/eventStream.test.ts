import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ExecutionResult } from '@urql/core';
import {
  MERGE_WINDOW_MS,
  resumableEventBatches,
  type FetchHistoryFn,
  type ResumableEventBatchesOptions,
  type SubscribeFn,
} from './eventStream.ts';
import { logEvents } from '../test/fixtures.ts';

function harness(
  fetchHistory: FetchHistoryFn = async () => ({ events: [], hasMore: false }),
  options: ResumableEventBatchesOptions = { mergeWindowMs: 0 },
) {
  let sink: Parameters<SubscribeFn>[1] | null = null;
  const payloads: { query: string; variables?: unknown }[] = [];
  const subscribe: SubscribeFn = (payload, observer) => {
    payloads.push(payload);
    sink = observer;
    return () => undefined;
  };
  const received: ExecutionResult[] = [];
  const stream = resumableEventBatches(
    {
      query: 'subscription StudioEventBatches { studioAgentEventBatches { sessionId } }',
      variables: { sessionId: 's', afterSeq: '2', maxBatch: 200 },
      operationName: 'StudioEventBatches',
      extensions: undefined,
    },
    subscribe,
    fetchHistory,
    options,
  );
  const errors: unknown[] = [];
  const subscription = stream.subscribe({
    next: (r) => received.push(r),
    error: (error) => errors.push(error),
    complete: () => undefined,
  });
  const send = (from: number, through: number, studioToolCalls: Record<string, unknown>[] = []) =>
    sink?.next({
      data: {
        studioAgentEventBatches: {
          sessionId: 's',
          fromSeq: String(from),
          throughSeq: String(through),
          events: logEvents(from, through),
          studioToolCalls,
        },
      },
    });
  const seqsOf = () =>
    received.map((r) =>
      (
        r.data as { studioAgentEventBatches: { events: { seq: string }[] } }
      ).studioAgentEventBatches.events.map((e) => e.seq),
    );
  const fail = (error: unknown) => sink?.error(error);
  const callsOf = () =>
    received.map((r) =>
      (
        r.data as { studioAgentEventBatches: { studioToolCalls: Record<string, unknown>[] } }
      ).studioAgentEventBatches.studioToolCalls.map(
        (c) => `${String(c.toolCallId)}:${String(c.status)}`,
      ),
    );
  return { payloads, send, fail, seqsOf, callsOf, received, errors, subscription };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
const at = (second: number) => new Date(Date.UTC(2026, 10, 30, 9, 0, second)).toISOString();

describe('resumableEventBatches', () => {
  it('resends the last applied seq, not the starting one, when graphql-ws reconnects', async () => {
    const h = harness();
    const payload = h.payloads[0];
    expect(JSON.parse(JSON.stringify(payload)).variables.afterSeq).toBe('2');
    h.send(3, 7);
    await settle();
    // graphql-ws serialises the same payload object again on every reconnect.
    expect(JSON.parse(JSON.stringify(payload)).variables).toEqual({
      sessionId: 's',
      afterSeq: '7',
      maxBatch: 200,
    });
  });

  it('drops events at or below the last applied seq', async () => {
    const h = harness();
    h.send(3, 5);
    h.send(4, 6);
    h.send(1, 6);
    await settle();
    expect(h.seqsOf()).toEqual([['3', '4', '5'], ['6']]);
  });

  it('fills a gap from History before anything after it is passed on', async () => {
    const fetchHistory = vi.fn<FetchHistoryFn>(async (_sessionId, afterSeq) => ({
      events: logEvents(Number(afterSeq) + 1, 9),
      hasMore: false,
    }));
    const h = harness(fetchHistory);
    h.send(3, 4);
    h.send(8, 10);
    h.send(11, 11);
    await settle();
    await settle();
    expect(fetchHistory).toHaveBeenCalledWith('s', '4', 200);
    expect(h.seqsOf()).toEqual([['3', '4'], ['5', '6', '7', '8', '9', '10'], ['11']]);
  });

  it('passes on the calls a gap fill brings with the batch that needed it', async () => {
    const fetchHistory = vi.fn<FetchHistoryFn>(async (_sessionId, afterSeq) => ({
      events: logEvents(Number(afterSeq) + 1, 7),
      hasMore: false,
      studioToolCalls: [
        { toolCallId: 'gap', status: 'SUCCEEDED', updatedAt: at(9) },
        { toolCallId: 'both', status: 'SUCCEEDED', updatedAt: at(9) },
      ],
    }));
    const h = harness(fetchHistory);
    // The batch was read before the gap: its state of `both` is older than History's.
    h.send(8, 9, [
      { toolCallId: 'both', status: 'RUNNING', updatedAt: at(8) },
      { toolCallId: 'own', status: 'RUNNING', updatedAt: at(8) },
    ]);
    await settle();
    await settle();
    expect(h.seqsOf()).toEqual([['3', '4', '5', '6', '7', '8', '9']]);
    expect(h.callsOf()).toEqual([['gap:SUCCEEDED', 'both:SUCCEEDED', 'own:RUNNING']]);
  });
});

describe('resumableEventBatches merging', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const merging = () => {
    vi.useFakeTimers();
    return harness(undefined, {});
  };

  it('passes batches that arrive within one frame on as one write', async () => {
    const h = merging();
    h.send(3, 4);
    h.send(5, 5);
    h.send(6, 9);
    await vi.advanceTimersByTimeAsync(MERGE_WINDOW_MS - 1);
    expect(h.received).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.seqsOf()).toEqual([['3', '4', '5', '6', '7', '8', '9']]);
    const batch = (h.received[0]?.data as { studioAgentEventBatches: Record<string, unknown> })
      .studioAgentEventBatches;
    expect([batch.fromSeq, batch.throughSeq]).toEqual(['3', '9']);
  });

  it('merges the calls of batches passed on as one, each once at its newest state', async () => {
    const h = merging();
    h.send(3, 4, [
      { toolCallId: 'a', status: 'PROPOSED', updatedAt: at(3) },
      { toolCallId: 'b', status: 'RUNNING', updatedAt: at(4) },
    ]);
    h.send(5, 6, [
      { toolCallId: 'c', status: 'PROPOSED', updatedAt: at(5) },
      { toolCallId: 'a', status: 'SUCCEEDED', updatedAt: at(6) },
    ]);
    // A batch read earlier (another observer's, cached) carries an older state of b.
    h.send(7, 7, [{ toolCallId: 'b', status: 'PROPOSED', updatedAt: at(2) }]);
    await vi.advanceTimersByTimeAsync(MERGE_WINDOW_MS);
    expect(h.seqsOf()).toEqual([['3', '4', '5', '6', '7']]);
    expect(h.callsOf()).toEqual([['a:SUCCEEDED', 'b:RUNNING', 'c:PROPOSED']]);
  });

  it('passes a batch on by itself when nothing follows within the window', async () => {
    const h = merging();
    h.send(3, 4);
    await vi.advanceTimersByTimeAsync(MERGE_WINDOW_MS);
    h.send(5, 6);
    await vi.advanceTimersByTimeAsync(MERGE_WINDOW_MS);
    expect(h.seqsOf()).toEqual([
      ['3', '4'],
      ['5', '6'],
    ]);
  });

  it('resumes after the last event it received, even one still held for merging', async () => {
    const h = merging();
    h.send(3, 7);
    await vi.advanceTimersByTimeAsync(0);
    expect(h.received).toHaveLength(0);
    expect(JSON.parse(JSON.stringify(h.payloads[0])).variables.afterSeq).toBe('7');
  });

  it('passes on what it holds before an error, and nothing after unsubscribing', async () => {
    const h = merging();
    h.send(3, 4);
    h.fail(new Error('socket closed'));
    await vi.advanceTimersByTimeAsync(0);
    expect(h.seqsOf()).toEqual([['3', '4']]);
    expect(h.errors).toHaveLength(1);

    const other = merging();
    other.send(3, 4);
    await vi.advanceTimersByTimeAsync(0);
    other.subscription.unsubscribe();
    await vi.advanceTimersByTimeAsync(MERGE_WINDOW_MS);
    expect(other.received).toHaveLength(0);
  });
});
