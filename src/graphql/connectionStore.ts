import { useSyncExternalStore } from 'react';

/** What the live link to the server is doing right now. */
export type ConnectionStatus = 'connecting' | 'live' | 'reconnecting' | 'offline';

export interface ConnectionState {
  status: ConnectionStatus;
  /** Reconnect attempts since the link was last live. */
  retries: number;
  /** A short, human-readable reason for the last drop, if any. */
  detail: string | null;
}

export interface ConnectionStore {
  get(): ConnectionState;
  set(next: Partial<ConnectionState> & { status: ConnectionStatus }): void;
  subscribe(listener: () => void): () => void;
}

/** A tiny external store for the connection badge; the graphql-ws `on` handlers feed it. */
export function makeConnectionStore(initial: ConnectionStatus = 'connecting'): ConnectionStore {
  let state: ConnectionState = { status: initial, retries: 0, detail: null };
  const listeners = new Set<() => void>();
  return {
    get: () => state,
    set(next) {
      const merged: ConnectionState = {
        status: next.status,
        retries: next.retries ?? (next.status === 'live' ? 0 : state.retries),
        detail:
          next.detail === undefined ? (next.status === 'live' ? null : state.detail) : next.detail,
      };
      if (
        merged.status === state.status &&
        merged.retries === state.retries &&
        merged.detail === state.detail
      ) {
        return;
      }
      state = merged;
      for (const listener of listeners) listener();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The current connection state, re-rendering on every change. */
export function useConnectionState(store: ConnectionStore): ConnectionState {
  return useSyncExternalStore(store.subscribe, store.get, store.get);
}
