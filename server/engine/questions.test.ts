/**
 * Questions (questions.ts) on the real server and store, with a runtime that records what it is
 * told (the shape of a foreign runtime the studio cannot reach here): an answer is delivered, then
 * recorded once; an answered question refuses another answer; a delivery the runtime refuses
 * records nothing and leaves the card open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from '../../test/server/harness.ts';
import type { Harness } from '../../test/server/harness.ts';
import type { QuestionAnswer, Source, SourceHost } from '../sources/Source.ts';
import { StudioError } from './StudioError.ts';
import { ErrorCode } from '../../protocol/contract.ts';

class AskingRuntime implements Source {
  readonly sourceId = 'asking-runtime';
  readonly checkpointsSupported = false;
  host: SourceHost | null = null;
  readonly answers: QuestionAnswer[] = [];
  refuse = false;
  async start(host: SourceHost): Promise<void> {
    this.host = host;
    host.setStatus('LIVE');
  }
  async stop(): Promise<void> {}
  async deliverAnswer(answer: QuestionAnswer): Promise<void> {
    if (this.refuse)
      throw new StudioError(ErrorCode.STUDIO_QUESTION_CLOSED, 'The runtime no longer asks.');
    this.answers.push(answer);
  }
}

let h: Harness;
const runtime = new AskingRuntime();
beforeAll(async () => {
  h = await startHarness({ demo: false, sources: [runtime] });
});
afterAll(async () => {
  await h.dispose();
});

async function ask(n: number) {
  const host = runtime.host!;
  const sessionId = `ask-${n}`;
  await host.ensureSession({ sessionId, title: 'Asks', mode: 'ASK', requestedModel: 'm' });
  const questionId = `q-${n}`;
  await host.append(sessionId, [
    {
      type: 'STUDIO_QUESTION_ASKED',
      question: {
        questionId,
        sessionId,
        kind: 'TEXT',
        prompt: 'Which branch?',
        choices: ['main', 'dev'],
        initialText: null,
        status: 'OPEN',
        answerText: null,
        answerChoiceIndex: null,
        answerApproved: null,
        askedBy: null,
        askedAt: new Date().toISOString(),
        answeredAt: null,
      },
    },
  ]);
  const { clientEpoch } = await h.server.engine.attach({ sessionId });
  return { sessionId, questionId, clientEpoch };
}

describe('questions', () => {
  it('delivers an answer to the runtime, then records it once; a second answer is refused', async () => {
    const { sessionId, questionId, clientEpoch } = await ask(1);
    const answered = await h.server.engine.answerQuestion({
      sessionId,
      clientEpoch,
      questionId,
      choiceIndex: 1,
    });
    expect(answered).toMatchObject({ status: 'ANSWERED', answerChoiceIndex: 1 });
    expect(runtime.answers.map((a) => a.choiceIndex)).toEqual([1]);
    await expect(
      h.server.engine.answerQuestion({ sessionId, clientEpoch, questionId, text: 'again' }),
    ).rejects.toMatchObject({ code: 'STUDIO_QUESTION_CLOSED' });
    expect(runtime.answers).toHaveLength(1);
  });

  it('records nothing when the runtime refuses the answer; the card stays open', async () => {
    const { sessionId, questionId, clientEpoch } = await ask(2);
    runtime.refuse = true;
    try {
      await expect(
        h.server.engine.answerQuestion({ sessionId, clientEpoch, questionId, text: 'dev' }),
      ).rejects.toMatchObject({ code: 'STUDIO_QUESTION_CLOSED' });
    } finally {
      runtime.refuse = false;
    }
    expect((await h.server.engine.reads.getQuestion(sessionId, questionId))?.status).toBe('OPEN');
  });
});
