import type { Client } from '@urql/core';
import { useEffect, useState, useSyncExternalStore } from 'react';
import { useClient } from 'urql';
import { EventPageQuery, PAGE_SIZE } from '../../graphql/eventDocuments.ts';
import type { StudioEvent } from '../../graphql/eventFragments.ts';

/** One fixed-size page as the timeline sees it: its events once loaded, or why not. */
export interface PageState {
  events: readonly StudioEvent[] | null;
  fetching: boolean;
  error: string | null;
}

export interface PagesSnapshot {
  /** Pages that were asked for, by page number (decimal string). */
  pages: ReadonlyMap<string, PageState>;
}

/**
 * The pages of one session that the timeline has asked for, each a live cache-first
 * `studioEventPage` query against Graphcache (the only store of the events: this holds the
 * latest result of each query, as urql's hooks do, and nothing else). Pages are asked for when
 * they scroll into view, and stay subscribed so tool-call and approval updates keep flowing.
 */
export class EventPageStore {
  private readonly wanted = new Set<string>();
  private readonly subscriptions = new Map<string, { unsubscribe(): void }>();
  private snapshot: PagesSnapshot = { pages: new Map() };
  private readonly listeners = new Set<() => void>();
  private active = false;

  constructor(
    private readonly client: Client,
    readonly sessionId: string,
  ) {}

  getSnapshot = (): PagesSnapshot => this.snapshot;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Asks for a page (idempotent); it loads once the store is active. */
  want(page: string): void {
    if (this.wanted.has(page)) return;
    this.wanted.add(page);
    this.write(page, { events: null, fetching: true, error: null });
    if (this.active) this.open(page);
  }

  /** Starts the page queries (mount). */
  activate(): void {
    if (this.active) return;
    this.active = true;
    for (const page of this.wanted) this.open(page);
  }

  /** Stops every page query (unmount); the cache keeps the data. */
  deactivate(): void {
    this.active = false;
    for (const subscription of this.subscriptions.values()) subscription.unsubscribe();
    this.subscriptions.clear();
  }

  private open(page: string): void {
    if (this.subscriptions.has(page)) return;
    const subscription = this.client
      .query(
        EventPageQuery,
        { sessionId: this.sessionId, page, size: PAGE_SIZE },
        { requestPolicy: 'cache-first' },
      )
      .subscribe((result) => {
        const events = result.data?.studioEventPage.events ?? null;
        this.write(page, {
          events: events ?? this.snapshot.pages.get(page)?.events ?? null,
          fetching: !result.data && !result.error,
          error: result.error ? result.error.message : null,
        });
      });
    this.subscriptions.set(page, subscription);
  }

  private write(page: string, state: PageState): void {
    const previous = this.snapshot.pages.get(page);
    if (
      previous &&
      previous.events === state.events &&
      previous.fetching === state.fetching &&
      previous.error === state.error
    ) {
      return;
    }
    const pages = new Map(this.snapshot.pages);
    pages.set(page, state);
    this.snapshot = { pages };
    for (const listener of this.listeners) listener();
  }
}

/** The page store of a session for this component's lifetime, and its current snapshot. */
export function useEventPages(sessionId: string): {
  store: EventPageStore;
  snapshot: PagesSnapshot;
} {
  const client = useClient();
  const [store, setStore] = useState(() => new EventPageStore(client, sessionId));
  let current = store;
  if (store.sessionId !== sessionId) {
    current = new EventPageStore(client, sessionId);
    setStore(current);
  }
  useEffect(() => {
    current.activate();
    return () => current.deactivate();
  }, [current]);
  const snapshot = useSyncExternalStore(
    current.subscribe,
    current.getSnapshot,
    current.getSnapshot,
  );
  return { store: current, snapshot };
}
