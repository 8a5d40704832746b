import { ApprovalInboxPage } from '../features/approvals/index.ts';
import { sessionHref } from './paths.ts';
import { renderToolCall } from './renderers.tsx';

/** The approvals inbox with the app's tool-call card (loaded on demand, lazyRoutes.tsx). */
export function InboxScreen() {
  return (
    <div className="min-h-0 flex-1 overflow-y-auto">
      <ApprovalInboxPage renderToolCall={renderToolCall} sessionHref={sessionHref} />
    </div>
  );
}
