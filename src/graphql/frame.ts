/** Runs `flush` once, soon; returns a function that cancels it. */
export type ScheduleFn = (flush: () => void) => () => void;

/** Background tabs get no animation frames; work queued for a frame still runs this often. */
const HIDDEN_FLUSH_MS = 100;

interface Entry {
  run: () => void;
  cancelled: boolean;
}

let queue: Entry[] = [];
let pending: { frame: number | null; timer: ReturnType<typeof setTimeout> } | null = null;
/** True from a frame's pass until the task after it: work queued then joins this frame. */
let inFrame = false;

function runPass(): void {
  if (pending) {
    if (pending.frame !== null) cancelAnimationFrame(pending.frame);
    clearTimeout(pending.timer);
    pending = null;
  }
  inFrame = true;
  drain();
  // Work queued by this frame's work (a cache write's query results arrive in microtasks)
  // still renders in this frame; the flag closes in the next task, after the frame.
  setTimeout(() => {
    inFrame = false;
  }, 0);
}

function drain(): void {
  const entries = queue;
  queue = [];
  for (const entry of entries) if (!entry.cancelled) entry.run();
}

/**
 * The next animation frame, shared: everything queued for it runs in one pass, in the order it
 * was queued, and what that work queues in turn (within the same frame) runs right after it,
 * in a microtask, instead of waiting for another frame. So a live batch written to the cache at
 * a frame and the page results that write produces render in that same frame. Where frames do
 * not run (background tabs, Node) a timer stands in.
 */
export const nextFrame: ScheduleFn = (flush) => {
  const entry: Entry = { run: flush, cancelled: false };
  queue.push(entry);
  if (inFrame) {
    if (queue.length === 1) queueMicrotask(drain);
  } else if (!pending) {
    pending = {
      frame: typeof requestAnimationFrame === 'function' ? requestAnimationFrame(runPass) : null,
      timer: setTimeout(runPass, HIDDEN_FLUSH_MS),
    };
  }
  return () => {
    entry.cancelled = true;
  };
};
