import { pageOfSeq } from '../../graphql/eventDocuments.ts';
import type { TimelineRow } from './buildRows.ts';

/** Where a row is laid out, in px from the top of the list. */
export interface RowExtent {
  start: number;
  end: number;
}

/** The page a row comes from (a row folding several pages belongs to its first event's). */
export function pageOfRow(row: TimelineRow): string {
  return row.kind === 'gap' ? row.page : pageOfSeq(row.seq);
}

/**
 * The pages with a row overlapping [top, bottom]. `extents` are in row order and ascending, so
 * this finds the first such row by bisection and reads only the rows in range.
 */
export function pagesInRange(
  rows: readonly TimelineRow[],
  extents: readonly RowExtent[],
  top: number,
  bottom: number,
): Set<string> {
  const count = Math.min(rows.length, extents.length);
  let low = 0;
  let high = count;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((extents[middle]?.end ?? 0) < top) low = middle + 1;
    else high = middle;
  }
  const pages = new Set<string>();
  for (let index = low; index < count; index += 1) {
    const extent = extents[index];
    const row = rows[index];
    if (!extent || !row || extent.start > bottom) break;
    pages.add(pageOfRow(row));
  }
  return pages;
}

/**
 * The wanted pages a timeline can let go of: those with no row near the view, except the two
 * newest (the live stream writes there, and a new page is only created after a cached one).
 */
export function pagesToRelease(
  wanted: Iterable<string>,
  near: ReadonlySet<string>,
  newestPage: string,
): string[] {
  const keepFrom = BigInt(newestPage) - 1n;
  const out: string[] = [];
  for (const page of wanted) if (!near.has(page) && BigInt(page) < keepFrom) out.push(page);
  return out;
}
