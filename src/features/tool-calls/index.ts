export { ToolCallCard, type RenderRuleActions, type RuleSeed } from './ToolCallCard.tsx';
export { ToolCallRowFragment } from './documents.ts';
