/**
 * The one-time notice after a first action attached this tab (the calm control model): shown by
 * the approval prompt and the question card alike, dismissed with "Got it".
 */
const button =
  'rounded px-3 py-1.5 text-sm font-medium focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:cursor-not-allowed disabled:opacity-50';

export function ControlNotice({ notice, onDismiss }: { notice: string; onDismiss: () => void }) {
  return (
    <div
      role="status"
      className="flex items-center gap-2 rounded bg-blue-50 p-2 text-xs text-blue-950 dark:bg-blue-950 dark:text-blue-100"
    >
      <span>{notice}</span>
      <button type="button" className={`${button} border border-current`} onClick={onDismiss}>
        Got it
      </button>
    </div>
  );
}
