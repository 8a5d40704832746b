import type { Client, CombinedError } from '@urql/core';
import { useMemo, useSyncExternalStore } from 'react';
import { useClient } from 'urql';
import { ErrorCode, HEARTBEAT_INTERVAL_MS } from '../../protocol/contract.ts';
import { graphql } from './graphql.ts';
import { startTicker, type Ticker } from './ticker.ts';

/** Where this tab stands with one session: watching, taking control, in control, or fenced. */
export type SessionControlState = 'observer' | 'attaching' | 'attached' | 'fenced' | 'error';

export interface SessionControlSnapshot {
  state: SessionControlState;
  /** The epoch this tab acts with while attached (a decimal string). */
  clientEpoch: string | null;
  /** Why the last attach or heartbeat failed, or why control was lost. */
  error: string | null;
  /** Said once per browser, right after this tab first took control (dismissNotice() hides it). */
  notice: string | null;
}

export interface SessionControl extends SessionControlSnapshot {
  /** Resolves with the clientEpoch, attaching first if this tab is only watching. */
  ensureAttached(): Promise<string>;
  /** Attaches even when fenced: this fences every other tab and client of the session. */
  takeControl(): Promise<string>;
  /** Stops heartbeating and goes back to watching. */
  release(): void;
  dismissNotice(): void;
}

/** The one-time notice of the control model (every action attaches the same way). */
export const CONTROL_NOTICE =
  'This tab now controls the session: your action attached it, as every action does. Other tabs and clients are fenced and only watch until one of them takes control; this tab keeps control while it is open, even in the background.';

const NOTICE_KEY = 'agent-studio:control-notice-seen';

function takeNotice(): string | null {
  try {
    if (localStorage.getItem(NOTICE_KEY)) return null;
    localStorage.setItem(NOTICE_KEY, '1');
  } catch {
    // No storage: say it (this tab may say it again next time).
  }
  return CONTROL_NOTICE;
}

export const AttachClientMutation = graphql(`
  mutation StudioAttachClient($input: AttachAgentClientInput!) {
    crowdyStudioAgentAttachClient(input: $input) {
      clientEpoch
      replayAfterSeq
      session {
        sessionId
        currentClientEpoch
        clientEpoch
      }
    }
  }
`);

export const HeartbeatMutation = graphql(`
  mutation StudioHeartbeat($input: AgentHeartbeatInput!) {
    crowdyStudioAgentHeartbeat(input: $input) {
      serverTime
      workspaceLeaseExpiresAt
    }
  }
`);

const SessionEpochQuery = graphql(`
  query StudioSessionEpoch($sessionId: String!) {
    crowdyStudioAgentSession(sessionId: $sessionId) {
      sessionId
      currentClientEpoch
    }
  }
`);

const INSTANCE_KEY = 'agent-studio:client-instance-id';

