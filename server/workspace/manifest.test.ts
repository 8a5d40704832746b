import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  canonicalEntry,
  canonicalEntryReference,
  canonicalManifestHash,
  diffManifests,
  sortManifest,
  validateRelativePath,
  type ManifestFile,
} from './manifest.ts';
import { WorkspaceError } from './WorkspaceError.ts';

const h = (c: string) => 'sha256:' + c.repeat(64);

const FIXED: ManifestFile[] = [
  { target: 'SERVER', path: 'src/index.ts', contentHash: h('b'), byteLength: 42 },
  { target: 'CLIENT', path: 'main.js', contentHash: h('c'), byteLength: 7 },
  { target: 'SERVER', path: 'README.md', contentHash: h('a'), byteLength: 0 },
];

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof WorkspaceError ? err.code : 'not a WorkspaceError';
  }
  return undefined;
}

describe('canonicalManifestHash', () => {
  it('hashes the documented canonical JSON, computed independently here', () => {
    const text =
      '{"files":[' +
      `{"byteLength":7,"contentHash":"${h('c')}","path":"main.js","target":"CLIENT"},` +
      `{"byteLength":0,"contentHash":"${h('a')}","path":"README.md","target":"SERVER"},` +
      `{"byteLength":42,"contentHash":"${h('b')}","path":"src/index.ts","target":"SERVER"}` +
      ']}';
    const expected = 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex');
    expect(canonicalManifestHash(FIXED)).toBe(expected);
    // Pinned (also computed with Python's json + hashlib) so a change to the recipe is deliberate.
    expect(expected).toBe(
      'sha256:d9e43b6f90d9bea9a7c18957d4116101d33211825a1351041e7528bda6ea7268',
    );
  });

  it('ignores input order and extra fields such as __typename', () => {
    const shuffled = [
      FIXED[2]!,
      FIXED[0]!,
      { ...FIXED[1]!, __typename: 'AgentCheckpointFile' } as ManifestFile,
    ];
    expect(canonicalManifestHash(shuffled)).toBe(canonicalManifestHash(FIXED));
  });

  it('changes when one byte of identity changes', () => {
    const edited = FIXED.map((f) => (f.path === 'README.md' ? { ...f, byteLength: 1 } : f));
    expect(canonicalManifestHash(edited)).not.toBe(canonicalManifestHash(FIXED));
  });

  it('hashes the empty project as {"files":[]}', () => {
    expect(canonicalManifestHash([])).toBe(
      'sha256:' + createHash('sha256').update('{"files":[]}').digest('hex'),
    );
  });
});

describe('canonicalEntry', () => {
  it('writes exactly the generic canonical JSON for every field combination and odd names', () => {
    const paths = [
      'a.ts',
      'dir/sub/b c.md',
      'quote"back\\slash',
      'tab\tnl\n',
      'é/ü/日本',
      '\u2028x',
    ];
    const hash = `sha256:${'0'.repeat(64)}`;
    for (const path of paths)
      for (const extra of [
        {},
        { executable: true as const },
        { kind: 'SYMLINK' as const },
        { notCaptured: 'OVER_CAP' as const },
        { executable: true as const, notCaptured: 'OVER_CAP' as const },
      ])
        for (const byteLength of [0, 1, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
          const f = { target: 'SERVER' as const, path, contentHash: hash, byteLength, ...extra };
          expect(canonicalEntry(f)).toBe(canonicalEntryReference(f));
        }
  });

  it('refuses a size that is not a safe integer, as the generic form does', () => {
    const f = { target: 'SERVER' as const, path: 'a', contentHash: 'sha256:x', byteLength: 1.5 };
    expect(() => canonicalEntry(f)).toThrow(TypeError);
    expect(() => canonicalEntryReference(f)).toThrow(TypeError);
  });
});

describe('sortManifest', () => {
  it('orders by target, then path in code-unit order (uppercase before lowercase)', () => {
    const files = ['b.ts', 'a/z.ts', 'B.ts', 'a.ts', 'a-b.ts'].map((path): ManifestFile => ({
      target: 'SERVER',
      path,
      contentHash: h('0'),
      byteLength: 1,
    }));
    files.push({ target: 'CLIENT', path: 'z.ts', contentHash: h('0'), byteLength: 1 });
    expect(sortManifest(files).map((f) => `${f.target}:${f.path}`)).toEqual([
      'CLIENT:z.ts',
      'SERVER:B.ts',
      'SERVER:a-b.ts',
      'SERVER:a.ts',
      'SERVER:a/z.ts',
      'SERVER:b.ts',
    ]);
  });
});

describe('diffManifests', () => {
  it('classifies added, removed, changed and unchanged files by target and path', () => {
    const from: ManifestFile[] = [
      { target: 'SERVER', path: 'keep', contentHash: h('1'), byteLength: 1 },
      { target: 'SERVER', path: 'edit', contentHash: h('2'), byteLength: 2 },
      { target: 'SERVER', path: 'gone', contentHash: h('3'), byteLength: 3 },
      { target: 'CLIENT', path: 'keep', contentHash: h('1'), byteLength: 1 },
    ];
    const to: ManifestFile[] = [
      { target: 'SERVER', path: 'new', contentHash: h('4'), byteLength: 4 },
      { target: 'SERVER', path: 'edit', contentHash: h('5'), byteLength: 2 },
      { target: 'SERVER', path: 'keep', contentHash: h('1'), byteLength: 1 },
      { target: 'CLIENT', path: 'gone', contentHash: h('3'), byteLength: 3 },
    ];
    const diff = diffManifests(from, to);
    expect(diff.added.map((f) => `${f.target}:${f.path}`)).toEqual(['CLIENT:gone', 'SERVER:new']);
    expect(diff.removed.map((f) => `${f.target}:${f.path}`)).toEqual([
      'CLIENT:keep',
      'SERVER:gone',
    ]);
    expect(diff.changed).toEqual([{ path: 'edit', target: 'SERVER', from: from[1], to: to[1] }]);
    expect(diff.unchanged.map((f) => f.path)).toEqual(['keep']);
  });
});

describe('validateRelativePath', () => {
  it.each(['README.md', 'src/index.ts', 'a/b/c.d.ts', '.env.example', 'x'.repeat(256)])(
    'accepts %j',
    (path) => {
      expect(validateRelativePath(path)).toBe(path);
    },
  );

  it.each([
    '',
    '../x',
    '/etc/passwd',
    'a/../../b',
    'a/..',
    './a',
    'a/./b',
    'a\\b',
    '..\\x',
    'a//b',
    'a/',
    'C:/x',
    'a\u0000b',
    'a\nb',
    'a\u007fb',
    'x'.repeat(257),
  ])('refuses %j with PATH_INVALID', (path) => {
    expect(codeOf(() => validateRelativePath(path))).toBe('PATH_INVALID');
  });
});
