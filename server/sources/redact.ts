/**
 * Bounded, secret-masking serialization for what the bridges keep of foreign payloads
 * (StudioForeignEvent.payloadJson, tool arguments and results), plus the canonical JSON and
 * argument hash the bridges give foreign tool calls.
 *
 * Canonical JSON here follows RFC 8785 (JCS): object keys sorted by UTF-16 code units, no
 * whitespace, strings escaped as `JSON.stringify` does, finite numbers written as ECMAScript
 * writes them (which is the RFC's number rule). Unlike server/workspace/canonicalJson.ts it
 * accepts fractions, because foreign tool inputs contain them; non-JSON values (undefined,
 * functions, NaN, Infinity) are written as JSON.stringify would (dropped in objects, null in
 * arrays), since a foreign payload must never make the bridge throw.
 */
import { createHash } from 'node:crypto';

/** The most a foreign payload may take in the store (StudioForeignEvent.payloadJson). */
export const FOREIGN_PAYLOAD_MAX_BYTES = 8 * 1024;

/** What a masked value is replaced with. */
export const REDACTED = '[redacted]';

export interface RedactedPayload {
  /** Canonical JSON, at most `maxBytes` UTF-8 bytes, secrets masked. */
  payloadJson: string;
  /** True when anything was cut to fit. */
  truncated: boolean;
}

export interface RedactOptions {
  /** Byte budget of the result (default FOREIGN_PAYLOAD_MAX_BYTES). */
  maxBytes?: number;
  /** Values that must never appear (API keys, tokens), masked wherever they occur. */
  secrets?: readonly string[];
}

// Key segments that name a secret. `tokens` (plural) is deliberately absent: token counts
// (input_tokens, max_tokens) are usage figures, not credentials.
const SECRET_SEGMENTS = new Set([
  'token',
  'secret',
  'secrets',
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'authorization',
  'auth',
  'cookie',
  'credential',
  'credentials',
  'signature',
  'apikey',
  'bearer',
]);
const SECRET_KEY_PATTERN =
  /(?:^|[^a-z])(?:api[_-]?key|private[_-]?key|access[_-]?key|client[_-]?secret)(?:$|[^a-z])/;
const SECRET_VALUE_PATTERNS: RegExp[] = [
  /Bearer\s+[A-Za-z0-9._~+/=-]+/gi,
  /sk-ant-[A-Za-z0-9_-]+/g,
  /whsec_[A-Za-z0-9+/=_-]+/g,
];

/** True when an object key names a secret (api_key, x-api-key, token, authorization, password, ...). */
export function isSecretKey(key: string): boolean {
  const normalized = key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
  if (SECRET_KEY_PATTERN.test(normalized)) return true;
  return normalized.split(/[^a-z0-9]+/).some((segment) => SECRET_SEGMENTS.has(segment));
}

/** Masks known secret values and secret-looking substrings (bearer tokens, Anthropic keys) in a string. */
export function maskSecretText(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  for (const pattern of SECRET_VALUE_PATTERNS) out = out.replace(pattern, REDACTED);
  return out;
}

/**
 * Canonical JSON (RFC 8785 style, see the file comment) of any value. Never throws on
 * JSON-unrepresentable leaves; cycles become "[cycle]".
 */
export function canonicalJson(value: unknown): string {
  return writeCanonical(toJsonValue(value, new Set()));
}

/**
 * The argument hash the bridges give a foreign tool call:
 * `sha256:` + hex sha256 of the canonical JSON of `{"input": <input>, "name": <name>}`.
 * It binds the exact tool name and the exact, unredacted input the runtime sent.
 */
export function foreignArgumentHash(name: string, input: unknown): string {
  return (
    'sha256:' +
    createHash('sha256')
      .update(canonicalJson({ name, input: input ?? null }), 'utf8')
      .digest('hex')
  );
}

/**
 * Canonical JSON of `value` with secrets masked (by key name, by known value, by pattern),
 * cut down to at most `maxBytes` UTF-8 bytes. Cutting shortens long strings, long arrays, wide
 * objects and deep nesting, step by step, until it fits, and always yields valid JSON; when
 * nothing else fits, `{"preview": "...", "truncated": true}`.
 */
