import { SafeText } from '../../../ui/SafeText.tsx';
import type { MessageRow } from '../buildRows.ts';
import { RowHeader } from './RowHeader.tsx';

/** A user message, or an assistant message that streams chunk by chunk until it is final. */
export function MessageBubble({ row, href }: { row: MessageRow; href: string }) {
  const user = row.role === 'USER';
  return (
    <div className={user ? 'pl-8' : 'pr-8'}>
      <RowHeader
        label={user ? 'User' : 'Assistant'}
        seq={row.seq}
        createdAt={row.createdAt}
        href={href}
      >
        {!row.final ? (
          <span className="inline-flex items-center gap-1 text-blue-800 dark:text-blue-300">
            <span
              aria-hidden="true"
              className="h-1.5 w-1.5 rounded-full bg-blue-600 motion-safe:animate-pulse"
            />
            streaming
          </span>
        ) : null}
      </RowHeader>
      <div
        className={`mt-1 rounded-lg px-3 py-2 text-sm whitespace-pre-wrap break-words ${
          user
            ? 'bg-blue-50 text-slate-900 dark:bg-blue-950 dark:text-slate-50'
            : 'bg-slate-100 text-slate-900 dark:bg-slate-800 dark:text-slate-50'
        }`}
      >
        <SafeText text={row.content} />
      </div>
    </div>
  );
}
