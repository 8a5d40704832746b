import { SafeText } from '../../../ui/SafeText.tsx';
import type { ToolCallStatus } from '../../../../protocol/events.ts';
import type { ToolCallRow } from '../buildRows.ts';
import { TOOL_STATUS_WORDS } from '../labels.ts';

/**
 * Whether a tool-call row must show the app's full card: while the call waits for a decision
 * (the card shows exactly what would run: hash, arguments, countdown, Approve/Deny), once it had
 * an approval at all (who or which rule decided it), or when the page read does not hold the
 * call's state. Every other call (one that ran without asking) is one compact line until opened.
 */
export function needsFullCard(row: ToolCallRow): boolean {
  const call = row.toolCall;
  return call === null || call.status === 'WAITING_FOR_APPROVAL' || call.approval !== null;
}

/**
 * One line for a tool call that needs no decision: name, status and safe summary, read from the
 * row (the timeline's page query, so Graphcache), with no query, timer or listener of its own.
 * The button opens the full card in place.
 */
export function ToolCallCompact({ row, onOpen }: { row: ToolCallRow; onOpen: () => void }) {
  const call = row.toolCall;
  const status = (call?.status ?? row.status) as ToolCallStatus | null;
  const approval = call?.approval?.status;
  return (
    <button
      type="button"
      aria-expanded={false}
      onClick={onOpen}
      className="mt-1 flex w-full min-w-0 items-baseline gap-2 rounded text-left text-sm text-slate-800 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-blue-600 dark:text-slate-200 dark:hover:bg-slate-800"
    >
      <SafeText text={row.toolName ?? 'tool'} className="font-mono font-medium" />
      <span className="shrink-0 text-xs text-slate-600 dark:text-slate-300">
        {status ? (TOOL_STATUS_WORDS[status] ?? status) : 'unknown status'}
        {approval ? `, approval ${approval.toLowerCase()}` : ''}
      </span>
      {call?.safeSummary ? (
        <SafeText
          text={call.safeSummary}
          className="min-w-0 flex-1 truncate text-xs text-slate-600 dark:text-slate-400"
        />
      ) : null}
      <span className="ml-auto shrink-0 text-xs text-blue-700 dark:text-blue-300">Details</span>
    </button>
  );
}
