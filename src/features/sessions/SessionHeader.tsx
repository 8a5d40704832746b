import { useState, type FormEvent, type KeyboardEvent, type ReactNode } from 'react';
import type { AgentMode, RunStatus, SessionStatus } from '../../../protocol/events.ts';
import { MAX_USER_MESSAGE_BYTES } from '../../../protocol/contract.ts';
import { CopyButton } from '../../ui/CopyButton.tsx';
import { Link } from '../../ui/router.tsx';
import { SafeText } from '../../ui/SafeText.tsx';
import {
  CancelRunMutation,
  PauseMutation,
  ResumeMutation,
  SendMessageMutation,
  type SessionSummary,
} from './documents.ts';
import { isRunning, MODE_LABEL, RUN_STATUS_LABEL, SESSION_STATUS } from './labels.ts';
import { SessionControlBanner } from './SessionControlBanner.tsx';
import { useSessionAction } from './useSessionAction.ts';

const actionButton =
  'rounded border border-slate-300 px-2 py-1 text-xs font-medium text-slate-800 hover:bg-slate-100 disabled:opacity-50 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-600 dark:text-slate-100 dark:hover:bg-slate-800';

export interface SessionHeaderProps {
  session: SessionSummary;
  /** Links to the session's other screens. */
  timelineHref: string;
  checkpointsHref: string;
  /** Which of the two screens is shown. */
  current: 'timeline' | 'checkpoints';
}

/** The session's title, facts, run state, control actions and attachment state. */
export function SessionHeader({
  session,
  timelineHref,
  checkpointsHref,
  current,
}: SessionHeaderProps) {
  const status = SESSION_STATUS[session.status as SessionStatus];
  const run = session.activeRun ?? session.currentRun;
  const runStatus = run?.status as RunStatus | undefined;
  // One h1 per page: the timeline's is the session title, the checkpoint browser has its own.
  const Title = current === 'timeline' ? 'h1' : 'p';
  const [detailsOpen, setDetailsOpen] = useState(false);
  // On a phone or a zoomed window the header is one line (title, status, views, "Details");
  // the facts, the id and the actions unfold on demand so the timeline keeps the height.
  const details = `${detailsOpen ? 'flex' : 'hidden'} roomy:flex`;
  return (
    <header className="space-y-1.5 border-b border-slate-200 px-3 py-2 roomy:space-y-2 roomy:px-4 roomy:py-3 dark:border-slate-700">
      <div className="flex min-w-0 items-center gap-x-3">
        <Title
          title={session.studioTitle || session.sessionId}
          className="min-w-0 flex-1 truncate text-base font-semibold text-slate-900 roomy:flex-none roomy:text-lg dark:text-slate-50"
        >
          <SafeText text={session.studioTitle || session.sessionId} />
        </Title>
        <span className={`shrink-0 text-xs max-sm:hidden roomy:hidden ${status.className}`}>
          {status.label}
        </span>
        <nav aria-label="Session views" className="flex shrink-0 gap-3 text-sm roomy:hidden">
          <ViewLinks
            timelineHref={timelineHref}
            checkpointsHref={checkpointsHref}
            current={current}
          />
        </nav>
        <button
          type="button"
          aria-expanded={detailsOpen}
          onClick={() => setDetailsOpen((open) => !open)}
          className={`${actionButton} shrink-0 roomy:hidden`}
        >
          Details
        </button>
      </div>
      <div className={`${details} flex-col gap-1.5 roomy:gap-2`}>
        <span className="inline-flex min-w-0 items-center gap-1 text-xs text-slate-600 dark:text-slate-300">
          <span className="truncate font-mono">
            <SafeText text={session.sessionId} />
          </span>
          <CopyButton text={session.sessionId} label="session id" />
        </span>
        <dl className="flex flex-wrap gap-x-4 gap-y-1 text-xs text-slate-700 dark:text-slate-300">
          <Fact term="Status">
            <span className={status.className}>{status.label}</span>
          </Fact>
          <Fact term="Mode">{MODE_LABEL[session.mode as AgentMode]}</Fact>
          <Fact term="Source">
            <SafeText text={session.studioSource} />
          </Fact>
          {session.model || session.requestedModel ? (
            <Fact term="Model">
              <SafeText text={session.model ?? session.requestedModel} />
            </Fact>
          ) : null}
          <Fact term="Run">
            {runStatus ? (
              <>
                {RUN_STATUS_LABEL[runStatus]}
                {session.currentRun?.errorCode ? (
                  <>
                    {' '}
                    (<SafeText text={session.currentRun.errorCode} />)
                  </>
                ) : null}
              </>
            ) : (
              'No run'
            )}
          </Fact>
          <Fact term="Events">{session.lastEventSeq}</Fact>
        </dl>
        <div className="flex flex-wrap items-center gap-x-4 gap-y-2">
          <nav aria-label="Session views" className="hidden gap-3 text-sm roomy:flex">
            <ViewLinks
              timelineHref={timelineHref}
              checkpointsHref={checkpointsHref}
              current={current}
            />
          </nav>
          <SessionActions session={session} />
        </div>
      </div>
      <SessionControlBanner
        sessionId={session.sessionId}
        controlledBy={session.studioControlledBy ?? null}
        controlledSince={session.studioControlledSince ?? null}
      />
    </header>
  );
}

