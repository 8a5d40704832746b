import {
  defaultRangeExtractor,
  useVirtualizer,
  type Range,
  type Virtualizer,
} from '@tanstack/react-virtual';
import {
  memo,
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type ReactNode,
} from 'react';
import { maxSeq } from '../../../protocol/seq.ts';
import { pageBounds, pageOfSeq } from '../../graphql/eventDocuments.ts';
import { useSessionEventStream } from '../../graphql/eventStream.ts';
import { buildRows, type GapRow, type PageSlot, type TimelineRow } from './buildRows.ts';
import {
  applyFilter,
  filterChoices,
  isFiltering,
  NO_FILTER,
  type TimelineFilter,
} from './filters.ts';
import { newestPageOf, useEventPages, type PagesSnapshot } from './eventPageStore.ts';
import { pagesInRange, pagesToRelease } from './pagesToRelease.ts';
import { TimelineToolbar } from './TimelineToolbar.tsx';
import { HistoryScrubber } from './HistoryScrubber.tsx';
import { rowLabel, TimelineRowView, type RowRenderers } from './TimelineRowView.tsx';
import { isEditable, useFollowing } from './useFollowing.ts';
import { RowActiveContext } from './rows/RowHeader.tsx';

export interface TimelineProps extends RowRenderers {
  sessionId: string;
  /** The session's newest seq as the server last said (the cache keeps it moving). */
  lastEventSeq: string;
  /** A linked event to scroll to and highlight (`/sessions/:id/events/:seq`). */
  focusSeq?: string | null;
  eventHref: (seq: string) => string;
  checkpointsHref: string;
  /** Put at the start of the toolbar (src/app composes the whole-session search in). */
  toolbarStart?: ReactNode;
  /** The history scrubber's "Restore the project to here" (absent: no scrubber). */
  restoreHref?: (checkpointId: string) => string;
  /**
   * Called once, after the first commit that shows the newest page's events (or that the
   * session has none, or why they could not load): the app renders the rest of its shell then.
   */
  onShown?: () => void;
}

/** Pixels a not-yet-loaded event is assumed to take (gap rows keep the scrollbar honest). */
const GAP_PX_PER_EVENT = 24;

/** Pages with no row within this many screens of the view are released (loading is at one). */
const RELEASE_SCREENS = 3;

function estimate(row: TimelineRow | undefined): number {
  if (!row) return 56;
  switch (row.kind) {
    case 'gap':
      return gapHeight(row);
    case 'message':
      return 88;
    case 'toolCall':
      return 180;
    case 'event':
      return 56;
  }
}

/**
 * Rows of one shape (an event type, a tool call that asked or ran without asking) are about
 * as tall as each other: the timeline estimates a new row at the size the last row of its shape
 * measured, so following the end does not lay out twice per frame (once for the new rows at a
 * wrong estimate, again when their ResizeObserver reports the real size and every row below
 * moves).
 */
function shapeOf(row: TimelineRow | undefined): string | null {
  if (!row) return null;
  switch (row.kind) {
    case 'gap':
      return null;
    case 'message':
      return `message:${row.role}`;
    case 'toolCall':
      return `toolCall:${row.toolCall?.approval ? 'asked' : 'ran'}`;
    case 'event':
      return `event:${row.event.type}`;
  }
}

function gapHeight(row: GapRow): number {
  const events = Number(BigInt(row.throughSeq) - BigInt(row.fromSeq) + 1n);
  return Math.max(48, events * GAP_PX_PER_EVENT);
}

/**
 * A row's size from its ResizeObserver entry. Without one (the row's ref, on every mount) the
 * cached or estimated size stands rather than reading offsetHeight, which would force a layout
 * per mounted row; the observer reports the real size once the row is laid out.
 */
function measureRow(
  element: Element,
  entry: ResizeObserverEntry | undefined,
  instance: Virtualizer<HTMLDivElement, Element>,
): number {
  if (entry) {
    // Layout is clean inside the observer's callback, so where borderBoxSize is missing (older
    // Safari) reading the element costs nothing extra.
    const box = (entry.borderBoxSize as readonly ResizeObserverSize[] | undefined)?.[0];
    return box ? Math.round(box.blockSize) : (element as HTMLElement).offsetHeight;
  }
  const index = instance.indexFromElement(element);
  return (
    instance.itemSizeCache.get(instance.options.getItemKey(index)) ??
    instance.options.estimateSize(index)
  );
}

