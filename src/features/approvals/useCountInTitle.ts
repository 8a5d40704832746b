import { useEffect } from 'react';
import { useInboxCount } from './useInboxCount.ts';

const PREFIX = /^\(\d+\) /;

/**
 * Keeps the number of waiting approvals in front of the page title on every page ("(3) …"),
 * whatever title the page itself sets: a MutationObserver re-applies it when a page changes it.
 */
export function useApprovalCountInTitle(): void {
  const count = useInboxCount();
  useEffect(() => {
    const apply = () => {
      const base = document.title.replace(PREFIX, '');
      const next = count > 0 ? `(${count}) ${base}` : base;
      if (document.title !== next) document.title = next;
    };
    apply();
    const head = document.head;
    const observer = new MutationObserver(apply);
    observer.observe(head, { subtree: true, childList: true, characterData: true });
    return () => {
      observer.disconnect();
      document.title = document.title.replace(PREFIX, '');
    };
  }, [count]);
}
