/**
 * Per-file restore (issue 11): which files a restore of only some paths writes. A selected path
 * is a file or a folder (every file under it); for each selected file the checkpoint's version
 * comes back (or the file goes, when the checkpoint lacks it), and every other file stays as it
 * is now. The result is a whole manifest, so the workspace's one atomic restore applies it.
 */
import { ErrorCode } from '../../protocol/contract.ts';
import { StudioError } from './StudioError.ts';

/** The most paths one restore may name. */
export const RESTORE_PATHS_MAX = 1000;

/**
 * The selection as the argument hash covers it: trimmed of trailing slashes, sorted, without
 * duplicates. Null (restore everything) when `paths` is null or undefined. Refuses an empty
 * list, absolute paths, `..` and empty segments with BAD_USER_INPUT.
 */
export function normalizeRestorePaths(
  paths: readonly string[] | null | undefined,
): string[] | null {
  if (paths === null || paths === undefined) return null;
  if (paths.length === 0)
    throw new StudioError(
      ErrorCode.BAD_REQUEST,
      'paths is empty: leave it out to restore every file.',
      {
        field: 'paths',
      },
    );
  if (paths.length > RESTORE_PATHS_MAX)
    throw new StudioError(
      ErrorCode.BAD_REQUEST,
      `paths names more than ${RESTORE_PATHS_MAX} entries.`,
      {
        field: 'paths',
      },
    );
  const out = new Set<string>();
  for (const raw of paths) {
    const path = raw.replace(/\/+$/, '');
    const segments = path.split('/');
    if (!path || path.startsWith('/') || segments.some((s) => s === '' || s === '.' || s === '..'))
      throw new StudioError(
        ErrorCode.BAD_REQUEST,
        `paths: "${raw}" is not a project-relative path.`,
        {
          field: 'paths',
        },
      );
    out.add(path);
  }
  return [...out].sort();
}

const selects = (paths: readonly string[], file: string) =>
  paths.some((p) => file === p || file.startsWith(`${p}/`));

/**
 * The manifest a restore of `paths` makes, from the files now (`current`) and the checkpoint's
 * (`target`). Refuses a selection that touches no file of either.
 */
export function selectedManifest<F extends { path: string }>(
  current: readonly F[],
  target: readonly F[],
  paths: readonly string[],
): F[] {
  const kept = current.filter((f) => !selects(paths, f.path));
  const restored = target.filter((f) => selects(paths, f.path));
  if (restored.length === 0 && kept.length === current.length)
    throw new StudioError(
      ErrorCode.BAD_REQUEST,
      'paths selects no file of the checkpoint or the project.',
      {
        field: 'paths',
      },
    );
  return [...kept, ...restored].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
