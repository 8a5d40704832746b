import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  byteLength,
  canonicalJson,
  foreignArgumentHash,
  FOREIGN_PAYLOAD_MAX_BYTES,
  isSecretKey,
  REDACTED,
  redactForeignPayload,
} from '../../../server/sources/redact.ts';
import { scrubSecrets } from '../../../server/sources/bridgeSupport.ts';

describe('canonicalJson', () => {
  it('sorts keys by code unit at every level and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: 'x' }, A: 0 })).toBe(
      '{"A":0,"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}',
    );
  });

  it('writes fractions as ECMAScript does and never throws on non-JSON leaves', () => {
    expect(
      canonicalJson({ f: 0.1, e: 1e21, n: Number.NaN, u: undefined, list: [undefined, 1] }),
    ).toBe('{"e":1e+21,"f":0.1,"list":[null,1],"n":null}');
  });
});

describe('foreignArgumentHash', () => {
  it('is sha256 of the canonical JSON of {input, name}', () => {
    const expected = createHash('sha256')
      .update('{"input":{"a":1,"command":"ls"},"name":"bash"}')
      .digest('hex');
    expect(foreignArgumentHash('bash', { command: 'ls', a: 1 })).toBe(`sha256:${expected}`);
  });

  it('changes when the name or any argument changes', () => {
    const base = foreignArgumentHash('bash', { command: 'ls' });
    expect(foreignArgumentHash('bash', { command: 'ls ' })).not.toBe(base);
    expect(foreignArgumentHash('sh', { command: 'ls' })).not.toBe(base);
    expect(foreignArgumentHash('bash', { command: 'ls' })).toBe(base);
  });
});

describe('isSecretKey', () => {
  it.each([
    'api_key',
    'x-api-key',
    'apiKey',
    'ANTHROPIC_API_KEY',
    'token',
    'access_token',
    'Authorization',
    'password',
    'client_secret',
    'callback_secret',
    'private_key',
  ])('masks %s', (key) => expect(isSecretKey(key)).toBe(true));

  it.each([
    'input_tokens',
    'max_tokens',
    'prompt_tokens',
    'author',
    'title',
    'command',
    'keyboard',
  ])('keeps %s', (key) => expect(isSecretKey(key)).toBe(false));
});

describe('redactForeignPayload', () => {
  it('masks secret keys, known secret values and bearer tokens, and keeps token counts', () => {
    const { payloadJson, truncated } = redactForeignPayload(
      {
        api_key: 'sk-live-123',
        nested: {
          Authorization: 'Bearer abc.def',
          note: 'uses sk-ant-api03-XYZ and my-gateway-token-42',
        },
        usage: { input_tokens: 10, token: 'tok_1' },
        token_count: 7,
      },
      { secrets: ['my-gateway-token-42'] },
    );
    expect(truncated).toBe(false);
    const parsed = JSON.parse(payloadJson) as Record<string, Record<string, unknown>>;
    expect(parsed.api_key).toBe('[redacted]');
    expect(parsed.nested?.Authorization).toBe('[redacted]');
    expect(parsed.nested?.note).toBe('uses [redacted] and [redacted]');
    expect(parsed.usage).toEqual({ input_tokens: 10, token: '[redacted]' });
    expect(parsed.token_count).toBe(7);
    expect(payloadJson).not.toMatch(/sk-live|sk-ant|abc\.def|gateway-token|tok_1/);
  });

  it('keeps a big payload under 8 KiB as valid JSON and marks it truncated', () => {
    const big = {
      type: 'agent.blob',
      items: Array.from({ length: 500 }, (_, i) => ({ i, text: 'x'.repeat(200) })),
      tail: 'y'.repeat(20_000),
    };
    const { payloadJson, truncated } = redactForeignPayload(big);
    expect(truncated).toBe(true);
    expect(byteLength(payloadJson)).toBeLessThanOrEqual(FOREIGN_PAYLOAD_MAX_BYTES);
    const parsed = JSON.parse(payloadJson) as { type: string; items: unknown[] };
    expect(parsed.type).toBe('agent.blob');
    expect(parsed.items.at(-1)).toMatch(/more$/);
  });

  it('falls back to a preview envelope when even the smallest shape does not fit', () => {
    const wide = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`k${i}-${'x'.repeat(50)}`, 'v'.repeat(100)]),
    );
    const { payloadJson, truncated } = redactForeignPayload(wide, { maxBytes: 64 });
    expect(truncated).toBe(true);
    expect(byteLength(payloadJson)).toBeLessThanOrEqual(64);
    expect(JSON.parse(payloadJson)).toMatchObject({ truncated: true });
  });

  it('keeps keys apart that cut to the same text', () => {
    const keys = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`a-rather-long-key-${i}`, i]),
    );
    const parsed = JSON.parse(redactForeignPayload(keys, { maxBytes: 300 }).payloadJson) as Record<
      string,
      unknown
    >;
    expect(Object.keys(parsed).filter((k) => k !== '…').length).toBeGreaterThan(1);
    expect(parsed['…']).toMatch(/^\d+ more keys$/);
  });

  it('counts bytes, not characters, for multi-byte text', () => {
    const { payloadJson } = redactForeignPayload({ text: '€'.repeat(5000) }, { maxBytes: 1024 });
    expect(byteLength(payloadJson)).toBeLessThanOrEqual(1024);
    expect(() => JSON.parse(payloadJson) as unknown).not.toThrow();
  });
});

describe('scrubSecrets', () => {
  const secret = 'sk-ant-"quoted\\secret';

  it('replaces a secret in any nested string, even one JSON would escape', () => {
    const drafts = [
      { type: 'LOG', lines: ['ok', { text: `key=${secret}!` }] },
      { type: 'LOG', message: 'clean' },
    ];
    const scrubbed = scrubSecrets(drafts, [secret]);
    expect(JSON.stringify(scrubbed)).not.toContain('quoted');
    expect(scrubbed[0]).toEqual({ type: 'LOG', lines: ['ok', { text: `key=${REDACTED}!` }] });
    expect(scrubbed[1]).toEqual({ type: 'LOG', message: 'clean' });
  });

  it('returns the same value, uncopied, when no string mentions a secret', () => {
    const drafts = [{ type: 'LOG', lines: ['sk-ant', { n: 1, text: null }] }];
    expect(scrubSecrets(drafts, [secret, 'abc'])).toBe(drafts);
    // Secrets shorter than four characters are never looked for.
    expect(scrubSecrets(drafts, ['sk'])).toBe(drafts);
  });
});
