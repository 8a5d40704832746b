import { useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import { useQuery } from 'urql';
import { addSeq, compareSeq, maxSeq } from '../../../protocol/seq.ts';
import type { ResultOf } from '../../graphql/graphql.ts';
import { Link } from '../../ui/router.tsx';
import { SafeText } from '../../ui/SafeText.tsx';
import { SessionAtQuery, SessionHistoryQuery } from './historyDocuments.ts';

type Mark = ResultOf<typeof SessionHistoryQuery>['studioSessionHistory']['marks'][number];
type MarkKind = 'RUN' | 'APPROVAL' | 'CHECKPOINT' | 'RESTORE';

export interface HistoryScrubberProps {
  sessionId: string;
  /** The session's newest seq (the end of the rail). */
  lastSeq: string;
  /** The seq the timeline is shown as of; null while live (following the newest event). */
  value: string | null;
  /** Go to a seq (its page loads on demand), or back to live with null. */
  onSeek: (seq: string | null) => void;
  /** Where "Restore the project to here" leads: the checkpoint browser with that checkpoint's restore open. */
  restoreHref: (checkpointId: string) => string;
  eventHref: (seq: string) => string;
  /**
   * Hold the rail's query back (default false): the timeline holds it until its newest page has
   * loaded, so a cold fold of a long session never stands in front of the newest rows.
   */
  deferred?: boolean;
}

const KIND_CLASS: Record<MarkKind, string> = {
  RUN: 'bg-blue-600 dark:bg-blue-400',
  APPROVAL: 'bg-amber-500 dark:bg-amber-300',
  CHECKPOINT: 'bg-emerald-600 dark:bg-emerald-400',
  RESTORE: 'bg-purple-600 dark:bg-purple-400',
};

const KIND_LABEL: Record<MarkKind, string> = {
  RUN: 'runs',
  APPROVAL: 'approvals',
  CHECKPOINT: 'checkpoints',
  RESTORE: 'restores',
};

function kindOf(mark: Mark): MarkKind {
  return mark.kind in KIND_CLASS ? (mark.kind as MarkKind) : 'RUN';
}

/** Where a seq sits on the rail, 0 to 1 (layout only: a ratio, never a comparison). */
export function railFraction(seq: string, lastSeq: string): number {
  const last = BigInt(lastSeq);
  if (last <= 1n) return 1;
  const at = BigInt(seq) - 1n;
  // Scaled in BigInt first so a seq past 2^53 keeps its place.
  return Number((at * 1_000_000n) / (last - 1n)) / 1_000_000;
}

/** The seq at a rail fraction (0 to 1), from 1 to lastSeq. */
export function seqAtFraction(fraction: number, lastSeq: string): string {
  const last = BigInt(lastSeq);
  if (last <= 1n) return last < 1n ? '1' : lastSeq;
  const clamped = Math.min(1, Math.max(0, fraction));
  const step = (BigInt(Math.round(clamped * 1_000_000)) * (last - 1n)) / 1_000_000n;
  return (1n + step).toString();
}

/** Index of the last mark with seq <= `seq` (marks are in seq order), or -1. */
function markAtOrBefore(marks: readonly Mark[], seq: string): number {
  let low = 0;
  let high = marks.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (compareSeq(marks[mid]!.seq, seq) <= 0) low = mid + 1;
    else high = mid;
  }
  return low - 1;
}

/** While the fold is behind the newest seq, the rail asks again at most this often. */
const CATCH_UP_MS = 1_000;
/** A pointer within this many pixels of a mark lands on the mark. */
const SNAP_PX = 8;

/**
 * The history rail along the timeline: marks for runs, approvals, checkpoints and restores
 * (studioSessionHistory, folded on the server over the whole session, not only loaded pages).
 * Dragging (mouse, pen or touch) or stepping (arrows: one event; Page Up/Down: the previous or
 * next mark; Home: the first event; End: live) moves the timeline to that seq, loading its page,
 * and shows the session as of it (studioSessionAt: a read of the log, nothing replayed), with
 * "Restore the project to here" for the newest checkpoint at or before it.
 */