/** The scroll offset that shows the end: total size less the observed viewport height. */
function endOffset(instance: Virtualizer<HTMLDivElement, Element>): number {
  return Math.max(0, instance.getTotalSize() - (instance.scrollRect?.height ?? 0));
}

function newestLoadedSeq(snapshot: PagesSnapshot): string {
  let newest = '0';
  for (const state of snapshot.pages.values()) {
    const last = state.events?.[state.events.length - 1];
    if (last) newest = maxSeq(newest, last.seq);
  }
  return newest;
}

/**
 * One slot per page up to the newest. When the stream opens a new page its query answers a
 * frame later; until then the page is left out rather than shown as a page-sized gap below the
 * newest events, which would put the end a page away from them.
 */
function pageSlots(snapshot: PagesSnapshot, newestPage: string): PageSlot[] {
  const newest = BigInt(newestPage);
  const out: PageSlot[] = [];
  for (let page = 0n; page <= newest; page += 1n) {
    const state = snapshot.pages.get(page.toString());
    if (
      page === newest &&
      page > 0n &&
      !state?.events &&
      !state?.error &&
      snapshot.pages.get((page - 1n).toString())?.events
    ) {
      break;
    }
    out.push({
      page: page.toString(),
      events: state?.events ?? null,
      loading: state?.fetching ?? false,
      error: state?.error ?? null,
    });
  }
  return out;
}

/** Whether the browser keeps a scroller's view on an anchor as content above it grows. */
function scrollAnchoring(): boolean {
  return (
    typeof CSS !== 'undefined' &&
    typeof CSS.supports === 'function' &&
    CSS.supports('overflow-anchor', 'auto')
  );
}

/**
 * The virtualizer's scroll observer (its default's behaviour: the offset on every `scroll`,
 * "at rest" `isScrollingResetDelay` after the last one), except that a scroll the timeline made
 * itself (`own`) is neither read nor reported.
 */
function observeScrollOffset(
  instance: Virtualizer<HTMLDivElement, Element>,
  report: (offset: number, isScrolling: boolean) => void,
  own: () => boolean,
): (() => void) | undefined {
  const element = instance.scrollElement;
  if (!element) return undefined;
  let rest: ReturnType<typeof setTimeout> | undefined;
  const onScroll = () => {
    if (own()) return;
    clearTimeout(rest);
    rest = setTimeout(
      () => report(element.scrollTop, false),
      instance.options.isScrollingResetDelay,
    );
    report(element.scrollTop, true);
  };
  element.addEventListener('scroll', onScroll, { passive: true });
  return () => {
    clearTimeout(rest);
    element.removeEventListener('scroll', onScroll);
  };
}

/** Opens the live stream once the newest page is in: from its last event, as an observer. */
function SessionEventStream({
  sessionId,
  afterSeq,
}: {
  sessionId: string;
  afterSeq: string | null;
}) {
  const { error } = useSessionEventStream(sessionId, afterSeq);
  if (!error) return null;
  return (
    <p role="alert" className="px-4 py-1 text-xs text-red-800 dark:text-red-300">
      The live event stream stopped: {error}. Reload the page to resume.
    </p>
  );
}

interface FeedRowProps extends RowRenderers {
  row: TimelineRow;
  index: number;
  start: number;
  measure: (element: Element | null) => void;
  highlighted: boolean;
  /** Hovered or holding focus: only then does its header mount a copy-link button. */
  active: boolean;
  onRowFocus: (key: string, self: boolean) => void;
  onRowBlur: (key: string) => void;
  onRowEnter: (key: string) => void;
  onRowLeave: (key: string) => void;
  sessionId: string;
  eventHref: (seq: string) => string;
  checkpointsHref: string;
}

/**
 * One row of the feed, its article included. Memoized on the row's key and content version, its
 * place and its state, with handlers that take the row's key (stable across renders): a commit
 * that adds rows at the end leaves the rows already there alone, props and DOM attributes
 * included. `aria-setsize` is -1 (ARIA's "not known"): the feed grows while it is read, and a
 * count would rewrite every rendered row's attribute on every commit.
 */
