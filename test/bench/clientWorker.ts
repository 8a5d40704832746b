/**
 * The benchmarks' GraphQL client in a worker thread (serverBenchClient.ts), so its work does not
 * share the server's event loop: bench:server and the cross-instance bench both drive it.
 */
import { Worker } from 'node:worker_threads';
import type { ClientCommand, ClientReply } from './serverBenchClient.ts';

export class ClientWorker {
  private readonly worker: Worker;
  private waiting: ((reply: ClientReply) => void) | null = null;
  private readonly early: ClientReply[] = [];

  constructor() {
    const file = new URL('./serverBenchClient.ts', import.meta.url).href;
    // Workers do not inherit tsx's loader; register it before importing the TypeScript entry.
    this.worker = new Worker(
      `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(file)}); })`,
      { eval: true },
    );
    this.worker.on('message', (reply: ClientReply) => {
      const waiting = this.waiting;
      this.waiting = null;
      if (waiting) waiting(reply);
      else this.early.push(reply);
    });
    this.worker.on('error', (error) => {
      const waiting = this.waiting;
      this.waiting = null;
      waiting?.({ kind: 'failed', error: String(error) });
    });
  }

  send(command: ClientCommand): void {
    this.worker.postMessage(command);
  }

  /** The next reply, or a failure after `timeoutMs`. */
  next(timeoutMs: number): Promise<ClientReply> {
    const early = this.early.shift();
    if (early) return Promise.resolve(early);
    return new Promise((done) => {
      const timer = setTimeout(() => {
        this.waiting = null;
        done({ kind: 'failed', error: `no reply from the client worker within ${timeoutMs} ms` });
      }, timeoutMs);
      this.waiting = (reply) => {
        clearTimeout(timer);
        done(reply);
      };
    });
  }

  async request(command: ClientCommand, timeoutMs: number): Promise<ClientReply> {
    this.send(command);
    return this.next(timeoutMs);
  }

  /** The worker's event-loop utilisation since `since` (or the start). */
  elu(since?: ReturnType<Worker['performance']['eventLoopUtilization']>) {
    return this.worker.performance.eventLoopUtilization(since);
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}
