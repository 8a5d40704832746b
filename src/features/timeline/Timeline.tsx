import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
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
import { useEventPages, type PagesSnapshot } from './eventPageStore.ts';
import { TimelineToolbar } from './TimelineToolbar.tsx';
import { rowLabel, TimelineRowView, type RowRenderers } from './TimelineRowView.tsx';

export interface TimelineProps extends RowRenderers {
  sessionId: string;
  /** The session's newest seq as the server last said (the cache keeps it moving). */
  lastEventSeq: string;
  /** A linked event to scroll to and highlight (`/sessions/:id/events/:seq`). */
  focusSeq?: string | null;
  eventHref: (seq: string) => string;
  checkpointsHref: string;
}

/** Pixels a not-yet-loaded event is assumed to take (gap rows keep the scrollbar honest). */
const GAP_PX_PER_EVENT = 24;

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

function gapHeight(row: GapRow): number {
  const events = Number(BigInt(row.throughSeq) - BigInt(row.fromSeq) + 1n);
  return Math.max(48, events * GAP_PX_PER_EVENT);
}

function isEditable(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  return ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

function newestLoadedSeq(snapshot: PagesSnapshot): string {
  let newest = '0';
  for (const state of snapshot.pages.values()) {
    const last = state.events?.[state.events.length - 1];
    if (last) newest = maxSeq(newest, last.seq);
  }
  return newest;
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

/**
 * A session's events, newest at the bottom, virtualized over display rows built from the
 * fixed-size pages loaded so far (unloaded pages are single gap rows that load when scrolled
 * into view). Follows new events while the reader is at the bottom; otherwise the view stays
 * put and a button counts what arrived.
 */
export function Timeline(props: TimelineProps) {
  const { sessionId, lastEventSeq, focusSeq = null } = props;
  const { store, snapshot } = useEventPages(sessionId);
  const lastSeq = maxSeq(lastEventSeq, newestLoadedSeq(snapshot));
  const newestPage = pageOfSeq(lastSeq === '0' ? '1' : lastSeq);

  useEffect(() => store.want(newestPage), [store, newestPage]);
  useEffect(() => {
    if (focusSeq && BigInt(focusSeq) >= 1n && BigInt(focusSeq) <= BigInt(lastSeq))
      store.want(pageOfSeq(focusSeq));
  }, [store, focusSeq, lastSeq]);

  const slots = useMemo(() => {
    const out: PageSlot[] = [];
    for (let page = 0n; page <= BigInt(newestPage); page += 1n) {
      const state = snapshot.pages.get(page.toString());
      out.push({
        page: page.toString(),
        events: state?.events ?? null,
        loading: state?.fetching ?? false,
        error: state?.error ?? null,
      });
    }
    return out;
  }, [snapshot, newestPage]);

  const streamFrom = useMemo(() => {
    const newest = snapshot.pages.get(newestPage)?.events;
    if (!newest) return null;
    const last = newest[newest.length - 1];
    return last ? last.seq : (BigInt(pageBounds(newestPage).fromSeq) - 1n).toString();
  }, [snapshot, newestPage]);

  const rows = useMemo(() => buildRows(slots), [slots]);
  const [filter, setFilter] = useState<TimelineFilter>(NO_FILTER);
  const shown = useMemo(() => applyFilter(rows, filter), [rows, filter]);
  const choices = useMemo(() => filterChoices(rows), [rows]);
  const loadedRows = useMemo(() => rows.filter((row) => row.kind !== 'gap').length, [rows]);
  const unloaded = useMemo(() => slots.filter((slot) => !slot.events), [slots]);

  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: shown.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (index) => estimate(shown[index]),
    getItemKey: (index) => shown[index]?.key ?? index,
    anchorTo: 'end',
    followOnAppend: true,
    scrollEndThreshold: 80,
    overscan: 6,
    useFlushSync: false,
  });
  const items = virtualizer.getVirtualItems();

  // Where the view starts: the newest event (anchorTo: 'end' alone does not scroll there), or
  // the linked one. Until then no gap row counts as "in view", or page 0 would load for nothing.
  const [positioned, setPositioned] = useState(false);
  const positionedOnce = useRef(false);
  // Until this time a programmatic scroll is still landing (the virtualizer corrects over frames).
  const commandUntil = useRef(0);
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
    command(() => virtualizer.scrollToEnd());
    settle();
  }, [shown.length, focusSeq, linkMissing, newestReady, virtualizer, settle, command]);

  // Keep what the reader looks at in place when rows change above it (a gap replaced by its
  // page, a chunk merged): the virtualizer anchors only when the first or last key changes.
  // Only rows changing moves the view here, never a scroll, and never while a scroll command
  // (jump to the end, to a linked event, j/k) is still landing.
  const view = useRef<{
    key: string | null;
    start: number;
    offset: number;
    atEnd: boolean;
    rows: TimelineRow[];
  } | null>(null);
  useLayoutEffect(() => {
    const previous = view.current;
    const offset = virtualizer.scrollOffset ?? 0;
    if (previous && previous.rows !== shown && performance.now() > commandUntil.current) {
      if (previous.atEnd) {
        if (!virtualizer.isAtEnd()) virtualizer.scrollToEnd();
      } else if (previous.key !== null && Math.abs(offset - previous.offset) < 1) {
        const index = shown.findIndex((row) => row.key === previous.key);
        const item = index >= 0 ? virtualizer.measurementsCache[index] : undefined;
        if (item && Math.abs(item.start - previous.start) >= 1) {
          virtualizer.scrollToOffset(previous.offset + item.start - previous.start);
        }
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
      atEnd: shown.length > 0 && virtualizer.isAtEnd(),
      rows: shown,
    };
  });

  // A gap row within a screen of the view means its page is wanted now. Positions come from the
  // scroll element itself, which is current even before the virtualizer hears the scroll event.
  const gapIndexes = useMemo(
    () => shown.flatMap((row, index) => (row.kind === 'gap' ? [index] : [])),
    [shown],
  );
  useEffect(() => {
    const element = scrollRef.current;
    if (!positioned || !element || gapIndexes.length === 0) return;
    const screen = element.clientHeight;
    const top = element.scrollTop - screen;
    const bottom = element.scrollTop + 2 * screen;
    for (const index of gapIndexes) {
      const item = virtualizer.measurementsCache[index];
      const row = shown[index];
      if (item && row?.kind === 'gap' && item.end >= top && item.start <= bottom)
        store.want(row.page);
    }
  });

  // "N new events": counted from the newest seq when the reader left the bottom.
  const atEnd = shown.length === 0 || virtualizer.isAtEnd();
  const leftAt = useRef<string | null>(null);
  if (atEnd) leftAt.current = null;
  else if (leftAt.current === null) leftAt.current = lastSeq;
  const newEvents = leftAt.current === null ? 0 : Number(BigInt(lastSeq) - BigInt(leftAt.current));

  const [focusKey, setFocusKey] = useState<string | null>(null);
  const [highlightKey, setHighlightKey] = useState<string | null>(null);
  const shownRef = useRef(shown);
  shownRef.current = shown;

  const focusRow = useCallback(
    (index: number) => {
      const row = shownRef.current[index];
      if (!row) return;
      setFocusKey(row.key);
      command(() => virtualizer.scrollToIndex(index, { align: 'auto' }));
    },
    [virtualizer, command],
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
    setFocusKey(row.key);
    positionedOnce.current = true;
    command(() => virtualizer.scrollToIndex(index, { align: 'center' }));
    settle();
  }, [focusSeq, shown, virtualizer, settle, command]);

  const filtering = isFiltering(filter);
  const newestLoaded = snapshot.pages.get(newestPage);

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
      <div className="relative min-h-0 flex-1">
        <div
          ref={scrollRef}
          role="region"
          aria-label="Events, oldest first"
          tabIndex={0}
          className="h-full overflow-y-auto focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-blue-600"
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
            style={{ height: virtualizer.getTotalSize() }}
          >
            {items.map((item) => {
              const row = shown[item.index];
              if (!row) return null;
              const highlighted = row.key === highlightKey;
              return (
                <article
                  key={item.key}
                  ref={virtualizer.measureElement}
                  data-index={item.index}
                  data-row-key={row.key}
                  tabIndex={-1}
                  aria-posinset={item.index + 1}
                  aria-setsize={shown.length}
                  aria-label={
                    row.kind === 'gap'
                      ? `Events ${row.fromSeq} to ${row.throughSeq}, not loaded`
                      : rowLabel(row)
                  }
                  aria-current={highlighted ? 'true' : undefined}
                  onFocus={(event) => {
                    if (event.target === event.currentTarget) setFocusKey(row.key);
                  }}
                  className={`absolute top-0 left-0 w-full border-b border-slate-100 px-4 py-2 focus-visible:outline-2 focus-visible:-outline-offset-2 focus-visible:outline-blue-600 dark:border-slate-800 ${
                    highlighted
                      ? 'bg-yellow-50 ring-2 ring-yellow-400 ring-inset dark:bg-yellow-950'
                      : ''
                  }`}
                  style={{ transform: `translateY(${item.start}px)` }}
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
                    <TimelineRowView
                      row={row}
                      sessionId={sessionId}
                      eventHref={props.eventHref}
                      checkpointsHref={props.checkpointsHref}
                      renderToolCall={props.renderToolCall}
                      renderQuestion={props.renderQuestion}
                    />
                  )}
                </article>
              );
            })}
          </div>
        </div>
        {newEvents > 0 ? (
          <button
            type="button"
            onClick={() => {
              leftAt.current = null;
              command(() => virtualizer.scrollToEnd());
            }}
            className="absolute bottom-4 left-1/2 -translate-x-1/2 rounded-full bg-blue-700 px-4 py-1.5 text-sm font-medium text-white shadow-lg hover:bg-blue-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600"
          >
            {newEvents} new {newEvents === 1 ? 'event' : 'events'} ↓
          </button>
        ) : null}
      </div>
    </section>
  );
}
