/**
 * PostgreSQL full-text search with the same words as SQLite's FTS5 index (unicode61,
 * remove_diacritics 2): a word is a run of letters and digits, compared without case or
 * diacritics. PostgreSQL's own parser would keep `/usr/bin/env`, `x.y` or `1.2.3` as one token
 * (so "bin" would not find it); the text is therefore folded here before `to_tsvector('simple', …)`
 * sees it, and the query is built from the same folded words. The index is PostgreSQL's (a GIN
 * index over a tsvector column); only the snippet is cut here, from the stored text, so its marks
 * fall on exactly the words the index matched.
 */
import { MARK_END, MARK_START } from '../eventText.ts';

const WORD = /[\p{L}\p{N}]+/gu;

/** One word folded as the index sees it: no diacritics, lower case. */
export function foldWord(word: string): string {
  return word
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** The text PostgreSQL indexes: the folded words, separated by spaces. */
export function searchDocumentText(text: string): string {
  const out: string[] = [];
  for (const match of text.matchAll(WORD)) {
    const folded = foldWord(match[0]);
    // tsvector refuses lexemes over 2047 bytes; such a "word" is not something anyone types.
    if (folded && Buffer.byteLength(folded) < 2048) out.push(folded);
  }
  return out.join(' ');
}

export interface SearchTerms {
  /** The to_tsquery text: each typed word a phrase of its parts, all required. */
  tsquery: string;
  /** Folded parts that match as whole words, and those that match as prefixes. */
  exact: Set<string>;
  prefixes: string[];
}

/**
 * A person's query as a tsquery that cannot be a syntax error (the words of ftsQuery: each word
 * required, a trailing `*` a prefix). Null when nothing searchable is left.
 */
export function pgSearchTerms(query: string): SearchTerms | null {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  const clauses: string[] = [];
  for (const raw of query.split(/\s+/)) {
    const prefix = raw.endsWith('*');
    const parts = [...raw.matchAll(WORD)].map((m) => foldWord(m[0])).filter(Boolean);
    if (parts.length === 0) continue;
    const quoted = parts.map((part, i) => {
      const last = i === parts.length - 1;
      if (last && prefix) prefixes.push(part);
      else exact.add(part);
      return `'${part}'${last && prefix ? ':*' : ''}`;
    });
    clauses.push(quoted.length === 1 ? quoted[0]! : `(${quoted.join(' <-> ')})`);
  }
  if (clauses.length === 0) return null;
  return { tsquery: clauses.join(' & '), exact, prefixes };
}

/** Words in a snippet (as FTS5's snippet(…, 16)). */
const SNIPPET_WORDS = 16;

/**
 * A snippet of `body` around its first matching word, with MARK_START/MARK_END around every
 * matching word and `…` where text was cut (the shape snippetParts reads).
 */
export function cutSnippet(body: string, terms: SearchTerms): string {
  const words = [...body.matchAll(WORD)].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
    folded: foldWord(m[0]),
  }));
  const matches = (folded: string) =>
    terms.exact.has(folded) || terms.prefixes.some((p) => folded.startsWith(p));
  const first = Math.max(
    0,
    words.findIndex((w) => matches(w.folded)),
  );
  const from = Math.max(0, Math.min(first - 3, words.length - SNIPPET_WORDS));
  const to = Math.min(words.length, from + SNIPPET_WORDS);
  if (words.length === 0) return body.slice(0, 200);
  let out = from > 0 ? '…' : '';
  let at = words[from]!.start;
  for (let i = from; i < to; i++) {
    const word = words[i]!;
    out += body.slice(at, word.start);
    const text = body.slice(word.start, word.end);
    out += matches(word.folded) ? `${MARK_START}${text}${MARK_END}` : text;
    at = word.end;
  }
  if (to < words.length) out += '…';
  return out;
}
