import type { EventOf } from '../../../graphql/eventFragments.ts';
import { SafeText } from '../../../ui/SafeText.tsx';
import { EventRowHeader } from './RowHeader.tsx';

/** A foreign runtime's stage transition. */
export function StageRow({ event, href }: { event: EventOf<'StudioStageEvent'>; href: string }) {
  return (
    <div>
      <EventRowHeader event={event} href={href}>
        <span>
          {event.stageFrom ? (
            <>
              <SafeText text={event.stageFrom} /> →{' '}
            </>
          ) : null}
          <SafeText
            text={event.stageTo}
            className="font-medium text-slate-800 dark:text-slate-100"
          />
        </span>
      </EventRowHeader>
      {event.stageDetail ? (
        <p className="mt-1 text-sm text-slate-800 dark:text-slate-200">
          <SafeText text={event.stageDetail} />
        </p>
      ) : null}
    </div>
  );
}

const LEVEL_TONE: Record<string, string> = {
  ERROR: 'text-red-800 dark:text-red-300',
  WARN: 'text-amber-800 dark:text-amber-300',
  WARNING: 'text-amber-800 dark:text-amber-300',
};

/** One log line of a foreign runtime, monospaced. */
export function LogRow({ event, href }: { event: EventOf<'StudioLogEvent'>; href: string }) {
  // The most frequent row: no wrapper of its own (the row's article holds the header and text).
  return (
    <>
      <EventRowHeader event={event} href={href}>
        <span className={`font-medium ${LEVEL_TONE[event.logLevel.toUpperCase()] ?? ''}`}>
          <SafeText bare text={event.logLevel} />
        </span>
        {event.logOrigin ? <SafeText bare text={event.logOrigin} /> : null}
      </EventRowHeader>
      <pre className="mt-1 overflow-x-auto text-xs whitespace-pre-wrap break-words text-slate-800 dark:text-slate-200">
        <SafeText bare text={event.logMessage} />
      </pre>
    </>
  );
}

/** A question (not a tool approval), shown as text when no question card is provided. */
export function QuestionText({ event }: { event: EventOf<'StudioQuestionEvent'> }) {
  const question = event.question;
  const answer =
    question.answerText ??
    (question.answerChoiceIndex !== null && question.answerChoiceIndex !== undefined
      ? (question.choices[question.answerChoiceIndex] ?? null)
      : question.answerApproved === null || question.answerApproved === undefined
        ? null
        : question.answerApproved
          ? 'Yes'
          : 'No');
  return (
    <div className="mt-1 text-sm text-slate-800 dark:text-slate-200">
      <p>
        <SafeText text={question.prompt} />
      </p>
      {question.choices.length > 0 ? (
        <ol className="mt-1 list-decimal pl-5">
          {question.choices.map((choice, index) => (
            <li key={index}>
              <SafeText text={choice} />
            </li>
          ))}
        </ol>
      ) : null}
      <p className="mt-1 text-xs text-slate-600 dark:text-slate-300">
        Status <SafeText text={question.status} />
        {question.askedBy ? (
          <>
            , asked by <SafeText text={question.askedBy} />
          </>
        ) : null}
        {answer !== null ? (
          <>
            , answer <SafeText text={answer} />
          </>
        ) : null}
      </p>
    </div>
  );
}

/** A subagent thread that started, went idle or ended. */
export function ThreadRow({ event, href }: { event: EventOf<'StudioThreadEvent'>; href: string }) {
  return (
    <EventRowHeader event={event} href={href}>
      <span>
        {event.threadAgentName ? <SafeText text={event.threadAgentName} /> : 'thread'}{' '}
        <span className="font-mono">
          <SafeText text={event.threadId} />
        </span>{' '}
        <SafeText
          text={event.threadStatus}
          className="font-medium text-slate-800 dark:text-slate-100"
        />
      </span>
    </EventRowHeader>
  );
}

/** An event the bridge does not know yet: its source, type and payload, as text. */
export function ForeignRow({
  event,
  href,
}: {
  event: EventOf<'StudioForeignEvent'>;
  href: string;
}) {
  return (
    <div>
      <EventRowHeader event={event} href={href}>
        <span>
          <SafeText text={event.foreignSource} />:{' '}
          <SafeText text={event.foreignType} className="font-mono" />
        </span>
        {event.foreignTruncated ? <span>(payload truncated)</span> : null}
      </EventRowHeader>
      <pre className="mt-1 max-h-48 overflow-auto rounded bg-slate-100 p-2 text-xs whitespace-pre-wrap break-words text-slate-800 dark:bg-slate-800 dark:text-slate-200">
        <SafeText text={event.foreignPayloadJson} />
      </pre>
    </div>
  );
}
