import type { ReactNode } from 'react';

/**
 * A wide data table's own horizontal scroller, so on a phone or at 400 % zoom the table scrolls
 * sideways inside its region while the page itself reflows (WCAG 1.4.10 exempts data tables,
 * whose meaning needs two dimensions). Focusable so a keyboard can scroll it.
 */
export function ScrollX({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div
      role="region"
      aria-label={label}
      tabIndex={0}
      className="relative max-w-full overflow-x-auto focus-visible:outline-2 focus-visible:outline-blue-600"
    >
      {children}
    </div>
  );
}
