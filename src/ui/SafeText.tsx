import type { ReactNode } from 'react';

// Control characters (C0 except \n and \t, DEL, C1), bidirectional controls, zero-width and other
// invisible formatting characters, and Unicode tag characters (used to smuggle hidden text).
const HIDDEN_SOURCE = [
  '[',
  '\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F', // C0 except \t \n, DEL, C1
  '\\u00AD\\u061C\\u180E', // soft hyphen, Arabic letter mark, Mongolian vowel separator
  '\\u200B-\\u200F', // zero-width space/non-joiner/joiner, LRM, RLM
  '\\u2028-\\u202E', // line/paragraph separators, LRE RLE PDF LRO RLO
  '\\u2060-\\u206F', // word joiner, invisible operators, isolates LRI RLI FSI PDI, deprecated formats
  '\\uFEFF\\uFFF9-\\uFFFB', // zero-width no-break space (BOM), interlinear annotation
  '\\u{E0000}-\\u{E007F}', // tag characters
  ']',
].join('');

/** Matches one character that SafeText shows as a placeholder instead of passing through. */
export const HIDDEN_CHARACTER = new RegExp(HIDDEN_SOURCE, 'u');

/**
 * Characters of right-to-left scripts (bidi classes R and AL, and Arabic digits): Hebrew, Arabic,
 * Syriac, Thaana, N'Ko, Samaritan, Mandaic and their presentation forms, and the astral RTL
 * blocks (Phoenician to Old Turkic, Adlam, Arabic mathematical symbols). Text without any of them
 * (its bidi controls already shown, not applied) lays out left to right whether isolated or not.
 */
const RIGHT_TO_LEFT =
  /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFC\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;

const NAMES: Record<number, string> = {
  0x00: 'NULL',
  0x07: 'BELL',
  0x08: 'BACKSPACE',
  0x0b: 'LINE TABULATION',
  0x0c: 'FORM FEED',
  0x0d: 'CARRIAGE RETURN',
  0x1b: 'ESCAPE',
  0x7f: 'DELETE',
  0x85: 'NEXT LINE',
  0xad: 'SOFT HYPHEN',
  0x061c: 'ARABIC LETTER MARK',
  0x180e: 'MONGOLIAN VOWEL SEPARATOR',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x2028: 'LINE SEPARATOR',
  0x2029: 'PARAGRAPH SEPARATOR',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE',
};

type HiddenKind = 'control character' | 'bidirectional control' | 'invisible character';

function kindOf(code: number): HiddenKind {
  if (code <= 0x9f) return 'control character';
  if (code === 0x061c || (code >= 0x200e && code <= 0x200f) || (code >= 0x202a && code <= 0x202e)) {
    return 'bidirectional control';
  }
  if (code >= 0x2066 && code <= 0x2069) return 'bidirectional control';
  return 'invisible character';
}

/** `U+202E` for a code point (at least four hex digits). */
export function codePointLabel(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** A human description of a hidden character, e.g. `U+202E RIGHT-TO-LEFT OVERRIDE (bidirectional control)`. */
export function describeHidden(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  const name = NAMES[code] ?? (code >= 0xe0000 ? 'TAG CHARACTER' : undefined);
  return `${codePointLabel(code)}${name ? ` ${name}` : ''} (${kindOf(code)}, shown, not applied)`;
}

/** How many characters of `text` SafeText would show as placeholders. */
export function countHidden(text: string): number {
  let count = 0;
  for (const char of text) if (HIDDEN_CHARACTER.test(char)) count += 1;
  return count;
}

/** Plain-text form of `text` with each hidden character replaced by `⟨U+XXXX⟩` (for titles, notifications). */
export function toVisibleText(text: string): string {
  let out = '';
  for (const char of text) {
    out += HIDDEN_CHARACTER.test(char) ? `⟨${codePointLabel(char.codePointAt(0) ?? 0)}⟩` : char;
  }
  return out;
}

/**
 * Renders a server string as React text. Control, bidirectional and zero-width characters are
 * never obeyed or hidden: each becomes a labelled, distinctly styled placeholder such as
 * `⟨U+202E⟩` whose title names the character. The whole text is bidi-isolated (`<bdi>`) so it
 * cannot reorder what surrounds it. `\n` and `\t` pass through; callers choose wrapping with
 * className. `bare` (for the live timeline's most frequent rows) isolates only text holding a
 * right-to-left character, since text without one lays out the same either way, and leaves the
 * rest a text node: an element per string was most of a log row's DOM.
 */
export function SafeText({
  text,
  className,
  bare = false,
}: {
  text: string;
  className?: string;
  bare?: boolean;
}) {
  const isolate = !bare || className !== undefined || RIGHT_TO_LEFT.test(text);
  if (!HIDDEN_CHARACTER.test(text)) return isolate ? <bdi className={className}>{text}</bdi> : text;
  const parts: ReactNode[] = [];
  let run = '';
  let index = 0;
  for (const char of text) {
    if (HIDDEN_CHARACTER.test(char)) {
      if (run) parts.push(run);
      run = '';
      const label = codePointLabel(char.codePointAt(0) ?? 0);
      parts.push(
        <span
          key={index}
          data-hidden-char={label}
          title={describeHidden(char)}
          className="mx-px rounded-sm bg-amber-200 px-0.5 font-mono text-[0.85em] text-amber-950 ring-1 ring-amber-500 dark:bg-amber-900 dark:text-amber-100"
        >
          ⟨{label}⟩
        </span>,
      );
    } else {
      run += char;
    }
    index += 1;
  }
  if (run) parts.push(run);
  return isolate ? <bdi className={className}>{parts}</bdi> : <>{parts}</>;
}
