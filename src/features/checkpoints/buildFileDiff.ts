import { diffLines, splitLines, type DiffLine, type TextLine } from '../../ui/diffLines.ts';

/** Files larger than this (either side) are not diffed in the browser. */
export const DIFF_MAX_BYTES = 200 * 1024;
/** Files with more lines than this (either side) are not diffed in the browser. */
export const DIFF_MAX_LINES = 5_000;

/** What the diff view can show for one file: a line diff, or why it shows none. */
export type FileDiffModel =
  | { kind: 'binary' }
  | { kind: 'tooLarge'; bytes: number; lines: number | null }
  | { kind: 'text'; lines: DiffLine[]; added: number; removed: number; exact: boolean };

/**
 * The text of a file version, or null when it is binary: it holds a NUL byte or is not valid
 * UTF-8. A byte order mark is kept (SafeText shows it), so different bytes never decode alike.
 */
export function decodeText(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** True when a side of this size is not diffed (checked before fetching, from the manifest). */
export const tooLargeToDiff = (byteLength: number) => byteLength > DIFF_MAX_BYTES;

/**
 * Diffs two versions of a file by line. `null` is a side where the file does not exist (an
 * added or removed file), so its whole content shows as added or removed.
 */
export function buildFileDiff(before: Uint8Array | null, after: Uint8Array | null): FileDiffModel {
  const bytes = Math.max(before?.length ?? 0, after?.length ?? 0);
  if (tooLargeToDiff(bytes)) return { kind: 'tooLarge', bytes, lines: null };
  const sides: TextLine[][] = [];
  for (const side of [before, after]) {
    if (side === null) {
      sides.push([]);
      continue;
    }
    const text = decodeText(side);
    if (text === null) return { kind: 'binary' };
    sides.push(splitLines(text));
  }
  const [old = [], next = []] = sides;
  const lines = Math.max(old.length, next.length);
  if (lines > DIFF_MAX_LINES) return { kind: 'tooLarge', bytes, lines };
  return { kind: 'text', ...diffLines(old, next) };
}