const FeedRow = memo(
  function FeedRow({
    row,
    index,
    start,
    measure,
    highlighted,
    active,
    onRowFocus,
    onRowBlur,
    onRowEnter,
    onRowLeave,
    ...rowProps
  }: FeedRowProps) {
    return (
      <article
        ref={measure}
        data-index={index}
        data-row-key={row.key}
        data-seq={row.kind === 'gap' ? undefined : row.seq}
        data-last-seq={row.kind === 'gap' ? undefined : row.seqs[row.seqs.length - 1]}
        tabIndex={-1}
        aria-posinset={index + 1}
        aria-setsize={-1}
        aria-label={
          row.kind === 'gap'
            ? `Events ${row.fromSeq} to ${row.throughSeq}, not loaded`
            : rowLabel(row)
        }
        aria-current={highlighted ? 'true' : undefined}
        onFocus={(event) => onRowFocus(row.key, event.target === event.currentTarget)}
        onBlur={(event) => {
          if (!event.currentTarget.contains(event.relatedTarget as Node | null)) onRowBlur(row.key);
        }}
        onPointerEnter={() => onRowEnter(row.key)}
        onPointerLeave={() => onRowLeave(row.key)}
        className={`absolute top-0 left-0 w-full border-b border-slate-100 px-4 py-2 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-blue-600 dark:border-slate-800 ${
          highlighted ? 'bg-yellow-50 ring-2 ring-yellow-400 ring-inset dark:bg-yellow-950' : ''
        }`}
        style={{ transform: `translateY(${start}px)`, contain: 'layout style' }}
      >
        {row.kind === 'gap' ? (
          <div
            style={{ height: gapHeight(row) - 16 }}
            className="text-xs text-slate-600 dark:text-slate-300"
          >
            {row.error
              ? `Could not load events ${row.fromSeq}–${row.throughSeq}: ${row.error}`
              : `Events ${row.fromSeq}–${row.throughSeq} load as they scroll into view…`}
          </div>
        ) : (
          <RowActiveContext.Provider value={active}>
            <TimelineRowView row={row} {...rowProps} />
          </RowActiveContext.Provider>
        )}
      </article>
    );
  },
  (a, b) =>
    (a.row === b.row || (a.row.key === b.row.key && a.row.version === b.row.version)) &&
    a.index === b.index &&
    a.start === b.start &&
    a.measure === b.measure &&
    a.highlighted === b.highlighted &&
    a.active === b.active &&
    a.onRowFocus === b.onRowFocus &&
    a.onRowBlur === b.onRowBlur &&
    a.onRowEnter === b.onRowEnter &&
    a.onRowLeave === b.onRowLeave &&
    a.sessionId === b.sessionId &&
    a.eventHref === b.eventHref &&
    a.checkpointsHref === b.checkpointsHref &&
    a.renderToolCall === b.renderToolCall &&
    a.renderQuestion === b.renderQuestion,
);

/**
 * A session's events, newest at the bottom, virtualized over display rows built from the
 * fixed-size pages loaded so far (unloaded pages are single gap rows that load when scrolled
 * into view; pages far from the view are released again). Follows new events until the reader
 * scrolls away (useFollowing); then the view stays put and a button counts what arrived and
 * jumps back. Rows carry `data-seq` and `data-last-seq`: the first and last seq they show.
 */
