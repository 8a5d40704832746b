import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useClient, useMutation, useQuery } from 'urql';
import { ErrorCode } from '../../../protocol/contract.ts';
import { TERMINAL_TOOL_STATUSES, type ToolCallStatus } from '../../../protocol/events.ts';
import { errorCode, makeIdempotencyKey, useSessionControl } from '../../graphql/attachment.ts';
import { SafeText } from '../../ui/SafeText.tsx';
import { PagedChanges } from './CheckpointFilePages.tsx';
import type { FileChange } from './compareFiles.ts';
import {
  CheckpointQuery,
  ProjectQuery,
  RequestCheckpointRestoreMutation,
  RestorePreviewQuery,
  RestoreToolCallQuery,
} from './documents.ts';
import { dateTimeOf, REASON_LABEL, shortHash, shortId } from './format.ts';

/** Renders the approval card of a tool call; src/app passes the tool-calls feature's card. */
export type RenderToolCall = (ids: { toolCallId: string; sessionId: string }) => ReactNode;

/** What a restore does to each file of the current project. */
export const RESTORE_CHANGE_LABEL: Record<FileChange, string> = {
  added: 'Re-created',
  removed: 'Deleted',
  changed: 'Overwritten',
  unchanged: 'Unchanged',
};

type Phase =
  | { kind: 'preview' }
  | { kind: 'checking' }
  | { kind: 'requesting' }
  | { kind: 'refused'; code: string | null; message: string; revision: string }
  | { kind: 'pending'; toolCallId: string };

const POLL_MS = 2000;

const button =
  'rounded px-3 py-1.5 text-sm font-medium focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:opacity-50';
const primary = `${button} bg-blue-700 text-white hover:bg-blue-800`;
const danger = `${button} bg-red-700 text-white hover:bg-red-800`;
const secondary = `${button} border border-slate-300 hover:bg-slate-100 dark:border-slate-600 dark:hover:bg-slate-800`;

/** The pre-image checkpoint id and new revision a successful restore reports in its result. */
function parseRestoreResult(resultJson: string | null): {
  preimageId: string | null;
  revision: string | null;
} {
  if (!resultJson) return { preimageId: null, revision: null };
  try {
    const result = JSON.parse(resultJson) as {
      preRestoreCheckpoint?: { checkpointId?: unknown };
      project?: { revision?: unknown };
    };
    const preimageId = result.preRestoreCheckpoint?.checkpointId;
    const revision = result.project?.revision;
    return {
      preimageId: typeof preimageId === 'string' ? preimageId : null,
      revision:
        typeof revision === 'string' || typeof revision === 'number' ? String(revision) : null,
    };
  } catch {
    return { preimageId: null, revision: null };
  }
}

/**
 * Restoring one checkpoint (or some of its files and folders) in one confirmation: the preview
 * states the server's exact counts (studioRestorePreview, the approval card's counts) and the
 * one "Restore" button recomputes them against the live project first. If anything moved
 * (revision, content or counts), the new preview is shown with a notice and nothing is sent;
 * otherwise the request (studioRequestCheckpointRestore) goes out and its approval card appears
 * in the same panel, then progress from the tool call's status, and on success the
 * RESTORE_PREIMAGE checkpoint with "Undo restore". Never optimistic: the server's events decide.
 */
