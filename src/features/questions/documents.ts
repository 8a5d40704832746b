import { QuestionFields } from '../../graphql/eventFragments.ts';
import { graphql } from '../../graphql/graphql.ts';

/**
 * Everything the question card reads from one StudioQuestion entity (keyed by questionId): the
 * shared selection QUESTION_* events embed, so both write the same fields.
 */
export const QuestionFragment = QuestionFields;

/** The card's read of its entity by key (Graphcache resolves `studioQuestion` to the cached entity). */
export const QuestionCardQuery = graphql(
  `
    query QuestionCard($questionId: String!) {
      studioQuestion(questionId: $questionId) {
        ...QuestionFields
      }
    }
  `,
  [QuestionFields],
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
  [QuestionFields],
);