function ViewLinks({
  timelineHref,
  checkpointsHref,
  current,
}: Pick<SessionHeaderProps, 'timelineHref' | 'checkpointsHref' | 'current'>) {
  return (
    <>
      <Link
        to={timelineHref}
        aria-current={current === 'timeline' ? 'page' : undefined}
        className="underline-offset-4 hover:underline aria-[current=page]:font-semibold aria-[current=page]:underline"
      >
        Timeline
      </Link>
      <Link
        to={checkpointsHref}
        aria-current={current === 'checkpoints' ? 'page' : undefined}
        className="underline-offset-4 hover:underline aria-[current=page]:font-semibold aria-[current=page]:underline"
      >
        Checkpoints
      </Link>
    </>
  );
}

function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div className="flex gap-1">
      <dt className="text-slate-500 dark:text-slate-400">{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** Pause, resume and cancel: each attaches first (the banner says what that means). */
function SessionActions({ session }: { session: SessionSummary }) {
  const action = useSessionAction(session.sessionId);
  const closed = session.status === 'CLOSED' || session.status === 'REVOKED';
  const runId = session.activeRun?.runId ?? null;
  const running = isRunning(session.activeRun?.status);
  if (closed) return null;
  return (
    <div className="flex flex-wrap items-center gap-2">
      {session.status === 'PAUSED' ? (
        <button
          type="button"
          className={actionButton}
          disabled={action.running}
          onClick={() =>
            void action.run('resume', (input) =>
              action.client.mutation(ResumeMutation, { input }).toPromise(),
            )
          }
        >
          Resume session
        </button>
      ) : (
        <button
          type="button"
          className={actionButton}
          disabled={action.running}
          onClick={() =>
            void action.run('pause', (input) =>
              action.client.mutation(PauseMutation, { input }).toPromise(),
            )
          }
        >
          Pause session
        </button>
      )}
      {running ? (
        <button
          type="button"
          className={actionButton}
          disabled={action.running}
          onClick={() =>
            void action.run('cancel', (input) =>
              action.client.mutation(CancelRunMutation, { input: { ...input, runId } }).toPromise(),
            )
          }
        >
          Cancel run
        </button>
      ) : null}
      {action.error ? (
        <p role="alert" className="text-xs text-red-800 dark:text-red-300">
          <SafeText text={action.error} />
        </p>
      ) : null}
    </div>
  );
}

const draftKey = (sessionId: string) => `agent-studio:draft:${sessionId}`;

function readDraft(sessionId: string): string {
  try {
    return sessionStorage.getItem(draftKey(sessionId)) ?? '';
  } catch {
    return '';
  }
}

function writeDraft(sessionId: string, text: string): void {
  try {
    if (text) sessionStorage.setItem(draftKey(sessionId), text);
    else sessionStorage.removeItem(draftKey(sessionId));
  } catch {
    // Storage full or refused: the draft just lives as long as the page.
  }
}

/**
 * Sends a user message to the agent (Ctrl+Enter or the button); shown while the session is
 * active. The draft belongs to its session (kept per session for this tab), so it never follows
 * the person into another session's composer. While a run is on, it says so: the server takes
 * one run at a time.
 */
export function MessageComposer({
  sessionId,
  runStatus = null,
}: {
  sessionId: string;
  /** The session's active run, if any (a message sent now would be refused). */
  runStatus?: RunStatus | null;
}) {
  const action = useSessionAction(sessionId);
  const [text, setTextState] = useState(() => readDraft(sessionId));
  const setText = (value: string) => {
    setTextState(value);
    writeDraft(sessionId, value);
  };
  const tooLong = new TextEncoder().encode(text).length > MAX_USER_MESSAGE_BYTES;
  const send = async (event?: FormEvent) => {
    event?.preventDefault();
    const content = text.trim();
    if (!content || tooLong || action.running) return;
    const sent = await action.run('send-message', (input) =>
      action.client.mutation(SendMessageMutation, { input: { ...input, content } }).toPromise(),
    );
    if (sent) setText('');
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) void send();
  };
  return (
    <form onSubmit={(event) => void send(event)} className="flex items-end gap-2">
      <label className="min-w-0 flex-1 text-xs text-slate-700 dark:text-slate-300">
        <span className="sr-only roomy:not-sr-only roomy:mb-1 roomy:block">
          Message to the agent (Ctrl+Enter sends)
        </span>
        <textarea
          value={text}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={onKeyDown}
          rows={1}
          placeholder="Message to the agent"
          className="block w-full resize-y rounded border border-slate-300 bg-white px-2 py-1 text-sm text-slate-900 focus-visible:outline-2 focus-visible:outline-blue-600 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-50"
        />
      </label>
      <button
        type="submit"
        className={actionButton}
        disabled={action.running || !text.trim() || tooLong}
      >
        Send
      </button>
      {tooLong ? (
        <p className="text-xs text-red-800 dark:text-red-300">The message is over 16 KiB.</p>
      ) : null}
      {runStatus && isRunning(runStatus) && !action.error ? (
        <p role="status" className="hidden text-xs text-slate-600 roomy:block dark:text-slate-300">
          The agent is on a run ({RUN_STATUS_LABEL[runStatus]}); send once it ends, or cancel the
          run.
        </p>
      ) : null}
      {action.error ? (
        <p role="alert" className="text-xs text-red-800 dark:text-red-300">
          <SafeText text={action.error} />
        </p>
      ) : null}
    </form>
  );
}
