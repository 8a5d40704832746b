import { graphql } from '../../graphql/graphql.ts';

/** Everything the question card reads from one StudioQuestion entity (keyed by questionId). */
export const QuestionFragment = graphql(`
  fragment QuestionFields on StudioQuestion @_unmask {
    questionId
    sessionId
    kind
    prompt
    choices
    initialText
    status
    answerText
    answerChoiceIndex
    answerApproved
    askedBy
    askedAt
    answeredAt
  }
`);

/** The card's read of its entity by key (Graphcache resolves `studioQuestion` to the cached entity). */
export const QuestionCardQuery = graphql(
  `
    query QuestionCard($questionId: String!) {
      studioQuestion(questionId: $questionId) {
        ...QuestionFields
      }
    }
  `,
  [QuestionFragment],
);

/** Answers a question with the fields its kind needs (text, choiceIndex or approved). */
export const AnswerQuestionMutation = graphql(
  `
    mutation AnswerQuestion($input: StudioAnswerQuestionInput!) {
      studioAnswerQuestion(input: $input) {
        ...QuestionFields
      }
    }
  `,
  [QuestionFragment],
);
