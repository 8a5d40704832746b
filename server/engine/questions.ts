/**
 * Questions (rule module): an answer to a foreign runtime's question card is checked (attached
 * epoch, question still OPEN), delivered to the runtime, and recorded as STUDIO_QUESTION_ANSWERED
 * unless the source already recorded it.
 */
import type { QuestionAnswer } from '../sources/Source.ts';
import { StudioError } from './StudioError.ts';
import { ErrorCode } from '../../protocol/contract.ts';
import type { EngineCore } from './core.ts';

export type QuestionsHost = EngineCore;

export class Questions {
  constructor(private readonly h: QuestionsHost) {}

  async answerQuestion(input: {
    sessionId: string;
    clientEpoch: string;
    questionId: string;
    text?: string | null;
    choiceIndex?: number | null;
    approved?: boolean | null;
  }) {
    const session = await this.h.requireAttached(input.sessionId, input.clientEpoch);
    const question = await this.h.db.getQuestion(session.sessionId, input.questionId);
    if (!question) throw new StudioError(ErrorCode.BAD_REQUEST, `No question ${input.questionId}.`);
    if (question.status !== 'OPEN')
      throw new StudioError(
        ErrorCode.STUDIO_QUESTION_CLOSED,
        `The question is already ${question.status.toLowerCase().replaceAll('_', ' ')}.`,
      );
    const source = this.h.source(session.source);
    const answer: QuestionAnswer = {
      sessionId: session.sessionId,
      question,
      text: input.text ?? null,
      choiceIndex: input.choiceIndex ?? null,
      approved: input.approved ?? null,
    };
    if (!source?.deliverAnswer)
      throw new StudioError(ErrorCode.HOST_UNAVAILABLE, 'This runtime takes no answers.');
    await source.deliverAnswer(answer);
    const after = await this.h.db.getQuestion(session.sessionId, input.questionId);
    if (after && after.status === 'OPEN') {
      await this.h.append(session.sessionId, [
        {
          type: 'STUDIO_QUESTION_ANSWERED',
          runId: after.runId,
          question: {
            ...stripRun(after),
            status: 'ANSWERED',
            answerText: answer.text,
            answerChoiceIndex: answer.choiceIndex,
            answerApproved: answer.approved,
            answeredAt: this.h.iso(),
          },
        },
      ]);
    }
    const result = await this.h.db.getQuestion(session.sessionId, input.questionId);
    if (!result) throw new Error('question vanished');
    return stripRun(result);
  }
}

function stripRun<T extends { runId: string | null }>(value: T): Omit<T, 'runId'> {
  const { runId, ...rest } = value;
  void runId;
  return rest;
}
