/**
 * Sizes beyond GraphQL `Int` (issue 8): a file over 2 GiB - 1 (recorded over the cap with its real
 * size) must neither break serialisation nor be reported with a wrong size.
 */
import { GraphQLInt } from 'graphql';
import { describe, expect, it } from 'vitest';
import { MAX_CHECKPOINT_FILES } from '../../protocol/contract.ts';
import { eventFilesFor } from '../../server/engine/checkpointContent.ts';
import { checkpointFileView } from '../../server/schema/views.ts';
import type { ManifestFile } from '../../server/workspace/manifest.ts';

const HUGE = 3 * 1024 ** 3 + 7; // 3 GiB and 7 bytes
const file = (path: string, byteLength: number, overCap = false): ManifestFile => ({
  target: 'SERVER',
  path,
  contentHash: `sha256:${'a'.repeat(64)}`,
  byteLength,
  ...(overCap ? { notCaptured: 'OVER_CAP' as const } : {}),
});

describe('a file larger than a GraphQL Int', () => {
  const huge = file('media/disk.img', HUGE, true);

  it('is a plain Int the schema refuses, which is why it needs a BigInt beside it', () => {
    expect(() => GraphQLInt.serialize(HUGE)).toThrow(/32-bit/);
  });

  it('is paged with byteLength saturated at Int max and the exact size as a decimal string', () => {
    const view = checkpointFileView(huge);
    expect(view.size).toBe('3221225479');
    expect(view.byteLength).toBe(2_147_483_647);
    expect(GraphQLInt.serialize(view.byteLength)).toBe(2_147_483_647);
    // Everyday sizes are untouched.
    expect(checkpointFileView(file('a.ts', 12))).toMatchObject({ byteLength: 12, size: '12' });
  });

  it('is left out of the event files and counted as omitted; the total stays exact', () => {
    const small = file('src/a.ts', 10);
    const event = eventFilesFor([], [huge, small]);
    expect(event.files.map((f) => f.path)).toEqual(['src/a.ts']);
    expect(event.studioFilesOmitted).toBe(1);
    expect(event.studioTotalBytes).toBe(String(HUGE + 10));
    for (const f of event.files) expect(() => GraphQLInt.serialize(f.byteLength)).not.toThrow();
  });

  it('counts both the cut at 128 and the unlistable files as omitted', () => {
    const many = Array.from({ length: 200 }, (_, i) => file(`f/${String(i).padStart(3, '0')}`, i));
    const event = eventFilesFor([], [huge, ...many]);
    expect(event.files).toHaveLength(MAX_CHECKPOINT_FILES);
    expect(event.studioFilesOmitted).toBe(201 - MAX_CHECKPOINT_FILES);
  });
});
