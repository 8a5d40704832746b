import { Fragment, useId, useState } from 'react';
import { SafeText, toVisibleText } from '../../ui/SafeText.tsx';
import { ScrollX } from '../../ui/ScrollX.tsx';
import type { FileChange, FileComparison } from './compareFiles.ts';
import { FileDiff } from './FileDiff.tsx';
import { formatBytes, shortHash } from './format.ts';

const COMPARE_COLUMNS = ['Change', 'Target', 'Path', 'Hash before', 'Hash after', 'Size', 'Diff'];

export const CHANGE_LABEL: Record<FileChange, string> = {
  added: 'Added',
  removed: 'Removed',
  changed: 'Changed',
  unchanged: 'Unchanged',
};

const CHANGE_CLASS: Record<FileChange, string> = {
  added: 'text-emerald-800 dark:text-emerald-300',
  removed: 'text-red-800 dark:text-red-300',
  changed: 'text-amber-800 dark:text-amber-300',
  unchanged: 'text-slate-500 dark:text-slate-400',
};

/** Counts per kind of change, as a description list. */
export function ComparisonCounts({
  comparison,
  labels = CHANGE_LABEL,
}: {
  comparison: FileComparison;
  labels?: Record<FileChange, string>;
}) {
  return (
    <dl className="flex flex-wrap gap-4 text-sm">
      {(['added', 'removed', 'changed', 'unchanged'] as const).map((change) => (
        <div key={change} className="flex gap-1">
          <dt className={CHANGE_CLASS[change]}>{labels[change]}</dt>
          <dd className="font-semibold tabular-nums">{comparison.counts[change]}</dd>
        </div>
      ))}
    </dl>
  );
}

const diffButton =
  'rounded border border-slate-300 px-2 py-0.5 font-sans text-xs whitespace-nowrap hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-blue-600 dark:border-slate-600 dark:hover:bg-slate-800';

/**
 * The rows of a comparison: what happened to each file, with both hashes and sizes. Every row
 * that is not unchanged has a "Show diff" toggle that opens the file's line diff below it,
 * from `beforeLabel` to `afterLabel`.
 */
export function ComparisonTable({
  comparison,
  caption,
  labels = CHANGE_LABEL,
  unchangedByDefault = false,
  beforeLabel = 'before',
  afterLabel = 'after',
  picked,
  onPick,
}: {
  comparison: FileComparison;
  caption: string;
  /** Per-file restore: the paths picked so far, and a toggle (no pick column without it). */
  picked?: ReadonlySet<string>;
  onPick?: (path: string) => void;
  labels?: Record<FileChange, string>;
  unchangedByDefault?: boolean;
  beforeLabel?: string;
  afterLabel?: string;
}) {
  const toggleId = useId();
  const [showUnchanged, setShowUnchanged] = useState(unchangedByDefault);
  const [open, setOpen] = useState<ReadonlySet<string>>(() => new Set());
  const toggle = (key: string) =>
    setOpen((current) => {
      const next = new Set(current);
      if (!next.delete(key)) next.add(key);
      return next;
    });
  const rows = showUnchanged
    ? comparison.rows
    : comparison.rows.filter((row) => row.change !== 'unchanged');
  return (
    <div className="space-y-1">
      <label htmlFor={toggleId} className="flex items-center gap-1 text-xs">
        <input
          id={toggleId}
          type="checkbox"
          checked={showUnchanged}
          onChange={(event) => setShowUnchanged(event.target.checked)}
        />
        Show unchanged files
      </label>
      {rows.length === 0 ? (
        <p className="text-sm text-slate-600 dark:text-slate-400">No file differs.</p>
      ) : (
        <ScrollX label="Compared files">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">{caption}</caption>
            <thead>
              <tr>
                {onPick ? (
                  <th scope="col" className="px-2 py-1">
                    Pick
                  </th>
                ) : null}
                {COMPARE_COLUMNS.map((column) => (
                  <th key={column} scope="col" className="px-2 py-1">
                    {column}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => {
                const expanded = row.change !== 'unchanged' && open.has(row.key);
                const diffId = `${toggleId}-diff-${encodeURIComponent(row.key)}`;
                return (
                  <Fragment key={row.key}>
                    <tr className="border-t border-slate-200 dark:border-slate-700">
                      {onPick ? (
                        <td className="px-2 py-1">
                          {row.change === 'unchanged' ? null : (
                            <input
                              type="checkbox"
                              aria-label={`Pick ${toVisibleText(row.path)} to restore`}
                              checked={picked?.has(row.path) ?? false}
                              onChange={() => onPick(row.path)}
                            />
                          )}
                        </td>
                      ) : null}
                      <td className={`px-2 py-1 ${CHANGE_CLASS[row.change]}`}>
                        {labels[row.change]}
                      </td>
                      <td className="px-2 py-1 font-mono text-xs">{row.target}</td>
                      <td className="break-all px-2 py-1 font-mono text-xs">
                        <SafeText text={row.path} />
                      </td>
                      <td className="px-2 py-1 font-mono text-xs" title={row.before?.contentHash}>
                        {row.before ? shortHash(row.before.contentHash) : '—'}
                      </td>
                      <td className="px-2 py-1 font-mono text-xs" title={row.after?.contentHash}>
                        {row.after ? shortHash(row.after.contentHash) : '—'}
                      </td>
                      <td className="px-2 py-1 tabular-nums">
                        {row.before ? formatBytes(row.before.byteLength) : '—'} →{' '}
                        {row.after ? formatBytes(row.after.byteLength) : '—'}
                      </td>
                      <td className="px-2 py-1">
                        {row.change === 'unchanged' ? null : (
                          <button
                            type="button"
                            className={diffButton}
                            // The name carries the path for screen readers; the path is not repeated as text.
                            aria-label={`${expanded ? 'Hide diff' : 'Show diff'} of ${toVisibleText(row.path)}`}
                            aria-expanded={expanded}
                            aria-controls={expanded ? diffId : undefined}
                            onClick={() => toggle(row.key)}
                          >
                            {expanded ? 'Hide diff' : 'Show diff'}
                          </button>
                        )}
                      </td>
                    </tr>
                    {expanded ? (
                      <tr>
                        <td id={diffId} colSpan={onPick ? 8 : 7} className="px-2 pb-2">
                          <FileDiff
                            path={row.path}
                            before={row.before}
                            after={row.after}
                            beforeLabel={beforeLabel}
                            afterLabel={afterLabel}
                          />
                        </td>
                      </tr>
                    ) : null}
                  </Fragment>
                );
              })}
            </tbody>
          </table>
        </ScrollX>
      )}
    </div>
  );
}
