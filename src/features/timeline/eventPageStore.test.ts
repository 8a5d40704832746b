import { afterEach, describe, expect, it, vi } from 'vitest';
import { EVENT_BATCH_DEFAULT } from '../../../protocol/contract.ts';
import { EventBatchesSubscription, PAGE_SIZE } from '../../graphql/eventDocuments.ts';
import type { StudioEvent } from '../../graphql/eventFragments.ts';
import {
  eventPage,
  firstSeqOf,
  logEvents,
  pageOfLogEvents,
  SESSION_ID,
} from '../../test/fixtures.ts';
import { makeTestClient, type TestClient } from '../../test/testClient.ts';
import {
  EventPageStore,
  newestPageOf,
  prefetchEventPages,
  type ScheduleFn,
} from './eventPageStore.ts';

/** A frame scheduler the test runs by hand. */
function manualFrames() {
  const pending = new Set<() => void>();
  const schedule: ScheduleFn = (flush) => {
    pending.add(flush);
    return () => pending.delete(flush);
  };
  return {
    schedule,
    count: () => pending.size,
    run() {
      const due = [...pending];
      pending.clear();
      for (const flush of due) flush();
    },
  };
}

/** Pages 0..2 full, page 3 holding its first two seqs (`P3` and `P3 + 1`). */
const P3 = firstSeqOf(3);
const PAGES: Record<number, StudioEvent[]> = {
  0: pageOfLogEvents(0),
  1: pageOfLogEvents(1),
  2: pageOfLogEvents(2),
  3: logEvents(P3, P3 + 1),
};
const range = (from: number, through: number) =>
  Array.from({ length: through - from + 1 }, (_, i) => String(from + i));

function setup(answer: (page: number) => Promise<void> | void = () => undefined) {
  const test = makeTestClient(async (operation) => {
    const page = Number((operation.variables as { page?: string }).page ?? 0);
    await answer(page);
    return { data: { studioEventPage: eventPage(page, PAGES[page] ?? []) } };
  });
  const frames = manualFrames();
  const store = new EventPageStore(test.client, SESSION_ID, frames.schedule);
  let notified = 0;
  store.subscribe(() => (notified += 1));
  store.activate();
  stores.push(store);
  return { test, frames, store, notified: () => notified };
}

const stores: EventPageStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.deactivate();
});

const seqsOf = (store: EventPageStore, page: string) =>
  store
    .getSnapshot()
    .pages.get(page)
    ?.events?.map((event) => event.seq);

async function loaded(store: EventPageStore, pages: string[]) {
  await vi.waitFor(() => {
    store.flush();
    for (const page of pages) expect(store.getSnapshot().pages.get(page)?.events).toBeTruthy();
  });
}

function stream(test: TestClient, afterSeq: string) {
  const subscription = test.client
    .subscription(EventBatchesSubscription, {
      sessionId: SESSION_ID,
      afterSeq,
      maxBatch: EVENT_BATCH_DEFAULT,
    })
    .subscribe(() => undefined);
  return {
    push(from: number, through: number) {
      const events = logEvents(from, through);
      test.push('studioAgentEventBatches', {
        studioAgentEventBatches: {
          __typename: 'StudioAgentEventBatch',
          sessionId: SESSION_ID,
          fromSeq: String(from),
          throughSeq: String(through),
          events,
        },
      });
    },
    stop: () => subscription.unsubscribe(),
  };
}

const pageQueries = (test: TestClient, page: string) =>
  test.operations.filter(
    (op) => op.kind === 'query' && (op.variables as { page?: string }).page === page,
  ).length;

describe('EventPageStore', () => {
  it('tells its subscribers once per frame, however many results arrived in between', async () => {
    const { test, frames, store, notified } = setup();
    store.want('3');
    await loaded(store, ['3']);
    const before = notified();
    const live = stream(test, String(P3 + 1));
    await vi.waitFor(() => expect(test.subscriptions()).toHaveLength(1));
    live.push(P3 + 2, P3 + 2);
    live.push(P3 + 3, P3 + 4);
    live.push(P3 + 5, P3 + 5);
    // Let the cache re-run the page query after each write.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(notified()).toBe(before);
    expect(seqsOf(store, '3')).toEqual(range(P3, P3 + 1));
    expect(frames.count()).toBe(1);
    frames.run();
    expect(notified()).toBe(before + 1);
    expect(seqsOf(store, '3')).toEqual(range(P3, P3 + 5));
    live.stop();
  });

  it('releases a page: its query stops, it leaves the snapshot, and the cache lets it go', async () => {
    const { test, store } = setup();
    for (const page of ['0', '1', '2', '3']) store.want(page);
    await loaded(store, ['0', '1', '2', '3']);
    expect(pageQueries(test, '0')).toBe(1);

    store.release('0');
    store.flush();
    expect(store.getSnapshot().pages.has('0')).toBe(false);
    expect([...store.wantedPages]).toEqual(['1', '2', '3']);

    // Writing a live batch unlinks the pages no timeline holds (page 0), not the held ones.
    const live = stream(test, String(P3 + 1));
    await vi.waitFor(() => expect(test.subscriptions()).toHaveLength(1));
    live.push(P3 + 2, P3 + 2);
    store.release('1');
    store.want('1');
    store.want('0');
    await loaded(store, ['0', '1']);
    expect(pageQueries(test, '0')).toBe(2);
    expect(pageQueries(test, '1')).toBe(1);
    expect(seqsOf(store, '0')?.length).toBe(PAGE_SIZE);
    live.stop();
  });

  it('keeps every page cached while the session is not held by a timeline', async () => {
    const { test, store } = setup();
    for (const page of ['0', '1', '2', '3']) store.want(page);
    await loaded(store, ['0', '1', '2', '3']);
    store.release('0');
    store.deactivate();
    const live = stream(test, String(P3 + 1));
    await vi.waitFor(() => expect(test.subscriptions()).toHaveLength(1));
    live.push(P3 + 2, P3 + 2);
    store.activate();
    store.want('0');
    await loaded(store, ['0']);
    expect(pageQueries(test, '0')).toBe(1);
    live.stop();
  });

  it('joins a prefetch still in flight: the page is fetched once', async () => {
    let answer = () => undefined as void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const { test, store } = setup(() => answered);
    const release = prefetchEventPages(test.client, SESSION_ID, ['3']);
    await vi.waitFor(() => expect(pageQueries(test, '3')).toBe(1));
    store.want('3');
    answer();
    await loaded(store, ['3']);
    expect(seqsOf(store, '3')).toEqual(range(P3, P3 + 1));
    expect(pageQueries(test, '3')).toBe(1);
    release();
  });

  it('reads a page a prefetch brought from the cache, without asking again', async () => {
    const { test, store } = setup();
    prefetchEventPages(test.client, SESSION_ID, ['2']);
    await vi.waitFor(() => expect(pageQueries(test, '2')).toBe(1));
    // The prefetch's result is in Graphcache before the store asks.
    await new Promise((resolve) => setTimeout(resolve, 10));
    store.want('2');
    await loaded(store, ['2']);
    expect(seqsOf(store, '2')?.length).toBe(PAGE_SIZE);
    expect(pageQueries(test, '2')).toBe(1);
  });

  it('starts the timeline at the page after the last event', () => {
    expect(newestPageOf('0')).toBe('0');
    expect(newestPageOf(String(PAGE_SIZE - 1))).toBe('0');
    // A full page: the next event opens the next page, which the timeline shows first.
    expect(newestPageOf(String(PAGE_SIZE))).toBe('1');
    expect(newestPageOf(String(3 * PAGE_SIZE + 2))).toBe('3');
  });
});
