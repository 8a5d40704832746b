import { useMemo, useState } from 'react';
import { StudioHttpError } from '../../graphql/studioHttp.ts';
import { DiffTable } from '../../ui/DiffTable.tsx';
import { toDiffRows } from '../../ui/diffLines.ts';
import { SafeText, toVisibleText } from '../../ui/SafeText.tsx';
import {
  buildFileDiff,
  DIFF_MAX_BYTES,
  DIFF_MAX_LINES,
  tooLargeToDiff,
  type FileDiffModel,
} from './buildFileDiff.ts';
import type { ManifestFile } from './compareFiles.ts';
import { formatBytes, shortHash } from './format.ts';
import { useBlobContent } from './useBlobContent.ts';

const small =
  'rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-blue-600 dark:border-slate-600 dark:hover:bg-slate-800';

const LIMITS = `the limit is ${formatBytes(DIFF_MAX_BYTES)} or ${DIFF_MAX_LINES.toLocaleString('en')} lines per version`;

function failureText(error: unknown, file: ManifestFile, side: string): string {
  if (error instanceof StudioHttpError) {
    switch (error.kind) {
      case 'unauthorized':
        return `The server did not accept this tab’s token (${error.status}), so the file contents cannot be shown. Open the address printed by npm start to get a current token.`;
      case 'notFound':
        return `The server has no stored content for ${side} (${shortHash(file.contentHash)}, 404), so this version cannot be shown.`;
      case 'badHash':
        return `The content hash of ${side} is not a sha256 hash, so its content cannot be fetched.`;
      case 'http':
      case 'badBody':
        return `Could not load ${side}: ${error.message}`;
    }
  }
  return `Could not load ${side}: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * The line diff of one file between two manifests, fetched by content hash (GET /api/blobs,
 * cached by TanStack Query for good). A missing side (added or removed file) shows the other
 * whole. Large files are refused from the manifest's byte length, before anything is fetched.
 */
export function FileDiff({
  path,
  before,
  after,
  beforeLabel,
  afterLabel,
}: {
  path: string;
  before: ManifestFile | null;
  after: ManifestFile | null;
  beforeLabel: string;
  afterLabel: string;
}) {
  const [showAll, setShowAll] = useState(false);
  const largest = Math.max(before?.byteLength ?? 0, after?.byteLength ?? 0);
  const large = tooLargeToDiff(largest);
  const old = useBlobContent(before?.contentHash ?? null, !large);
  const next = useBlobContent(after?.contentHash ?? null, !large);
  const ready = (!before || old.data !== undefined) && (!after || next.data !== undefined);
  const model = useMemo<FileDiffModel | null>(
    () => (ready && !large ? buildFileDiff(old.data ?? null, next.data ?? null) : null),
    [ready, large, old.data, next.data],
  );
  const rows = useMemo(
    () => (model?.kind === 'text' ? (showAll ? model.lines : toDiffRows(model.lines)) : []),
    [model, showAll],
  );
  const caption = `Line diff of ${toVisibleText(path)}, ${beforeLabel} → ${afterLabel}`;
  const hashes = (
    <span className="font-mono">
      {before ? shortHash(before.contentHash) : 'no file'} →{' '}
      {after ? shortHash(after.contentHash) : 'no file'}
    </span>
  );

  let body;
  if (large) {
    body = (
      <p>
        Too large to diff here ({formatBytes(largest)}; {LIMITS}). Hashes: {hashes}.
      </p>
    );
  } else if (old.error || next.error) {
    const failed = old.error
      ? failureText(old.error, before as ManifestFile, `the version in ${beforeLabel}`)
      : failureText(next.error, after as ManifestFile, `the version in ${afterLabel}`);
    const refused = [old.error, next.error].some(
      (e) => e instanceof StudioHttpError && e.kind !== 'http',
    );
    body = (
      <div role="alert" className="space-y-1 text-red-800 dark:text-red-300">
        <p>
          <SafeText text={failed} />
        </p>
        {refused ? null : (
          <button
            type="button"
            className={small}
            onClick={() => {
              if (old.error) void old.refetch();
              if (next.error) void next.refetch();
            }}
          >
            Try again
          </button>
        )}
      </div>
    );
  } else if (!model) {
    body = <p role="status">Loading both versions…</p>;
  } else if (model.kind === 'binary') {
    body =
      before && after ? (
        <p>Binary file, hashes differ: {hashes}.</p>
      ) : (
        <p>Binary file; its content is not shown as text. Hash: {hashes}.</p>
      );
  } else if (model.kind === 'tooLarge') {
    body = (
      <p>
        Too large to diff here (
        {model.lines === null
          ? formatBytes(model.bytes)
          : `${model.lines.toLocaleString('en')} lines`}
        ; {LIMITS}). Hashes: {hashes}.
      </p>
    );
  } else if (model.lines.length === 0) {
    body = <p>Both versions are empty.</p>;
  } else {
    const hasSkipped = rows.some((row) => row.kind === 'skipped');
    body = (
      <div className="space-y-1">
        <p className="flex flex-wrap items-center gap-3">
          <span>
            <span className="font-semibold text-emerald-800 dark:text-emerald-300">
              +{model.added}
            </span>{' '}
            <span className="font-semibold text-red-800 dark:text-red-300">−{model.removed}</span>{' '}
            lines
            <span className="sr-only">
              : {model.added} added, {model.removed} removed
            </span>
          </span>
          {hasSkipped || showAll ? (
            <button
              type="button"
              className={small}
              aria-pressed={showAll}
              onClick={() => setShowAll((value) => !value)}
            >
              Show all lines
            </button>
          ) : null}
        </p>
        {model.exact ? null : (
          <p className="text-amber-900 dark:text-amber-200">
            The versions differ in too many lines to align them; the changed part is shown removed,
            then added.
          </p>
        )}
        <div className="max-h-[32rem] overflow-auto rounded border border-slate-200 dark:border-slate-700">
          <DiffTable
            rows={rows}
            caption={caption}
            beforeLabel={beforeLabel}
            afterLabel={afterLabel}
          />
        </div>
      </div>
    );
  }

  return (
    <section aria-label={`Diff of ${toVisibleText(path)}`} className="space-y-1 py-1 text-sm">
      {body}
    </section>
  );
}
