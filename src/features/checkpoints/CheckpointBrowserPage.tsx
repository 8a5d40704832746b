import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { useQuery } from 'urql';
import { CHECKPOINTS_PAGE_MAX } from '../../../protocol/contract.ts';
import type { ResultOf } from '../../graphql/graphql.ts';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { Link } from '../../ui/router.tsx';
import { SafeText } from '../../ui/SafeText.tsx';
import { ScrollX } from '../../ui/ScrollX.tsx';
import { PagedChanges, PagedFiles } from './CheckpointFilePages.tsx';
import { CheckpointQuery, CheckpointsQuery, ProjectQuery } from './documents.ts';
import { dateTimeOf, formatBytes, REASON_LABEL, shortHash, shortId } from './format.ts';
import { RestoreFlow, type RenderToolCall } from './RestoreFlow.tsx';

const LIST_COLUMNS = [
  'From',
  'To',
  'Checkpoint',
  'Reason',
  'Revision',
  'Created',
  'Content hash',
  'Files',
  'Markers',
  'Actions',
];

type Checkpoint = NonNullable<ResultOf<typeof CheckpointQuery>['studioCheckpoint']>;

/** One side of a comparison: a checkpoint by id, or the project as it is now. */
type Side = { kind: 'checkpoint'; checkpointId: string } | { kind: 'project' };

const PROJECT: Side = { kind: 'project' };
const sameSide = (a: Side | null, b: Side | null) =>
  a !== null &&
  b !== null &&
  (a.kind === 'project'
    ? b.kind === 'project'
    : b.kind === 'checkpoint' && a.checkpointId === b.checkpointId);

/** At most one live re-read of the project and the list per this long. */
const LIVE_REFRESH_MS = 1_000;

const small =
  'rounded border border-slate-300 px-2 py-0.5 text-xs hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-blue-600 disabled:opacity-50 dark:border-slate-600 dark:hover:bg-slate-800';

/**
 * A session's checkpoints (newest first, paged), each checkpoint's files, a comparison of any
 * two of them or of one with the current project, and restore with undo. Restores are approved
 * on the tool-call card that src/app renders through `renderToolCall`.
 */
