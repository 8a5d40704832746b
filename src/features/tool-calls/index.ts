export { ToolCallCard } from './ToolCallCard.tsx';
export { ToolCallRowFragment } from './documents.ts';
