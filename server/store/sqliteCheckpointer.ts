/**
 * WAL checkpoints off the main thread. SQLite's automatic checkpoint runs inside the COMMIT that
 * crosses 1,000 WAL pages: on the event loop, copying the pages into the database file and
 * fsyncing it (a bridge burst paid it every few slices; under disk load one such commit held the
 * loop for 100–300 ms, bench:ingest). Here the writer's automatic checkpoint is off and a worker
 * thread with its own connection runs `wal_checkpoint(PASSIVE)` on a short interval: PASSIVE
 * never waits for readers or writers, and the writer restarts the WAL from its start once every
 * frame has been copied back, so the WAL stays bounded. If the worker fails, the writer's own
 * automatic checkpoint comes back on (`onFailure`).
 *
 * The worker is a small CommonJS script evaluated from a string (no file to ship beside
 * build/server.js); it loads the same better-sqlite3 the main thread resolved.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the worker checkpoints (an idle WAL costs one header read). */
export const CHECKPOINT_INTERVAL_MS = 100;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
// A failure is posted as text (a thrown SqliteError does not always survive the thread boundary).
const failed = (error) => {
  parentPort.postMessage({ failed: String((error && error.message) || error) });
  process.exit(1);
};
let db;
let checkpoint;
try {
  const Database = require(workerData.driver);
  db = new Database(workerData.file, { fileMustExist: true });
  db.pragma('synchronous = FULL');
  checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
} catch (error) {
  failed(error);
}
const run = () => {
  try {
    checkpoint.run();
  } catch (error) {
    failed(error);
  }
};
const timer = setInterval(run, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'now') {
    run();
    parentPort.postMessage('done');
  } else if (message === 'close') {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
parentPort.postMessage('ready');
`;

export class SqliteCheckpointer {
  private readonly worker: Worker;
  private readonly ready: Promise<void>;
  private readonly exited: Promise<void>;
  private closing = false;
  private failed = false;

  constructor(
    file: string,
    onFailure: (error: Error) => void,
    intervalMs = CHECKPOINT_INTERVAL_MS,
  ) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { file, driver, intervalMs },
    });
    // Never what keeps a process alive: close() ends it; an exiting server does not wait on it.
    this.worker.unref();
    const fail = (error: unknown) => {
      if (this.failed || this.closing) return;
      this.failed = true;
      // An error thrown in the worker arrives cloned, not always as an Error of this realm.
      const message = (error as { message?: unknown } | null)?.message;
      onFailure(
        error instanceof Error
          ? error
          : new Error(typeof message === 'string' ? message : String(error)),
      );
    };
    this.ready = new Promise((resolve) => {
      const onMessage = (message: unknown) => {
        if (message !== 'ready') return;
        this.worker.off('message', onMessage);
        resolve();
      };
      this.worker.on('message', onMessage);
      this.worker.once('exit', () => resolve());
    });
    this.worker.on('error', fail);
    this.worker.on('message', (message: unknown) => {
      if (typeof message === 'object' && message !== null && 'failed' in message)
        fail(new Error(`the checkpoint worker failed: ${String(message.failed)}`));
    });
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', (code) => {
        if (code !== 0) fail(new Error(`the checkpoint worker exited with code ${code}`));
        resolve();
      });
    });
  }

  /** True once the worker failed (the writer checkpoints by itself again). */
  get hasFailed(): boolean {
    return this.failed;
  }

  /** Runs one checkpoint now and waits for it (tests; an idle store). */
  async checkpointNow(): Promise<void> {
    await this.ready;
    if (this.failed || this.closing) return;
    await new Promise<void>((resolve) => {
      const onMessage = (message: unknown) => {
        if (message !== 'done') return;
        this.worker.off('message', onMessage);
        this.worker.off('exit', onExit);
        resolve();
      };
      const onExit = () => {
        this.worker.off('message', onMessage);
        resolve();
      };
      this.worker.on('message', onMessage);
      this.worker.once('exit', onExit);
      this.worker.postMessage('now');
    });
  }

  /** Closes the worker's connection and ends the thread (before the store's own connections). */
  async close(): Promise<void> {
    if (this.closing) return this.exited;
    this.closing = true;
    await this.ready;
    this.worker.postMessage('close');
    await this.exited;
  }
}