export function CheckpointBrowserPage({
  sessionId,
  renderToolCall,
  initialRestore = null,
  lastEventSeq = null,
  eventHref = null,
}: {
  sessionId: string;
  renderToolCall: RenderToolCall;
  /** A checkpoint whose restore opens at once (a link such as the history scrubber's). */
  initialRestore?: string | null;
  /**
   * The session's newest seq as the cache keeps it (studioSessionUpdates): when it moves, the
   * current project and the list are read again, so "current" follows the project's events.
   */
  lastEventSeq?: string | null;
  /** The link of an event (what made a checkpoint); src/app builds it. */
  eventHref?: ((seq: string) => string) | null;
}) {
  const headingId = useId();
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [refreshCount, setRefreshCount] = useState(0);
  const [filesOf, setFilesOf] = useState<string | null>(null);
  const [from, setFrom] = useState<Side | null>(null);
  const [to, setTo] = useState<Side | null>(null);
  const [restore, setRestore] = useState<{
    checkpointId: string;
    attempt: number;
    paths?: string[];
  } | null>(() => (initialRestore ? { checkpointId: initialRestore, attempt: 1 } : null));
  const [{ data, fetching, error }] = useQuery({
    query: CheckpointsQuery,
    variables: { sessionId, after: null, first: CHECKPOINTS_PAGE_MAX },
  });
  const [{ data: projectData }, refetchProject] = useQuery({
    query: ProjectQuery,
    variables: { sessionId },
  });
  const project = projectData?.studioProject ?? null;
  const connection = data?.studioCheckpoints;

  const onRestored = useCallback(() => {
    setRefreshCount((count) => count + 1);
    refetchProject({ requestPolicy: 'network-only' });
  }, [refetchProject]);

  // Live: a new event of the session (an agent write, a restore, a checkpoint) reads the project
  // and the list again, at most once per LIVE_REFRESH_MS (a write is a burst of events).
  const seenSeq = useRef(lastEventSeq);
  const liveTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    if (lastEventSeq === null || lastEventSeq === seenSeq.current) return;
    seenSeq.current = lastEventSeq;
    if (liveTimer.current) return;
    liveTimer.current = setTimeout(() => {
      liveTimer.current = null;
      onRestored();
    }, LIVE_REFRESH_MS);
  }, [lastEventSeq, onRestored]);
  useEffect(
    () => () => {
      if (liveTimer.current) clearTimeout(liveTimer.current);
    },
    [],
  );

  // A panel that opens is brought into view (below the list on a narrow screen).
  const panels = useRef<HTMLDivElement>(null);
  const openPanels = `${filesOf ?? ''}|${from ? JSON.stringify(from) : ''}|${to ? JSON.stringify(to) : ''}|${restore ? `${restore.checkpointId}:${restore.attempt}` : ''}`;
  useEffect(() => {
    if (openPanels === '|||') return;
    panels.current?.scrollIntoView?.({ block: 'nearest' });
  }, [openPanels]);

  const startRestore = (checkpointId: string, paths?: string[]) =>
    setRestore((current) => ({
      checkpointId,
      attempt: (current?.attempt ?? 0) + 1,
      ...(paths ? { paths } : {}),
    }));

  return (
    <section aria-labelledby={headingId} className="space-y-4 p-4">
      <header className="space-y-1">
        <h1 id={headingId} className="text-xl font-semibold">
          Checkpoints
        </h1>
        {project ? (
          <p className="flex flex-wrap items-center gap-1 text-sm text-slate-700 dark:text-slate-300">
            Project <SafeText text={project.name} className="font-medium" /> is at revision{' '}
            {project.revision}, content hash{' '}
            <code className="font-mono text-xs" title={project.contentHash}>
              {shortHash(project.contentHash)}
            </code>
            <CopyButton text={project.contentHash} label="project content hash" />
          </p>
        ) : null}
      </header>

      {error ? (
        <p role="alert" className="text-sm text-red-800 dark:text-red-300">
          Could not load checkpoints: <SafeText text={error.message} />
        </p>
      ) : null}
      {!connection && fetching ? <p role="status">Loading checkpoints…</p> : null}
      {connection && !connection.supported ? (
        <p
          role="note"
          className="rounded border border-slate-300 bg-slate-50 p-3 text-sm dark:border-slate-700 dark:bg-slate-900"
        >
          This session has no checkpoints to browse:{' '}
          <SafeText
            text={connection.unsupportedReason ?? 'its source keeps no checkpoint store.'}
          />
        </p>
      ) : null}

      <div className="gap-4 min-[1440px]:grid min-[1440px]:grid-cols-2 min-[1440px]:items-start">
        {connection?.supported ? (
          <div className="min-w-0 space-y-2">
            <ScrollX label="Checkpoint list">
              <table className="w-full text-left text-sm">
                <caption className="sr-only">Checkpoints of this session, newest first</caption>
                <thead>
                  <tr className="text-xs text-slate-600 dark:text-slate-400">
                    {LIST_COLUMNS.map((column, index) => (
                      <th key={column} scope="col" className={index < 2 ? 'px-1' : 'px-2'}>
                        {column}
                      </th>
                    ))}
                  </tr>
                </thead>
                {project ? (
                  <tbody>
                    <tr className="bg-slate-50 dark:bg-slate-900">
                      <td className="px-1">
                        <input
                          type="radio"
                          name={`${headingId}-from`}
                          aria-label="Compare from the current project"
                          checked={sameSide(from, PROJECT)}
                          onChange={() => setFrom(PROJECT)}
                        />
                      </td>
                      <td className="px-1">
                        <input
                          type="radio"
                          name={`${headingId}-to`}
                          aria-label="Compare to the current project"
                          checked={sameSide(to, PROJECT)}
                          onChange={() => setTo(PROJECT)}
                        />
                      </td>
                      <td className="px-2 font-medium" colSpan={2}>
                        Current project
                      </td>
                      <td className="px-2 tabular-nums">{project.revision}</td>
                      <td className="px-2">{dateTimeOf(project.updatedAt)}</td>
                      <td className="px-2 font-mono text-xs" title={project.contentHash}>
                        {shortHash(project.contentHash)}
                      </td>
                      <td className="px-2 tabular-nums">{project.fileCount}</td>
                      <td className="px-2" colSpan={2} />
                    </tr>
                  </tbody>
                ) : null}
                {cursors.map((after, index) => (
                  <CheckpointRows
                    key={after ?? 'first'}
                    sessionId={sessionId}
                    after={after}
                    refreshCount={refreshCount}
                    radioName={headingId}
                    projectHash={project?.contentHash ?? null}
                    from={from}
                    to={to}
                    filesOf={filesOf}
                    onFrom={setFrom}
                    onTo={setTo}
                    onFiles={(id) => setFilesOf((current) => (current === id ? null : id))}
                    onCompareWithProject={(id) => {
                      setFrom({ kind: 'checkpoint', checkpointId: id });
                      setTo(PROJECT);
                    }}
                    onRestore={startRestore}
                    eventHref={eventHref}
                    onNextCursor={
                      index === cursors.length - 1
                        ? (cursor) => setCursors((current) => [...current, cursor])
                        : null
                    }
                  />
                ))}
              </table>
            </ScrollX>
            {connection.edges.length === 0 ? (
              <p className="text-sm text-slate-600 dark:text-slate-400">
                No checkpoints yet: one is taken before every agent write.
              </p>
            ) : null}
          </div>
        ) : null}

        {/* Beside the list on a wide screen, below it (scrolled into view) otherwise. */}
        <div
          ref={panels}
          className="min-w-0 space-y-4 min-[1440px]:sticky min-[1440px]:top-0 min-[1440px]:max-h-[calc(100dvh-8rem)] min-[1440px]:overflow-y-auto"
        >
          {filesOf ? <FilesPanel checkpointId={filesOf} onClose={() => setFilesOf(null)} /> : null}

          {from && to && !sameSide(from, to) ? (
            <CompareView
              sessionId={sessionId}
              from={from}
              to={to}
              onRestoreFiles={startRestore}
              onClose={() => {
                setFrom(null);
                setTo(null);
              }}
            />
          ) : from || to ? (
            <p className="text-sm text-slate-600 dark:text-slate-400">
              Choose a “From” and a different “To” to compare files by hash.
            </p>
          ) : null}

          {restore ? (
            <RestoreFlow
              key={`${restore.checkpointId}:${restore.attempt}`}
              sessionId={sessionId}
              checkpointId={restore.checkpointId}
              paths={restore.paths ?? null}
              renderToolCall={renderToolCall}
              onClose={() => setRestore(null)}
              onUndo={(preimage) => startRestore(preimage)}
              onRestored={onRestored}
            />
          ) : null}
        </div>
      </div>
    </section>
  );
}

