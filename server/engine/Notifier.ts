/**
 * Wakes subscribers after commits. It carries no data: a woken subscription reads the store
 * itself ("notify, then pull"), so a missed or merged wake-up can never lose an event.
 * Wake-ups are deferred to a microtask, which runs after the synchronous transaction that
 * caused them has committed (or rolled back).
 */
type Listener = () => void;

export class Notifier {
  private readonly sessions = new Map<string, Set<Listener>>();
  private readonly sessionUpdates = new Set<(sessionId: string) => void>();
  private readonly sources = new Set<Listener>();
  private readonly closers = new Set<Listener>();

  /** Listens to commits of one session; returns the unsubscribe function. */
  onSession(sessionId: string, listener: Listener): () => void {
    let set = this.sessions.get(sessionId);
    if (!set) {
      set = new Set();
      this.sessions.set(sessionId, set);
    }
    set.add(listener);
    return () => {
      const current = this.sessions.get(sessionId);
      current?.delete(listener);
      if (current?.size === 0) this.sessions.delete(sessionId);
    };
  }

  onSessionUpdate(listener: (sessionId: string) => void): () => void {
    this.sessionUpdates.add(listener);
    return () => this.sessionUpdates.delete(listener);
  }

  onSources(listener: Listener): () => void {
    this.sources.add(listener);
    return () => this.sources.delete(listener);
  }

  /** Called when the server shuts down: every open subscription ends. */
  onClose(listener: Listener): () => void {
    this.closers.add(listener);
    return () => this.closers.delete(listener);
  }

  /** Read-only test hook: how many open subscriptions listen to `sessionId` (0 once all ended). */
  listenerCount(sessionId: string): number {
    return this.sessions.get(sessionId)?.size ?? 0;
  }

  notifySession(sessionId: string): void {
    const set = this.sessions.get(sessionId);
    if (!set) return;
    queueMicrotask(() => {
      for (const listener of [...set]) listener();
    });
  }

  notifySessionUpdate(sessionId: string): void {
    if (this.sessionUpdates.size === 0) return;
    queueMicrotask(() => {
      for (const listener of [...this.sessionUpdates]) listener(sessionId);
    });
  }

  notifySources(): void {
    queueMicrotask(() => {
      for (const listener of [...this.sources]) listener();
    });
  }

  closeAll(): void {
    for (const listener of [...this.closers]) listener();
    this.closers.clear();
  }
}
