export { SessionsSidebar, useSessionUpdates } from './SessionsSidebar.tsx';
export { MessageComposer, SessionHeader } from './SessionHeader.tsx';
export { SessionControlBanner } from './SessionControlBanner.tsx';
export { useSession } from './useSession.ts';
export type { SessionSummary } from './documents.ts';
export { SessionsOverview } from './SessionsOverview.tsx';
