import { useId, useMemo, useState } from 'react';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { SafeText } from '../../ui/SafeText.tsx';
import { ScrollX } from '../../ui/ScrollX.tsx';
import type { ManifestFile } from './compareFiles.ts';
import { formatBytes, shortHash } from './format.ts';

type SortKey = 'target' | 'path' | 'contentHash' | 'byteLength';

const COLUMNS: { key: SortKey; label: string }[] = [
  { key: 'target', label: 'Target' },
  { key: 'path', label: 'Path' },
  { key: 'contentHash', label: 'Content hash' },
  { key: 'byteLength', label: 'Size' },
];

function compare(a: ManifestFile, b: ManifestFile, key: SortKey): number {
  if (key === 'byteLength') return a.byteLength - b.byteLength;
  return a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0;
}

/** A manifest's files: sortable by any column (click or Enter on a header), filtered by path. */
export function CheckpointFilesTable({
  files,
  caption,
}: {
  files: readonly ManifestFile[];
  caption: string;
}) {
  const filterId = useId();
  const [filter, setFilter] = useState('');
  const [sort, setSort] = useState<{ key: SortKey; direction: 'ascending' | 'descending' }>({
    key: 'path',
    direction: 'ascending',
  });
  const rows = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    const kept = needle
      ? files.filter((file) => file.path.toLowerCase().includes(needle))
      : [...files];
    kept.sort((a, b) => compare(a, b, sort.key) * (sort.direction === 'ascending' ? 1 : -1));
    return kept;
  }, [files, filter, sort]);

  const toggle = (key: SortKey) =>
    setSort((current) =>
      current.key === key
        ? { key, direction: current.direction === 'ascending' ? 'descending' : 'ascending' }
        : { key, direction: 'ascending' },
    );

  return (
    <div className="space-y-2">
      <div className="flex items-center gap-2 text-sm">
        <label htmlFor={filterId}>Filter by path</label>
        <input
          id={filterId}
          type="search"
          value={filter}
          onChange={(event) => setFilter(event.target.value)}
          className="rounded border border-slate-300 bg-white px-2 py-1 dark:border-slate-600 dark:bg-slate-900"
        />
        <span className="text-xs text-slate-600 dark:text-slate-400" aria-live="polite">
          {rows.length} of {files.length} files
        </span>
      </div>
      <ScrollX label="Checkpoint files">
        <table className="w-full text-left text-sm">
          <caption className="sr-only">{caption}</caption>
          <thead>
            <tr>
              {COLUMNS.map((column) => (
                <th
                  key={column.key}
                  scope="col"
                  aria-sort={sort.key === column.key ? sort.direction : 'none'}
                  className="px-2 py-1"
                >
                  <button
                    type="button"
                    onClick={() => toggle(column.key)}
                    className="font-medium underline-offset-2 hover:underline"
                  >
                    {column.label}
                    {sort.key === column.key ? (sort.direction === 'ascending' ? ' ▲' : ' ▼') : ''}
                  </button>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((file) => (
              <tr
                key={`${file.target}\u0000${file.path}`}
                className="border-t border-slate-200 dark:border-slate-700"
              >
                <td className="px-2 py-1 font-mono text-xs">{file.target}</td>
                <td className="break-all px-2 py-1 font-mono text-xs">
                  <SafeText text={file.path} />
                </td>
                <td className="px-2 py-1 font-mono text-xs">
                  <span title={file.contentHash}>{shortHash(file.contentHash)}</span>{' '}
                  <CopyButton text={file.contentHash} label={`content hash of ${file.path}`} />
                </td>
                <td
                  className="px-2 py-1 text-right tabular-nums"
                  title={`${file.byteLength} bytes`}
                >
                  {formatBytes(file.byteLength)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollX>
    </div>
  );
}
