import { describe, expect, it } from 'vitest';
import { diffLines, splitLines, toDiffRows, type DiffLine, type TextLine } from './diffLines.ts';

const lines = (...texts: string[]): TextLine[] => texts.map((text) => ({ text, newline: true }));
const shape = (diff: DiffLine[]) =>
  diff.map((l) => `${l.kind === 'added' ? '+' : l.kind === 'removed' ? '-' : ' '}${l.text}`);

/** Length of the longest common subsequence, by dynamic programming (the reference). */
function lcsLength(a: readonly string[], b: readonly string[]): number {
  const row = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i += 1) {
    let diagonal = 0;
    for (let j = 1; j <= b.length; j += 1) {
      const up = row[j] ?? 0;
      row[j] = a[i - 1] === b[j - 1] ? diagonal + 1 : Math.max(up, row[j - 1] ?? 0);
      diagonal = up;
    }
  }
  return row[b.length] ?? 0;
}

// A small deterministic generator, so a failure reproduces.
function makeRandom(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

describe('splitLines', () => {
  it('splits on \\n, keeps \\r in the line and marks a missing final newline', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a\r\nb\n')).toEqual([
      { text: 'a\r', newline: true },
      { text: 'b', newline: true },
    ]);
    expect(splitLines('a\n\nb')).toEqual([
      { text: 'a', newline: true },
      { text: '', newline: true },
      { text: 'b', newline: false },
    ]);
  });
});

describe('diffLines', () => {
  it('finds the changed lines between matching ones, with numbers on both sides', () => {
    const diff = diffLines(lines('a', 'b', 'c', 'd'), lines('a', 'x', 'c', 'd', 'e'));
    expect(shape(diff.lines)).toEqual([' a', '-b', '+x', ' c', ' d', '+e']);
    expect(diff.lines.map((l) => [l.oldNumber, l.newNumber])).toEqual([
      [1, 1],
      [2, null],
      [null, 2],
      [3, 3],
      [4, 4],
      [null, 5],
    ]);
    expect([diff.added, diff.removed, diff.exact]).toEqual([2, 1, true]);
  });

  it('shows a whole new or deleted file as added or removed', () => {
    expect(shape(diffLines([], lines('a', 'b')).lines)).toEqual(['+a', '+b']);
    expect(shape(diffLines(lines('a', 'b'), []).lines)).toEqual(['-a', '-b']);
    expect(diffLines([], []).lines).toEqual([]);
  });

  it('counts a missing final newline as a change of that line', () => {
    const diff = diffLines(splitLines('a\nb\n'), splitLines('a\nb'));
    expect(shape(diff.lines)).toEqual([' a', '-b', '+b']);
    expect(diff.lines[2]?.newline).toBe(false);
  });

  it('is a shortest edit script: it rebuilds both files and keeps a longest common subsequence', () => {
    const random = makeRandom(7);
    for (let round = 0; round < 300; round += 1) {
      const pick = () =>
        Array.from({ length: Math.floor(random() * 14) }, () => 'abcd'[Math.floor(random() * 4)]!);
      const a = pick();
      const b = pick();
      const diff = diffLines(lines(...a), lines(...b));
      const rebuiltOld = diff.lines.filter((l) => l.kind !== 'added').map((l) => l.text);
      const rebuiltNew = diff.lines.filter((l) => l.kind !== 'removed').map((l) => l.text);
      expect(rebuiltOld).toEqual(a);
      expect(rebuiltNew).toEqual(b);
      const kept = diff.lines.filter((l) => l.kind === 'context').length;
      expect(kept).toBe(lcsLength(a, b));
    }
  });

  it('past the edit limit shows the changed middle as removed then added, still correct', () => {
    const a = lines('head', '1', '2', '3', 'tail');
    const b = lines('head', 'x', '2', 'y', 'tail');
    const diff = diffLines(a, b, 1);
    expect(diff.exact).toBe(false);
    expect(shape(diff.lines)).toEqual([' head', '-1', '-2', '-3', '+x', '+2', '+y', ' tail']);
    expect(diffLines(a, b).exact).toBe(true);
  });

  it('diffs 5,000-line files with scattered edits', () => {
    const a = lines(...Array.from({ length: 5000 }, (_, i) => `line ${i}`));
    const b = a.map((line, i) => (i % 50 === 0 ? { ...line, text: `${line.text} edited` } : line));
    const diff = diffLines(a, b);
    expect([diff.added, diff.removed, diff.exact]).toEqual([100, 100, true]);
  });
});

describe('toDiffRows', () => {
  it('keeps three lines of context around changes and summarises longer unchanged runs', () => {
    const texts = Array.from({ length: 20 }, (_, i) => `l${i + 1}`);
    const changed = texts.map((t) => (t === 'l10' ? 'L10' : t));
    const rows = toDiffRows(diffLines(lines(...texts), lines(...changed)).lines);
    expect(
      rows.map((r) =>
        r.kind === 'skipped' ? `skip ${r.count} from ${r.oldStart}` : `${r.kind} ${r.text}`,
      ),
    ).toEqual([
      'skip 6 from 1',
      'context l7',
      'context l8',
      'context l9',
      'removed l10',
      'added L10',
      'context l11',
      'context l12',
      'context l13',
      'skip 7 from 14',
    ]);
  });

  it('shows a single unchanged line instead of summarising it', () => {
    const rows = toDiffRows(
      diffLines(
        lines('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'),
        lines('A', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'I'),
      ).lines,
    );
    expect(rows.some((r) => r.kind === 'skipped')).toBe(false);
    expect(rows).toHaveLength(11);
  });
});