export function RestoreFlow({
  sessionId,
  checkpointId,
  paths = null,
  renderToolCall,
  onClose,
  onUndo,
  onRestored,
}: {
  sessionId: string;
  checkpointId: string;
  /** Per-file restore: only these paths come back (null: the whole checkpoint). */
  paths?: readonly string[] | null;
  renderToolCall: RenderToolCall;
  onClose: () => void;
  onUndo: (preimageCheckpointId: string) => void;
  onRestored: () => void;
}) {
  const [phase, setPhase] = useState<Phase>({ kind: 'preview' });
  /** Said when the recomputed preview differed from the one shown (nothing was sent). */
  const [notice, setNotice] = useState<string | null>(null);
  const client = useClient();
  const [{ data: checkpointData, fetching: checkpointFetching }] = useQuery({
    query: CheckpointQuery,
    variables: { checkpointId },
  });
  const [{ data: projectData, fetching: projectFetching }, refetchProject] = useQuery({
    query: ProjectQuery,
    variables: { sessionId },
  });
  const [, requestRestore] = useMutation(RequestCheckpointRestoreMutation);
  const control = useSessionControl(sessionId);

  const checkpoint = checkpointData?.studioCheckpoint ?? null;
  const project = projectData?.studioProject ?? null;
  // The server's plan for exactly this selection: the counts its approval card will state.
  const previewVariables = { checkpointId, paths: paths ? [...paths] : null };
  const [{ data: previewData, error: previewError }] = useQuery({
    query: RestorePreviewQuery,
    variables: previewVariables,
    requestPolicy: 'cache-and-network',
  });
  const preview = previewData?.studioCheckpoint?.studioRestorePreview ?? null;
  const comparison = preview
    ? {
        counts: {
          changed: preview.changed + preview.modeChanged,
          added: preview.added,
          removed: preview.removed,
        },
        notRestorable: preview.notRestorable,
        outside: preview.changedOutsideAgent,
      }
    : null;

  const title =
    (paths ? `${paths.length} picked ${paths.length === 1 ? 'path' : 'paths'} of ` : '') +
    `checkpoint ${shortId(checkpoint?.checkpointId ?? checkpointId)}`;

  /** The one confirmation: recompute against the live project, then send only if nothing moved. */
  const confirm = async () => {
    if (!checkpoint || !project || !preview) return;
    const shown = preview;
    setNotice(null);
    setPhase({ kind: 'checking' });
    const fresh = await client
      .query(RestorePreviewQuery, previewVariables, { requestPolicy: 'network-only' })
      .toPromise();
    const next = fresh.data?.studioCheckpoint?.studioRestorePreview ?? null;
    if (!next) {
      setPhase({
        kind: 'refused',
        code: errorCode(fresh.error),
        message:
          fresh.error?.graphQLErrors[0]?.message ??
          fresh.error?.message ??
          'The preview could not be recomputed.',
        revision: shown.projectRevision,
      });
      return;
    }
    const keys = [
      'projectRevision',
      'projectContentHash',
      'changed',
      'added',
      'removed',
      'modeChanged',
      'notRestorable',
      'changedOutsideAgent',
    ] as const;
    if (keys.some((k) => next[k] !== shown[k])) {
      refetchProject({ requestPolicy: 'network-only' });
      setNotice(
        next.projectRevision !== shown.projectRevision
          ? `The project moved on while this preview was open (revision ${shown.projectRevision} → ${next.projectRevision}). Nothing was sent: the counts below are recomputed, check them and restore again.`
          : 'The project’s files changed while this preview was open. Nothing was sent: the counts below are recomputed, check them and restore again.',
      );
      setPhase({ kind: 'preview' });
      return;
    }
    await send(next.projectRevision);
  };

  const send = async (revision: string) => {
    if (!checkpoint || !project) return;
    setPhase({ kind: 'requesting' });
    let clientEpoch: string;
    try {
      clientEpoch = await control.ensureAttached();
    } catch (error) {
      setPhase({
        kind: 'refused',
        code: null,
        message: error instanceof Error ? error.message : String(error),
        revision,
      });
      return;
    }
    const result = await requestRestore({
      input: {
        idempotencyKey: makeIdempotencyKey('requestCheckpointRestore'),
        sessionId,
        clientEpoch,
        checkpointId: checkpoint.checkpointId,
        checkpointContentHash: checkpoint.contentHash,
        expectedRevision: revision,
        ...(paths ? { paths: [...paths] } : {}),
      },
    });
    const approval = result.data?.studioRequestCheckpointRestore;
    if (result.error || !approval) {
      setPhase({
        kind: 'refused',
        code: errorCode(result.error),
        message:
          result.error?.graphQLErrors[0]?.message ??
          result.error?.message ??
          'No approval was returned.',
        revision,
      });
      return;
    }
    setPhase({
      kind: 'pending',
      toolCallId: approval.studioToolCall?.toolCallId ?? approval.toolCallId,
    });
  };

  const refresh = () => {
    refetchProject({ requestPolicy: 'network-only' });
    void client
      .query(RestorePreviewQuery, previewVariables, { requestPolicy: 'network-only' })
      .toPromise();
    setNotice(null);
    setPhase({ kind: 'preview' });
  };

  return (
    <section
      aria-label={`Restore ${title}`}
      className="space-y-3 rounded-lg border border-slate-300 p-3 dark:border-slate-600"
    >
      <header className="flex items-center justify-between gap-2">
        <h2 className="text-lg font-semibold">Restore {title}</h2>
        {phase.kind !== 'requesting' ? (
          <button type="button" className={secondary} onClick={onClose}>
            Close
          </button>
        ) : null}
      </header>

      {!checkpoint || !project || !comparison ? (
        previewError && checkpoint && project ? (
          <p role="alert">
            Could not compute what the restore changes: <SafeText text={previewError.message} />
          </p>
        ) : checkpointFetching || projectFetching || (checkpoint && project) ? (
          <p role="status">Loading the checkpoint and the current project…</p>
        ) : !checkpoint ? (
          <p role="alert">Checkpoint {shortId(checkpointId)} was not found.</p>
        ) : (
          <p role="alert">This session has no project to restore into.</p>
        )
      ) : phase.kind === 'preview' || phase.kind === 'checking' ? (
        <div className="space-y-2">
          {notice ? (
            <p
              role="alert"
              className="rounded border border-amber-400 bg-amber-50 p-2 text-sm font-medium text-amber-950 dark:border-amber-700 dark:bg-amber-950/40 dark:text-amber-100"
            >
              {notice}
            </p>
          ) : null}
          <p className="text-sm">
            Restoring replaces {paths ? 'the picked paths of ' : ''}project{' '}
            <SafeText text={project.name} /> (revision{' '}
            {preview?.projectRevision ?? project.revision}) with {title} (
            {REASON_LABEL[checkpoint.reason] ?? checkpoint.reason}, revision{' '}
            {checkpoint.projectRevision}, {shortHash(checkpoint.contentHash)},{' '}
            {dateTimeOf(checkpoint.createdAt)}).
          </p>
          <p className="text-sm font-medium" aria-label="What the restore changes">
            {comparison.counts.changed} overwritten, {comparison.counts.added} re-created,{' '}
            {comparison.counts.removed} deleted
            {comparison.outside > 0
              ? `, ${comparison.outside} of them changed outside the agent since the last checkpoint`
              : ''}
            {comparison.notRestorable > 0 ? `; ${comparison.notRestorable} cannot be put back` : ''}
            .
          </p>
          {comparison.counts.changed + comparison.counts.added + comparison.counts.removed === 0 ? (
            <p className="text-sm font-medium">
              The project already matches this {paths ? 'selection' : 'checkpoint'}; restoring
              changes no file.
            </p>
          ) : null}
          {paths ? (
            <section aria-label="Picked paths" className="text-sm">
              <p>
                Only these paths come back from the checkpoint (a folder brings back every file
                under it); every other file stays as it is now. The counts above are the server’s
                for this selection, the same the approval card states.
              </p>
              <ul className="list-inside list-disc font-mono text-xs">
                {paths.map((path) => (
                  <li key={path}>
                    <SafeText text={path} />
                  </li>
                ))}
              </ul>
            </section>
          ) : (
            <PagedChanges
              checkpointId={checkpoint.checkpointId}
              against={null}
              totalAfter={null}
              caption="Files the restore changes"
              labels={RESTORE_CHANGE_LABEL}
              beforeLabel="the current project"
              afterLabel={title}
              restorePreview
            />
          )}
          <p className="text-sm">
            The current project is saved first as a RESTORE_PREIMAGE checkpoint, so this restore can
            be undone. Restoring recomputes these counts against the project as it is at that
            moment, then waits for your approval right here, like any destructive tool call.
            {control.state !== 'attached'
              ? ' Restoring attaches this tab as the session’s controlling client; other tabs and clients on this session are fenced until they take control back.'
              : ''}
          </p>
          <div className="flex flex-wrap gap-2">
            <button
              type="button"
              className={danger}
              disabled={phase.kind === 'checking'}
              onClick={() => void confirm()}
            >
              Restore {title}
            </button>
            <button type="button" className={secondary} onClick={onClose}>
              Cancel
            </button>
          </div>
          {phase.kind === 'checking' ? (
            <p role="status" className="text-sm">
              Checking the project again before restoring…
            </p>
          ) : null}
        </div>
      ) : phase.kind === 'requesting' ? (
        <p role="status">Requesting the restore…</p>
      ) : phase.kind === 'refused' ? (
        <Refused
          phase={phase}
          title={title}
          onRefresh={refresh}
          onTakeControl={() => void control.takeControl().then(refresh, () => undefined)}
        />
      ) : (
        <RestorePending
          sessionId={sessionId}
          toolCallId={phase.toolCallId}
          title={title}
          renderToolCall={renderToolCall}
          onUndo={onUndo}
          onRestored={onRestored}
        />
      )}
    </section>
  );
}

