import { describe, expect, it } from 'vitest';
import { PAGE_SIZE } from '../../graphql/eventDocuments.ts';
import { pageOfLogEvents } from '../../test/fixtures.ts';
import { buildRows, type PageSlot } from './buildRows.ts';
import { pagesInRange, pagesToRelease, type RowExtent } from './pagesToRelease.ts';

/** Pages 0..4: page 2 loaded with PAGE_SIZE rows of 10 px, the others gaps of 1,000 px. */
function layout() {
  const slots: PageSlot[] = [0, 1, 2, 3, 4].map((page) => ({
    page: String(page),
    events: page === 2 ? pageOfLogEvents(2) : null,
    loading: false,
    error: null,
  }));
  const rows = buildRows(slots);
  const extents: RowExtent[] = [];
  let start = 0;
  for (const row of rows) {
    const size = row.kind === 'gap' ? 1_000 : 10;
    extents.push({ start, end: start + size });
    start += size;
  }
  return { rows, extents };
}

describe('pagesInRange', () => {
  it('names the pages of the rows overlapping the range, gaps and loaded rows alike', () => {
    const { rows, extents } = layout();
    // Page 1's gap ends at 2,000; page 2's rows span 2,000..end; page 3's gap follows.
    const end = 2_000 + PAGE_SIZE * 10;
    expect([...pagesInRange(rows, extents, 1_990, 2_100)].sort()).toEqual(['1', '2']);
    expect([...pagesInRange(rows, extents, 2_010, end - 10)]).toEqual(['2']);
    expect([...pagesInRange(rows, extents, end - 5, end + 40)].sort()).toEqual(['2', '3']);
    expect([...pagesInRange(rows, extents, 0, 10)]).toEqual(['0']);
    expect([...pagesInRange(rows, extents, end + 2_500, end + 3_000)]).toEqual([]);
  });
});

describe('pagesToRelease', () => {
  it('lets go of wanted pages far from the view, never the two newest', () => {
    const wanted = ['0', '3', '7', '8', '9'];
    expect(pagesToRelease(wanted, new Set(['3']), '9')).toEqual(['0', '7']);
    expect(pagesToRelease(wanted, new Set(['0', '3', '7']), '9')).toEqual([]);
    expect(pagesToRelease(['0', '1'], new Set(), '1')).toEqual([]);
  });
});
