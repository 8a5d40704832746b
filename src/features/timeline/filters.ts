import type { ContentRow, RowFamily, TimelineRow } from './buildRows.ts';

/** What the reader narrowed the timeline to; empty strings mean "any". */
export interface TimelineFilter {
  family: RowFamily | '';
  toolName: string;
  status: string;
  search: string;
}

export const NO_FILTER: TimelineFilter = { family: '', toolName: '', status: '', search: '' };

export function isFiltering(filter: TimelineFilter): boolean {
  return (
    filter.family !== '' ||
    filter.toolName !== '' ||
    filter.status !== '' ||
    filter.search.trim() !== ''
  );
}

/** True when a loaded row passes every part of the filter. */
export function matchesFilter(row: ContentRow, filter: TimelineFilter): boolean {
  if (filter.family && row.family !== filter.family) return false;
  if (filter.toolName && row.toolName !== filter.toolName) return false;
  if (filter.status && row.status !== filter.status) return false;
  const needle = filter.search.trim().toLowerCase();
  if (needle && !row.text.includes(needle)) return false;
  return true;
}

/** The rows to show: everything (with gaps for unloaded pages), or the loaded rows that match. */
export function applyFilter(rows: readonly TimelineRow[], filter: TimelineFilter): TimelineRow[] {
  if (!isFiltering(filter)) return rows as TimelineRow[];
  return rows.filter((row): row is ContentRow => row.kind !== 'gap' && matchesFilter(row, filter));
}

/** The choices the filter menus offer: what the loaded rows actually contain. */
export function filterChoices(rows: readonly TimelineRow[]): {
  families: RowFamily[];
  toolNames: string[];
  statuses: string[];
} {
  const families = new Set<RowFamily>();
  const toolNames = new Set<string>();
  const statuses = new Set<string>();
  for (const row of rows) {
    if (row.kind === 'gap') continue;
    families.add(row.family);
    if (row.toolName) toolNames.add(row.toolName);
    if (row.status) statuses.add(row.status);
  }
  return {
    families: [...families],
    toolNames: [...toolNames].sort(),
    statuses: [...statuses].sort(),
  };
}
