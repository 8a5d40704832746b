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
  return (
    <header className="space-y-2 border-b border-slate-200 px-4 py-3 dark:border-slate-700">
      <div className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        <Title className="min-w-0 truncate text-lg font-semibold text-slate-900 dark:text-slate-50">
          <SafeText text={session.studioTitle || session.sessionId} />
        </Title>
        <span className="inline-flex items-center gap-1 text-xs text-slate-600 dark:text-slate-300">
          <span className="font-mono">
            <SafeText text={session.sessionId} />
          </span>
          <CopyButton text={session.sessionId} label="session id" />
        </span>
      </div>
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
        <nav aria-label="Session views" className="flex gap-3 text-sm">
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
        </nav>
        <SessionActions session={session} />
      </div>
      <SessionControlBanner
        sessionId={session.sessionId}
        controlledBy={session.studioControlledBy ?? null}
        controlledSince={session.studioControlledSince ?? null}
      />
    </header>
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

/** Sends a user message to the agent (Ctrl+Enter or the button); shown while the session is active. */
export function MessageComposer({ sessionId }: { sessionId: string }) {
  const action = useSessionAction(sessionId);
  const [text, setText] = useState('');
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
      <label className="flex-1 text-xs text-slate-700 dark:text-slate-300">
        <span className="mb-1 block">Message to the agent (Ctrl+Enter sends)</span>
        <textarea
          value={text}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={onKeyDown}
          rows={1}
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
      {action.error ? (
        <p role="alert" className="text-xs text-red-800 dark:text-red-300">
          <SafeText text={action.error} />
        </p>
      ) : null}
    </form>
  );
}
