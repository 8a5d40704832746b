/**
 * Attachments and epochs (rule module): attaching moves the session's client epoch and fences
 * the previous client (CLIENT_DETACHED then CLIENT_ATTACHED, in one commit, under the session's
 * lock), `requireAttached` refuses a fenced or detached epoch, heartbeats keep an attachment
 * alive and the sweep detaches a silent one, acknowledgements move a client's replay cursor.
 * Every read-then-write happens in one transaction under the session's lock (a row lock on
 * PostgreSQL), so nothing here rests on one process's memory.
 */
import { randomUUID } from 'node:crypto';
import type { Db, Kernel } from './kernel.ts';
import type { EventDraft, StoredEvent } from './eventDrafts.ts';
import type { SessionRecord } from '../store/records.ts';
import { StudioError } from './StudioError.ts';
import { ErrorCode } from '../../protocol/contract.ts';
import { compareSeq, isDecimalString } from '../../protocol/seq.ts';

/** What the module needs from the engine. */
export interface AttachmentHost {
  readonly kernel: Kernel;
  readonly db: Db;
  readonly heartbeatStaleMs: number;
  now(): number;
  iso(ms?: number): string;
  requireSession(sessionId: string): Promise<SessionRecord>;
  requireOpen(session: SessionRecord): void;
  append(sessionId: string, drafts: EventDraft[]): Promise<StoredEvent[]>;
}

export class Attachments {
  constructor(private readonly host: AttachmentHost) {}

  /** Throws unless `clientEpoch` is the session's current attached epoch. */
  async requireAttached(sessionId: string, clientEpoch: string): Promise<SessionRecord> {
    const session = await this.host.requireSession(sessionId);
    if (!isDecimalString(clientEpoch))
      throw new StudioError(ErrorCode.BAD_REQUEST, 'clientEpoch must be a decimal string.', {
        field: 'clientEpoch',
      });
    if (session.attachedEpoch === null || session.attachedEpoch !== clientEpoch)
      throw new StudioError(
        ErrorCode.CLIENT_EPOCH_STALE,
        session.attachedEpoch === null
          ? `Epoch ${clientEpoch} is no longer attached to this session (it was detached or replaced).`
          : `Epoch ${clientEpoch} was fenced: another client attached with epoch ${session.attachedEpoch}.`,
        { remediation: 'Attach again to act on this session; attaching fences the other client.' },
      );
    return session;
  }

  async attach(input: {
    sessionId: string;
    clientInstanceId?: string | null;
    reviewer?: string | null;
  }): Promise<{
    session: SessionRecord;
    clientEpoch: string;
    replayAfterSeq: string;
  }> {
    const instance = input.clientInstanceId ?? `anon-${randomUUID()}`;
    return await this.host.kernel.write(async () => {
      // The epoch moves under the session's lock (a row lock on PostgreSQL): of two racing
      // attachments each gets its own epoch and the later one fences the earlier.
      await this.host.db.lockSession(input.sessionId);
      const session = await this.host.requireSession(input.sessionId);
      this.host.requireOpen(session);
      const epoch = (BigInt(session.currentClientEpoch) + 1n).toString();
      const drafts: EventDraft[] = [];
      for (const client of await this.host.db.listAttachedClients())
        if (client.sessionId === session.sessionId) {
          await this.host.db.putClient({ ...client, attached: false });
          drafts.push({
            type: 'CLIENT_DETACHED',
            clientEpoch: client.epoch,
            reason: 'CLIENT_REATTACHED',
          });
        }
      const previous = await this.host.db.getClient(session.sessionId, instance);
      const replayAfterSeq = previous?.ackedSeq ?? '0';
      await this.host.db.putClient({
        sessionId: session.sessionId,
        clientInstanceId: instance,
        epoch,
        lastHeartbeatMs: this.host.now(),
        ackedSeq: replayAfterSeq,
        attached: true,
        reviewer: input.reviewer ?? null,
        attachedAt: this.host.iso(),
      });
      drafts.push({
        type: 'CLIENT_ATTACHED',
        clientEpoch: epoch,
        replayAfterSeq,
        studioReviewer: input.reviewer ?? null,
      });
      await this.host.append(session.sessionId, drafts);
      return {
        session: await this.host.requireSession(session.sessionId),
        clientEpoch: epoch,
        replayAfterSeq,
      };
    });
  }