export function HistoryScrubber({
  sessionId,
  lastSeq,
  value,
  onSeek,
  restoreHref,
  eventHref,
  deferred = false,
}: HistoryScrubberProps) {
  const labelId = useId();
  const [{ data, error }, reexecute] = useQuery({
    query: SessionHistoryQuery,
    variables: { sessionId },
    pause: deferred,
  });
  const history = data?.studioSessionHistory ?? null;
  const marks = useMemo(() => history?.marks ?? [], [history]);
  const end = maxSeq(lastSeq, history?.throughSeq ?? '0');
  // The marks' scale: the folded history's end while it is past seq 1 (it moves about once a
  // second), else the rail's own. A mark at `railFraction(seq, markScale)` of a layer
  // `railFraction(markScale, end)` wide lands at `railFraction(seq, end)` of the rail.
  const markScale = history !== null && BigInt(history.throughSeq) > 1n ? history.throughSeq : end;
  const markLayer = railFraction(markScale, end);

  // Follow the session: ask again once the log has passed what was folded (at most once a second).
  const behind = history !== null && compareSeq(history.throughSeq, lastSeq) < 0;
  const catchUp = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    if (!behind || catchUp.current) return;
    catchUp.current = setTimeout(() => {
      catchUp.current = null;
      reexecute({ requestPolicy: 'network-only' });
    }, CATCH_UP_MS);
  }, [behind, lastSeq, history, reexecute]);
  useEffect(
    () => () => {
      if (catchUp.current) clearTimeout(catchUp.current);
      catchUp.current = null;
    },
    [],
  );

  const [draft, setDraft] = useState<string | null>(null);
  const shown = draft ?? value ?? end;
  const live = value === null && draft === null;
  const atMark = markAtOrBefore(marks, shown);
  const markHere = atMark >= 0 && marks[atMark]!.seq === shown ? marks[atMark]! : null;

  const rail = useRef<HTMLDivElement>(null);
  const dragging = useRef(false);
  const seqAtPointer = useCallback(
    (clientX: number): string => {
      const box = rail.current?.getBoundingClientRect();
      if (!box || box.width <= 0) return shown;
      const x = clientX - box.left;
      let best: Mark | null = null;
      let bestDistance = SNAP_PX + 1;
      for (const mark of marks) {
        const distance = Math.abs(railFraction(mark.seq, end) * box.width - x);
        if (distance < bestDistance) {
          best = mark;
          bestDistance = distance;
        }
      }
      return best ? best.seq : seqAtFraction(x / box.width, end);
    },
    [marks, end, shown],
  );

  const seek = useCallback(
    (seq: string | null) => {
      setDraft(null);
      // The newest event is the live view.
      onSeek(seq !== null && compareSeq(seq, end) >= 0 ? null : seq);
    },
    [end, onSeek],
  );

  const step = (target: string) => {
    if (compareSeq(target, '1') < 0) return seek('1');
    if (compareSeq(target, end) > 0) return seek(end);
    seek(target);
  };
  const previousMark = () => {
    const index = markAtOrBefore(marks, addSeq(shown, -1));
    if (index >= 0) seek(marks[index]!.seq);
  };
  const nextMark = () => {
    const index = markAtOrBefore(marks, shown) + 1;
    const mark = marks[index];
    if (mark) seek(mark.seq);
  };
  const hasPrevious = markAtOrBefore(marks, addSeq(shown, -1)) >= 0;
  const hasNext = markAtOrBefore(marks, shown) + 1 < marks.length;

  const onKeyDown = (event: React.KeyboardEvent) => {
    const jump = event.shiftKey ? 10 : 1;
    switch (event.key) {
      case 'ArrowLeft':
      case 'ArrowDown':
        step(addSeq(shown, -jump));
        break;
      case 'ArrowRight':
      case 'ArrowUp':
        step(addSeq(shown, jump));
        break;
      case 'PageUp':
        previousMark();
        break;
      case 'PageDown':
        nextMark();
        break;
      case 'Home':
        seek('1');
        break;
      case 'End':
        seek(null);
        break;
      default:
        return;
    }
    event.preventDefault();
  };

  const valueText = live
    ? `Live: the newest event, #${end}`
    : `Event #${shown} of ${end}${markHere ? `: ${markHere.label}` : ''}`;
  const button =
    'rounded border border-slate-300 px-2 py-1 text-xs hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-blue-600 disabled:opacity-50 dark:border-slate-600 dark:hover:bg-slate-800';

  // Catching up (a live session, every second) says nothing visible: the line would come and go.
  const statusLine = !live || history?.marksThinned || error;
  // Two flex items of the toolbar: the rail on the filters' line where it fits, and (only when
  // there is something to say) a full-width line under it.
  return (
    <>
      <div className="flex min-w-56 flex-1 basis-56 items-center gap-1 self-center">
        <span id={labelId} className="shrink-0 text-xs text-slate-700 dark:text-slate-300">
          History
        </span>
        <div
          ref={rail}
          role="slider"
          tabIndex={0}
          aria-labelledby={labelId}
          aria-valuemin={1}
          aria-valuemax={Number(end)}
          aria-valuenow={Number(shown)}
          aria-valuetext={valueText}
          aria-describedby={`${labelId}-keys`}
          onKeyDown={onKeyDown}
          onPointerDown={(event) => {
            if (event.button !== 0) return;
            dragging.current = true;
            event.currentTarget.setPointerCapture?.(event.pointerId);
            setDraft(seqAtPointer(event.clientX));
          }}
          onPointerMove={(event) => {
            if (dragging.current) setDraft(seqAtPointer(event.clientX));
          }}
          onPointerUp={(event) => {
            if (!dragging.current) return;
            dragging.current = false;
            seek(seqAtPointer(event.clientX));
          }}
          onPointerCancel={() => {
            dragging.current = false;
            setDraft(null);
          }}
          // Touch drags the rail instead of scrolling the page.
          style={{ touchAction: 'none' }}
          className="relative h-8 min-w-24 flex-1 cursor-pointer rounded focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-blue-600"
        >
          <div className="absolute top-1/2 right-0 left-0 h-1 -translate-y-1/2 rounded bg-slate-200 dark:bg-slate-700" />
          {/* The marks sit on their own scale (1 to the folded history's end), in a layer as wide
              as that scale is on the rail: as the live end moves, one width changes instead of
              every mark's position (a style recalculation per mark per frame while streaming). */}
          <div className="absolute inset-y-0 left-0" style={{ width: `${markLayer * 100}%` }}>
            {marks.map((mark) => (
              <span
                key={`${mark.seq}:${mark.type}`}
                aria-hidden="true"
                title={`#${mark.seq} ${mark.label}`}
                data-mark-kind={mark.kind}
                className={`absolute top-1/2 h-4 w-1 -translate-x-1/2 -translate-y-1/2 rounded-sm ${KIND_CLASS[kindOf(mark)]}`}
                style={{ left: `${railFraction(mark.seq, markScale) * 100}%` }}
              />
            ))}
          </div>
          <span
            aria-hidden="true"
            className={`absolute top-1/2 h-6 w-6 -translate-x-1/2 -translate-y-1/2 rounded-full border-2 border-white shadow dark:border-slate-900 ${live ? 'bg-slate-500' : 'bg-blue-700 dark:bg-blue-400'}`}
            style={{ left: `${railFraction(shown, end) * 100}%` }}
          />
        </div>
        <button
          type="button"
          className={button}
          onClick={previousMark}
          disabled={!hasPrevious}
          aria-label="Previous mark"
        >
          ◀
        </button>
        <button
          type="button"
          className={button}
          onClick={nextMark}
          disabled={!hasNext}
          aria-label="Next mark"
        >
          ▶
        </button>
        <button
          type="button"
          className={button}
          onClick={() => seek(null)}
          disabled={live}
          aria-label="Latest, back to live"
        >
          Latest
        </button>
        <p id={`${labelId}-keys`} className="sr-only">
          Arrow keys step one event, Shift with an arrow ten, Page Up and Page Down the previous or
          next mark, Home the first event, End back to live.
        </p>
        <span className="sr-only" aria-live="polite">
          {valueText}
        </span>
      </div>
      {statusLine ? (
        <div className="basis-full">
          <p className="flex flex-wrap gap-x-3 text-xs text-slate-700 dark:text-slate-300">
            <span>{valueText}</span>
            {!live ? (
              <span className="hidden roomy:inline">
                {(Object.keys(KIND_CLASS) as MarkKind[]).map((kind) => (
                  <span key={kind} className="mr-2 inline-flex items-center gap-1">
                    <span
                      aria-hidden="true"
                      className={`inline-block h-3 w-1 ${KIND_CLASS[kind]}`}
                    />
                    {KIND_LABEL[kind]}
                  </span>
                ))}
              </span>
            ) : null}
            {history?.marksThinned ? <span>(marks thinned to 2,000)</span> : null}
            {behind ? <span>Reading history through #{history?.throughSeq}…</span> : null}
            {error ? (
              <span role="alert" className="text-red-800 dark:text-red-300">
                History unavailable: <SafeText text={error.message} />
              </span>
            ) : null}
          </p>
          {value !== null ? (
            <SessionAtPanel
              sessionId={sessionId}
              seq={value}
              restoreHref={restoreHref}
              eventHref={eventHref}
            />
          ) : null}
        </div>
      ) : null}
    </>
  );
}

