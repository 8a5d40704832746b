/** Stable failure codes of the workspace layer; the engine maps them onto contract error codes. */
export type WorkspaceErrorCode =
  | 'PATH_INVALID'
  | 'NOT_FOUND'
  | 'HASH_MISMATCH'
  | 'TOO_LARGE'
  | 'TOO_MANY_FILES'
  | 'JOURNAL_CORRUPT'
  | 'IO';

/**
 * An expected failure of the project-folder or checkpoint layer.
 *
 * Messages name project-relative paths only, never absolute paths of the machine, so they are
 * safe to show to a client. `path` is set when one file is to blame (for example the file whose
 * `expectedContentHash` did not match).
 */
export class WorkspaceError extends Error {
  readonly code: WorkspaceErrorCode;
  readonly path: string | undefined;

  constructor(
    code: WorkspaceErrorCode,
    message: string,
    options: { path?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WorkspaceError';
    this.code = code;
    this.path = options.path;
  }
}
