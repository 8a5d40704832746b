import { useId, useState } from 'react';
import { useQuery } from 'urql';
import type { ResultOf } from '../../graphql/graphql.ts';
import { SafeText } from '../../ui/SafeText.tsx';
import { ComparisonCounts, ComparisonTable } from './CheckpointCompare.tsx';
import { CheckpointFilesTable } from './CheckpointFilesTable.tsx';
import type { FileChange, FileComparison, FileComparisonRow } from './compareFiles.ts';
import {
  CheckpointChangesQuery,
  CheckpointFilesPageQuery,
  ProjectFilesPageQuery,
} from './documents.ts';

/** Files per page of a manifest or of a comparison. */
export const FILE_PAGE_SIZE = 100;

const small =
  'rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-blue-600 disabled:opacity-50 dark:border-slate-600 dark:hover:bg-slate-800';

/** A stack of cursors: explicit pages, forward and back (the cursor of page n+1 is page n's end). */
function usePages() {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const index = cursors.length - 1;
  return {
    after: cursors[index] ?? null,
    index,
    next: (endCursor: string | null) => setCursors((c) => [...c, endCursor]),
    previous: () => setCursors((c) => (c.length > 1 ? c.slice(0, -1) : c)),
    reset: () => setCursors([null]),
  };
}

function PageControls({
  label,
  index,
  shown,
  total,
  hasNext,
  onPrevious,
  onNext,
}: {
  label: string;
  index: number;
  shown: number;
  total: number;
  hasNext: boolean;
  onPrevious: () => void;
  onNext: () => void;
}) {
  const first = shown === 0 ? 0 : index * FILE_PAGE_SIZE + 1;
  return (
    <nav aria-label={`Pages of ${label}`} className="flex items-center gap-2 text-xs">
      <button type="button" className={small} disabled={index === 0} onClick={onPrevious}>
        Previous page
      </button>
      <span aria-live="polite" className="tabular-nums">
        {first}–{first + shown - (shown === 0 ? 0 : 1)} of {total}
      </span>
      <button type="button" className={small} disabled={!hasNext} onClick={onNext}>
        Next page
      </button>
    </nav>
  );
}

/** Whose files a paged list shows. */
export type FilesSource =
  { kind: 'checkpoint'; checkpointId: string } | { kind: 'project'; sessionId: string };

/**
 * A manifest served a page at a time (`files(first, after, pathPrefix)`): a folder filter that
 * the server applies, previous/next pages, and the page's files in the sortable table.
 */
export function PagedFiles({ source, caption }: { source: FilesSource; caption: string }) {
  const prefixId = useId();
  const [prefix, setPrefix] = useState('');
  const pages = usePages();
  const variables = {
    first: FILE_PAGE_SIZE,
    after: pages.after,
    pathPrefix: prefix === '' ? null : prefix,
  };
  const [checkpointResult] = useQuery({
    query: CheckpointFilesPageQuery,
    variables: {
      ...variables,
      checkpointId: source.kind === 'checkpoint' ? source.checkpointId : '',
    },
    pause: source.kind !== 'checkpoint',
  });
  const [projectResult] = useQuery({
    query: ProjectFilesPageQuery,
    variables: { ...variables, sessionId: source.kind === 'project' ? source.sessionId : '' },
    pause: source.kind !== 'project',
  });
  const result = source.kind === 'checkpoint' ? checkpointResult : projectResult;
  const page =
    source.kind === 'checkpoint'
      ? checkpointResult.data?.studioCheckpoint?.files
      : projectResult.data?.studioProject?.files;
  return (
    <div className="space-y-2">
      <div className="flex flex-wrap items-center gap-2 text-sm">
        <label htmlFor={prefixId}>Folder (path prefix)</label>
        <input
          id={prefixId}
          type="search"
          value={prefix}
          placeholder="src/"
          onChange={(event) => {
            setPrefix(event.target.value);
            pages.reset();
          }}
          className="rounded border border-slate-300 bg-white px-2 py-1 dark:border-slate-600 dark:bg-slate-900"
        />
      </div>
      {result.error ? (
        <p role="alert">
          Could not load the files: <SafeText text={result.error.message} />
        </p>
      ) : !page ? (
        <p role="status">Loading files…</p>
      ) : (
        <>
          <PageControls
            label={caption}
            index={pages.index}
            shown={page.edges.length}
            total={page.totalCount}
            hasNext={page.pageInfo.hasNextPage}
            onPrevious={pages.previous}
            onNext={() => pages.next(page.pageInfo.endCursor)}
          />
          <CheckpointFilesTable files={page.edges.map((e) => e.node)} caption={caption} />
        </>
      )}
    </div>
  );
}

type Changes = NonNullable<
  NonNullable<ResultOf<typeof CheckpointChangesQuery>['studioCheckpoint']>['changes']
>;
type ChangeNode = Changes['edges'][number]['node'];

const CHANGE_OF: Record<string, FileChange | null> = {
  ADDED: 'added',
  REMOVED: 'removed',
  CHANGED: 'changed',
  MODE_CHANGED: 'changed',
  NOT_RESTORABLE: null,
};
const REVERSED: Record<FileChange, FileChange> = {
  added: 'removed',
  removed: 'added',
  changed: 'changed',
  unchanged: 'unchanged',
};

