/**
 * The searchable text of one event: every string in its served JSON (messages, summaries, tool
 * names and arguments, results, errors, logs, reasons) except identifiers, hashes and times,
 * which would only make every id-shaped query match everything. Pure, shared by every Store.
 */

/** Fields whose values are ids, hashes, cursors or times: never searched. */
const SKIP = new Set([
  '__typename',
  'type',
  'protocolVersion',
  'version',
  'eventId',
  'sessionId',
  'runId',
  'toolCallId',
  'approvalId',
  'checkpointId',
  'questionId',
  'leaseId',
  'clientInstanceId',
  'clientEpoch',
  'argumentHash',
  'contentHash',
  'createdAt',
  'expiresAt',
  'decidedAt',
  'seq',
  'idempotencyKey',
  'foreignId',
]);

/** Text beyond this many characters is not indexed (a huge tool result stays searchable by its start). */
export const EVENT_TEXT_MAX_CHARS = 64 * 1024;

export function eventText(payload: string): string {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return '';
  }
  return eventTextOf(value);
}

/**
 * eventText of the value a payload was serialized from (the engine has it in hand when it
 * appends, so no store parses the payload it was just given: that parse was 7% of bench:ingest).
 */
export function eventTextOf(value: unknown): string {
  const parts: string[] = [];
  collect(value, parts, 0);
  // The snippet marks must not occur in indexed text.
  const text = parts.join('\n');
  const clipped = text.length > EVENT_TEXT_MAX_CHARS ? text.slice(0, EVENT_TEXT_MAX_CHARS) : text;
  return clipped.includes(MARK_START) || clipped.includes(MARK_END)
    ? clipped.replaceAll(MARK_START, ' ').replaceAll(MARK_END, ' ')
    : clipped;
}

/**
 * Pushes the searchable strings under `value` onto `parts` (depth first, in key order) while
 * fewer than EVENT_TEXT_MAX_CHARS were gathered; returns the length gathered so far. A plain
 * loop (no Object.entries pairs): it runs once per appended event.
 */
function collect(value: unknown, parts: string[], length: number): number {
  if (length >= EVENT_TEXT_MAX_CHARS) return length;
  if (typeof value === 'string') {
    if (value) {
      parts.push(value);
      length += value.length + 1;
    }
  } else if (Array.isArray(value)) {
    for (const item of value) length = collect(item, parts, length);
  } else if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key in record) {
      if (SKIP.has(key)) continue;
      length = collect(record[key], parts, length);
      if (length >= EVENT_TEXT_MAX_CHARS) return length;
    }
  }
  return length;
}

/**
 * A person's query as an FTS5 expression that cannot be a syntax error: each word a quoted
 * phrase, all of them required; a word typed with a trailing `*` matches as a prefix. Whole
 * words by default because a prefix must merge the lists of every word it starts (measured:
 * "build" 0.2 ms, "build"* 109 ms median on 1,000,000 events). Null when nothing is left.
 */
export function ftsQuery(query: string): string | null {
  const words = query
    .split(/\s+/)
    .map((word) => ({ prefix: word.endsWith('*'), text: word.replace(/["*]/g, '').trim() }))
    .filter((word) => /[\p{L}\p{N}]/u.test(word.text));
  if (words.length === 0) return null;
  return words.map((word) => `"${word.text}"${word.prefix ? '*' : ''}`).join(' ');
}

/** Marks around a match in a snippet (control characters, stripped from indexed text). */
export const MARK_START = '\u0001';
export const MARK_END = '\u0002';

/** A snippet split into plain and matching parts, for the client to render as text. */
export function snippetParts(snippet: string): { text: string; match: boolean }[] {
  const out: { text: string; match: boolean }[] = [];
  let match = false;
  let current = '';
  for (const char of snippet) {
    if (char === MARK_START || char === MARK_END) {
      if (current) out.push({ text: current, match });
      current = '';
      match = char === MARK_START;
    } else current += char;
  }
  if (current) out.push({ text: current, match });
  return out;
}

/**
 * A session id as one index token (`s` + hex of its UTF-8 bytes): matching one token is far
 * cheaper than the phrase the tokenizer would make of `ses_37d8…-2294-…`, and it cannot
 * collide with another id or with words of the text (which live in another column).
 */
export function sessionToken(sessionId: string): string {
  // Asked once per appended event, nearly always for the session of the last one.
  if (sessionId === lastSession) return lastToken;
  lastToken = `s${Buffer.from(sessionId, 'utf8').toString('hex')}`;
  lastSession = sessionId;
  return lastToken;
}
let lastSession: string | null = null;
let lastToken = '';