export function redactForeignPayload(value: unknown, options: RedactOptions = {}): RedactedPayload {
  const maxBytes = Math.max(64, options.maxBytes ?? FOREIGN_PAYLOAD_MAX_BYTES);
  const secrets = options.secrets ?? [];
  const masked = mask(toJsonValue(value, new Set()), secrets);
  const full = writeCanonical(masked);
  if (byteLength(full) <= maxBytes) return { payloadJson: full, truncated: false };
  for (const limits of SHRINK_STEPS) {
    const json = writeCanonical(shrink(masked, limits, 0));
    if (byteLength(json) <= maxBytes) return { payloadJson: json, truncated: true };
  }
  return { payloadJson: previewEnvelope(full, maxBytes), truncated: true };
}

/** Cuts text to at most `maxChars` characters, marking the cut with an ellipsis. */
export function truncateText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return text.slice(0, Math.max(0, maxChars - 1)) + '…';
}

/** Cuts text to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (byteLength(text) <= maxBytes) return text;
  const suffix = '…';
  let budget = maxBytes - byteLength(suffix);
  let out = '';
  for (const char of text) {
    const size = byteLength(char);
    if (size > budget) break;
    budget -= size;
    out += char;
  }
  return out + suffix;
}

export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

interface ShrinkLimits {
  chars: number;
  items: number;
  keys: number;
  depth: number;
}

const SHRINK_STEPS: ShrinkLimits[] = [
  { chars: 2048, items: 64, keys: 64, depth: 10 },
  { chars: 512, items: 24, keys: 32, depth: 8 },
  { chars: 160, items: 8, keys: 16, depth: 5 },
  { chars: 48, items: 4, keys: 8, depth: 3 },
  { chars: 16, items: 2, keys: 4, depth: 2 },
];

function toJsonValue(value: unknown, ancestors: Set<object>): JsonValue {
  if (value === null) return null;
  switch (typeof value) {
    case 'boolean':
    case 'string':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'bigint':
      return value.toString();
    case 'object':
      break;
    default:
      return null;
  }
  if (ancestors.has(value)) return '[cycle]';
  ancestors.add(value);
  try {
    if (Array.isArray(value))
      return Array.from(value as unknown[], (item) => toJsonValue(item, ancestors));
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
    const out: { [key: string]: JsonValue } = {};
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      out[key] = toJsonValue(item, ancestors);
    }
    return out;
  } finally {
    ancestors.delete(value);
  }
}

function mask(value: JsonValue, secrets: readonly string[]): JsonValue {
  if (typeof value === 'string') return maskSecretText(value, secrets);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => mask(item, secrets));
  const out: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value)) {
    const keySafe = maskSecretText(key, secrets);
    // A numeric `token_count` is a figure; every other value under a secret-looking key is masked.
    if (isSecretKey(key) && item !== null && typeof item !== 'number' && typeof item !== 'boolean')
      out[keySafe] = REDACTED;
    else out[keySafe] = mask(item, secrets);
  }
  return out;
}

function shrink(value: JsonValue, limits: ShrinkLimits, depth: number): JsonValue {
  if (typeof value === 'string') return truncateText(value, limits.chars);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= limits.depth)
    return Array.isArray(value) ? `[array of ${value.length}]` : '[object]';
  if (Array.isArray(value)) {
    const kept = value.slice(0, limits.items).map((item) => shrink(item, limits, depth + 1));
    if (value.length > limits.items) kept.push(`… ${value.length - limits.items} more`);
    return kept;
  }
  const keys = Object.keys(value).sort();
  const out: { [key: string]: JsonValue } = {};
  for (const [index, key] of keys.slice(0, limits.keys).entries()) {
    let short = truncateText(key, limits.chars);
    // Two long keys can cut to the same text; keep both.
    if (Object.hasOwn(out, short)) short = `${short}#${index}`;
    out[short] = shrink(value[key] as JsonValue, limits, depth + 1);
  }
  if (keys.length > limits.keys) out['…'] = `${keys.length - limits.keys} more keys`;
  return out;
}

function previewEnvelope(full: string, maxBytes: number): string {
  // The envelope without its preview is 33 bytes; JSON escaping can grow the preview, so shrink until it fits.
  let budget = maxBytes - 40;
  for (;;) {
    const json = writeCanonical({
      preview: truncateUtf8(full, Math.max(0, budget)),
      truncated: true,
    });
    if (byteLength(json) <= maxBytes || budget <= 0) return json;
    budget -= Math.max(16, byteLength(json) - maxBytes);
  }
}

function writeCanonical(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return '[' + value.map(writeCanonical).join(',') + ']';
  const keys = Object.keys(value).sort();
  return (
    '{' +
    keys
      .map((key) => `${JSON.stringify(key)}:${writeCanonical(value[key] as JsonValue)}`)
      .join(',') +
    '}'
  );
}
