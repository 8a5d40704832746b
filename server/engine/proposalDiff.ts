/**
 * The line diff a reviewer sees before approving a call that writes files: each proposed change
 * (new content, or null for a delete) against the file on disk, computed on the server with the
 * `diff` library (jsdiff), bounded (lines and bytes per file and in all), and carried on the
 * TOOL_PROPOSED event as text the web app renders with SafeText.
 *
 * What the diff was computed against is part of what the argument hash binds (`diffTargets`):
 * each path with the content hash it had on disk. A decision on a call whose target changed since
 * is refused (and the approval revoked), so nobody approves a diff that is no longer true.
 */
import { structuredPatch } from 'diff';
import type { ProposalDiffFileValue, ProposalDiffValue } from './eventDrafts.ts';
import { sha256Digest } from '../workspace/manifest.ts';

export const DIFF_MAX_LINES_PER_FILE = 400;
export const DIFF_MAX_BYTES = 48 * 1024;
export const DIFF_MAX_FILES = 16;
/** Files larger than this are compared by hash only (no line diff). */
export const DIFF_MAX_INPUT_BYTES = 256 * 1024;

export interface ProposedFileChange {
  path: string;
  /** The new content; null deletes the file. */
  content: string | null;
}

/** The file on disk as the diff sees it: its text (null when absent) and manifest hash. */
export interface DiskFile {
  text: string | null;
  contentHash: string | null;
  /** Too large or not text: compared by hash only. */
  opaque: boolean;
}

/** One target of the hash binding: a path and the content hash it had when the diff was made. */
export interface DiffTarget {
  path: string;
  contentHash: string | null;
}

function looksBinary(text: string): boolean {
  return text.includes('\u0000') || text.includes('\uFFFD');
}

function textHash(text: string): string {
  return sha256Digest(Buffer.from(text, 'utf8'));
}

/** Computes the bounded diff of `changes` against `read(path)`, and the targets it binds. */
export function computeProposalDiff(
  changes: readonly ProposedFileChange[],
  read: (path: string) => DiskFile,
): { diff: ProposalDiffValue; targets: DiffTarget[] } {
  const files: ProposalDiffFileValue[] = [];
  const targets: DiffTarget[] = [];
  let budget = DIFF_MAX_BYTES;
  let truncatedAll = changes.length > DIFF_MAX_FILES;
  for (const change of changes.slice(0, DIFF_MAX_FILES)) {
    const disk = read(change.path);
    targets.push({ path: change.path, contentHash: disk.contentHash });
    const after = change.content;
    const opaque =
      disk.opaque ||
      (after !== null &&
        (Buffer.byteLength(after, 'utf8') > DIFF_MAX_INPUT_BYTES || looksBinary(after)));
    const base = {
      path: change.path,
      beforeHash: disk.contentHash,
      afterHash: after === null ? null : textHash(after),
    };
    if (opaque) {
      files.push({ ...base, added: 0, removed: 0, hunks: '', truncated: true, binary: true });
      continue;
    }
    const patch = structuredPatch(
      change.path,
      change.path,
      disk.text ?? '',
      after ?? '',
      undefined,
      undefined,
      { context: 3 },
    );
    let added = 0;
    let removed = 0;
    const lines: string[] = [];
    for (const hunk of patch.hunks) {
      lines.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`);
      for (const line of hunk.lines) {
        if (line.startsWith('+')) added += 1;
        else if (line.startsWith('-')) removed += 1;
        lines.push(line);
      }
    }
    let truncated = false;
    let kept = lines;
    if (kept.length > DIFF_MAX_LINES_PER_FILE) {
      kept = kept.slice(0, DIFF_MAX_LINES_PER_FILE);
      truncated = true;
    }
    let hunks = kept.join('\n');
    if (Buffer.byteLength(hunks, 'utf8') > budget) {
      hunks = Buffer.from(hunks, 'utf8')
        .subarray(0, Math.max(0, budget))
        .toString('utf8')
        .replace(/\uFFFD$/, '');
      truncated = true;
    }
    budget -= Buffer.byteLength(hunks, 'utf8');
    if (truncated) truncatedAll = true;
    files.push({ ...base, added, removed, hunks, truncated, binary: false });
  }
  return { diff: { files, truncated: truncatedAll }, targets };
}
