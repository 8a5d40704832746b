/**
 * Sessions and runs (sessions.ts) on the real server and store: creation checks its input, a
 * pause revokes the run's pending approval in the same commit, cancelling needs an active run,
 * closing ends the active run first and closing twice changes nothing.
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

async function types(sessionId: string): Promise<string[]> {
  const payloads = await h.server.engine.snapshot((reads) =>
    reads.readEventPayloads(sessionId, 0n, 1000),
  );
  return payloads.map((json) => (JSON.parse(json) as { type: string }).type);
}

/** A session whose run (started by a source) waits on one pending approval. */
async function runWaiting() {
  const engine = h.server.engine;
  const { sessionId } = await engine.createSession({ appId: LOCAL_APP_ID, mode: 'ASK' });
  const { clientEpoch } = await engine.attach({ sessionId });
  const runId = `run_test_${sessionId}`;
  await engine.append(sessionId, [{ type: 'RUN_STARTED', runId }]);
  const approval = await engine.proposeWithApproval({
    sessionId,
    runId,
    toolName: 'note.write',
    arguments: { text: 'x' },
    safeSummary: 'Write a note',
    reasons: ['test'],
  });
  return { engine, sessionId, clientEpoch, runId, approval };
}

describe('sessions', () => {
  it('refuses a BUILD session without a project and one for an unknown project', async () => {
    const engine = h.server.engine;
    await expect(
      engine.createSession({ appId: LOCAL_APP_ID, mode: 'BUILD' }),
    ).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    await expect(
      engine.createSession({ appId: LOCAL_APP_ID, mode: 'BUILD', projectId: 'no-such-project' }),
    ).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    const ask = await engine.createSession({ appId: LOCAL_APP_ID, mode: 'ASK' });
    expect(await types(ask.sessionId)).toEqual(['SESSION_CREATED', 'MODE_SELECTED']);
  });

  it('pausing revokes the run’s pending approval in the same commit', async () => {
    const { engine, sessionId, clientEpoch, approval } = await runWaiting();
    const paused = await engine.pause({ sessionId, clientEpoch });
    expect(paused.status).toBe('PAUSED');
    expect((await engine.reads.getApproval(approval.approvalId))?.status).toBe('REVOKED');
    expect((await types(sessionId)).slice(-4)).toEqual([
      'APPROVAL_DENIED',
      'TOOL_FAILED',
      'SESSION_PAUSED',
      'RUN_PAUSED',
    ]);
    const resumed = await engine.resume({ sessionId, clientEpoch });
    expect(resumed.status).toBe('ACTIVE');
  });

  it('cancels an active run once; a second cancel says the run already ended', async () => {
    const { engine, sessionId, clientEpoch, runId } = await runWaiting();
    expect(await engine.cancelRun({ sessionId, clientEpoch })).toBe(runId);
    expect((await engine.reads.getRun(runId))?.status).toBe('CANCELLED');
    await expect(engine.cancelRun({ sessionId, clientEpoch, runId })).rejects.toMatchObject({
      code: 'AGENT_RUN_NOT_ACTIVE',
    });
  });

  it('closing ends the active run first; closing again changes nothing', async () => {
    const { engine, sessionId, clientEpoch, runId } = await runWaiting();
    const closed = await engine.closeSession({ sessionId, clientEpoch });
    expect(closed.status).toBe('CLOSED');
    expect((await engine.reads.getRun(runId))?.status).toBe('CANCELLED');
    const seq = closed.lastEventSeq;
    expect((await engine.closeSession({ sessionId, clientEpoch })).lastEventSeq).toBe(seq);
    await expect(
      engine.sendMessage({ sessionId, clientEpoch, content: 'hello' }),
    ).rejects.toMatchObject({ code: 'AGENT_SESSION_CLOSED' });
  });
});