function CheckpointRows({
  sessionId,
  after,
  refreshCount,
  radioName,
  projectHash,
  from,
  to,
  filesOf,
  onFrom,
  onTo,
  onFiles,
  onCompareWithProject,
  onRestore,
  eventHref,
  onNextCursor,
}: {
  eventHref: ((seq: string) => string) | null;
  sessionId: string;
  after: string | null;
  refreshCount: number;
  radioName: string;
  projectHash: string | null;
  from: Side | null;
  to: Side | null;
  filesOf: string | null;
  onFrom: (side: Side) => void;
  onTo: (side: Side) => void;
  onFiles: (checkpointId: string) => void;
  onCompareWithProject: (checkpointId: string) => void;
  onRestore: (checkpointId: string) => void;
  onNextCursor: ((cursor: string) => void) | null;
}) {
  const [{ data }, refetch] = useQuery({
    query: CheckpointsQuery,
    variables: { sessionId, after, first: CHECKPOINTS_PAGE_MAX },
  });
  useEffect(() => {
    if (refreshCount > 0) refetch({ requestPolicy: 'network-only' });
  }, [refreshCount, refetch]);
  const connection = data?.studioCheckpoints;
  if (!connection) return null;
  const { hasNextPage, endCursor } = connection.pageInfo;
  return (
    <tbody>
      {connection.edges.map(({ node }) => (
        <CheckpointRow
          key={node.checkpointId}
          checkpoint={node}
          radioName={radioName}
          matchesProject={projectHash === node.contentHash}
          from={from}
          to={to}
          filesShown={filesOf === node.checkpointId}
          onFrom={onFrom}
          onTo={onTo}
          onFiles={onFiles}
          onCompareWithProject={onCompareWithProject}
          onRestore={onRestore}
          eventHref={eventHref}
        />
      ))}
      {hasNextPage && endCursor && onNextCursor ? (
        <tr>
          <td colSpan={10} className="px-2 py-2">
            <button type="button" className={small} onClick={() => onNextCursor(endCursor)}>
              Load older checkpoints
            </button>
          </td>
        </tr>
      ) : null}
    </tbody>
  );
}

