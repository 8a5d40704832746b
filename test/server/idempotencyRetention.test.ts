/**
 * Idempotency records live in the store with their effect and are pruned after the retention
 * window; heartbeats and acknowledgements write none. Read back through a second connection to
 * the server's real store (the data dir's SQLite file, or its PostgreSQL database under
 * server-pg), so what is checked is what was committed.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PgStore } from '../../server/store/postgres/PgStore.ts';
import { SqliteStore } from '../../server/store/SqliteStore.ts';
import type { Store } from '../../server/store/Store.ts';
import { harnessDatabaseUrl } from '../support/harnessStore.ts';
import {
  ACK,
  ATTACH,
  HEARTBEAT,
  attach,
  createSession,
  key,
  makeClient,
  ok,
  run,
  startHarness,
} from './harness.ts';
import type { Harness } from './harness.ts';

let h: Harness | null = null;
afterEach(async () => {
  await h?.dispose();
  h = null;
});

/** The stored record of (operation, key), read on its own connection to the harness's store. */
async function stored(dataDir: string, operation: string, idempotencyKey: string) {
  const url = await harnessDatabaseUrl(dataDir);
  const store: Store = url ? new PgStore({ url }) : new SqliteStore(join(dataDir, 'studio.db'));
  try {
    return await store.transaction((tx) => tx.getIdempotency(operation, idempotencyKey), {
      readOnly: true,
    });
  } finally {
    await store.close();
  }
}

describe('idempotency retention', () => {
  it('keeps a record per mutation, none for heartbeats or acknowledgements', async () => {
    h = await startHarness();
    const c = makeClient(h);
    const session = await createSession(c, 'ASK');
    const attachKey = key('attach');
    const a = (
      await ok<{ crowdyStudioAgentAttachClient: { clientEpoch: string } }>(c, ATTACH, {
        input: { idempotencyKey: attachKey, sessionId: session.sessionId },
      })
    ).crowdyStudioAgentAttachClient;
    const beats = [key('hb'), key('hb'), key('hb')];
    for (const k of beats)
      await ok(c, HEARTBEAT, {
        input: { idempotencyKey: k, sessionId: session.sessionId, clientEpoch: a.clientEpoch },
      });
    const ackKey = key('ack');
    await ok(c, ACK, {
      input: {
        idempotencyKey: ackKey,
        sessionId: session.sessionId,
        clientEpoch: a.clientEpoch,
        throughSeq: '1',
      },
    });
    const record = await stored(h.dataDir, 'AttachClient', attachKey);
    expect(record?.inputHash).toMatch(/^sha256:/);
    expect(JSON.parse(record!.resultJson)).toMatchObject({ clientEpoch: a.clientEpoch });
    expect(Date.parse(record!.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    for (const k of beats) expect(await stored(h.dataDir, 'Heartbeat', k)).toBeNull();
    expect(await stored(h.dataDir, 'AcknowledgeEvents', ackKey)).toBeNull();
  });

  it('prunes records older than the window and keeps younger ones', async () => {
    h = await startHarness({ idempotencyRetentionMs: 60 * 60 * 1000 });
    const c = makeClient(h);
    const session = await createSession(c, 'ASK');
    const kept = key('attach');
    await ok(c, ATTACH, { input: { idempotencyKey: kept, sessionId: session.sessionId } });
    expect(await h.server.engine.pruneIdempotency()).toBe(0);
    const record = await stored(h.dataDir, 'AttachClient', kept);
    expect(record).not.toBeNull();
    await h.close();

    // The same data dir with a window shorter than the record's age: it goes (the start's own
    // sweep may already have pruned it; the explicit prune is awaited either way).
    h = await startHarness({ dataDir: h.dataDir, idempotencyRetentionMs: 1 });
    expect(Date.now() - Date.parse(record!.createdAt)).toBeGreaterThan(1);
    await h.server.engine.pruneIdempotency();
    expect(await stored(h.dataDir, 'AttachClient', kept)).toBeNull();
    // A key used again after its record was pruned is a new request.
    const again = await attach(makeClient(h), session.sessionId);
    expect(BigInt(again.clientEpoch)).toBeGreaterThan(0n);
  });

  it('records the result in the same transaction as the effect: a refused mutation leaves none', async () => {
    h = await startHarness();
    const refusedKey = key('attach');
    const result = await run(makeClient(h), ATTACH, {
      input: { idempotencyKey: refusedKey, sessionId: 'no-such-session' },
    });
    expect(result.error).toBeTruthy();
    expect(await stored(h.dataDir, 'AttachClient', refusedKey)).toBeNull();
  });
});