function Refused({
  phase,
  title,
  onRefresh,
  onTakeControl,
}: {
  phase: Extract<Phase, { kind: 'refused' }>;
  title: string;
  onRefresh: () => void;
  onTakeControl: () => void;
}) {
  const code = phase.code;
  return (
    <div
      role="alert"
      className="space-y-2 rounded border border-red-300 bg-red-50 p-3 text-sm dark:border-red-800 dark:bg-red-950/40"
    >
      {code ? <code className="font-mono font-semibold">{code}</code> : null}
      {code === ErrorCode.REVISION_CONFLICT ? (
        <>
          <p>
            The project moved on since this preview: it is no longer at revision {phase.revision}.
            Nothing was restored.
          </p>
          <button type="button" className={primary} onClick={onRefresh}>
            Refresh and preview again
          </button>
        </>
      ) : code === ErrorCode.CHECKPOINT_NOT_FOUND ? (
        <p>The server has no {title} with this content hash. Nothing was restored.</p>
      ) : code === ErrorCode.CLIENT_EPOCH_STALE ? (
        <>
          <p>
            Another tab or client has taken control of this session, so the restore was not
            requested.
          </p>
          <button type="button" className={primary} onClick={onTakeControl}>
            Take control back
          </button>
          <span className="ml-1 text-xs">
            (this fences the other tab or client; the restore is not resent)
          </span>
        </>
      ) : (
        <p>
          The restore was not requested: <SafeText text={phase.message} />
        </p>
      )}
    </div>
  );
}

