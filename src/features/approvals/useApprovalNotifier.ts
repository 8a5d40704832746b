import { useCallback, useEffect, useRef, useState } from 'react';
import { toVisibleText } from '../../ui/SafeText.tsx';
import { usePendingApprovals, type PendingApprovalItem } from './usePendingApprovals.ts';

const OPT_IN_KEY = 'agent-studio:approval-notifications';

export type NotificationPermissionState = NotificationPermission | 'unsupported';

/** How the last "Notify me" ended when it did not turn notifications on. */
export type NotificationAskOutcome =
  { kind: 'refused' } | { kind: 'dismissed' } | { kind: 'failed'; message: string };

function readOptIn(): boolean {
  try {
    return localStorage.getItem(OPT_IN_KEY) === 'on';
  } catch {
    return false;
  }
}

function writeOptIn(on: boolean): void {
  try {
    if (on) localStorage.setItem(OPT_IN_KEY, 'on');
    else localStorage.removeItem(OPT_IN_KEY);
  } catch {
    // Private mode without storage: the opt-in lasts for this page only.
  }
}

function notify(item: PendingApprovalItem): void {
  const session = item.session.studioTitle ?? item.session.sessionId;
  // Notification text is plain text, but hidden characters would still reorder or hide parts of it.
  const notification = new Notification(
    `Approval needed: ${toVisibleText(item.toolCall.toolName)}`,
    {
      body: toVisibleText(`${session}: ${item.approval.safeSummary}`).slice(0, 240),
      tag: item.approval.approvalId,
    },
  );
  notification.onclick = () => {
    window.focus();
    notification.close();
  };
}

/**
 * Opt-in browser notifications for approvals that arrive while the tab is in the background.
 * Approvals already pending when the page loaded never notify; each new approvalId notifies once.
 */
export function useApprovalNotifier(items: PendingApprovalItem[], loaded: boolean) {
  const supported = typeof Notification !== 'undefined';
  const [permission, setPermission] = useState<NotificationPermissionState>(() =>
    supported ? Notification.permission : 'unsupported',
  );
  const [optedIn, setOptedIn] = useState(readOptIn);
  const [asking, setAsking] = useState(false);
  const [outcome, setOutcome] = useState<NotificationAskOutcome | null>(null);
  const seen = useRef<Set<string> | null>(null);

  // The permission can change outside the page (site settings, the address bar's site menu):
  // follow it where the browser reports changes, and read it again whenever the tab regains focus.
  useEffect(() => {
    if (!supported) return undefined;
    const reread = () => setPermission(Notification.permission);
    window.addEventListener('focus', reread);
    let status: PermissionStatus | null = null;
    let gone = false;
    navigator.permissions
      ?.query({ name: 'notifications' })
      .then((answer) => {
        if (gone) return;
        status = answer;
        status.addEventListener('change', reread);
      })
      .catch(() => {
        // Some browsers cannot query this permission; focus still re-reads it.
      });
    return () => {
      gone = true;
      window.removeEventListener('focus', reread);
      status?.removeEventListener('change', reread);
    };
  }, [supported]);

  useEffect(() => {
    if (!loaded) return;
    const ids = items.map((item) => item.approval.approvalId);
    if (seen.current === null) {
      seen.current = new Set(ids);
      return;
    }
    const known = seen.current;
    const fresh = items.filter((item) => !known.has(item.approval.approvalId));
    for (const id of ids) known.add(id);
    if (fresh.length === 0 || !optedIn || permission !== 'granted' || !document.hidden) return;
    for (const item of fresh) notify(item);
  }, [items, loaded, optedIn, permission]);

  const enable = useCallback(async () => {
    if (!supported) return;
    setAsking(true);
    setOutcome(null);
    try {
      const answer = await Notification.requestPermission();
      setPermission(answer);
      if (answer === 'granted') {
        setOptedIn(true);
        writeOptIn(true);
      } else setOutcome({ kind: answer === 'denied' ? 'refused' : 'dismissed' });
    } catch (error) {
      setOutcome({
        kind: 'failed',
        message: error instanceof Error ? error.message : String(error),
      });
    } finally {
      setAsking(false);
    }
  }, [supported]);

  const disable = useCallback(() => {
    setOptedIn(false);
    writeOptIn(false);
  }, []);

  return {
    permission,
    enabled: optedIn && permission === 'granted',
    asking,
    outcome,
    enable,
    disable,
  };
}

/** Mounts the inbox watch and notifications without rendering the inbox (for the app shell). */
export function useBackgroundApprovalNotifications() {
  const { items, loaded } = usePendingApprovals();
  return useApprovalNotifier(items, loaded);
}
