import { SafeText } from '../../../ui/SafeText.tsx';
import type { ToolCallRow } from '../buildRows.ts';

/** The tool call as plain text, for when the app provides no tool-call card. */
export function ToolCallSummary({ row }: { row: ToolCallRow }) {
  const call = row.toolCall;
  return (
    <div className="mt-1 text-sm text-slate-800 dark:text-slate-200">
      <p>
        <SafeText text={row.toolName ?? 'tool'} className="font-mono font-medium" />{' '}
        <span>{row.status ?? 'unknown status'}</span>
      </p>
      {call?.safeSummary ? (
        <p>
          <SafeText text={call.safeSummary} />
        </p>
      ) : null}
      {call?.approval ? (
        <p className="text-xs">Approval {call.approval.status.toLowerCase()}</p>
      ) : null}
    </div>
  );
}
