import { render, screen, within } from '@testing-library/react';
import axe from 'axe-core';
import { describe, expect, it } from 'vitest';
import { DiffTable } from './DiffTable.tsx';
import { diffLines, splitLines, toDiffRows } from './diffLines.ts';

const rowsOf = (before: string, after: string) =>
  toDiffRows(diffLines(splitLines(before), splitLines(after)).lines);

describe('DiffTable', () => {
  it('shows each line with its numbers and a named +/− marker', () => {
    render(<DiffTable rows={rowsOf('a\nb\nc\n', 'a\nB\nc\nd')} caption="Line diff of x.ts" />);
    const table = screen.getByRole('table', { name: 'Line diff of x.ts' });
    const body = within(table).getAllByRole('row').slice(1);
    const cells = body.map((row) =>
      within(row)
        .getAllByRole('cell')
        .map((cell) => cell.textContent),
    );
    expect(cells).toEqual([
      ['1', '1', ' Unchanged', 'a'],
      ['2', '', '−Removed', 'b'],
      ['', '2', '+Added', 'B'],
      ['3', '3', ' Unchanged', 'c'],
      ['', '4', '+Added', 'd(no newline at end of file)'],
    ]);
    expect(within(table).getByRole('columnheader', { name: /Before/ })).toBeTruthy();
  });

  it('makes control, bidi and zero-width characters visible instead of obeying them', () => {
    render(
      <DiffTable
        rows={rowsOf('', 'const ok = 1;\u202E // )"evil"(\u200B\n')}
        caption="Line diff of trick.ts"
      />,
    );
    const line = screen.getByText(/const ok = 1;/).closest('td') as HTMLElement;
    expect(line.textContent).toBe('const ok = 1;⟨U+202E⟩ // )"evil"(⟨U+200B⟩');
    expect(line.querySelector('[data-hidden-char="U+202E"]')?.getAttribute('title')).toMatch(
      /RIGHT-TO-LEFT OVERRIDE/,
    );
  });

  it('summarises long unchanged runs and has no accessibility violations', async () => {
    const before = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n');
    const after = before.replace('line 15', 'line fifteen');
    const { container } = render(
      <DiffTable rows={rowsOf(before, after)} caption="Line diff of long.txt" />,
    );
    expect(screen.getByText('⋯ 11 unchanged lines')).toBeTruthy();
    expect(screen.getByText('⋯ 12 unchanged lines')).toBeTruthy();
    const results = await axe.run(container, { rules: { 'color-contrast': { enabled: false } } });
    expect(results.violations.map((v) => v.id)).toEqual([]);
  });
});