/** One page of changes as the comparison table's rows; `reversed` swaps the two sides. */
function toComparison(changes: Changes, reversed: boolean, totalAfter: number): FileComparison {
  const rows: FileComparisonRow[] = [];
  for (const { node } of changes.edges) {
    const change = CHANGE_OF[node.change];
    if (!change) continue;
    const [before, after] = reversed ? [node.to, node.from] : [node.from, node.to];
    rows.push({
      key: `SERVER\u0000${node.path}`,
      target: (after ?? before)?.target ?? 'SERVER',
      path: node.path,
      change: reversed ? REVERSED[change] : change,
      before: before ?? null,
      after: after ?? null,
    });
  }
  const added = reversed ? changes.removed : changes.added;
  const removed = reversed ? changes.added : changes.removed;
  const changed = changes.changed + changes.modeChanged;
  return {
    rows,
    counts: {
      added,
      removed,
      changed,
      unchanged: Math.max(0, totalAfter - added - changed - changes.notRestorable),
    },
  };
}

/**
 * The changes from one side to the other, a page at a time, computed by the server
 * (`StudioCheckpoint.changes`): counts of all pages, the page's rows with line diffs, paths
 * changed outside the agent and paths a restore cannot put back.
 */
export function PagedChanges({
  checkpointId,
  against,
  reversed = false,
  totalAfter,
  caption,
  labels,
  beforeLabel,
  afterLabel,
  restorePreview = false,
  picked,
  onPick,
}: {
  /** The checkpoint the changes lead to (or, reversed, come from). */
  checkpointId: string;
  /** The other checkpoint; null: the project as it is now. */
  against: string | null;
  reversed?: boolean;
  /** Files on the "after" side, for the unchanged count (null: the checkpoint's own count). */
  totalAfter: number | null;
  caption: string;
  labels?: Record<FileChange, string>;
  beforeLabel: string;
  afterLabel: string;
  restorePreview?: boolean;
  /** Per-file restore: the paths picked so far (across pages), and a toggle. */
  picked?: ReadonlySet<string>;
  onPick?: (path: string) => void;
}) {
  const pages = usePages();
  const [{ data, error }] = useQuery({
    query: CheckpointChangesQuery,
    variables: { checkpointId, against, first: FILE_PAGE_SIZE, after: pages.after },
    requestPolicy: 'cache-and-network',
  });
  if (error)
    return (
      <p role="alert">
        Could not compare: <SafeText text={error.message} />
      </p>
    );
  const checkpoint = data?.studioCheckpoint;
  if (!checkpoint) return <p role="status">Loading files…</p>;
  const changes = checkpoint.changes;
  const comparison = toComparison(changes, reversed, totalAfter ?? checkpoint.fileCount);
  const outside = changes.edges.filter((e) => e.node.changedOutsideAgent).map((e) => e.node);
  const stuck = changes.edges.filter((e) => e.node.change === 'NOT_RESTORABLE').map((e) => e.node);
  return (
    <div className="space-y-2">
      <ComparisonCounts comparison={comparison} {...(labels ? { labels } : {})} />
      {changes.modeChanged > 0 ? (
        <p className="text-xs">
          {changes.modeChanged} of the changed files change only their execute bit.
        </p>
      ) : null}
      {restorePreview && changes.changedOutsideAgent > 0 ? (
        <p role="note" className="text-sm font-medium text-amber-800 dark:text-amber-300">
          {changes.changedOutsideAgent} file(s) changed outside the agent since the last checkpoint;
          the restore throws that work away (it stays in the RESTORE_PREIMAGE).
        </p>
      ) : null}
      {changes.notRestorable > 0 ? (
        <p role="note" className="text-sm font-medium text-red-800 dark:text-red-300">
          {changes.notRestorable} file(s) cannot be put back.
        </p>
      ) : null}
      <PageControls
        label={caption}
        index={pages.index}
        shown={changes.edges.length}
        total={changes.totalCount}
        hasNext={changes.pageInfo.hasNextPage}
        onPrevious={pages.previous}
        onNext={() => pages.next(changes.pageInfo.endCursor)}
      />
      <ComparisonTable
        comparison={comparison}
        caption={caption}
        {...(labels ? { labels } : {})}
        beforeLabel={beforeLabel}
        afterLabel={afterLabel}
        {...(onPick ? { picked, onPick } : {})}
      />
      <PathList
        title="Changed outside the agent (this page)"
        items={outside}
        detail={() => 'changed on disk since the last checkpoint'}
      />
      <PathList
        title="Cannot be put back (this page)"
        items={stuck}
        detail={(n) => n.notRestorableReason ?? 'not restorable'}
      />
    </div>
  );
}

function PathList({
  title,
  items,
  detail,
}: {
  title: string;
  items: ChangeNode[];
  detail: (node: ChangeNode) => string;
}) {
  if (items.length === 0) return null;
  return (
    <section aria-label={title} className="text-xs">
      <h3 className="font-semibold">{title}</h3>
      <ul className="list-inside list-disc">
        {items.map((n) => (
          <li key={n.path}>
            <SafeText text={n.path} className="font-mono" />: {detail(n)}
          </li>
        ))}
      </ul>
    </section>
  );
}
