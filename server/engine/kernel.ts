/**
 * The kernel: the only holder of the Store. It runs the engine's transactions and gives the rule
 * modules one handle, `db`, with the Store's transaction methods:
 * - inside `write(fn)` / `read(fn)` every `db` call goes to that transaction (the transaction
 *   follows the async calls made from `fn`, through AsyncLocalStorage), and a nested `write`
 *   or `read` joins it, so a rule that appends inside another rule's transaction commits with it;
 * - outside any transaction a `db` read runs in its own read-only transaction and a `db` write
 *   in its own write transaction.
 * Notifications (`notify`) reach `onNotification` handlers only after commit (the Store's
 * `listen`); the Notifier wakes subscriptions from them.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Store, StoreNotification, TransactionOptions, Tx } from '../store/Store.ts';
import type { SessionRecord } from '../store/records.ts';

/** One open transaction as the kernel tracks it. */
interface Frame {
  tx: Tx;
  ended: boolean;
  /** Session records appended to in a group commit, written once at its end. */
  group: Map<string, SessionRecord> | null;
  /** Run once this transaction committed (dropped on rollback or a retried attempt). */
  afterCommit: (() => unknown)[];
  /**
   * In a settled write (`writeSettled`): the store calls and joined transactions started in it
   * that have not settled yet, including ones nobody awaits. Null otherwise (not tracked).
   */
  strays: Set<Promise<unknown>> | null;
}

/** Tx methods that write (run in a write transaction when called outside one). */
const WRITES = new Set<string>([
  'lockSession',
  'notify',
  'insertEvent',
  'putSession',
  'putSessionIf',
  'putRun',
  'putToolCall',
  'putApproval',
  'decideApproval',
  'putApprovalRule',
  'putLease',
  'putCheckpoint',
  'putProject',
  'putClient',
  'putIdempotency',
  'deleteIdempotency',
  'pruneIdempotency',
  'putRestoreJob',
  'deleteRestoreJob',
  'putQuestion',
  'putBudget',
  'putMeta',
  'enqueueJob',
  'claimJob',
  'completeJob',
  'failJob',
  'pruneJobs',
]);

export type Db = Omit<Tx, 'readOnly'>;

/**
 * Resolves once `strays` is empty and stays so over a turn of the event loop: a continuation of
 * a settled call (the next statement of an append nobody awaits) runs in a microtask and joins
 * before the turn ends.
 */
async function settle(strays: Set<Promise<unknown>>): Promise<void> {
  for (;;) {
    while (strays.size > 0) await Promise.all([...strays]);
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (strays.size === 0) return;
  }
}

/** Keeps `value` (a store call's promise) in the frame's strays until it settles. */
function track<T>(frame: Frame, value: T): T {
  if (!(value instanceof Promise)) return value;
  const strays = frame.strays!;
  const settled: Promise<unknown> = value.then(
    () => strays.delete(settled),
    () => strays.delete(settled),
  );
  strays.add(settled);
  return value;
}

