import { useSyncExternalStore, type ReactNode } from 'react';

/**
 * Opening a session's address paints its newest events first (issue 13): until then the parts
 * of the shell that the first look does not need (the sessions sidebar and its live updates,
 * the new-session form, the kill switch, the approval count and notifications) render nothing
 * and send nothing, so their requests do not queue beside the newest page's on the server and
 * their rendering does not delay the rows. They follow as soon as the timeline showed its
 * newest page (or could not), on any navigation, and at the latest after FIRST_CONTENT_MAX_MS.
 * Every other address renders the whole shell at once.
 */
export const FIRST_CONTENT_MAX_MS = 3_000;

let waiting = false;
let timer: ReturnType<typeof setTimeout> | null = null;
const listeners = new Set<() => void>();

/** The shell waits for the route's first content (boot calls this for a session's address). */
export function waitForFirstContent(maxMs = FIRST_CONTENT_MAX_MS): void {
  if (waiting) return;
  waiting = true;
  timer = setTimeout(firstContentShown, maxMs);
  for (const listener of listeners) listener();
}

/** The route's first content is on screen (or will not come): the whole shell renders. */
export function firstContentShown(): void {
  if (timer) clearTimeout(timer);
  timer = null;
  if (!waiting) return;
  waiting = false;
  for (const listener of listeners) listener();
}

/**
 * `firstContentShown` once the frame now being made has been painted: called from an effect
 * of the commit that shows the content, the shell's other parts then render after that paint,
 * not in the same task before it (React runs a synchronous render's effects before the frame).
 */
export function firstContentShownAfterPaint(): void {
  if (!waiting) return;
  if (typeof requestAnimationFrame !== 'function') {
    setTimeout(firstContentShown, 0);
    return;
  }
  requestAnimationFrame(() => setTimeout(firstContentShown, 0));
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const isShown = () => !waiting;

/** Whether the parts that wait for the first content may render now. */
export function useFirstContentShown(): boolean {
  return useSyncExternalStore(subscribe, isShown, isShown);
}

/** Renders its children once the route's first content is on screen. */
export function AfterFirstContent({ children }: { children: ReactNode }) {
  return useFirstContentShown() ? children : null;
}
