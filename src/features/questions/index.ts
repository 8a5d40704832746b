export { QuestionCard } from './QuestionCard.tsx';
export { QuestionFragment } from './documents.ts';
