/** A repeating tick that keeps its pace in a hidden tab (a worker timer), or setInterval where there are no workers. */
export interface Ticker {
  stop(): void;
}

export function startTicker(everyMs: number, onTick: () => void): Ticker {
  if (typeof Worker === 'undefined') {
    const timer = setInterval(onTick, everyMs);
    return { stop: () => clearInterval(timer) };
  }
  try {
    const worker = new Worker(new URL('./heartbeatWorker.ts', import.meta.url), { type: 'module' });
    worker.onmessage = () => onTick();
    worker.postMessage({ start: everyMs });
    return { stop: () => worker.terminate() };
  } catch {
    const timer = setInterval(onTick, everyMs);
    return { stop: () => clearInterval(timer) };
  }
}
