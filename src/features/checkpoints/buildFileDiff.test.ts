import { describe, expect, it } from 'vitest';
import { buildFileDiff, decodeText, DIFF_MAX_BYTES, DIFF_MAX_LINES } from './buildFileDiff.ts';

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('decodeText', () => {
  it('decodes UTF-8 and keeps a byte order mark', () => {
    expect(decodeText(utf8('héllo ✓'))).toBe('héllo ✓');
    expect(decodeText(new Uint8Array([0xef, 0xbb, 0xbf, 0x61]))).toBe('\uFEFFa');
  });

  it('calls bytes with a NUL or invalid UTF-8 binary', () => {
    expect(decodeText(new Uint8Array([0x61, 0x00, 0x62]))).toBeNull();
    expect(decodeText(new Uint8Array([0x61, 0xff, 0x62]))).toBeNull();
    expect(decodeText(new Uint8Array([0xc3]))).toBeNull();
  });
});

describe('buildFileDiff', () => {
  it('diffs two text versions by line', () => {
    const model = buildFileDiff(utf8('a\nb\n'), utf8('a\nc\n'));
    expect(model.kind).toBe('text');
    if (model.kind !== 'text') return;
    expect(model.lines.map((l) => [l.kind, l.text])).toEqual([
      ['context', 'a'],
      ['removed', 'b'],
      ['added', 'c'],
    ]);
  });

  it('shows an added file whole as added and a removed one whole as removed', () => {
    const added = buildFileDiff(null, utf8('x\ny\n'));
    expect(added.kind === 'text' && added.lines.map((l) => l.kind)).toEqual(['added', 'added']);
    const removed = buildFileDiff(utf8('x\n'), null);
    expect(removed.kind === 'text' && removed.removed).toBe(1);
  });

  it('refuses binary content on either side', () => {
    expect(buildFileDiff(utf8('text\n'), new Uint8Array([1, 0, 2])).kind).toBe('binary');
    expect(buildFileDiff(new Uint8Array([0xfe]), null).kind).toBe('binary');
  });

  it('refuses files over the byte or line limit', () => {
    const big = new Uint8Array(DIFF_MAX_BYTES + 1).fill(0x61);
    expect(buildFileDiff(utf8('a'), big)).toEqual({
      kind: 'tooLarge',
      bytes: DIFF_MAX_BYTES + 1,
      lines: null,
    });
    const many = utf8('x\n'.repeat(DIFF_MAX_LINES + 1));
    expect(buildFileDiff(many, utf8('x\n'))).toMatchObject({
      kind: 'tooLarge',
      lines: DIFF_MAX_LINES + 1,
    });
    expect(buildFileDiff(utf8('x\n'.repeat(DIFF_MAX_LINES)), utf8('y\n')).kind).toBe('text');
  });
});
