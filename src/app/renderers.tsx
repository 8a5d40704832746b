import { QuestionCard } from '../features/questions/index.ts';
import { RuleActions } from '../features/rules/index.ts';
import { ToolCallCard, type RenderRuleActions } from '../features/tool-calls/index.ts';

/** "Always allow…" / "Always deny…" on every card: the rules feature's editor, prefilled. */
const renderRuleActions: RenderRuleActions = (seed) => <RuleActions seed={seed} />;

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
}) => (
  <ToolCallCard
    toolCallId={toolCallId}
    sessionId={sessionId}
    renderRuleActions={renderRuleActions}
  />
);

export const renderQuestion = ({
  questionId,
  sessionId,
}: {
  questionId: string;
  sessionId: string;
}) => <QuestionCard questionId={questionId} sessionId={sessionId} />;
