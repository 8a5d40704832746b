/**
 * A dedicated worker that only ticks. Browsers throttle timers of hidden tabs (down to once a
 * minute), which would let control of a session lapse after the 5 s heartbeat window; timers in a
 * dedicated worker are not throttled that way, so an open tab keeps control while it is hidden.
 */
let timer: ReturnType<typeof setInterval> | null = null;

self.onmessage = (event: MessageEvent<{ start?: number; stop?: true }>) => {
  if (timer) clearInterval(timer);
  timer = null;
  if (event.data.start) timer = setInterval(() => self.postMessage('tick'), event.data.start);
};