function RestorePending({
  sessionId,
  toolCallId,
  title,
  renderToolCall,
  onUndo,
  onRestored,
}: {
  sessionId: string;
  toolCallId: string;
  title: string;
  renderToolCall: RenderToolCall;
  onUndo: (preimageCheckpointId: string) => void;
  onRestored: () => void;
}) {
  const [{ data }, refetch] = useQuery({ query: RestoreToolCallQuery, variables: { toolCallId } });
  const call = data?.studioToolCall ?? null;
  const status = (call?.status ?? 'PROPOSED') as ToolCallStatus;
  const terminal = TERMINAL_TOOL_STATUSES.has(status);
  const reported = useRef(false);

  useEffect(() => {
    // Events normally move the call; polling keeps progress honest when this session's stream is not open.
    if (terminal) return undefined;
    const timer = setInterval(() => refetch({ requestPolicy: 'network-only' }), POLL_MS);
    return () => clearInterval(timer);
  }, [terminal, refetch]);

  useEffect(() => {
    if (status === 'SUCCEEDED' && !reported.current) {
      reported.current = true;
      onRestored();
    }
  }, [status, onRestored]);

  const result = parseRestoreResult(call?.resultJson ?? null);
  const approvalExpired = call?.approval?.status === 'EXPIRED';

  return (
    <div className="space-y-2">
      {renderToolCall({ toolCallId, sessionId })}
      <div role="status" className="text-sm">
        {status === 'SUCCEEDED' ? (
          <div className="space-y-2 rounded border border-emerald-300 bg-emerald-50 p-3 dark:border-emerald-800 dark:bg-emerald-950/40">
            <p className="font-semibold">
              Restored {title}.
              {result.revision ? ` The project is now at revision ${result.revision}.` : ''}
            </p>
            {result.preimageId ? (
              <>
                <p>
                  The state before the restore was saved as checkpoint {shortId(result.preimageId)}{' '}
                  (RESTORE_PREIMAGE).
                </p>
                <button
                  type="button"
                  className={secondary}
                  onClick={() => onUndo(result.preimageId as string)}
                >
                  Undo restore
                </button>
              </>
            ) : (
              <p>
                The state before the restore was saved as the newest RESTORE_PREIMAGE checkpoint in
                the list.
              </p>
            )}
          </div>
        ) : status === 'PROPOSED' || status === 'WAITING_FOR_APPROVAL' ? (
          <p>Waiting for your approval of the restore call. Nothing has changed yet.</p>
        ) : status === 'DISPATCHED' || status === 'RUNNING' ? (
          <p>Restoring… the project is being written.</p>
        ) : status === 'TIMED_OUT' || status === 'OUTCOME_UNKNOWN' ? (
          <p className="font-semibold">
            The restore’s outcome is unknown ({status.toLowerCase().replace(/_/g, ' ')}). Compare
            the current project with this checkpoint before acting again.
          </p>
        ) : (
          <div className="space-y-1">
            <p className="font-semibold">
              The restore did not happen (
              {approvalExpired ? 'the approval expired' : status.toLowerCase().replace(/_/g, ' ')}).
              The project was not changed by it.
            </p>
            {call?.error ? (
              <p>
                <code className="font-mono">
                  <SafeText text={call.error.code} />
                </code>{' '}
                <SafeText text={call.error.message} />
              </p>
            ) : null}
          </div>
        )}
      </div>
    </div>
  );
}
