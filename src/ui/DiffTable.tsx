import type { DiffLineKind, DiffRow } from './diffLines.ts';
import { SafeText } from './SafeText.tsx';

const MARK: Record<DiffLineKind, { sign: string; label: string; row: string; signClass: string }> =
  {
    added: {
      sign: '+',
      label: 'Added',
      row: 'bg-emerald-50 dark:bg-emerald-950/50',
      signClass: 'text-emerald-800 dark:text-emerald-300',
    },
    removed: {
      sign: '−',
      label: 'Removed',
      row: 'bg-red-50 dark:bg-red-950/50',
      signClass: 'text-red-800 dark:text-red-300',
    },
    context: {
      sign: ' ',
      label: 'Unchanged',
      row: '',
      signClass: 'text-slate-500 dark:text-slate-400',
    },
  };

const number =
  'w-px px-2 text-right align-top tabular-nums text-slate-500 select-none dark:text-slate-400';

/**
 * A line diff as a table: line numbers before and after, a +/− marker (named for screen
 * readers), and the line through SafeText, so control, bidi and zero-width characters show as
 * placeholders. A `skipped` row stands for a run of unchanged lines left out.
 */
export function DiffTable({
  rows,
  caption,
  beforeLabel = 'the old version',
  afterLabel = 'the new version',
}: {
  rows: readonly DiffRow[];
  caption: string;
  beforeLabel?: string;
  afterLabel?: string;
}) {
  return (
    <table className="w-full border-collapse font-mono text-xs leading-5">
      <caption className="sr-only">{caption}</caption>
      <thead className="text-left font-sans text-[11px] text-slate-600 dark:text-slate-300">
        <tr>
          <th scope="col" className="px-2 font-medium">
            Before<span className="sr-only">: line in {beforeLabel}</span>
          </th>
          <th scope="col" className="px-2 font-medium">
            After<span className="sr-only">: line in {afterLabel}</span>
          </th>
          <th scope="col" className="px-1 font-medium">
            <span className="sr-only">Change</span>
          </th>
          <th scope="col" className="px-2 font-medium">
            Text
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => {
          if (row.kind === 'skipped') {
            return (
              <tr
                key={`skip-${row.oldStart}-${row.newStart}`}
                className="bg-slate-100 text-slate-600 dark:bg-slate-800 dark:text-slate-300"
              >
                <td colSpan={4} className="px-2 py-0.5 font-sans">
                  ⋯ {row.count} unchanged lines
                </td>
              </tr>
            );
          }
          const mark = MARK[row.kind];
          return (
            <tr
              key={`${row.kind}-${row.oldNumber ?? ''}-${row.newNumber ?? ''}`}
              className={mark.row}
            >
              <td className={number}>{row.oldNumber ?? ''}</td>
              <td className={number}>{row.newNumber ?? ''}</td>
              <td className={`w-px px-1 align-top font-semibold select-none ${mark.signClass}`}>
                <span aria-hidden="true">{mark.sign}</span>
                <span className="sr-only">{mark.label}</span>
              </td>
              <td className="px-2 align-top break-all whitespace-pre-wrap text-slate-900 [tab-size:4] dark:text-slate-100">
                <SafeText text={row.text} />
                {row.newline ? null : (
                  <span className="ml-2 font-sans text-[11px] text-slate-600 italic dark:text-slate-300">
                    (no newline at end of file)
                  </span>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
