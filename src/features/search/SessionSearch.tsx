import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { useQuery } from 'urql';
import { Link } from '../../ui/router.tsx';
import { SafeText } from '../../ui/SafeText.tsx';
import { SearchEventsQuery, type SearchHit } from './documents.ts';

/** Matches per page. */
const PAGE = 20;

export interface SessionSearchProps {
  sessionId: string;
  /** The link of one event (opening it loads its page and highlights it in the timeline). */
  eventHref: (seq: string) => string;
}

/**
 * Searches every event of the session on the server (messages, summaries, tool names and
 * arguments, results, errors, logs), not only the loaded pages. Matches come newest first with
 * the matching words marked; each links to its event. Escape or Close puts the list away.
 */
export function SessionSearch({ sessionId, eventHref }: SessionSearchProps) {
  const id = useId();
  const [text, setText] = useState('');
  const [query, setQuery] = useState('');
  const [open, setOpen] = useState(false);
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const input = useRef<HTMLInputElement>(null);

  // A search belongs to one session.
  useEffect(() => {
    setText('');
    setQuery('');
    setOpen(false);
    setCursors([null]);
  }, [sessionId]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const q = text.trim();
    setQuery(q);
    setCursors([null]);
    setOpen(q !== '');
  };
  const close = () => {
    setOpen(false);
    input.current?.focus();
  };
  // Escape puts the list away wherever the focus is (a paged-away button leaves it on body).
  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setOpen(false);
      input.current?.focus();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [open]);

  return (
    <div className="relative min-w-0">
      <form role="search" aria-label="Whole session" onSubmit={submit} className="flex gap-1">
        <label htmlFor={id} className="sr-only">
          Search the whole session
        </label>
        <input
          ref={input}
          id={id}
          type="search"
          value={text}
          placeholder="Search the whole session"
          onChange={(event) => setText(event.target.value)}
          className="w-44 max-w-full min-w-0 rounded border border-slate-300 bg-white px-2 py-1 text-xs text-slate-900 focus-visible:outline-2 focus-visible:outline-blue-600 roomy:w-56 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-50"
        />
        <button
          type="submit"
          className="rounded border border-slate-300 bg-white px-2 py-1 text-xs text-slate-900 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-50"
        >
          Search
        </button>
      </form>
      {open && query ? (
        <section
          aria-label={`Matches for ${query}`}
          className="fixed inset-x-2 z-30 mt-1 max-h-[60dvh] overflow-y-auto rounded-md border border-slate-300 bg-white p-2 shadow-xl sm:absolute sm:inset-x-auto sm:left-0 sm:w-[32rem] sm:max-w-[calc(100vw-2rem)] dark:border-slate-600 dark:bg-slate-900"
        >
          <div className="mb-1 flex items-center justify-between gap-2">
            <h2 className="text-sm font-semibold">
              Matches for “<SafeText text={query} />”
            </h2>
            <button
              type="button"
              onClick={close}
              className="rounded border border-slate-300 px-2 py-0.5 text-xs focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-600"
            >
              Close
            </button>
          </div>
          <ol className="space-y-1">
            {cursors.map((after, index) => (
              <SearchPage
                key={after ?? 'first'}
                sessionId={sessionId}
                query={query}
                after={after}
                last={index === cursors.length - 1}
                eventHref={eventHref}
                onMore={(cursor) => setCursors((list) => [...list, cursor])}
              />
            ))}
          </ol>
        </section>
      ) : null}
    </div>
  );
}

function SearchPage({
  sessionId,
  query,
  after,
  last,
  eventHref,
  onMore,
}: {
  sessionId: string;
  query: string;
  after: string | null;
  last: boolean;
  eventHref: (seq: string) => string;
  onMore: (cursor: string) => void;
}) {
  const [{ data, fetching, error }] = useQuery({
    query: SearchEventsQuery,
    variables: { sessionId, query, first: PAGE, after },
    requestPolicy: 'network-only',
  });
  const page = data?.studioSearchEvents;
  if (!page)
    return (
      <li role="status" className="text-xs text-slate-600 dark:text-slate-300">
        {error ? (
          <span className="text-red-800 dark:text-red-300">
            Search failed: <SafeText text={error.message} />
          </span>
        ) : fetching ? (
          'Searching…'
        ) : null}
      </li>
    );
  return (
    <>
      {page.hits.length === 0 && after === null ? (
        <li role="status" className="text-xs text-slate-600 dark:text-slate-300">
          No event of this session matches.
        </li>
      ) : null}
      {page.hits.map((hit) => (
        <li key={hit.seq}>
          <HitLink hit={hit} href={eventHref(hit.seq)} />
        </li>
      ))}
      {last && page.hasNextPage && page.endCursor ? (
        <li>
          <button
            type="button"
            onClick={() => onMore(page.endCursor!)}
            className="w-full rounded border border-slate-300 px-2 py-1 text-xs focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-600"
          >
            Older matches
          </button>
        </li>
      ) : null}
    </>
  );
}

/** The snippet joins an event's texts with line breaks; shown on one line, they read as ' · '. */
const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' · ');

function HitLink({ hit, href }: { hit: SearchHit; href: string }) {
  return (
    <Link
      to={href}
      className="block rounded px-2 py-1 text-xs hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-blue-600 dark:hover:bg-slate-800"
    >
      <span className="font-mono text-slate-600 dark:text-slate-300">
        #{hit.seq} · {hit.type}
      </span>
      <span className="mt-0.5 block break-words text-slate-900 dark:text-slate-100">
        {hit.snippet.map((part, index) =>
          part.match ? (
            <mark
              key={index}
              className="rounded-sm bg-yellow-200 px-0.5 text-black dark:bg-yellow-600"
            >
              <SafeText text={oneLine(part.text)} />
            </mark>
          ) : (
            <SafeText key={index} text={oneLine(part.text)} />
          ),
        )}
      </span>
    </Link>
  );
}