function CheckpointRow({
  checkpoint,
  radioName,
  matchesProject,
  from,
  to,
  filesShown,
  onFrom,
  onTo,
  onFiles,
  onCompareWithProject,
  onRestore,
  eventHref,
}: {
  eventHref: ((seq: string) => string) | null;
  checkpoint: Checkpoint;
  radioName: string;
  matchesProject: boolean;
  from: Side | null;
  to: Side | null;
  filesShown: boolean;
  onFrom: (side: Side) => void;
  onTo: (side: Side) => void;
  onFiles: (checkpointId: string) => void;
  onCompareWithProject: (checkpointId: string) => void;
  onRestore: (checkpointId: string) => void;
}) {
  const side: Side = { kind: 'checkpoint', checkpointId: checkpoint.checkpointId };
  const name = `checkpoint ${shortId(checkpoint.checkpointId)}`;
  return (
    <tr
      className="border-t border-slate-200 align-top dark:border-slate-700"
      data-checkpoint-id={checkpoint.checkpointId}
    >
      <td className="px-1">
        <input
          type="radio"
          name={`${radioName}-from`}
          aria-label={`Compare from ${name}`}
          checked={sameSide(from, side)}
          onChange={() => onFrom(side)}
        />
      </td>
      <td className="px-1">
        <input
          type="radio"
          name={`${radioName}-to`}
          aria-label={`Compare to ${name}`}
          checked={sameSide(to, side)}
          onChange={() => onTo(side)}
        />
      </td>
      <th
        scope="row"
        className="px-2 font-mono text-xs font-normal"
        title={checkpoint.checkpointId}
      >
        {shortId(checkpoint.checkpointId)}
        <details className="mt-0.5">
          <summary className="cursor-pointer font-sans text-xs text-blue-800 dark:text-blue-300">
            Full id
          </summary>
          <code className="break-all">{checkpoint.checkpointId}</code>{' '}
          <CopyButton text={checkpoint.checkpointId} label={`full id of ${name}`} />
        </details>
      </th>
      <td className="px-2">
        {REASON_LABEL[checkpoint.reason] ?? <SafeText text={checkpoint.reason} />}
        <p className="min-w-48 text-xs text-slate-700 dark:text-slate-300">
          <SafeText text={checkpoint.studioMadeBy.summary} />{' '}
          {eventHref ? (
            <Link
              to={eventHref(checkpoint.studioMadeBy.seq)}
              className="text-blue-800 underline underline-offset-2 dark:text-blue-300"
            >
              event #{checkpoint.studioMadeBy.seq}
            </Link>
          ) : (
            `(event #${checkpoint.studioMadeBy.seq})`
          )}
        </p>
      </td>
      <td className="px-2 tabular-nums">{checkpoint.projectRevision}</td>
      <td className="px-2">
        <time dateTime={checkpoint.createdAt} title={checkpoint.createdAt}>
          {dateTimeOf(checkpoint.createdAt)}
        </time>
      </td>
      <td className="px-2 font-mono text-xs">
        <span title={checkpoint.contentHash}>{shortHash(checkpoint.contentHash)}</span>{' '}
        <CopyButton text={checkpoint.contentHash} label={`content hash of ${name}`} />
      </td>
      <td className="px-2 tabular-nums" title={`${checkpoint.totalBytes} bytes`}>
        {checkpoint.fileCount} ({formatBytes(checkpoint.totalBytes)})
      </td>
      <td className="space-x-1 px-2 text-xs">
        {checkpoint.restoredAt ? (
          <span
            className="rounded bg-blue-100 px-1 text-blue-900 dark:bg-blue-950 dark:text-blue-100"
            title={checkpoint.restoredAt}
          >
            Restored {dateTimeOf(checkpoint.restoredAt)}
          </span>
        ) : null}
        {checkpoint.exactPreImage ? (
          <span
            className="rounded bg-emerald-100 px-1 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-100"
            title="Captured exactly before an approved action ran"
          >
            Exact pre-image
          </span>
        ) : null}
        {matchesProject ? (
          <span className="rounded bg-slate-200 px-1 dark:bg-slate-700">
            Matches current project
          </span>
        ) : null}
      </td>
      <td className="space-x-1 whitespace-nowrap px-2">
        <button
          type="button"
          className={small}
          aria-expanded={filesShown}
          aria-label={`Files of ${name}`}
          onClick={() => onFiles(checkpoint.checkpointId)}
        >
          Files
        </button>
        <button
          type="button"
          className={small}
          aria-label={`Compare with current: ${name}`}
          onClick={() => onCompareWithProject(checkpoint.checkpointId)}
        >
          Compare with current
        </button>
        <button
          type="button"
          className={small}
          aria-label={`Restore ${name}…`}
          onClick={() => onRestore(checkpoint.checkpointId)}
        >
          Restore…
        </button>
      </td>
    </tr>
  );
}

