export { CheckpointBrowserPage } from './CheckpointBrowserPage.tsx';
export type { RenderToolCall } from './RestoreFlow.tsx';
