/**
 * Reading a foreign write tool's proposal as file changes (real temp folder): edits applied as
 * the tools apply them, MultiEdit in order, paths outside the project get no diff.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  applyEdits,
  boundArgumentHash,
  claudeCodeFileChanges,
  leviathFileChanges,
} from '../../server/sources/proposedFileChanges.ts';
import { foreignArgumentHash } from '../../server/sources/redact.ts';

const root = mkdtempSync(join(tmpdir(), 'studio-changes-'));
mkdirSync(join(root, 'src'));
writeFileSync(join(root, 'src', 'a.ts'), 'const a = 1;\nconst b = 1;\n');
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('proposed file changes', () => {
  it('MultiEdit applies its edits in order, replace_all replacing every occurrence', () => {
    expect(
      claudeCodeFileChanges(root, 'MultiEdit', {
        file_path: join(root, 'src', 'a.ts'),
        edits: [
          { old_string: '= 1', new_string: '= 2', replace_all: true },
          { old_string: 'const b = 2;', new_string: 'let b = 3;' },
        ],
      }),
    ).toEqual([{ path: 'src/a.ts', content: 'const a = 2;\nlet b = 3;\n' }]);
  });

  it('an edit whose old text is absent or not unique gives no change (the tool would fail)', () => {
    const file_path = join(root, 'src', 'a.ts');
    expect(
      claudeCodeFileChanges(root, 'Edit', { file_path, old_string: '= 1', new_string: '= 2' }),
    ).toEqual([]);
    expect(
      claudeCodeFileChanges(root, 'Edit', { file_path, old_string: 'nope', new_string: 'x' }),
    ).toEqual([]);
    expect(applyEdits(null, [{ oldText: '', newText: 'new file', all: false }])).toBe('new file');
  });

  it('paths outside the project folder get no diff', () => {
    expect(claudeCodeFileChanges(root, 'Write', { file_path: '/etc/hosts', content: 'x' })).toEqual(
      [],
    );
    expect(
      leviathFileChanges(root, join(root, 'src'), 'write_file', { path: '../../x', content: 'x' }),
    ).toEqual([]);
    expect(claudeCodeFileChanges(root, 'Read', { file_path: join(root, 'src', 'a.ts') })).toEqual(
      [],
    );
  });

  it('Leviath paths are relative to the run folder, the workspace when unknown', () => {
    expect(
      leviathFileChanges(root, join(root, 'src'), 'write_file', { path: 'b.ts', content: 'b' }),
    ).toEqual([{ path: 'src/b.ts', content: 'b' }]);
    expect(
      leviathFileChanges(root, null, 'edit_file', {
        path: 'src/a.ts',
        old_str: 'const a',
        new_str: 'let a',
      }),
    ).toEqual([{ path: 'src/a.ts', content: 'let a = 1;\nconst b = 1;\n' }]);
  });

  it('the bound hash is the bare input hash without targets, and depends on each target hash', () => {
    const input = { path: 'a' };
    expect(boundArgumentHash('t', input, [])).toBe(foreignArgumentHash('t', input));
    const one = boundArgumentHash('t', input, [{ path: 'a', contentHash: 'sha256:1' }]);
    const two = boundArgumentHash('t', input, [{ path: 'a', contentHash: 'sha256:2' }]);
    expect(one).not.toBe(two);
    expect(one).not.toBe(foreignArgumentHash('t', input));
  });
});