function randomId(): string {
  const c = globalThis.crypto;
  // randomUUID only exists in secure contexts; a studio opened on a LAN address is not one.
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  const bytes = new Uint8Array(16);
  c.getRandomValues(bytes);
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** A fresh idempotency key for one user action: `studio:<operation>:<uuid>`. */
export function makeIdempotencyKey(operation: string): string {
  return `studio:${operation}:${randomId()}`;
}

/** The stable id of this tab as a client instance (sessionStorage, so each tab has its own). */
export function clientInstanceId(): string {
  try {
    const existing = sessionStorage.getItem(INSTANCE_KEY);
    if (existing) return existing;
    const created = `studio-tab:${randomId()}`;
    sessionStorage.setItem(INSTANCE_KEY, created);
    return created;
  } catch {
    return `studio-tab:${randomId()}`;
  }
}

/** The contract error code (`extensions.code`) of a failed operation, or null. */
export function errorCode(error: CombinedError | undefined | null): string | null {
  if (!error) return null;
  for (const graphQLError of error.graphQLErrors) {
    const code = graphQLError.extensions?.code;
    if (typeof code === 'string') return code;
  }
  if (error.response && (error.response as { status?: number }).status === 401)
    return ErrorCode.UNAUTHENTICATED;
  return null;
}

function describe(error: CombinedError | undefined | null): string {
  if (!error) return 'Unknown error';
  const first = error.graphQLErrors[0];
  if (first) return first.message;
  return error.networkError ? `Network error: ${error.networkError.message}` : error.message;
}

const FENCED_MESSAGE =
  'Another tab or client took control of this session. This tab is watching only; take control back to act.';

interface Entry extends SessionControlSnapshot {
  attaching: Promise<string> | null;
  timer: Ticker | null;
  watch: { unsubscribe(): void } | null;
  generation: number;
  listeners: Set<() => void>;
}

export interface AttachmentStoreOptions {
  /** Heartbeat period; the contract's 2 s unless a test shortens it. */
  heartbeatMs?: number;
}

/**
 * One attachment per session for the whole tab, shared by every component: attach on first
 * action, heartbeat while attached, and detect fencing (a heartbeat or mutation refused with
 * AGENT_CLIENT_EPOCH_STALE, or the session's currentClientEpoch moving past ours).
 */
export class AttachmentStore {
  private readonly entries = new Map<string, Entry>();
  private readonly heartbeatMs: number;

  constructor(
    private readonly client: Client,
    options: AttachmentStoreOptions = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? HEARTBEAT_INTERVAL_MS;
  }

  private entry(sessionId: string): Entry {
    let entry = this.entries.get(sessionId);
    if (!entry) {
      entry = {
        state: 'observer',
        clientEpoch: null,
        error: null,
        notice: null,
        attaching: null,
        timer: null,
        watch: null,
        generation: 0,
        listeners: new Set(),
      };
      this.entries.set(sessionId, entry);
    }
    return entry;
  }

  private snapshots = new Map<string, SessionControlSnapshot>();

  /** A stable snapshot (same object until something changes), for useSyncExternalStore. */
  get(sessionId: string): SessionControlSnapshot {
    const entry = this.entry(sessionId);
    const cached = this.snapshots.get(sessionId);
    if (
      cached &&
      cached.state === entry.state &&
      cached.clientEpoch === entry.clientEpoch &&
      cached.error === entry.error &&
      cached.notice === entry.notice
    ) {
      return cached;
    }
    const snapshot = {
      state: entry.state,
      clientEpoch: entry.clientEpoch,
      error: entry.error,
      notice: entry.notice,
    };
    this.snapshots.set(sessionId, snapshot);
    return snapshot;
  }

  subscribe(sessionId: string, listener: () => void): () => void {
    const entry = this.entry(sessionId);
    entry.listeners.add(listener);
    return () => entry.listeners.delete(listener);
  }

  private update(sessionId: string, patch: Partial<SessionControlSnapshot>): void {
    const entry = this.entry(sessionId);
    Object.assign(entry, patch);
    for (const listener of [...entry.listeners]) listener();
  }

  private stop(entry: Entry): void {
    entry.timer?.stop();
    entry.timer = null;
    entry.watch?.unsubscribe();
    entry.watch = null;
    entry.generation += 1;
  }

  ensureAttached(sessionId: string): Promise<string> {
    const entry = this.entry(sessionId);
    if (entry.state === 'attached' && entry.clientEpoch) return Promise.resolve(entry.clientEpoch);
    if (entry.attaching) return entry.attaching;
    if (entry.state === 'fenced') return Promise.reject(new Error(FENCED_MESSAGE));
    return this.attach(sessionId);
  }

  takeControl(sessionId: string): Promise<string> {
    const entry = this.entry(sessionId);
    if (entry.attaching) return entry.attaching;
    return this.attach(sessionId);
  }

  release(sessionId: string): void {
    const entry = this.entry(sessionId);
    this.stop(entry);
    entry.attaching = null;
    this.update(sessionId, { state: 'observer', clientEpoch: null, error: null });
  }

  dismissNotice(sessionId: string): void {
    this.update(sessionId, { notice: null });
  }

  /** Called when any operation of this session was refused as AGENT_CLIENT_EPOCH_STALE. */
  reportStaleEpoch(sessionId: string, epoch: string | null): void {
    const entry = this.entries.get(sessionId);
    if (!entry || entry.state !== 'attached') return;
    if (epoch !== null && entry.clientEpoch !== null && epoch !== entry.clientEpoch) return;
    this.fence(sessionId);
  }

  /** Called with the session's newest allocated epoch; a larger one than ours means fenced. */
  noteCurrentEpoch(sessionId: string, currentClientEpoch: string): void {
    const entry = this.entries.get(sessionId);
    if (!entry || entry.state !== 'attached' || entry.clientEpoch === null) return;
    if (BigInt(currentClientEpoch) > BigInt(entry.clientEpoch)) this.fence(sessionId);
  }

  private fence(sessionId: string): void {
    const entry = this.entry(sessionId);
    this.stop(entry);
    this.update(sessionId, { state: 'fenced', clientEpoch: null, error: FENCED_MESSAGE });
  }

  private attach(sessionId: string): Promise<string> {
    const entry = this.entry(sessionId);
    this.stop(entry);
    const generation = entry.generation;
    this.update(sessionId, { state: 'attaching', error: null });
    const attempt = this.client
      .mutation(AttachClientMutation, {
        input: {
          idempotencyKey: makeIdempotencyKey('attach'),
          sessionId,
          clientInstanceId: clientInstanceId(),
        },
      })
      .toPromise()
      .then((result) => {
        entry.attaching = null;
        const attachment = result.data?.crowdyStudioAgentAttachClient;
        if (generation !== entry.generation) throw new Error('The attach was superseded.');
        if (!attachment) {
          const message = describe(result.error);
          this.update(sessionId, { state: 'error', clientEpoch: null, error: message });
          throw new Error(message);
        }
        const epoch = attachment.clientEpoch;
        this.update(sessionId, {
          state: 'attached',
          clientEpoch: epoch,
          error: null,
          notice: takeNotice(),
        });
        this.startHeartbeat(sessionId, epoch);
        this.watchSession(sessionId);
        return epoch;
      });
    entry.attaching = attempt;
    attempt.catch(() => undefined);
    return attempt;
  }

  private startHeartbeat(sessionId: string, clientEpoch: string): void {
    const entry = this.entry(sessionId);
    const generation = entry.generation;
    const beat = () => {
      void this.client
        .mutation(HeartbeatMutation, {
          input: { idempotencyKey: makeIdempotencyKey('heartbeat'), sessionId, clientEpoch },
        })
        .toPromise()
        .then((result) => {
          if (generation !== entry.generation || entry.state !== 'attached') return;
          if (errorCode(result.error) === ErrorCode.CLIENT_EPOCH_STALE) {
            this.fence(sessionId);
          } else if (result.error) {
            this.update(sessionId, { error: `Heartbeat failed: ${describe(result.error)}` });
          } else if (entry.error) {
            this.update(sessionId, { error: null });
          }
        });
    };
    entry.timer = startTicker(this.heartbeatMs, beat);
  }

  private watchSession(sessionId: string): void {
    const entry = this.entry(sessionId);
    entry.watch = this.client
      .query(SessionEpochQuery, { sessionId }, { requestPolicy: 'cache-first' })
      .subscribe((result) => {
        const epoch = result.data?.crowdyStudioAgentSession.currentClientEpoch;
        if (typeof epoch === 'string') this.noteCurrentEpoch(sessionId, epoch);
      });
  }

  /** Stops every heartbeat (the client is being disposed). */
  dispose(): void {
    for (const entry of this.entries.values()) this.stop(entry);
  }
}

const stores = new WeakMap<Client, AttachmentStore>();

/** The one attachment store of a client (created on first use). */
export function attachmentStoreFor(
  client: Client,
  options?: AttachmentStoreOptions,
): AttachmentStore {
  let store = stores.get(client);
  if (!store) {
    store = new AttachmentStore(client, options);
    stores.set(client, store);
  }
  return store;
}

/**
 * Control of one session for this tab. Watching needs nothing; call `ensureAttached()` right
 * before an action (approve, deny, restore, send, pause, resume, cancel) and pass the epoch it
 * resolves with. When `state` is 'fenced', say so and offer `takeControl()`.
 */
export function useSessionControl(sessionId: string): SessionControl {
  const client = useClient();
  const store = attachmentStoreFor(client);
  const snapshot = useSyncExternalStore(
    (listener) => store.subscribe(sessionId, listener),
    () => store.get(sessionId),
    () => store.get(sessionId),
  );
  return useMemo(
    () => ({
      ...snapshot,
      ensureAttached: () => store.ensureAttached(sessionId),
      takeControl: () => store.takeControl(sessionId),
      release: () => store.release(sessionId),
      dismissNotice: () => store.dismissNotice(sessionId),
    }),
    [snapshot, store, sessionId],
  );
}
