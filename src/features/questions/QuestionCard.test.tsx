import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import axe from 'axe-core';
import { Provider } from 'urql';
import { beforeEach, describe, expect, it } from 'vitest';
import { CONTROL_NOTICE } from '../../graphql/attachment.ts';
import { makeFakeStudio, studioError, type Handler } from '../../test/fakeStudio.ts';
import { attachHandlers } from '../../test/studioFixtures.ts';
import { QuestionCard } from './QuestionCard.tsx';

function question(overrides: Record<string, unknown> = {}) {
  return {
    __typename: 'StudioQuestion',
    questionId: 'question-1',
    sessionId: 'session-1',
    kind: 'FREE_TEXT',
    prompt: 'Which branch should I use?',
    choices: [],
    initialText: null,
    status: 'OPEN',
    answerText: null,
    answerChoiceIndex: null,
    answerApproved: null,
    askedBy: 'subagent planner',
    askedAt: '2026-11-30T09:50:00.000Z',
    answeredAt: null,
    ...overrides,
  };
}

function setup(q: Record<string, unknown>, answer?: Handler) {
  const studio = makeFakeStudio({
    ...attachHandlers(),
    studioQuestion: () => q,
    studioAnswerQuestion:
      answer ??
      ((args) => {
        const input = args.input as Record<string, unknown>;
        return question({
          ...q,
          status: 'ANSWERED',
          answerText: input.text ?? null,
          answerChoiceIndex: input.choiceIndex ?? null,
          answerApproved: input.approved ?? null,
          answeredAt: '2026-11-30T09:51:00.000Z',
        });
      }),
  });
  render(
    <Provider value={studio.client}>
      <QuestionCard questionId="question-1" sessionId="session-1" />
    </Provider>,
  );
  return studio;
}

const inputOf = (studio: ReturnType<typeof setup>) =>
  studio.calls.find((c) => c.field === 'studioAnswerQuestion')?.args.input as
    Record<string, unknown> | undefined;

/** Answering is one step: no confirmation dialog stands between the answer and the server. */
function expectNoAttachStep() {
  expect(screen.queryByRole('alertdialog')).toBeNull();
}

describe('QuestionCard', () => {
  beforeEach(() => localStorage.clear());

  it('attaches and answers in one step, and says the control notice once', async () => {
    const user = userEvent.setup();
    const studio = setup(question());
    await user.type(await screen.findByLabelText('Your answer'), 'main');
    await user.click(screen.getByRole('button', { name: 'Send answer' }));
    expectNoAttachStep();
    expect(await screen.findByText(/^Answered/)).toBeTruthy();
    const fields = studio.calls.map((c) => c.field);
    expect(fields.indexOf('crowdyStudioAgentAttachClient')).toBeGreaterThan(-1);
    expect(fields.indexOf('crowdyStudioAgentAttachClient')).toBeLessThan(
      fields.indexOf('studioAnswerQuestion'),
    );
    const notice = screen.getByRole('status', { name: '' });
    expect(within(notice).getByText(CONTROL_NOTICE)).toBeTruthy();
    await user.click(within(notice).getByRole('button', { name: 'Got it' }));
    expect(screen.queryByText(CONTROL_NOTICE)).toBeNull();
    expect(localStorage.getItem('agent-studio:control-notice-seen')).toBe('1');
  });

  it('answers a free-text question', async () => {
    const user = userEvent.setup();
    const studio = setup(question());
    expect(
      await screen.findByRole('article', { name: 'Question from subagent planner' }),
    ).toBeTruthy();
    await user.type(screen.getByLabelText('Your answer'), 'main');
    await user.click(screen.getByRole('button', { name: 'Send answer' }));
    expectNoAttachStep();
    expect(await screen.findByText(/^Answered/)).toBeTruthy();
    expect(screen.getByText('main')).toBeTruthy();
    expect(inputOf(studio)).toMatchObject({
      questionId: 'question-1',
      sessionId: 'session-1',
      clientEpoch: '1',
      text: 'main',
    });
    expect(inputOf(studio)).not.toHaveProperty('choiceIndex');
  });

  it('answers a multiple-choice question with the chosen index', async () => {
    const user = userEvent.setup();
    const studio = setup(
      question({ kind: 'MULTIPLE_CHOICE', choices: ['Keep', 'Replace \u202Eexe.txt'] }),
    );
    expect(await screen.findByText('⟨U+202E⟩')).toBeTruthy();
    await user.click(screen.getByRole('radio', { name: /Replace/ }));
    await user.click(screen.getByRole('button', { name: 'Send choice' }));
    expectNoAttachStep();
    expect(await screen.findByText(/^Chosen/)).toBeTruthy();
    expect(inputOf(studio)).toMatchObject({ choiceIndex: 1 });
  });

  it('answers a confirm question with approved', async () => {
    const user = userEvent.setup();
    const studio = setup(question({ kind: 'CONFIRM', prompt: 'Proceed with the migration?' }));
    await user.click(await screen.findByRole('button', { name: 'No' }));
    expectNoAttachStep();
    expect(await screen.findByText('Answer: No')).toBeTruthy();
    expect(inputOf(studio)).toMatchObject({ approved: false });
  });

  it('sends the edited text of an edit-text question', async () => {
    const user = userEvent.setup();
    const studio = setup(question({ kind: 'EDIT_TEXT', initialText: 'git push origin main' }));
    const field = await screen.findByLabelText('Edit the text');
    expect((field as HTMLTextAreaElement).value).toBe('git push origin main');
    await user.clear(field);
    await user.type(field, 'git push origin dev');
    await user.click(screen.getByRole('button', { name: 'Send edited text' }));
    expectNoAttachStep();
    await screen.findByText(/^Answered/);
    expect(inputOf(studio)).toMatchObject({ text: 'git push origin dev' });
  });

  it('closes and says it was answered elsewhere on STUDIO_QUESTION_CLOSED', async () => {
    const user = userEvent.setup();
    setup(question({ kind: 'CONFIRM' }), () => {
      throw studioError('STUDIO_QUESTION_CLOSED', 'already answered');
    });
    await user.click(await screen.findByRole('button', { name: 'Yes' }));
    expectNoAttachStep();
    expect(await screen.findByText(/answered elsewhere/)).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Yes' })).toBeNull();
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('shows a question answered elsewhere as closed, with the answer', async () => {
    setup(question({ status: 'ANSWERED_ELSEWHERE', answerText: 'use dev' }));
    expect(await screen.findByText(/answered elsewhere/)).toBeTruthy();
    expect(screen.getByText('use dev')).toBeTruthy();
    expect(screen.queryByLabelText('Your answer')).toBeNull();
  });

  it('shows a refused answer by its code', async () => {
    const user = userEvent.setup();
    setup(question({ kind: 'CONFIRM' }), () => {
      throw studioError('AGENT_SESSION_CLOSED', 'the session is closed');
    });
    await user.click(await screen.findByRole('button', { name: 'Yes' }));
    expectNoAttachStep();
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('AGENT_SESSION_CLOSED')).toBeTruthy();
    expect(within(alert).getByText('the session is closed')).toBeTruthy();
  });

  it('has no serious accessibility violations', async () => {
    setup(question({ kind: 'MULTIPLE_CHOICE', choices: ['Keep', 'Replace'] }));
    await screen.findByRole('radio', { name: 'Keep' });
    const results = await axe.run(document.body, {
      rules: { 'color-contrast': { enabled: false } },
    });
    const serious = results.violations.filter(
      (v) => v.impact === 'serious' || v.impact === 'critical',
    );
    expect(serious.map((v) => v.id)).toEqual([]);
  });
});
