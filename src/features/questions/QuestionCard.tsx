import { useId, useRef, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { ErrorCode } from '../../../protocol/contract.ts';
import { errorCode, makeIdempotencyKey, useSessionControl } from '../../graphql/attachment.ts';
import type { ResultOf } from '../../graphql/graphql.ts';
import { ControlNotice } from '../../ui/ControlNotice.tsx';
import { SafeText } from '../../ui/SafeText.tsx';
import { AnswerQuestionMutation, QuestionCardQuery } from './documents.ts';
import { timeOfDay } from '../../ui/timeOfDay.ts';

type Question = NonNullable<ResultOf<typeof QuestionCardQuery>['studioQuestion']>;

/** The answer fields of StudioAnswerQuestionInput; each kind sends the one it needs. */
type Answer = { text: string } | { choiceIndex: number } | { approved: boolean };

const button =
  'rounded px-3 py-1.5 text-sm font-medium focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:cursor-not-allowed disabled:opacity-50';
const primary = `${button} bg-blue-700 text-white hover:bg-blue-800`;
const secondary = `${button} border border-slate-300 hover:bg-slate-100 dark:border-slate-600 dark:hover:bg-slate-800`;

/**
 * A question from a foreign runtime that is not a tool approval (free text, multiple choice,
 * confirm, edit text), read from its StudioQuestion entity by key. Once answered anywhere it
 * closes; a STUDIO_QUESTION_CLOSED refusal means another client answered first. Answering follows
 * the one control model of every action: it attaches at once when this tab only watches (no extra
 * confirmation step), and the one-time control notice says what that means.
 */
export function QuestionCard({ questionId, sessionId }: { questionId: string; sessionId: string }) {
  const [{ data, fetching, error }] = useQuery({
    query: QuestionCardQuery,
    variables: { questionId },
  });
  const question = data?.studioQuestion;
  if (question) return <QuestionView question={question} sessionId={sessionId} />;
  if (fetching) return <p role="status">Loading question…</p>;
  if (error) {
    return (
      <p role="alert" className="text-sm text-red-800 dark:text-red-300">
        Could not load the question: <SafeText text={error.message} />
      </p>
    );
  }
  return <p className="text-sm">This question is not known to the server.</p>;
}

function QuestionView({ question, sessionId }: { question: Question; sessionId: string }) {
  const titleId = useId();
  const control = useSessionControl(sessionId);
  const [, answer] = useMutation(AnswerQuestionMutation);
  const [closedElsewhere, setClosedElsewhere] = useState(false);
  const [sending, setSending] = useState(false);
  const [refusal, setRefusal] = useState<{ code: string | null; message: string } | null>(null);
  // Whether this card acted: only then does it show the one-time control notice.
  const [acted, setActed] = useState(false);
  const inFlight = useRef(false);

  const send = async (fields: Answer) => {
    if (inFlight.current) return;
    inFlight.current = true;
    setActed(true);
    setRefusal(null);
    setSending(true);
    try {
      let clientEpoch: string;
      try {
        clientEpoch = await control.ensureAttached();
      } catch (attachError) {
        setRefusal({
          code: null,
          message: attachError instanceof Error ? attachError.message : String(attachError),
        });
        return;
      }
      const result = await answer({
        input: {
          idempotencyKey: makeIdempotencyKey('answerQuestion'),
          sessionId,
          clientEpoch,
          questionId: question.questionId,
          ...fields,
        },
      });
      const code = errorCode(result.error);
      if (code === ErrorCode.STUDIO_QUESTION_CLOSED) setClosedElsewhere(true);
      else if (result.error)
        setRefusal({
          code,
          message: result.error.graphQLErrors[0]?.message ?? result.error.message,
        });
    } finally {
      inFlight.current = false;
      setSending(false);
    }
  };

  const submit = (fields: Answer) => {
    if (control.state === 'fenced' || control.state === 'attaching') return;
    void send(fields);
  };
  const notice = acted ? control.notice : null;

  const elsewhere = closedElsewhere || question.status === 'ANSWERED_ELSEWHERE';
  const open = question.status === 'OPEN' && !elsewhere;

  return (
    <article
      aria-labelledby={titleId}
      className="space-y-2 rounded-lg border border-violet-300 bg-white p-3 text-slate-900 dark:border-violet-700 dark:bg-slate-950 dark:text-slate-100"
    >
      <header className="flex flex-wrap items-center gap-2">
        <h3 id={titleId} className="text-sm font-semibold">
          Question
          {question.askedBy ? (
            <>
              {' '}
              from <SafeText text={question.askedBy} />
            </>
          ) : null}
        </h3>
        <span className="text-xs text-slate-600 dark:text-slate-400">
          asked at{' '}
          <time dateTime={question.askedAt} title={question.askedAt}>
            {timeOfDay(question.askedAt)}
          </time>
        </span>
      </header>
      <p className="text-sm">
        <SafeText text={question.prompt} className="whitespace-pre-wrap break-words" />
      </p>

      {elsewhere ? (
        <p role="status" className="rounded bg-slate-100 p-2 text-sm dark:bg-slate-800">
          This question was answered elsewhere; this card is closed.
          <AnswerText question={question} />
        </p>
      ) : question.status === 'ANSWERED' ? (
        <p className="rounded bg-emerald-50 p-2 text-sm dark:bg-emerald-950/40">
          Answered
          {question.answeredAt ? (
            <>
              {' '}
              at <time dateTime={question.answeredAt}>{timeOfDay(question.answeredAt)}</time>
            </>
          ) : null}
          .<AnswerText question={question} />
        </p>
      ) : question.status === 'EXPIRED' ? (
        <p className="rounded bg-slate-100 p-2 text-sm dark:bg-slate-800">
          This question expired without an answer.
        </p>
      ) : open ? (
        control.state === 'fenced' ? (
          <div
            role="alert"
            className="rounded bg-red-100 p-2 text-sm text-red-900 dark:bg-red-950 dark:text-red-100"
          >
            Another tab or client has taken control of this session; answers from this tab would be
            refused.{' '}
            <button
              type="button"
              className={primary}
              onClick={() => void control.takeControl().catch(() => undefined)}
            >
              Take control back
            </button>
          </div>
        ) : (
          <AnswerForm question={question} busy={sending} onAnswer={submit} />
        )
      ) : (
        <p className="text-sm">
          Status: <SafeText text={question.status} />
        </p>
      )}

      {notice ? <ControlNotice notice={notice} onDismiss={() => control.dismissNotice()} /> : null}
      {refusal && !elsewhere ? (
        <div
          role="alert"
          className="rounded bg-red-100 p-2 text-sm text-red-900 dark:bg-red-950 dark:text-red-100"
        >
          {refusal.code ? (
            <code className="mr-1 font-mono font-semibold">{refusal.code}</code>
          ) : null}
          {refusal.code === ErrorCode.CLIENT_EPOCH_STALE ? (
            <>
              Another tab or client has taken control of this session, so the answer was not sent.{' '}
              <button
                type="button"
                className={primary}
                onClick={() =>
                  void control.takeControl().then(
                    () => setRefusal(null),
                    () => undefined,
                  )
                }
              >
                Take control back
              </button>
            </>
          ) : (
            <>
              The answer was refused: <SafeText text={refusal.message} />
            </>
          )}
        </div>
      ) : null}
    </article>
  );
}

function AnswerText({ question }: { question: Question }) {
  if (question.answerText !== null) {
    return (
      <span className="mt-1 block">
        Answer: <SafeText text={question.answerText} className="whitespace-pre-wrap break-words" />
      </span>
    );
  }
  if (question.answerChoiceIndex !== null) {
    const choice = question.choices[question.answerChoiceIndex];
    return (
      <span className="mt-1 block">
        Chosen: <SafeText text={choice ?? `choice ${question.answerChoiceIndex + 1}`} />
      </span>
    );
  }
  if (question.answerApproved !== null) {
    return <span className="mt-1 block">Answer: {question.answerApproved ? 'Yes' : 'No'}</span>;
  }
  return null;
}

function AnswerForm({
  question,
  busy,
  onAnswer,
}: {
  question: Question;
  busy: boolean;
  onAnswer: (answer: Answer) => void;
}) {
  const fieldId = useId();
  const [text, setText] = useState(
    question.kind === 'EDIT_TEXT' ? (question.initialText ?? '') : '',
  );
  const [choice, setChoice] = useState<number | null>(null);

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (question.kind === 'MULTIPLE_CHOICE') {
      if (choice !== null) onAnswer({ choiceIndex: choice });
    } else if (text.trim() || question.kind === 'EDIT_TEXT') {
      onAnswer({ text });
    }
  };

  switch (question.kind) {
    case 'CONFIRM':
      return (
        <div className="flex gap-2">
          <button
            type="button"
            className={primary}
            disabled={busy}
            onClick={() => onAnswer({ approved: true })}
          >
            Yes
          </button>
          <button
            type="button"
            className={secondary}
            disabled={busy}
            onClick={() => onAnswer({ approved: false })}
          >
            No
          </button>
        </div>
      );
    case 'MULTIPLE_CHOICE':
      return (
        <form onSubmit={onSubmit} className="space-y-2">
          <fieldset className="space-y-1">
            <legend className="text-sm font-medium">Choose one</legend>
            {question.choices.map((label, index) => (
              <label key={index} className="flex items-center gap-2 text-sm">
                <input
                  type="radio"
                  name={fieldId}
                  checked={choice === index}
                  onChange={() => setChoice(index)}
                />
                <SafeText text={label} />
              </label>
            ))}
          </fieldset>
          <button type="submit" className={primary} disabled={busy || choice === null}>
            Send choice
          </button>
        </form>
      );
    case 'FREE_TEXT':
    case 'EDIT_TEXT': {
      const editing = question.kind === 'EDIT_TEXT';
      return (
        <form onSubmit={onSubmit} className="space-y-2">
          <label htmlFor={fieldId} className="block text-sm font-medium">
            {editing ? 'Edit the text' : 'Your answer'}
          </label>
          <textarea
            id={fieldId}
            value={text}
            rows={editing ? 6 : 3}
            onChange={(event) => setText(event.target.value)}
            className="w-full rounded border border-slate-300 bg-white p-1 font-mono text-sm dark:border-slate-600 dark:bg-slate-900"
          />
          <div className="flex gap-2">
            <button type="submit" className={primary} disabled={busy || (!editing && !text.trim())}>
              {editing ? 'Send edited text' : 'Send answer'}
            </button>
            {editing && text !== (question.initialText ?? '') ? (
              <button
                type="button"
                className={secondary}
                onClick={() => setText(question.initialText ?? '')}
              >
                Reset to the original
              </button>
            ) : null}
          </div>
        </form>
      );
    }
    default:
      return (
        <p className="text-sm">
          This kind of question (<SafeText text={question.kind} />) cannot be answered from the
          studio; answer it where it was asked.
        </p>
      );
  }
}
