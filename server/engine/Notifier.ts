/**
 * Wakes subscribers after commits. It carries no data: a woken subscription reads the store
 * itself ("notify, then pull"), so a missed or merged wake-up can never lose an event.
 * Wake-ups come from the store's notifications (`Tx.notify`, delivered only after the
 * transaction committed: in-process on SQLite, LISTEN/NOTIFY on PostgreSQL, so a subscriber
 * on any instance wakes), through `deliver`.
 */
import type { StoreNotification } from '../store/Store.ts';

type Listener = () => void;

/** Channel of "session <payload> has new events". */
export const SESSION_CHANNEL = 'studio_session';
/** Channel of "session <payload>'s record changed" (the sessions list). */
export const SESSION_UPDATE_CHANNEL = 'studio_session_update';
/** Delivered by a store whose notifications may have been lost (PgStore after a reconnect). */
export const STORE_RESYNC_CHANNEL = 'store.resync';
/** Channel of "sources or the agent policy changed" (payload empty). */
export const SOURCES_CHANNEL = 'studio_sources';

export class Notifier {
  private readonly sessions = new Map<string, Set<Listener>>();
  private readonly sessionUpdates = new Set<(sessionId: string) => void>();
  private readonly sources = new Set<Listener>();
  private readonly closers = new Set<Listener>();
  private readonly anySession = new Set<(sessionId: string) => void>();

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

  /** Hears every session's commits, before that session's subscribers are woken (caches). */
  onAnySession(listener: (sessionId: string) => void): () => void {
    this.anySession.add(listener);
    return () => this.anySession.delete(listener);
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

  /** A committed transaction's notification (from the store). */
  deliver(notification: StoreNotification): void {
    if (notification.channel === SESSION_CHANNEL) this.notifySession(notification.payload);
    else if (notification.channel === SESSION_UPDATE_CHANNEL)
      this.notifySessionUpdate(notification.payload);
    else if (notification.channel === SOURCES_CHANNEL) this.notifySources();
    else if (notification.channel === STORE_RESYNC_CHANNEL)
      // Notifications may have been lost (PostgreSQL's LISTEN connection dropped): every open
      // event stream re-reads the store.
      for (const sessionId of [...this.sessions.keys()]) this.notifySession(sessionId);
  }

  private notifySession(sessionId: string): void {
    for (const listener of [...this.anySession]) listener(sessionId);
    const set = this.sessions.get(sessionId);
    if (!set) return;
    for (const listener of [...set]) listener();
  }

  private notifySessionUpdate(sessionId: string): void {
    for (const listener of [...this.sessionUpdates]) listener(sessionId);
  }

  /** Source status is this process's own state (not in the store): woken directly. */
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
