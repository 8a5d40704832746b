export { Timeline, type TimelineProps } from './Timeline.tsx';
export type { QuestionSlotProps, RowRenderers, ToolCallSlotProps } from './TimelineRowView.tsx';
