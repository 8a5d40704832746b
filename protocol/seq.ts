/**
 * Sequence numbers, epochs and every other contract BigInt travel as base-10 decimal strings.
 * All comparisons and arithmetic go through these helpers, never through string order or Number.
 */
export type DecimalString = string;

const DECIMAL = /^(0|[1-9][0-9]{0,39})$/;

/** True for a non-negative decimal string of at most 40 digits without leading zeros. */
export function isDecimalString(value: unknown): value is DecimalString {
  return typeof value === 'string' && DECIMAL.test(value);
}

/** The value as a bigint (accepts a decimal string or a bigint). */
export function toBigInt(value: DecimalString | bigint): bigint {
  return typeof value === 'bigint' ? value : BigInt(value);
}

/** Three-way compare of two decimal values: -1, 0 or 1. */
export function compareSeq(a: DecimalString | bigint, b: DecimalString | bigint): -1 | 0 | 1 {
  const x = toBigInt(a);
  const y = toBigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The larger of two decimal values, as a decimal string. */
export function maxSeq(a: DecimalString | bigint, b: DecimalString | bigint): DecimalString {
  return (compareSeq(a, b) >= 0 ? toBigInt(a) : toBigInt(b)).toString();
}

/** The value plus `by` (default 1), as a decimal string. */
export function addSeq(value: DecimalString | bigint, by: number | bigint = 1n): DecimalString {
  return (toBigInt(value) + BigInt(by)).toString();
}
