/** One line of a text file; `newline` is false only for a last line without a final `\n`. */
export interface TextLine {
  text: string;
  newline: boolean;
}

export type DiffLineKind = 'context' | 'added' | 'removed';

/** One line of a line diff, with its 1-based number in the old and/or new file. */
export interface DiffLine {
  kind: DiffLineKind;
  oldNumber: number | null;
  newNumber: number | null;
  text: string;
  newline: boolean;
}

/** A run of unchanged lines left out of a compact diff. */
export interface SkippedLines {
  kind: 'skipped';
  count: number;
  oldStart: number;
  newStart: number;
}

export type DiffRow = DiffLine | SkippedLines;

export interface LineDiff {
  lines: DiffLine[];
  added: number;
  removed: number;
  /**
   * False when the files differ in more than `maxEdits` lines: the changed middle is then shown
   * as removed and re-added whole, which is correct but not the shortest diff.
   */
  exact: boolean;
}

/** Past this many line edits the diff stops searching (time and memory grow with its square). */
export const DIFF_MAX_EDITS = 2_000;

/** Splits text on `\n` only: a `\r` stays in the line, where SafeText shows it. */
export function splitLines(text: string): TextLine[] {
  if (text === '') return [];
  const parts = text.split('\n');
  const last = parts.pop() ?? '';
  const lines: TextLine[] = parts.map((part) => ({ text: part, newline: true }));
  if (last !== '') lines.push({ text: last, newline: false });
  return lines;
}

const EQUAL = 0;
const REMOVE = 1;
const ADD = 2;
type Op = typeof EQUAL | typeof REMOVE | typeof ADD;

/**
 * Myers' O((N+M)·D) greedy diff on interned lines. Keeps, per edit distance d, the furthest
 * reaching x of diagonals -d..d (so memory is O(D²)), and returns null past `maxEdits`.
 */
function myers(a: Int32Array, b: Int32Array, maxEdits: number): Op[] | null {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  search: for (let d = 0; d <= max; d += 1) {
    if (d > maxEdits) return null;
    // The state before round d, diagonals -d..d at index k + d.
    trace.push(v.slice(offset - d, offset + d + 1));
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0))
          ? (v[offset + k + 1] ?? 0)
          : (v[offset + k - 1] ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break search;
      }
    }
  }
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d -= 1) {
    const before = trace[d] as Int32Array;
    const at = (k: number) => before[k + d] ?? 0;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push(EQUAL);
      x -= 1;
      y -= 1;
    }
    ops.push(x === prevX ? ADD : REMOVE);
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    ops.push(EQUAL);
    x -= 1;
    y -= 1;
  }
  return ops.reverse();
}

/**
 * A line diff from `before` to `after`: the common head and tail are matched first, the middle
 * by Myers' algorithm. Lines are compared with their line ending, so a missing final newline
 * counts as a change.
 */
export function diffLines(
  before: readonly TextLine[],
  after: readonly TextLine[],
  maxEdits = DIFF_MAX_EDITS,
): LineDiff {
  const ids = new Map<string, number>();
  const intern = (line: TextLine) => {
    const key = `${line.newline ? 'n' : 'e'}${line.text}`;
    let id = ids.get(key);
    if (id === undefined) {
      id = ids.size;
      ids.set(key, id);
    }
    return id;
  };
  const a = Int32Array.from(before, intern);
  const b = Int32Array.from(after, intern);

  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail += 1;
  }
  const midA = a.subarray(head, a.length - tail);
  const midB = b.subarray(head, b.length - tail);
  let middle = myers(midA, midB, maxEdits);
  const exact = middle !== null;
  middle ??= [
    ...Array.from({ length: midA.length }, (): Op => REMOVE),
    ...Array.from({ length: midB.length }, (): Op => ADD),
  ];
  const ops: Op[] = [
    ...Array.from({ length: head }, (): Op => EQUAL),
    ...middle,
    ...Array.from({ length: tail }, (): Op => EQUAL),
  ];

  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  let added = 0;
  let removed = 0;
  for (const op of ops) {
    if (op === EQUAL) {
      const line = after[j] as TextLine;
      lines.push({ kind: 'context', oldNumber: i + 1, newNumber: j + 1, ...line });
      i += 1;
      j += 1;
    } else if (op === REMOVE) {
      const line = before[i] as TextLine;
      lines.push({ kind: 'removed', oldNumber: i + 1, newNumber: null, ...line });
      i += 1;
      removed += 1;
    } else {
      const line = after[j] as TextLine;
      lines.push({ kind: 'added', oldNumber: null, newNumber: j + 1, ...line });
      j += 1;
      added += 1;
    }
  }
  return { lines, added, removed, exact };
}

/**
 * The compact form of a diff: changed lines with `context` unchanged lines around each, and a
 * `skipped` row for every longer run of unchanged lines.
 */
export function toDiffRows(lines: readonly DiffLine[], context = 3): DiffRow[] {
  const keep = new Uint8Array(lines.length);
  lines.forEach((line, index) => {
    if (line.kind === 'context') return;
    const from = Math.max(0, index - context);
    const to = Math.min(lines.length - 1, index + context);
    for (let k = from; k <= to; k += 1) keep[k] = 1;
  });
  const rows: DiffRow[] = [];
  let index = 0;
  while (index < lines.length) {
    if (keep[index]) {
      rows.push(lines[index] as DiffLine);
      index += 1;
      continue;
    }
    let end = index;
    while (end < lines.length && !keep[end]) end += 1;
    const first = lines[index] as DiffLine;
    // A one-line gap is shorter shown than summarised.
    if (end - index === 1) rows.push(first);
    else
      rows.push({
        kind: 'skipped',
        count: end - index,
        oldStart: first.oldNumber ?? 0,
        newStart: first.newNumber ?? 0,
      });
    index = end;
  }
  return rows;
}
