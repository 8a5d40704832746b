import type { Client } from '@urql/core';
import { useEffect, useState, useSyncExternalStore } from 'react';
import { useClient } from 'urql';
import { holdEventPages } from '../../graphql/cache.ts';
import { EventPageQuery, pageOfSeq, PAGE_SIZE } from '../../graphql/eventDocuments.ts';
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
 * The page a session's next event lands in, which a timeline opens first while nothing of the
 * session is loaded (from the session's lastEventSeq).
 */
export function newestPageOf(lastEventSeq: string): string {
  return pageOfSeq((BigInt(lastEventSeq) + 1n).toString());
}

/** The page query a store makes for one page: prefetches make exactly this one. */
function pageQuery(client: Client, sessionId: string, page: string) {
  return client.query(
    EventPageQuery,
    { sessionId, page, size: PAGE_SIZE },
    { requestPolicy: 'cache-first' },
  );
}

/** How long a prefetched page is held for a timeline that has not opened it yet. */
export const PREFETCH_HOLD_MS = 30_000;

/** Prefetched page queries not yet opened by a store: by client, session, then page. */
const prefetched = new WeakMap<Client, Map<string, Map<string, { unsubscribe(): void }>>>();

function prefetchesOf(client: Client, sessionId: string) {
  let sessions = prefetched.get(client);
  if (!sessions) prefetched.set(client, (sessions = new Map()));
  let pages = sessions.get(sessionId);
  if (!pages) sessions.set(sessionId, (pages = new Map()));
  return pages;
}

function dropPrefetch(client: Client, sessionId: string, page: string): void {
  const sessions = prefetched.get(client);
  const pages = sessions?.get(sessionId);
  const held = pages?.get(page);
  if (!sessions || !pages || !held) return;
  pages.delete(page);
  if (pages.size === 0) sessions.delete(sessionId);
  held.unsubscribe();
}

/**
 * Starts the page queries a timeline of this session will make first, before it mounts (the app
 * calls this as soon as the session's lastEventSeq is known): the same document, variables and
 * policy as the store's own, so urql shares the operation and Graphcache holds the result; the
 * store's query joins the one in flight, or reads the cached page, and each page is fetched
 * once. Each prefetch is held until a store opens its page, at most PREFETCH_HOLD_MS; the
 * returned function lets go of those not opened yet.
 */
export function prefetchEventPages(
  client: Client,
  sessionId: string,
  pages: readonly string[],
  /**
   * Called once the first of `pages` has an answer (data or error) in the cache, or at once
   * when that page was already being prefetched.
   */
  onFirstAnswered?: () => void,
): () => void {
  const mine = prefetchesOf(client, sessionId);
  const started: string[] = [];
  let answered = false;
  for (const [index, page] of pages.entries()) {
    const first = index === 0 && onFirstAnswered;
    if (mine.has(page)) {
      if (first) {
        answered = true;
        onFirstAnswered();
      }
      continue;
    }
    mine.set(
      page,
      pageQuery(client, sessionId, page).subscribe((result) => {
        if (!first || answered || result.stale || (!result.data && !result.error)) return;
        answered = true;
        onFirstAnswered();
      }),
    );
    started.push(page);
  }
  const release = () => {
    clearTimeout(timer);
    for (const page of started) dropPrefetch(client, sessionId, page);
  };
  const timer = setTimeout(release, PREFETCH_HOLD_MS);
  return release;
}

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
    const subscription = pageQuery(this.client, this.sessionId, page).subscribe((result) => {
      const events = result.data?.studioEventPage.events ?? null;
      this.write(page, {
        events: events ?? this.current(page)?.events ?? null,
        fetching: !result.data && !result.error,
        error: result.error ? result.error.message : null,
      });
    });
    this.subscriptions.set(page, subscription);
    // This query now holds the operation a prefetch started (or its cached result).
    dropPrefetch(this.client, this.sessionId, page);
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
