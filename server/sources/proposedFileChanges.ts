/**
 * The files a foreign agent's write tool would change, read from its proposal, so the card can
 * show the server's line diff before anyone approves (`SourceHost.proposalDiff`):
 * - Claude Code: `Write {file_path, content}`, `Edit {file_path, old_string, new_string,
 *   replace_all?}`, `MultiEdit {file_path, edits: [{old_string, new_string, replace_all?}]}`
 *   (absolute paths);
 * - Leviath: `write_file {path, content}`, `edit_file {path, old_str, new_str}` (paths relative
 *   to the run's working folder).
 * An edit's new content is the file on disk with the edit applied, exactly as the tool applies it
 * (an old string that is absent, or not unique without `replace_all`, makes the tool fail: no
 * diff then). Paths outside the project folder get no diff (the studio does not show or bind
 * files it does not checkpoint).
 *
 * What the diff was made against is bound into the argument hash (`boundArgumentHash`): the same
 * input over another file content is another hash, and the engine refuses (and revokes) an
 * approval whose target changed since.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { DiffTarget, ProposedFileChange } from '../engine/proposalDiff.ts';
import type { ProposalDiffValue } from '../engine/eventDrafts.ts';
import type { Logger } from '../logger.ts';
import { foreignArgumentHash } from './redact.ts';
import type { SourceHost } from './Source.ts';

interface Edit {
  oldText: string;
  newText: string;
  all: boolean;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** `abs` as a project-relative path with '/' separators, or null when outside `root`. */
function inProject(root: string, abs: string): string | null {
  const rel = relative(root, abs);
  if (!rel || rel.startsWith('..') || isAbsolute(rel)) return null;
  return rel.split(sep).join('/');
}

function readText(root: string, path: string): string | null {
  try {
    return readFileSync(resolve(root, path), 'utf8');
  } catch {
    return null;
  }
}

/** The file after the edits, applied in order as the tools do; null when one cannot apply. */
export function applyEdits(current: string | null, edits: readonly Edit[]): string | null {
  let text = current;
  for (const edit of edits) {
    if (text === null) {
      // Creating a file with an empty old string (Claude Code's Edit allows it).
      if (edit.oldText !== '') return null;
      text = edit.newText;
      continue;
    }
    if (edit.oldText === '') return null;
    const first = text.indexOf(edit.oldText);
    if (first < 0) return null;
    if (edit.all) {
      text = text.split(edit.oldText).join(edit.newText);
    } else {
      if (text.indexOf(edit.oldText, first + edit.oldText.length) >= 0) return null;
      text = text.slice(0, first) + edit.newText + text.slice(first + edit.oldText.length);
    }
  }
  return text;
}

function change(root: string, abs: string, content: string | Edit[]): ProposedFileChange[] {
  const path = inProject(root, abs);
  if (path === null) return [];
  const after = typeof content === 'string' ? content : applyEdits(readText(root, path), content);
  return after === null ? [] : [{ path, content: after }];
}

/** Claude Code's Write / Edit / MultiEdit as file changes under `root` (empty for other tools). */
export function claudeCodeFileChanges(
  root: string,
  toolName: string,
  input: Record<string, unknown>,
): ProposedFileChange[] {
  const filePath = str(input.file_path);
  if (!filePath) return [];
  const abs = resolve(root, filePath);
  const edit = (e: Record<string, unknown>): Edit | null => {
    const oldText = str(e.old_string);
    const newText = str(e.new_string);
    return oldText === null || newText === null
      ? null
      : { oldText, newText, all: e.replace_all === true };
  };
  if (toolName === 'Write') {
    const content = str(input.content);
    return content === null ? [] : change(root, abs, content);
  }
  if (toolName === 'Edit') {
    const e = edit(input);
    return e ? change(root, abs, [e]) : [];
  }
  if (toolName === 'MultiEdit' && Array.isArray(input.edits)) {
    const edits = input.edits.map((e) =>
      typeof e === 'object' && e !== null ? edit(e as Record<string, unknown>) : null,
    );
    return edits.every((e): e is Edit => e !== null) && edits.length > 0
      ? change(root, abs, edits)
      : [];
  }
  return [];
}

/**
 * Leviath's write_file / edit_file as file changes under the workspace `root`; `workdir` is the
 * run's working folder its relative paths start from (the workspace when unknown).
 */
export function leviathFileChanges(
  root: string,
  workdir: string | null,
  toolName: string,
  input: unknown,
): ProposedFileChange[] {
  if (typeof input !== 'object' || input === null) return [];
  const args = input as Record<string, unknown>;
  const path = str(args.path);
  if (!path) return [];
  const abs = resolve(workdir ?? root, path);
  if (toolName === 'write_file') {
    const content = str(args.content);
    return content === null ? [] : change(root, abs, content);
  }
  if (toolName === 'edit_file') {
    const oldText = str(args.old_str);
    const newText = str(args.new_str);
    return oldText === null || newText === null
      ? []
      : change(root, abs, [{ oldText, newText, all: false }]);
  }
  return [];
}

/**
 * The argument hash of a foreign call: `foreignArgumentHash(name, input)`, and when a diff was
 * shown, over `{name, input, diffTargets}` (each target path with the content hash it had).
 */
export function boundArgumentHash(
  name: string,
  input: unknown,
  targets: readonly DiffTarget[] | null | undefined,
): string {
  if (!targets || targets.length === 0) return foreignArgumentHash(name, input);
  return foreignArgumentHash(name, { input: input ?? null, diffTargets: targets });
}

export interface ProposalDiffed {
  diff: ProposalDiffValue;
  targets: DiffTarget[];
}

/**
 * Each call's diff, made once (the first of the runtime's notices of the call makes it; a later
 * one reuses it, so the proposal and the approval carry the same diff and hash). A host without
 * `proposalDiff`, a session without a project, or a failing read yields no diff: the ask goes on.
 */
export class ProposalDiffs {
  private readonly known = new Map<string, ProposalDiffed | null>();

  constructor(private readonly logger?: Logger) {}

  of(
    host: SourceHost | null,
    sessionId: string,
    toolCallId: string,
    changes: () => ProposedFileChange[],
  ): ProposalDiffed | null {
    if (this.known.has(toolCallId)) return this.known.get(toolCallId) ?? null;
    let diffed: ProposalDiffed | null = null;
    try {
      const files = changes();
      if (files.length > 0 && host?.proposalDiff) diffed = host.proposalDiff(sessionId, files);
    } catch (error) {
      (this.logger ?? host?.logger)?.warn('could not diff a proposed write', {
        toolCallId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
    this.known.set(toolCallId, diffed);
    while (this.known.size > MAX_REMEMBERED) {
      const oldest = this.known.keys().next().value;
      if (oldest === undefined) break;
      this.known.delete(oldest);
    }
    return diffed;
  }
}

const MAX_REMEMBERED = 512;
