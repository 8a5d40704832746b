import { QuestionCard } from '../features/questions/index.ts';
import { ToolCallCard } from '../features/tool-calls/index.ts';

/**
 * Cards that live in other features, as the timeline, the inbox and the checkpoint browser
 * render them. Module-level, so the references are stable and memoized rows do not re-render.
 */
export const renderToolCall = ({
  toolCallId,
  sessionId,
}: {
  toolCallId: string;
  sessionId: string;
}) => <ToolCallCard toolCallId={toolCallId} sessionId={sessionId} />;

export const renderQuestion = ({
  questionId,
  sessionId,
}: {
  questionId: string;
  sessionId: string;
}) => <QuestionCard questionId={questionId} sessionId={sessionId} />;
