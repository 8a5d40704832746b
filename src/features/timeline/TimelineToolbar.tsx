import { useId, useState, type ReactNode } from 'react';
import { FAMILY_LABEL, type RowFamily } from './buildRows.ts';
import { isFiltering, NO_FILTER, type TimelineFilter } from './filters.ts';

export interface TimelineToolbarProps {
  filter: TimelineFilter;
  onChange: (filter: TimelineFilter) => void;
  choices: { families: RowFamily[]; toolNames: string[]; statuses: string[] };
  /** Rows that match, and rows loaded. */
  matching: number;
  loaded: number;
  /** Pages not loaded yet (their events are not searched). */
  unloadedPages: number;
  onLoadOlder: () => void;
  /** Composed in by src/app before the filters (the whole-session search). */
  start?: ReactNode;
  /** After the filters, on the same line where it fits (the history scrubber). */
  end?: ReactNode;
}

const control =
  'rounded border border-slate-300 bg-white px-2 py-1 text-xs text-slate-900 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-50';

/** Filter by event kind, tool and status, and search the loaded text. */
export function TimelineToolbar({
  filter,
  onChange,
  choices,
  matching,
  loaded,
  unloadedPages,
  onLoadOlder,
  start,
  end,
}: TimelineToolbarProps) {
  const id = useId();
  const active = isFiltering(filter);
  const [open, setOpen] = useState(false);
  // On a phone or a zoomed window only the text filter and a "Filters" toggle take a line.
  const more = `${open ? 'flex' : 'hidden'} roomy:flex`;
  return (
    <div className="flex flex-wrap items-end gap-2 border-b border-slate-200 px-3 py-1.5 roomy:px-4 roomy:py-2 dark:border-slate-700">
      {start}
      <label
        className={`${start ? more : 'flex'} min-w-0 flex-col text-xs text-slate-700 dark:text-slate-300`}
      >
        <span className="sr-only roomy:not-sr-only">Filter loaded events</span>
        <input
          type="search"
          placeholder="Filter loaded events"
          value={filter.search}
          onChange={(event) => onChange({ ...filter, search: event.target.value })}
          className={`${control} w-40 max-w-full roomy:w-48`}
        />
      </label>
      <button
        type="button"
        aria-expanded={open}
        onClick={() => setOpen((value) => !value)}
        className={`${control} roomy:hidden`}
      >
        Filters
      </button>
      <label className={`${more} flex-col text-xs text-slate-700 dark:text-slate-300`}>
        Kind
        <select
          value={filter.family}
          onChange={(event) =>
            onChange({ ...filter, family: event.target.value as RowFamily | '' })
          }
          className={control}
        >
          <option value="">All kinds</option>
          {choices.families.map((family) => (
            <option key={family} value={family}>
              {FAMILY_LABEL[family]}
            </option>
          ))}
        </select>
      </label>
      <label className={`${more} flex-col text-xs text-slate-700 dark:text-slate-300`}>
        Tool
        <select
          value={filter.toolName}
          onChange={(event) => onChange({ ...filter, toolName: event.target.value })}
          className={control}
        >
          <option value="">All tools</option>
          {choices.toolNames.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <label className={`${more} flex-col text-xs text-slate-700 dark:text-slate-300`}>
        Status
        <select
          value={filter.status}
          onChange={(event) => onChange({ ...filter, status: event.target.value })}
          className={control}
        >
          <option value="">All statuses</option>
          {choices.statuses.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </label>
      {active ? (
        <button type="button" className={control} onClick={() => onChange(NO_FILTER)}>
          Clear filters
        </button>
      ) : null}
      {end}
      <p id={id} role="status" className="ml-auto text-xs text-slate-600 dark:text-slate-300">
        {active ? `${matching} of ${loaded} loaded rows match.` : null}
        {active && unloadedPages > 0 ? (
          <>
            {' '}
            {unloadedPages} older {unloadedPages === 1 ? 'page is' : 'pages are'} not loaded.{' '}
            <button type="button" className="underline" onClick={onLoadOlder}>
              Load an older page
            </button>
          </>
        ) : null}
      </p>
      <p className="hidden text-xs text-slate-600 roomy:block dark:text-slate-300">
        <kbd className="font-mono">j</kbd> / <kbd className="font-mono">k</kbd> next / previous
        event
      </p>
    </div>
  );
}
