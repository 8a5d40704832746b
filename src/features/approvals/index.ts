export { ApprovalInboxPage, type RenderToolCall } from './ApprovalInboxPage.tsx';
export { useInboxCount } from './useInboxCount.ts';
export { useBackgroundApprovalNotifications } from './useApprovalNotifier.ts';
export { useApprovalCountInTitle } from './useCountInTitle.ts';
