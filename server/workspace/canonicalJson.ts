/**
 * Canonical JSON in the style of RFC 8785 (JCS), restricted to the JSON this project hashes:
 * object keys sorted by UTF-16 code units, no whitespace, strings escaped as `JSON.stringify`
 * does, numbers limited to safe integers (so their text is unambiguous without the RFC's float
 * rules). Throws a TypeError on anything else: bigint, undefined, NaN, Infinity, fractions,
 * functions, symbols, non-plain objects (Date, Map, class instances) and cycles, because a value
 * that cannot be written one way only must never get a hash.
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set<object>(), '$');
}

function write(value: unknown, ancestors: Set<object>, at: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isSafeInteger(value))
        throw new TypeError(`canonicalJson: ${at} is not a safe integer (${String(value)})`);
      // JSON.stringify(-0) is "0", as RFC 8785 requires.
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      throw new TypeError(`canonicalJson: ${at} has unsupported type ${typeof value}`);
  }
  if (ancestors.has(value)) throw new TypeError(`canonicalJson: ${at} is a cycle`);
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      // Array.from visits holes as undefined, so a sparse array throws instead of printing `[1,,2]`.
      return (
        '[' +
        Array.from(value as unknown[], (item, i) => write(item, ancestors, `${at}[${i}]`)).join(
          ',',
        ) +
        ']'
      );
    }
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null)
      throw new TypeError(`canonicalJson: ${at} is not a plain object`);
    const record = value as Record<string, unknown>;
    // Default sort compares UTF-16 code units, which is the RFC 8785 key order.
    const keys = Object.keys(record).sort();
    return (
      '{' +
      keys
        .map((k) => `${JSON.stringify(k)}:${write(record[k], ancestors, `${at}.${k}`)}`)
        .join(',') +
      '}'
    );
  } finally {
    ancestors.delete(value);
  }
}
