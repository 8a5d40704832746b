import { useEffect, useId, useRef } from 'react';
import { SafeText } from '../../ui/SafeText.tsx';
import type { useApprovalNotifier } from './useApprovalNotifier.ts';

const button =
  'rounded border border-slate-300 px-2 py-1 text-sm hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-600 disabled:cursor-wait disabled:opacity-60 dark:border-slate-600 dark:hover:bg-slate-800';

/** What the person sees: the browser's permission, split by whether they turned notifications on here. */
export type NotificationState = 'on' | 'allowed' | 'default' | 'denied' | 'unsupported';

/** Every state in words; a new state is a compile error here, not a silent button. */
export const NOTIFICATION_STATE_TEXT: Record<NotificationState, string> = {
  on: 'Notifications are on: you are told when an approval arrives while this tab is in the background.',
  allowed:
    'Notifications are off. The browser allows them for this site; turn them on to be told when an approval arrives while this tab is in the background.',
  default:
    'Notifications are off. Turning them on asks the browser for permission, then tells you when an approval arrives while this tab is in the background.',
  denied:
    'Notifications are blocked by the browser for this site. To allow them, open the site settings (the icon at the left of the address bar), set Notifications to Allow, then come back to this tab.',
  unsupported:
    'This browser cannot show notifications here (some allow them only on https addresses). New approvals still show in this inbox and in the tab title.',
};

function stateOf(permission: string, enabled: boolean): NotificationState {
  if (permission === 'granted') return enabled ? 'on' : 'allowed';
  if (permission === 'denied' || permission === 'unsupported') return permission;
  return 'default';
}

/**
 * "Notify me": one line that always says which state notifications are in and what to do next,
 * including when the browser refuses, the person closes the question, or there is no API.
 */
export function NotificationControl({
  permission,
  enabled,
  asking,
  outcome,
  enable,
  disable,
}: ReturnType<typeof useApprovalNotifier>) {
  const statusId = useId();
  const statusRef = useRef<HTMLParagraphElement>(null);
  const state = stateOf(permission, enabled);
  const canAct = state === 'on' || state === 'allowed' || state === 'default';

  // When an answer removes the button (blocked), focus moves to the words rather than the page.
  const askedRef = useRef(false);
  useEffect(() => {
    if (asking) askedRef.current = true;
    else if (askedRef.current) {
      askedRef.current = false;
      if (!canAct) statusRef.current?.focus();
    }
  }, [asking, canAct]);

  let note: string | null = null;
  if (outcome?.kind === 'refused' && state === 'denied') note = 'The browser refused permission.';
  else if (outcome?.kind === 'dismissed' && state === 'default')
    note =
      'The browser’s question was closed without an answer, so notifications stay off; the button asks again.';
  else if (outcome?.kind === 'failed' && state !== 'on')
    note = `The browser did not answer the permission request (${outcome.message}); notifications stay off.`;

  return (
    <div className="flex max-w-md flex-wrap items-center gap-2 text-xs">
      <p
        id={statusId}
        ref={statusRef}
        role="status"
        tabIndex={-1}
        className="text-slate-700 focus-visible:outline-2 focus-visible:outline-blue-600 dark:text-slate-300"
      >
        {note ? (
          <>
            <SafeText text={note} />{' '}
          </>
        ) : null}
        {NOTIFICATION_STATE_TEXT[state]}
      </p>
      {canAct ? (
        <button
          type="button"
          className={button}
          aria-describedby={statusId}
          disabled={asking}
          onClick={state === 'on' ? disable : () => void enable()}
        >
          {asking
            ? 'Asking the browser…'
            : state === 'on'
              ? 'Turn off notifications'
              : 'Notify me of new approvals'}
        </button>
      ) : null}
    </div>
  );
}