function FilesPanel({ checkpointId, onClose }: { checkpointId: string; onClose: () => void }) {
  const [{ data, fetching }] = useQuery({ query: CheckpointQuery, variables: { checkpointId } });
  const checkpoint = data?.studioCheckpoint ?? null;
  const name = `checkpoint ${shortId(checkpointId)}`;
  return (
    <section
      aria-label={`Files of ${name}`}
      className="space-y-2 rounded-lg border border-slate-300 p-3 dark:border-slate-600"
    >
      <header className="flex items-center justify-between">
        <h2 className="text-lg font-semibold">Files of {name}</h2>
        <button type="button" className={small} onClick={onClose}>
          Close
        </button>
      </header>
      {checkpoint ? (
        <PagedFiles
          source={{ kind: 'checkpoint', checkpointId: checkpoint.checkpointId }}
          caption={`Files of ${name}`}
        />
      ) : fetching ? (
        <p role="status">Loading files…</p>
      ) : (
        <p role="alert">Checkpoint {shortId(checkpointId)} was not found.</p>
      )}
    </section>
  );
}

const sideLabel = (side: Side) =>
  side.kind === 'project' ? 'the current project' : `checkpoint ${shortId(side.checkpointId)}`;

function CompareView({
  sessionId,
  from,
  to,
  onClose,
  onRestoreFiles,
}: {
  sessionId: string;
  from: Side;
  to: Side;
  onClose: () => void;
  /** Per-file restore of the picked paths from the compared checkpoint. */
  onRestoreFiles: (checkpointId: string, paths: string[]) => void;
}) {
  const [{ data: projectData }] = useQuery({ query: ProjectQuery, variables: { sessionId } });
  const beforeLabel = sideLabel(from);
  const afterLabel = sideLabel(to);
  const title = `Compare ${beforeLabel} → ${afterLabel}`;
  // The server compares a checkpoint with another or with the project; from the project's side
  // the same answer is read reversed.
  const query =
    to.kind === 'checkpoint'
      ? {
          checkpointId: to.checkpointId,
          against: from.kind === 'checkpoint' ? from.checkpointId : null,
          reversed: false,
        }
      : from.kind === 'checkpoint'
        ? { checkpointId: from.checkpointId, against: null, reversed: true }
        : null;
  // Picking files to restore makes sense when one side is the project and the other a checkpoint.
  const source =
    from.kind === 'checkpoint' && to.kind === 'project'
      ? from.checkpointId
      : to.kind === 'checkpoint' && from.kind === 'project'
        ? to.checkpointId
        : null;
  const [picked, setPicked] = useState<ReadonlySet<string>>(() => new Set());
  // Folders picked whole (every file under each comes back); the server checks the paths.
  const [folders, setFolders] = useState<readonly string[]>([]);
  const [folderDraft, setFolderDraft] = useState('');
  const folderId = useId();
  const addFolder = () => {
    const folder = folderDraft.trim().replace(/\/+$/, '');
    if (folder && !folders.includes(folder)) setFolders([...folders, folder]);
    setFolderDraft('');
  };
  const selection = [...new Set([...picked, ...folders])].sort();
  const pick = (path: string) =>
    setPicked((current) => {
      const next = new Set(current);
      if (!next.delete(path)) next.add(path);
      return next;
    });
  return (
    <section
      aria-label={title}
      className="space-y-2 rounded-lg border border-slate-300 p-3 dark:border-slate-600"
    >
      <header className="flex items-center justify-between">
        <h2 className="text-lg font-semibold">{title}</h2>
        <button type="button" className={small} onClick={onClose}>
          Close
        </button>
      </header>
      {!query ? (
        <p>Both sides are the current project: nothing changes.</p>
      ) : (
        <PagedChanges
          key={`${query.checkpointId}:${query.against ?? 'project'}`}
          checkpointId={query.checkpointId}
          against={query.against}
          reversed={query.reversed}
          totalAfter={query.reversed ? (projectData?.studioProject?.fileCount ?? null) : null}
          caption={title}
          beforeLabel={beforeLabel}
          afterLabel={afterLabel}
          {...(source ? { picked, onPick: pick } : {})}
        />
      )}
      {query && source ? (
        <div className="flex flex-wrap items-center gap-2">
          <form
            className="flex flex-wrap items-end gap-1 text-xs"
            onSubmit={(event) => {
              event.preventDefault();
              addFolder();
            }}
          >
            <label htmlFor={folderId} className="flex flex-col">
              Pick a folder
              <input
                id={folderId}
                value={folderDraft}
                placeholder="src/generated"
                onChange={(event) => setFolderDraft(event.target.value)}
                className="rounded border border-slate-300 px-2 py-0.5 font-mono dark:border-slate-600 dark:bg-slate-900"
              />
            </label>
            <button type="submit" className={small} disabled={folderDraft.trim() === ''}>
              Add folder
            </button>
          </form>
          {folders.length > 0 ? (
            <ul aria-label="Picked folders" className="flex flex-wrap gap-1 text-xs">
              {folders.map((folder) => (
                <li key={folder} className="rounded bg-slate-100 px-1 dark:bg-slate-800">
                  <SafeText text={`${folder}/`} className="font-mono" />{' '}
                  <button
                    type="button"
                    className="underline"
                    aria-label={`Remove folder ${folder}`}
                    onClick={() => setFolders(folders.filter((f) => f !== folder))}
                  >
                    remove
                  </button>
                </li>
              ))}
            </ul>
          ) : null}
          <button
            type="button"
            className={small}
            disabled={selection.length === 0}
            onClick={() => onRestoreFiles(source, selection)}
          >
            {folders.length === 0
              ? `Restore ${picked.size} picked ${picked.size === 1 ? 'file' : 'files'}…`
              : `Restore ${selection.length} picked ${selection.length === 1 ? 'path' : 'paths'}…`}
          </button>
          <span className="text-xs text-slate-600 dark:text-slate-400">
            Only the picked files come back from checkpoint {shortId(source)}; every other file
            stays as it is now.
          </span>
        </div>
      ) : null}
    </section>
  );
}