  /** Who controls the session now (the attached client's reviewer and since when), or null. */
  async controllerOf(
    sessionId: string,
  ): Promise<{ reviewer: string | null; since: string | null } | null> {
    const session = await this.host.db.getSession(sessionId);
    if (!session?.attachedEpoch) return null;
    const client = await this.attachedClient(sessionId, session.attachedEpoch);
    return client ? { reviewer: client.reviewer ?? null, since: client.attachedAt ?? null } : null;
  }

  private async attachedClient(sessionId: string, epoch: string) {
    return (
      (await this.host.db.listAttachedClients()).find(
        (c) => c.sessionId === sessionId && c.epoch === epoch,
      ) ?? null
    );
  }

  async heartbeat(input: { sessionId: string; clientEpoch: string }): Promise<{
    serverTime: string;
    playLeaseFreshUntil: string | null;
    workspaceLeaseExpiresAt: string | null;
  }> {
    // Read and written under the session's lock: a heartbeat racing an attachment never
    // revives the client that attachment detached.
    const session = await this.host.kernel.write(async () => {
      await this.host.db.lockSession(input.sessionId);
      const attached = await this.requireAttached(input.sessionId, input.clientEpoch);
      const client = await this.attachedClient(attached.sessionId, input.clientEpoch);
      if (client) await this.host.db.putClient({ ...client, lastHeartbeatMs: this.host.now() });
      return attached;
    });
    const leases = await this.host.db.listActiveLeases(session.sessionId);
    const workspace = leases.find((l) => l.kind === 'WORKSPACE');
    const play = leases.find((l) => l.kind === 'PLAY');
    return {
      serverTime: this.host.iso(),
      playLeaseFreshUntil: play
        ? this.host.iso(this.host.now() + this.host.heartbeatStaleMs)
        : null,
      workspaceLeaseExpiresAt: workspace ? workspace.expiresAt : null,
    };
  }

  async acknowledge(input: {
    sessionId: string;
    clientEpoch: string;
    throughSeq: string;
  }): Promise<{
    throughSeq: string;
  }> {
    return this.host.kernel.write(async () => {
      await this.host.db.lockSession(input.sessionId);
      const session = await this.requireAttached(input.sessionId, input.clientEpoch);
      if (
        !isDecimalString(input.throughSeq) ||
        compareSeq(input.throughSeq, session.lastEventSeq) > 0
      )
        throw new StudioError(
          ErrorCode.EVENT_CURSOR_INVALID,
          `throughSeq ${input.throughSeq} is past the committed history (last seq ${session.lastEventSeq}).`,
          { field: 'throughSeq' },
        );
      const client = await this.attachedClient(session.sessionId, input.clientEpoch);
      if (!client) throw new StudioError(ErrorCode.CLIENT_EPOCH_STALE, 'This attachment is gone.');
      const acked =
        compareSeq(input.throughSeq, client.ackedSeq) > 0 ? input.throughSeq : client.ackedSeq;
      await this.host.db.putClient({ ...client, ackedSeq: acked });
      return { throughSeq: acked };
    });
  }

  /** The sweep's part: detaches every attachment silent for heartbeatStaleMs. */
  async detachSilent(): Promise<void> {
    const now = this.host.now();
    for (const client of await this.host.db.listAttachedClients()) {
      if (now - client.lastHeartbeatMs < this.host.heartbeatStaleMs) continue;
      await this.host.kernel.write(async () => {
        await this.host.db.lockSession(client.sessionId);
        // Read again inside the transaction: a heartbeat may have come in meanwhile.
        const current = await this.host.db.getClient(client.sessionId, client.clientInstanceId);
        if (!current?.attached || current.epoch !== client.epoch) return;
        if (now - current.lastHeartbeatMs < this.host.heartbeatStaleMs) return;
        await this.host.db.putClient({ ...current, attached: false });
        const session = await this.host.db.getSession(client.sessionId);
        if (session?.attachedEpoch === client.epoch)
          await this.host.append(client.sessionId, [
            { type: 'CLIENT_DETACHED', clientEpoch: client.epoch, reason: 'HEARTBEAT_TIMEOUT' },
          ]);
      });
    }
  }
}