/** What the session was as of one seq: run, tool calls, approvals, budget, checkpoint. */
function SessionAtPanel({
  sessionId,
  seq,
  restoreHref,
  eventHref,
}: {
  sessionId: string;
  seq: string;
  restoreHref: (checkpointId: string) => string;
  eventHref: (seq: string) => string;
}) {
  const [{ data, error, fetching }] = useQuery({
    query: SessionAtQuery,
    variables: { sessionId, seq },
  });
  const at = data?.studioSessionAt ?? null;
  if (error)
    return (
      <p role="alert" className="text-xs text-red-800 dark:text-red-300">
        Could not read the session as of #{seq}: <SafeText text={error.message} />
      </p>
    );
  if (!at) return <p className="text-xs">{fetching ? `Reading the session as of #${seq}…` : ''}</p>;
  const waiting = at.pendingApprovalCount;
  return (
    <section
      aria-label={`The session as of event ${at.seq}`}
      className="max-h-32 overflow-y-auto py-1 text-xs text-slate-800 dark:text-slate-200"
    >
      <p className="flex flex-wrap items-center gap-x-3 gap-y-1">
        <span className="font-medium">
          As of <Link to={eventHref(at.seq)}>#{at.seq}</Link>
          {at.complete ? '' : ` (history read through #${at.seq} so far)`}:
        </span>
        <span>Run: {at.runStatus ? at.runStatus.toLowerCase() : 'none yet'}</span>
        <span>
          {at.toolCallCount} tool {at.toolCallCount === 1 ? 'call' : 'calls'}
        </span>
        <span>
          {waiting} {waiting === 1 ? 'approval' : 'approvals'} waiting
        </span>
        {at.budget && at.budget.dimensions.length > 0 ? (
          <span>
            Budget:{' '}
            {at.budget.dimensions
              .map((d) => `${d.name.toLowerCase()} ${d.consumed}/${d.limit}`)
              .join(', ')}
          </span>
        ) : null}
        {at.checkpoint ? (
          <span className="inline-flex flex-wrap items-center gap-1">
            Checkpoint <code className="font-mono">{at.checkpoint.checkpointId}</code> (revision{' '}
            {at.checkpoint.projectRevision})
            <Link
              to={restoreHref(at.checkpoint.checkpointId)}
              className="rounded bg-blue-700 px-2 py-0.5 font-medium text-white hover:bg-blue-800"
            >
              Restore the project to here
            </Link>
          </span>
        ) : (
          <span>No checkpoint at or before #{at.seq}.</span>
        )}
      </p>
      {at.toolCalls.length > 0 ? (
        <ul aria-label={`Tool calls as of event ${at.seq}`} className="mt-1 space-y-0.5">
          {at.toolCalls.map((call) => (
            <li key={call.toolCallId}>
              <SafeText text={call.toolName} className="font-mono" /> {call.status.toLowerCase()}
              {call.approvalStatus ? ` (approval ${call.approvalStatus.toLowerCase()})` : ''}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