function invoke(tx: Tx, name: string, args: unknown[]): unknown {
  return (tx as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!(...args);
}

/** The reads a view may make (resolvers, subscriptions, sources): no writes, no transactions. */
export type Reads = Pick<
  Tx,
  | 'readEvents'
  | 'readEventPayloads'
  | 'hasForeignId'
  | 'storedForeignIds'
  | 'countEvents'
  | 'searchEvents'
  | 'getSession'
  | 'listSessions'
  | 'listAllSessions'
  | 'getRun'
  | 'getToolCall'
  | 'getApproval'
  | 'listPendingApprovals'
  | 'listDecidedApprovals'
  | 'getApprovalRule'
  | 'listApprovalRules'
  | 'getLease'
  | 'listActiveLeases'
  | 'getCheckpoint'
  | 'listCheckpoints'
  | 'listCheckpointsOfProject'
  | 'getProject'
  | 'getClient'
  | 'listAttachedClients'
  | 'getQuestion'
  | 'findQuestionById'
  | 'getBudget'
>;

export class Kernel {
  private readonly als = new AsyncLocalStorage<Frame>();
  readonly db: Db;
  /** `db` restricted to reads (the engine hands this to views). */
  readonly reads: Reads;

  constructor(private readonly store: Store) {
    // One function per method name, made once: every store call of every append goes through
    // here, and a fresh closure per call was measurable (bench:ingest profile).
    const methods = new Map<string, (...args: unknown[]) => unknown>();
    const method = (name: string) => {
      const writes = WRITES.has(name);
      return (...args: unknown[]): unknown => {
        const frame = this.current();
        if (frame && (!frame.tx.readOnly || !writes))
          return frame.strays
            ? track(frame, invoke(frame.tx, name, args))
            : invoke(frame.tx, name, args);
        if (name === 'notify') throw new Error('notify outside a transaction');
        return writes
          ? this.write(async (tx) => invoke(tx, name, args))
          : this.read(async (tx) => invoke(tx, name, args));
      };
    };
    this.db = new Proxy({} as Db, {
      get: (_target, name: string) => {
        let found = methods.get(name);
        if (!found) {
          found = method(name);
          methods.set(name, found);
        }
        return found;
      },
    });
    const db = this.db as unknown as Record<string, unknown>;
    this.reads = new Proxy({} as Reads, {
      get: (_target, name: string) => {
        if (WRITES.has(name)) throw new Error(`${name} is not a read`);
        return db[name];
      },
    });
  }

  get storeKind(): string {
    return this.store.kind;
  }

  get shared(): boolean {
    return this.store.shared;
  }

  private current(): Frame | undefined {
    const frame = this.als.getStore();
    return frame && !frame.ended ? frame : undefined;
  }

  /** True inside an open transaction (of either kind). */
  inTransaction(): boolean {
    return this.current() !== undefined;
  }

  /** The open write transaction's group-commit map, if a group commit is running. */
  groupOf(): Map<string, SessionRecord> | null {
    return this.current()?.group ?? null;
  }

  /** Runs `fn` in a write transaction (joining the open one). */
  async write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const frame = this.current();
    if (frame && !frame.tx.readOnly)
      return frame.strays ? track(frame, fn(frame.tx)) : fn(frame.tx);
    return this.commit(fn);
  }

  /**
   * A write transaction (joining the open one) that commits only once everything started in it
   * has settled: store calls and joined writes nobody awaits included (a source's hook that
   * appends "later", from inside the transaction, appends in it). A write started after the
   * transaction ended is its own, as always. Used where what a source appends must commit with
   * the transaction that holds the session (Decisions.deliverInOrder). Inside an open write
   * transaction it joins it, as `write` does (that transaction's end is its own).
   */
  async writeSettled<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const frame = this.current();
    if (frame && !frame.tx.readOnly) return this.write(fn);
    return this.commit(fn, (f) => (f.strays = new Set()));
  }

  /** Runs a new write transaction; its frame's after-commit steps run once it committed. */
  private async commit<T>(
    fn: (tx: Tx) => Promise<T>,
    setup?: (frame: Frame) => void,
    options: TransactionOptions = {},
  ): Promise<T> {
    let last: Frame | null = null;
    const result = await this.store.transaction((tx) => {
      const frame: Frame = { tx, ended: false, group: null, afterCommit: [], strays: null };
      last = frame;
      setup?.(frame);
      return this.enter(frame, fn);
    }, options);
    const steps = (last as Frame | null)?.afterCommit ?? [];
    if (steps.length > 0) this.detached(() => setImmediate(() => this.runSteps(steps)));
    return result;
  }

  private runSteps(steps: (() => unknown)[]): void {
    for (const step of steps) {
      try {
        const result = step();
        if (result instanceof Promise) result.catch((error: unknown) => this.onStepError?.(error));
      } catch (error) {
        this.onStepError?.(error);
      }
    }
  }

  /** Where a failed after-commit step is reported (the engine logs it). */
  onStepError: ((error: unknown) => void) | null = null;

  /**
   * Runs `step` after the open write transaction commits (never if it rolls back), outside any
   * transaction; with none open, on the next turn of the event loop.
   */
  afterCommit(step: () => unknown): void {
    const frame = this.current();
    if (frame && !frame.tx.readOnly) frame.afterCommit.push(step);
    else this.detached(() => setImmediate(() => this.runSteps([step])));
  }

  /**
   * A group commit: `fn` and every append inside it commit together (one fsync); each session's
   * record is written once at the end. `onCommitted` as in TransactionOptions (never called when
   * the group joins an open transaction).
   */
  async group<T>(
    fn: () => Promise<T>,
    options: Pick<TransactionOptions, 'onCommitted'> = {},
  ): Promise<T> {
    const frame = this.current();
    if (frame?.group) return fn();
    if (frame && !frame.tx.readOnly) {
      frame.group = new Map();
      try {
        return await this.flushGroup(frame, await fn());
      } finally {
        frame.group = null;
      }
    }
    return this.commit(
      async () => this.flushGroup(this.current()!, await fn()),
      (frame) => (frame.group = new Map()),
      options.onCommitted ? { onCommitted: options.onCommitted } : {},
    );
  }

  private async flushGroup<T>(frame: Frame, result: T): Promise<T> {
    for (const session of frame.group!.values()) await frame.tx.putSession(session);
    return result;
  }

  /** Runs `fn` in a read-only transaction (joining any open one). */
  async read<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const frame = this.current();
    if (frame) return frame.strays ? track(frame, fn(frame.tx)) : fn(frame.tx);
    return this.store.transaction(
      (tx) => this.enter({ tx, ended: false, group: null, afterCommit: [], strays: null }, fn),
      { readOnly: true },
    );
  }

  /** Runs `fn` outside any transaction (an effect started from one must not join it). */
  detached<T>(fn: () => T): T {
    return this.als.exit(fn);
  }

  private async enter<T>(frame: Frame, fn: (tx: Tx) => Promise<T>): Promise<T> {
    try {
      const result = await this.als.run(frame, () => fn(frame.tx));
      if (frame.strays) await settle(frame.strays);
      return result;
    } finally {
      frame.ended = true;
    }
  }

  onNotification(handler: (n: StoreNotification) => void): () => void {
    return this.store.listen(handler);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
