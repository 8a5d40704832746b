import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonicalJson.ts';

describe('canonicalJson', () => {
  it('sorts keys by UTF-16 code units at every depth and drops whitespace', () => {
    const value = { b: 1, a: [{ z: true, y: null }, 'x'], B: 'upper', é: 2, '\u{1F600}': 3, ｚ: 4 };
    // '\u{1F600}' is the surrogate pair D83D DE00, which sorts before U+FF5A in code-unit order
    // (after it in code-point order): the RFC 8785 order is the code-unit one.
    expect(canonicalJson(value)).toBe(
      '{"B":"upper","a":[{"y":null,"z":true},"x"],"b":1,"é":2,"\u{1F600}":3,"ｚ":4}',
    );
  });

  it('escapes strings as JSON does and writes -0 as 0', () => {
    expect(canonicalJson({ s: 'quote " backslash \\ newline \n tab \t nul \u0000', n: -0 })).toBe(
      '{"n":0,"s":"quote \\" backslash \\\\ newline \\n tab \\t nul \\u0000"}',
    );
  });

  it('gives the same text for objects built in a different key order', () => {
    expect(canonicalJson({ x: 1, y: { b: 2, a: 3 } })).toBe(
      canonicalJson({ y: { a: 3, b: 2 }, x: 1 }),
    );
  });

  it.each([
    ['a bigint', { n: 1n }],
    ['undefined', { n: undefined }],
    ['NaN', { n: Number.NaN }],
    ['Infinity', [Number.POSITIVE_INFINITY]],
    ['a fraction', { n: 1.5 }],
    ['an unsafe integer', { n: 2 ** 53 }],
    ['a Date', { d: new Date(0) }],
    ['a Map', new Map()],
    ['a function', { f: () => 1 }],
    ['a symbol', [Symbol('s')]],
    // eslint-disable-next-line no-sparse-arrays
    ['a sparse array', [1, , 2]],
  ])('throws on %s', (_label, value) => {
    expect(() => canonicalJson(value)).toThrow(TypeError);
  });

  it('throws on a cycle but accepts a shared, acyclic reference', () => {
    const shared = { k: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"k":1},"b":{"k":1}}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/cycle/);
  });
});
