import { describe, expect, it } from 'vitest';
import { compareFiles } from './compareFiles.ts';

const file = (path: string, hash: string, target = 'SERVER', byteLength = 10) => ({
  target,
  path,
  contentHash: hash,
  byteLength,
});

describe('compareFiles', () => {
  it('sorts files into added, removed, changed and unchanged by hash', () => {
    const result = compareFiles(
      [file('a.ts', 'h1'), file('b.ts', 'h2'), file('c.ts', 'h3')],
      [file('a.ts', 'h1'), file('b.ts', 'h9'), file('d.ts', 'h4')],
    );
    expect(result.counts).toEqual({ added: 1, removed: 1, changed: 1, unchanged: 1 });
    expect(result.rows.map((row) => [row.path, row.change])).toEqual([
      ['a.ts', 'unchanged'],
      ['b.ts', 'changed'],
      ['c.ts', 'removed'],
      ['d.ts', 'added'],
    ]);
  });

  it('treats the same path on another target as another file', () => {
    const result = compareFiles([file('x.lua', 'h1', 'SERVER')], [file('x.lua', 'h1', 'CLIENT')]);
    expect(result.counts).toEqual({ added: 1, removed: 1, changed: 0, unchanged: 0 });
  });
});
