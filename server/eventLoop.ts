/**
 * Resolves on the next turn of the event loop, after pending I/O callbacks (setImmediate): long
 * work on the main thread (an ingest slice, a history fold, a replay) awaits it between bounded
 * steps so timers, sockets and HTTP requests get their turn.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
