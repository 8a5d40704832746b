import { Suspense, useCallback, useEffect } from 'react';
import type { RunStatus } from '../../protocol/events.ts';
import { MessageComposer, SessionHeader, useSession } from '../features/sessions/index.ts';
import { SessionSearch } from '../features/search/index.ts';
import { Timeline } from '../features/timeline/index.ts';
import { Link } from '../ui/router.tsx';
import { CheckpointBrowserPage } from './lazyRoutes.tsx';
import { checkpointRestoreHref, checkpointsHref, eventHref, sessionHref } from './paths.ts';
import { renderQuestion, renderToolCall } from './renderers.tsx';
import { firstContentShown, firstContentShownAfterPaint } from './firstContent.ts';

/** One session: its header, then the timeline or the checkpoint browser. */
export function SessionScreen({
  sessionId,
  view,
  focusSeq = null,
  restoreCheckpointId = null,
}: {
  sessionId: string;
  view: 'timeline' | 'checkpoints';
  focusSeq?: string | null;
  /** Open this checkpoint's restore in the browser (the history scrubber's link). */
  restoreCheckpointId?: string | null;
}) {
  const { session, fetching, error } = useSession(sessionId);
  const hrefOf = useCallback((seq: string) => eventHref(sessionId, seq), [sessionId]);
  const restoreHrefOf = useCallback(
    (checkpointId: string) => checkpointRestoreHref(sessionId, checkpointId),
    [sessionId],
  );

  // A session that cannot be shown, or another view than the timeline, is the first content.
  const settled = !session && !fetching;
  useEffect(() => {
    if (settled || view !== 'timeline') firstContentShown();
  }, [settled, view]);

  useEffect(() => {
    if (session) document.title = `${session.studioTitle || session.sessionId} · Agent Studio`;
  }, [session]);

  if (!session) {
    return (
      <div className="p-6 text-sm text-slate-700 dark:text-slate-200">
        {error ? (
          <div role="alert" className="space-y-2">
            <h1 className="text-lg font-semibold">Session not available</h1>
            <p>{error}</p>
            <Link to="/" className="underline">
              Back to the session list
            </Link>
          </div>
        ) : (
          <p role="status">{fetching ? 'Loading the session…' : 'Session not found.'}</p>
        )}
      </div>
    );
  }

  return (
    <div className="flex min-h-0 flex-1 flex-col">
      <SessionHeader
        session={session}
        timelineHref={sessionHref(sessionId)}
        checkpointsHref={checkpointsHref(sessionId)}
        current={view}
      />
      {view === 'timeline' ? (
        <>
          {/* Tool-call and question cards in the timeline are h3: this h2 keeps the outline unbroken. */}
          <h2 className="sr-only">Session events</h2>
          <Timeline
            key={sessionId}
            sessionId={sessionId}
            lastEventSeq={session.lastEventSeq}
            focusSeq={focusSeq}
            eventHref={hrefOf}
            checkpointsHref={checkpointsHref(sessionId)}
            restoreHref={restoreHrefOf}
            renderToolCall={renderToolCall}
            renderQuestion={renderQuestion}
            onShown={firstContentShownAfterPaint}
            toolbarStart={<SessionSearch sessionId={sessionId} eventHref={hrefOf} />}
          />
        </>
      ) : (
        <div className="relative min-h-0 flex-1 overflow-y-auto">
          <Suspense
            fallback={
              <p role="status" className="p-6 text-sm">
                Loading…
              </p>
            }
          >
            <CheckpointBrowserPage
              key={restoreCheckpointId ?? ''}
              sessionId={sessionId}
              renderToolCall={renderToolCall}
              initialRestore={restoreCheckpointId}
              lastEventSeq={session.lastEventSeq}
              eventHref={hrefOf}
            />
          </Suspense>
        </div>
      )}
      {view === 'timeline' && session.status === 'ACTIVE' ? (
        <div className="border-t border-slate-200 px-3 py-1.5 roomy:px-4 roomy:py-2 dark:border-slate-700">
          <MessageComposer
            key={sessionId}
            sessionId={sessionId}
            runStatus={(session.activeRun?.status as RunStatus | undefined) ?? null}
          />
        </div>
      ) : null}
    </div>
  );
}
