import type { Client } from '@urql/core';
import { useEffect, useState, useSyncExternalStore } from 'react';
import { useClient } from 'urql';
import { holdEventPages } from '../../graphql/cache.ts';
import { EventPageQuery, PAGE_SIZE } from '../../graphql/eventDocuments.ts';
import type { StudioEvent } from '../../graphql/eventFragments.ts';
import { nextFrame, type ScheduleFn } from '../../graphql/frame.ts';

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

export { nextFrame, type ScheduleFn } from '../../graphql/frame.ts';

const LOADING: PageState = { events: null, fetching: true, error: null };

/**
 * The pages of one session that the timeline has asked for, each a live cache-first
 * `studioEventPage` query against Graphcache (the only store of the events: this holds the
 * latest result of each query, as urql's hooks do, and nothing else). Pages are asked for when
 * they scroll into view and released when they are far from it; a wanted page stays subscribed
 * so tool-call and approval updates keep flowing.
 *
 * Results are published at most once per animation frame, however many query results (one per
 * live batch written) arrived in between: subscribers render once per frame, not per message.
 * The set of wanted pages is held in the cache (`holdEventPages`), which lets go of the rest.
 */
export class EventPageStore {
  private readonly wanted = new Set<string>();
  private readonly subscriptions = new Map<string, { unsubscribe(): void }>();
  private snapshot: PagesSnapshot = { pages: new Map() };
  /** Page states written since the last publication, or null when there are none. */
  private draft: Map<string, PageState> | null = null;
  private cancelFlush: (() => void) | null = null;
  private readonly listeners = new Set<() => void>();
  private active = false;
  private unhold: (() => void) | null = null;

  constructor(
    private readonly client: Client,
    readonly sessionId: string,
    private readonly schedule: ScheduleFn = nextFrame,
  ) {}

  getSnapshot = (): PagesSnapshot => this.snapshot;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** The pages asked for and not released (live). */
  get wantedPages(): ReadonlySet<string> {
    return this.wanted;
  }

  /** Asks for a page (idempotent); it loads once the store is active. */
  want(page: string): void {
    if (this.wanted.has(page)) return;
    this.wanted.add(page);
    this.write(page, LOADING);
    if (this.active) this.open(page);
  }

  /**
   * Lets a page go: its query stops, it leaves the snapshot (the timeline shows it as a gap
   * again) and the cache may drop its events. Wanting it again reloads it.
   */
  release(page: string): void {
    if (!this.wanted.delete(page)) return;
    this.subscriptions.get(page)?.unsubscribe();
    this.subscriptions.delete(page);
    this.change((pages) => pages.delete(page));
  }

  /** Starts the page queries and holds the wanted pages in the cache (mount). */
  activate(): void {
    if (this.active) return;
    this.active = true;
    this.unhold = holdEventPages(this.sessionId, this.wanted);
    for (const page of this.wanted) this.open(page);
  }

  /** Stops every page query (unmount); the cache keeps the data. */
  deactivate(): void {
    this.active = false;
    this.unhold?.();
    this.unhold = null;
    for (const subscription of this.subscriptions.values()) subscription.unsubscribe();
    this.subscriptions.clear();
  }

  /** Publishes pending changes now instead of at the next frame. */
  flush = (): void => {
    this.cancelFlush?.();
    this.cancelFlush = null;
    const draft = this.draft;
    if (!draft) return;
    this.draft = null;
    this.snapshot = { pages: draft };
    for (const listener of this.listeners) listener();
  };

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
          events: events ?? this.current(page)?.events ?? null,
          fetching: !result.data && !result.error,
          error: result.error ? result.error.message : null,
        });
      });
    this.subscriptions.set(page, subscription);
  }

  private current(page: string): PageState | undefined {
    return (this.draft ?? this.snapshot.pages).get(page);
  }

  private write(page: string, state: PageState): void {
    const previous = this.current(page);
    if (
      previous &&
      previous.events === state.events &&
      previous.fetching === state.fetching &&
      previous.error === state.error
    ) {
      return;
    }
    this.change((pages) => pages.set(page, state));
  }

  private change(edit: (pages: Map<string, PageState>) => void): void {
    this.draft ??= new Map(this.snapshot.pages);
    edit(this.draft);
    this.cancelFlush ??= this.schedule(this.flush);
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