export function Timeline(props: TimelineProps) {
  const { sessionId, lastEventSeq, focusSeq: linkSeq = null } = props;
  // The history scrubber's seq, while set, is where the view goes (as a link's seq would).
  const [scrubSeq, setScrubSeq] = useState<{ sessionId: string; seq: string } | null>(null);
  const scrubbed = scrubSeq?.sessionId === sessionId ? scrubSeq.seq : null;
  const focusSeq = scrubbed ?? linkSeq;
  const { store, snapshot } = useEventPages(sessionId);
  const loadedSeq = newestLoadedSeq(snapshot);
  const lastSeq = maxSeq(lastEventSeq, loadedSeq);
  // The page the next event lands in. Once a page is loaded it is the page after the newest
  // loaded event: a full newest page moves the timeline on to the next one, which the cache
  // opened (empty) when the stream filled the page, so crossing a page is a cache hit. The
  // session's lastEventSeq (studioSessionUpdates) runs ahead of the stream; following it made
  // the timeline ask for the next page before the stream reached it, a request to the server
  // per page during which the newest rows waited (ARCHITECTURE.md, "Why this shape").
  const newestPage = newestPageOf(loadedSeq === '0' ? lastEventSeq : loadedSeq);

  useEffect(() => store.want(newestPage), [store, newestPage]);
  useEffect(() => {
    if (focusSeq && BigInt(focusSeq) >= 1n && BigInt(focusSeq) <= BigInt(lastSeq))
      store.want(pageOfSeq(focusSeq));
  }, [store, focusSeq, lastSeq]);

  const slots = useMemo(() => pageSlots(snapshot, newestPage), [snapshot, newestPage]);

  const streamFrom = useMemo(() => {
    const newest = snapshot.pages.get(newestPage)?.events;
    if (!newest) return null;
    const last = newest[newest.length - 1];
    return last ? last.seq : (BigInt(pageBounds(newestPage).fromSeq) - 1n).toString();
  }, [snapshot, newestPage]);

  // The history rail asks for its marks once the newest page is in (and keeps them after).
  const [railReady, setRailReady] = useState(false);
  if (!railReady && streamFrom !== null) setRailReady(true);

  const rows = useMemo(() => buildRows(slots), [slots]);
  const [filter, setFilter] = useState<TimelineFilter>(NO_FILTER);
  const shown = useMemo(() => applyFilter(rows, filter), [rows, filter]);
  const choices = useMemo(() => filterChoices(rows), [rows]);
  const loadedRows = useMemo(() => rows.filter((row) => row.kind !== 'gap').length, [rows]);
  const unloaded = useMemo(() => slots.filter((slot) => !slot.events), [slots]);

  const scrollRef = useRef<HTMLDivElement>(null);
  // While following, the rows rendered are those that fill the viewport up from the end, from
  // the measurements alone: the view is about to be written there (see the pin below), so the
  // range need not wait for the scroll event that write causes a frame later.
  const virtualizerRef = useRef<Virtualizer<HTMLDivElement, Element> | null>(null);
  const isAtEnd = useCallback(() => virtualizerRef.current?.isAtEnd() ?? false, []);
  const { following, followingRef, setFollowing } = useFollowing(scrollRef, isAtEnd, !linkSeq);
  // Until this time a programmatic scroll is still landing (the virtualizer corrects over frames).
  const commandUntil = useRef(0);
  // The end offset the pin last put the view at (-1: not pinned; see the pin below).
  const pinnedAt = useRef(-1);
  // Whether a scroll event now is the timeline's own: while following, once pinned and with no
  // scroll command landing, the view moves only by the pin's write or by the browser's scroll
  // anchoring keeping the end (a reader's wheel, key, drag or touch has already turned following
  // off before its scroll event arrives: useFollowing). The virtualizer holds that offset
  // already (the pin sets it), so the event is not news: reading it back (scrollTop) would force
  // a layout, and reporting it would render the timeline a second time in that frame.
  const ownScroll = useCallback(
    () => followingRef.current && pinnedAt.current >= 0 && performance.now() > commandUntil.current,
    [followingRef],
  );
  const observeOffset = useCallback(
    (
      instance: Virtualizer<HTMLDivElement, Element>,
      report: (offset: number, isScrolling: boolean) => void,
    ) => observeScrollOffset(instance, report, ownScroll),
    [ownScroll],
  );
  const rangeExtractor = useCallback(
    (range: Range) => {
      const instance = virtualizerRef.current;
      if (!following || !instance || range.count === 0) return defaultRangeExtractor(range);
      const top = endOffset(instance);
      const measurements = instance.measurementsCache;
      let low = 0;
      let high = Math.min(range.count, measurements.length) - 1;
      while (low < high) {
        const mid = (low + high) >> 1;
        if ((measurements[mid]?.end ?? 0) <= top) low = mid + 1;
        else high = mid;
      }
      const out: number[] = [];
      for (let i = Math.max(0, low - range.overscan); i < range.count; i += 1) out.push(i);
      return out;
    },
    [following],
  );
  const sizeByShape = useRef(new Map<string, number>());
  // One function per list of rows: the virtualizer recomputes every row's start whenever
  // getItemKey is a new function, so a render for a scroll or a measurement alone (not new rows)
  // would walk the whole list again.
  const getItemKey = useCallback((index: number) => shown[index]?.key ?? index, [shown]);
  const virtualizer = useVirtualizer<HTMLDivElement, Element>({
    count: shown.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (index) => {
      const shape = shapeOf(shown[index]);
      return (
        (shape !== null ? sizeByShape.current.get(shape) : undefined) ?? estimate(shown[index])
      );
    },
    getItemKey,
    measureElement: (element, entry, instance) => {
      const size = measureRow(element, entry, instance);
      const shape = entry ? shapeOf(shown[instance.indexFromElement(element)]) : null;
      if (shape !== null) sizeByShape.current.set(shape, size);
      return size;
    },
    // While following, the pin keeps the end; the virtualizer's own anchoring (the item at the
    // view's top kept in place when an edge key changes, written with a scrollTo that forces
    // a layout) is for the reader's view only.
    anchorTo: following ? 'start' : 'end',
    // Following is this component's state (useFollowing), not a distance from the end.
    followOnAppend: false,
    scrollEndThreshold: 80,
    overscan: 6,
    useFlushSync: false,
    rangeExtractor,
    observeElementOffset: observeOffset,
  });
  virtualizerRef.current = virtualizer;
  const items = virtualizer.getVirtualItems();

  // Where the view starts: the newest event (anchorTo: 'end' alone does not scroll there), or
  // the linked one. Until then no gap row counts as "in view", or page 0 would load for nothing.
  const [positioned, setPositioned] = useState(false);
  const positionedOnce = useRef(false);
  const command = useCallback((run: () => void) => {
    commandUntil.current = performance.now() + 400;
    run();
  }, []);
  const settle = useCallback(() => {
    setTimeout(() => setPositioned(true), 400);
  }, []);
  const newestReady = !!snapshot.pages.get(newestPage)?.events;
  const linkMissing =
    focusSeq !== null && (BigInt(focusSeq) < 1n || BigInt(focusSeq) > BigInt(lastSeq));
  useLayoutEffect(() => {
    if (positionedOnce.current || shown.length === 0 || !newestReady) return;
    if (focusSeq && !linkMissing) return;
    positionedOnce.current = true;
    setFollowing(true);
    command(() => virtualizer.scrollToEnd());
    settle();
  }, [
    shown.length,
    focusSeq,
    linkMissing,
    newestReady,
    virtualizer,
    settle,
    command,
    setFollowing,
  ]);

  // While following, the end is written, never read: its offset comes from the virtualizer's
  // total size (its measurements) and the viewport height its ResizeObserver keeps, and is
  // written once per change of either (commits come once per frame), never read back. Nothing
  // happens while a scroll command (jump to the end, to a linked event, j/k) is still landing.
  const totalSize = virtualizer.getTotalSize();
  const viewportHeight = virtualizer.scrollRect?.height ?? 0;
  //
  // Where the browser anchors scrolling (`overflow-anchor`), the feed is left out of anchor
  // selection and a sentinel after it is the only candidate, so once the view is at the end the
  // browser keeps it there as the feed grows, inside the frame's own layout: no write, no layout
  // forced from script (the write forced one per commit, the largest item of a profile at
  // 1,000 events/s). The write stays for what anchoring does not cover: the first pin, a
  // changed viewport, the view not (yet) known to be at the end, and browsers without it.
  const anchoring = useMemo(scrollAnchoring, []);
  const scrollOffsetNow = virtualizer.scrollOffset ?? 0;
  const pinnedViewport = useRef(0);
  useLayoutEffect(() => {
    if (!following) {
      pinnedAt.current = -1;
      return;
    }
    const element = scrollRef.current;
    if (!element || !positionedOnce.current || performance.now() <= commandUntil.current) return;
    const target = Math.max(0, totalSize - viewportHeight);
    if (target === pinnedAt.current) return;
    const anchored =
      anchoring &&
      pinnedAt.current >= 0 &&
      target > pinnedAt.current &&
      viewportHeight === pinnedViewport.current &&
      Math.abs(scrollOffsetNow - pinnedAt.current) < 1;
    pinnedAt.current = target;
    pinnedViewport.current = viewportHeight;
    // The view is there now (written) or after this frame's layout (anchored): the virtualizer
    // is told so here, as its scroll event for it is not read (ownScroll above).
    virtualizer.scrollOffset = target;
    if (!anchored) element.scrollTo({ top: target });
  }, [following, totalSize, viewportHeight, positioned, anchoring, scrollOffsetNow, virtualizer]);

  // Anchoring is trusted, not read back: if the view ever is not at the end while following
  // with no command landing (anchoring suppressed, a layout shift, the viewport shrinking), the
  // sentinel leaves the scroller's view and this observer pins again. Intersection is computed
  // after the frame's layout, so watching costs no layout of its own.
  const sentinelRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const root = scrollRef.current;
    const sentinel = sentinelRef.current;
    if (!anchoring || !root || !sentinel || typeof IntersectionObserver === 'undefined')
      return undefined;
    const observer = new IntersectionObserver(
      (entries) => {
        const instance = virtualizerRef.current;
        if (entries[entries.length - 1]?.isIntersecting !== false || !instance || !ownScroll())
          return;
        const target = endOffset(instance);
        pinnedAt.current = target;
        instance.scrollOffset = target;
        root.scrollTo({ top: target });
      },
      { root },
    );
    observer.observe(sentinel);
    return () => observer.disconnect();
  }, [anchoring, ownScroll]);

  // Not following: keep what the reader looks at in place when rows change above it (a gap
  // replaced by its page, a page released, a chunk merged), since the virtualizer anchors only
  // when the first or last key changes. Runs when the rows or the offset change, and reads only
  // the virtualizer's cached offset and measurements.
  const view = useRef<{
    key: string | null;
    start: number;
    offset: number;
    rows: TimelineRow[];
  } | null>(null);
  const scrollOffset = virtualizer.scrollOffset ?? 0;
  useLayoutEffect(() => {
    if (following) {
      view.current = null;
      return;
    }
    const landing = performance.now() <= commandUntil.current;
    const previous = view.current;
    if (
      previous &&
      previous.rows !== shown &&
      !landing &&
      previous.key !== null &&
      Math.abs(scrollOffset - previous.offset) < 1
    ) {
      const index = shown.findIndex((row) => row.key === previous.key);
      const item = index >= 0 ? virtualizer.measurementsCache[index] : undefined;
      if (item && Math.abs(item.start - previous.start) >= 1) {
        virtualizer.scrollToOffset(previous.offset + item.start - previous.start);
      }
    }
    const now = virtualizer.scrollOffset ?? 0;
    const first = virtualizer
      .getVirtualItems()
      .find((item) => item.end > now && shown[item.index]?.kind !== 'gap');
    view.current = {
      key: first ? String(first.key) : null,
      start: first?.start ?? 0,
      offset: now,
      rows: shown,
    };
  }, [following, shown, scrollOffset, virtualizer]);

  // A gap row within a screen of the view means its page is wanted now; a page with no row
  // within RELEASE_SCREENS screens is let go (not while filtering: the search covers what is
  // loaded), so the rows built per render and the cached events stay bounded however long the
  // session runs. Positions come from the scroll element itself, which is current even before
  // the virtualizer hears the scroll event.
  const filtering = isFiltering(filter);
  const gapIndexes = useMemo(
    () => shown.flatMap((row, index) => (row.kind === 'gap' ? [index] : [])),
    [shown],
  );
  useEffect(() => {
    if (!positioned) return;
    const screen = viewportHeight;
    const top = following ? Math.max(0, totalSize - viewportHeight) : scrollOffset;
    const extents = virtualizer.measurementsCache;
    for (const index of gapIndexes) {
      const item = extents[index];
      const row = shown[index];
      if (item && row?.kind === 'gap' && item.end >= top - screen && item.start <= top + 2 * screen)
        store.want(row.page);
    }
    if (filtering) return;
    const near = pagesInRange(
      shown,
      extents,
      top - RELEASE_SCREENS * screen,
      top + (1 + RELEASE_SCREENS) * screen,
    );
    // The linked event's page stays while the address names it (it may still be loading).
    if (focusSeq && !linkMissing) near.add(pageOfSeq(focusSeq));
    for (const page of pagesToRelease(store.wantedPages, near, newestPage)) store.release(page);
  }, [
    positioned,
    viewportHeight,
    following,
    totalSize,
    scrollOffset,
    gapIndexes,
    shown,
    filtering,
    focusSeq,
    linkMissing,
    newestPage,
    store,
    virtualizer,
  ]);

  // "N new events": counted from the newest seq when the view stopped following.
  const leftAt = useRef<string | null>(null);
  if (following || shown.length === 0) leftAt.current = null;
  else if (leftAt.current === null) leftAt.current = lastSeq;
  const newEvents = leftAt.current === null ? 0 : Number(BigInt(lastSeq) - BigInt(leftAt.current));

  const [focusKey, setFocusKey] = useState<string | null>(null);
  const [highlightKey, setHighlightKey] = useState<string | null>(null);
  // The row under the pointer or holding focus: only its header mounts a copy-link button.
  const [hoverKey, setHoverKey] = useState<string | null>(null);
  const [focusWithinKey, setFocusWithinKey] = useState<string | null>(null);
  const shownRef = useRef(shown);
  shownRef.current = shown;
  const onRowFocus = useCallback((key: string, self: boolean) => {
    setFocusWithinKey(key);
    if (self) setFocusKey(key);
  }, []);
  const onRowBlur = useCallback(
    (key: string) => setFocusWithinKey((current) => (current === key ? null : current)),
    [],
  );
  const onRowLeave = useCallback(
    (key: string) => setHoverKey((current) => (current === key ? null : current)),
    [],
  );

  const focusRow = useCallback(
    (index: number) => {
      const row = shownRef.current[index];
      if (!row) return;
      setFocusKey(row.key);
      setFollowing(false);
      command(() => virtualizer.scrollToIndex(index, { align: 'auto' }));
    },
    [virtualizer, command, setFollowing],
  );

  // Move keyboard focus onto the focused row once it is rendered.
  useEffect(() => {
    if (!focusKey) return undefined;
    let frames = 0;
    let handle = 0;
    const tryFocus = () => {
      const element = [
        ...(scrollRef.current?.querySelectorAll<HTMLElement>('[data-row-key]') ?? []),
      ].find((node) => node.dataset.rowKey === focusKey);
      if (element) {
        if (document.activeElement !== element) element.focus({ preventScroll: true });
        return;
      }
      if (frames++ < 20) handle = requestAnimationFrame(tryFocus);
    };
    tryFocus();
    return () => cancelAnimationFrame(handle);
  }, [focusKey]);

  const move = useCallback(
    (delta: 1 | -1) => {
      const list = shownRef.current;
      if (list.length === 0) return;
      const active =
        document.activeElement instanceof HTMLElement
          ? document.activeElement.closest<HTMLElement>('[data-row-key]')
          : null;
      const currentKey = active?.dataset.rowKey ?? focusKey;
      let index = currentKey ? list.findIndex((row) => row.key === currentKey) : -1;
      if (index < 0) {
        const visible = virtualizer.getVirtualItems();
        const edge = delta === 1 ? visible[0] : visible[visible.length - 1];
        index = edge ? edge.index - delta : delta === 1 ? -1 : list.length;
      }
      focusRow(Math.min(list.length - 1, Math.max(0, index + delta)));
    },
    [focusKey, focusRow, virtualizer],
  );

  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
      if (event.key !== 'j' && event.key !== 'k') return;
      if (isEditable(event.target)) return;
      event.preventDefault();
      move(event.key === 'j' ? 1 : -1);
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, [move]);

  // A linked event: once its page is in, scroll to the row holding it and highlight it.
  const linkedFor = useRef<string | null>(null);
  useEffect(() => {
    if (!focusSeq || linkedFor.current === focusSeq) return;
    const index = shown.findIndex((row) => row.kind !== 'gap' && row.seqs.includes(focusSeq));
    if (index < 0) return;
    linkedFor.current = focusSeq;
    const row = shown[index];
    if (!row) return;
    setHighlightKey(row.key);
    // A scrubbed seq leaves keyboard focus on the scrubber (it keeps stepping); a link focuses the row.
    if (!scrubbed) setFocusKey(row.key);
    setFollowing(false);
    positionedOnce.current = true;
    command(() => virtualizer.scrollToIndex(index, { align: 'center' }));
    settle();
  }, [focusSeq, scrubbed, shown, virtualizer, settle, command, setFollowing]);

  const newestLoaded = snapshot.pages.get(newestPage);
  const newestSettled = !!newestLoaded?.events || !!newestLoaded?.error;
  const { onShown } = props;
  const shownOnce = useRef(false);
  useEffect(() => {
    if (!newestSettled || shownOnce.current) return;
    shownOnce.current = true;
    onShown?.();
  }, [newestSettled, onShown]);
  const onSeek = useCallback(
    (seq: string | null) => {
      setScrubSeq(seq === null ? null : { sessionId, seq });
      if (seq !== null) return;
      linkedFor.current = null;
      setHighlightKey(null);
      setFollowing(true);
      command(() => virtualizer.scrollToEnd());
    },
    [sessionId, setFollowing, command, virtualizer],
  );

  return (
    <section aria-label="Timeline" className="flex min-h-0 flex-1 flex-col">
      <SessionEventStream sessionId={sessionId} afterSeq={streamFrom} />
      <TimelineToolbar
        filter={filter}
        onChange={setFilter}
        choices={choices}
        matching={shown.length}
        loaded={loadedRows}
        unloadedPages={unloaded.length}
        start={props.toolbarStart}
        end={
          props.restoreHref ? (
            <HistoryScrubber
              sessionId={sessionId}
              lastSeq={lastSeq}
              value={scrubbed}
              onSeek={onSeek}
              restoreHref={props.restoreHref}
              eventHref={props.eventHref}
              deferred={!railReady}
            />
          ) : null
        }
        onLoadOlder={() => {
          const older = unloaded[unloaded.length - 1];
          if (older) store.want(older.page);
        }}
      />
      {linkMissing ? (
        <p role="alert" className="px-4 py-1 text-sm text-amber-900 dark:text-amber-200">
          Event #{focusSeq} is not in this session (yet). The newest event is #{lastSeq}.
        </p>
      ) : null}
      {/* The "new events" pill sits below the scroller, in flow, so it never covers a row. */}
      <div className="relative flex min-h-0 flex-1 flex-col">
        <div
          ref={scrollRef}
          role="region"
          aria-label="Events, oldest first"
          tabIndex={0}
          className="min-h-0 flex-1 overflow-y-auto focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-blue-600"
          // Its size is the flex layout's, never its content's: what changes inside (rows
          // mounting every frame while following) is laid out and painted without the page
          // around it, and the toolbar's counts changing never lay out the rows.
          style={{ contain: 'strict' }}
        >
          {shown.length === 0 ? (
            <p className="px-4 py-6 text-sm text-slate-600 dark:text-slate-300">
              {filtering
                ? 'No loaded event matches these filters.'
                : newestLoaded?.error
                  ? `Could not load events: ${newestLoaded.error}`
                  : newestLoaded?.events
                    ? 'No events yet. They appear here as the agent works.'
                    : 'Loading events…'}
            </p>
          ) : null}
          <div
            role="feed"
            aria-label="Events"
            aria-busy={!newestLoaded?.events}
            className="relative w-full"
            // The feed's size is its own (the virtualizer's total), so a row laid out again never
            // makes the browser lay out the scroller or the rows around it.
            style={{ height: totalSize, contain: 'size layout style', overflowAnchor: 'none' }}
          >
            {items.map((item) => {
              const row = shown[item.index];
              if (!row) return null;
              return (
                <FeedRow
                  key={item.key}
                  row={row}
                  index={item.index}
                  start={item.start}
                  measure={virtualizer.measureElement}
                  highlighted={row.key === highlightKey}
                  active={row.key === hoverKey || row.key === focusWithinKey}
                  onRowFocus={onRowFocus}
                  onRowBlur={onRowBlur}
                  onRowEnter={setHoverKey}
                  onRowLeave={onRowLeave}
                  sessionId={sessionId}
                  eventHref={props.eventHref}
                  checkpointsHref={props.checkpointsHref}
                  renderToolCall={props.renderToolCall}
                  renderQuestion={props.renderQuestion}
                />
              );
            })}
          </div>
          {/* The scroll anchor while following (the feed is left out of anchor selection). */}
          <div
            ref={sentinelRef}
            aria-hidden="true"
            style={{ height: 1, marginTop: -1, overflowAnchor: 'auto' }}
          />
        </div>
        {!following && newEvents > 0 ? (
          <button
            type="button"
            onClick={() => {
              setFollowing(true);
              command(() => virtualizer.scrollToEnd());
            }}
            className="my-1 self-center rounded-full bg-blue-700 px-4 py-1.5 text-sm font-medium text-white shadow-lg hover:bg-blue-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600"
          >
            {newEvents} new {newEvents === 1 ? 'event' : 'events'} ↓
          </button>
        ) : null}
      </div>
    </section>
  );
}
