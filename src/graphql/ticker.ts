/**
 * A repeating tick that keeps its pace in a hidden tab: a plain setInterval, plus a dedicated
 * worker's timer (not throttled in background tabs) where workers exist; ticks closer than half
 * a period are merged, so both together tick once per period.
 */
export interface Ticker {
  stop(): void;
}

export function startTicker(everyMs: number, onTick: () => void): Ticker {
  let last = 0;
  const tick = () => {
    const now = Date.now();
    if (now - last < everyMs / 2) return;
    last = now;
    onTick();
  };
  const timer = setInterval(tick, everyMs);
  let worker: Worker | null = null;
  if (typeof Worker !== 'undefined') {
    try {
      worker = new Worker(new URL('./heartbeatWorker.ts', import.meta.url), { type: 'module' });
      worker.onmessage = tick;
      worker.postMessage({ start: everyMs });
    } catch {
      worker = null;
    }
  }
  return {
    stop: () => {
      clearInterval(timer);
      worker?.terminate();
    },
  };
}
