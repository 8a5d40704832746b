/**
 * Attachments and epochs under concurrency, on the real server and store: racing attachments get
 * distinct epochs and the last one fences the others; a heartbeat racing an attachment never
 * revives the client it detached; acknowledgements never move a cursor back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness } from '../../test/server/harness.ts';
import type { Harness } from '../../test/server/harness.ts';
import { LOCAL_APP_ID } from '../../protocol/contract.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.dispose();
});

describe('attachments', () => {
  it('gives racing attachments distinct epochs; the last one is the attached epoch', async () => {
    const engine = h.server.engine;
    const { sessionId } = await engine.createSession({ appId: LOCAL_APP_ID, mode: 'ASK' });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        engine.attach({ sessionId, clientInstanceId: `tab-${i}` }),
      ),
    );
    const epochs = results.map((r) => BigInt(r.clientEpoch)).sort((a, b) => Number(a - b));
    expect(new Set(epochs).size).toBe(8);
    const session = await engine.requireSession(sessionId);
    expect(session.attachedEpoch).toBe(epochs[epochs.length - 1]!.toString());
    for (const r of results)
      if (r.clientEpoch !== session.attachedEpoch)
        await expect(engine.requireAttached(sessionId, r.clientEpoch)).rejects.toMatchObject({
          code: 'AGENT_CLIENT_EPOCH_STALE',
        });
    const attached = (await engine.reads.listAttachedClients()).filter(
      (c) => c.sessionId === sessionId,
    );
    expect(attached.map((c) => c.epoch)).toEqual([session.attachedEpoch]);
  });

  it('a heartbeat racing a new attachment does not revive the fenced client', async () => {
    const engine = h.server.engine;
    const { sessionId } = await engine.createSession({ appId: LOCAL_APP_ID, mode: 'ASK' });
    const first = await engine.attach({ sessionId, clientInstanceId: 'old-tab' });
    const [beat, second] = await Promise.allSettled([
      engine.heartbeat({ sessionId, clientEpoch: first.clientEpoch }),
      engine.attach({ sessionId, clientInstanceId: 'new-tab' }),
    ]);
    expect(second.status).toBe('fulfilled');
    // The heartbeat either ran first (and was then fenced) or was refused as stale.
    if (beat.status === 'rejected')
      expect(beat.reason).toMatchObject({ code: 'AGENT_CLIENT_EPOCH_STALE' });
    const old = await engine.reads.getClient(sessionId, 'old-tab');
    expect(old?.attached).toBe(false);
    await expect(
      engine.heartbeat({ sessionId, clientEpoch: first.clientEpoch }),
    ).rejects.toMatchObject({ code: 'AGENT_CLIENT_EPOCH_STALE' });
  });

  it('acknowledges monotonically: an older throughSeq keeps the newer cursor', async () => {
    const engine = h.server.engine;
    const { sessionId } = await engine.createSession({ appId: LOCAL_APP_ID, mode: 'ASK' });
    const a = await engine.attach({ sessionId, clientInstanceId: 'acker' });
    const last = (await engine.requireSession(sessionId)).lastEventSeq;
    await engine.acknowledge({ sessionId, clientEpoch: a.clientEpoch, throughSeq: last });
    const back = await engine.acknowledge({
      sessionId,
      clientEpoch: a.clientEpoch,
      throughSeq: '1',
    });
    expect(back.throughSeq).toBe(last);
  });
});
