/**
 * Restores (restores.ts) on the real server, store and folders: a request is checked (the
 * checkpoint's content hash, the expected revision) before anything is proposed; an approved
 * restore runs from the outbox job and ends SUCCEEDED with its grant consumed and the folder put
 * back; a denied one never touches the folder.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectDir, startHarness } from '../../test/server/harness.ts';
import type { Harness } from '../../test/server/harness.ts';
import { LOCAL_APP_ID } from '../../protocol/contract.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.dispose();
});

/** A checkpoint of sample-app, then a hand edit of README.md the restore would take back. */
async function edited() {
  const engine = h.server.engine;
  const session = await engine.createSession({
    appId: LOCAL_APP_ID,
    mode: 'BUILD',
    projectId: 'sample-app',
  });
  const { clientEpoch } = await engine.attach({ sessionId: session.sessionId });
  const checkpoint = await engine.createManualCheckpoint({
    sessionId: session.sessionId,
    clientEpoch,
  });
  const readme = join(projectDir(h, 'sample-app'), 'README.md');
  const original = readFileSync(readme, 'utf8');
  writeFileSync(readme, `${original}\nedited ${session.sessionId}\n`);
  const project = await engine.syncProject('sample-app');
  return {
    engine,
    sessionId: session.sessionId,
    clientEpoch,
    checkpoint,
    project,
    readme,
    original,
  };
}

describe('restores', () => {
  it('checks the content hash and the revision before proposing anything', async () => {
    const { engine, sessionId, clientEpoch, checkpoint, project } = await edited();
    const input = {
      sessionId,
      clientEpoch,
      checkpointId: checkpoint.checkpointId,
      checkpointContentHash: checkpoint.contentHash,
      expectedRevision: project.revision,
    };
    await expect(
      engine.requestRestore({ ...input, checkpointContentHash: `sha256:${'1'.repeat(64)}` }),
    ).rejects.toMatchObject({ code: 'AGENT_CHECKPOINT_NOT_FOUND' });
    await expect(
      engine.requestRestore({ ...input, expectedRevision: '999999' }),
    ).rejects.toMatchObject({ code: 'CROWDY_STUDIO_REVISION_CONFLICT' });
    expect(await engine.reads.listPendingApprovals(sessionId)).toEqual([]);
  });

  it('runs an approved restore from the outbox: SUCCEEDED, grant consumed, folder put back', async () => {
    const { engine, sessionId, clientEpoch, checkpoint, project, readme, original } =
      await edited();
    const approval = await engine.requestRestore({
      sessionId,
      clientEpoch,
      checkpointId: checkpoint.checkpointId,
      checkpointContentHash: checkpoint.contentHash,
      expectedRevision: project.revision,
    });
    await engine.decide(
      {
        sessionId,
        clientEpoch,
        toolCallId: approval.toolCallId,
        argumentHash: approval.argumentHash,
      },
      true,
    );
    await engine.jobsIdle();
    expect((await engine.reads.getToolCall(approval.toolCallId))?.status).toBe('SUCCEEDED');
    expect((await engine.reads.getApproval(approval.approvalId))?.status).toBe('CONSUMED');
    expect(readFileSync(readme, 'utf8')).toBe(original);
    expect(await engine.pendingRestores()).toEqual([]);
  });

  it('leaves the folder alone when the restore is denied', async () => {
    const { engine, sessionId, clientEpoch, checkpoint, project, readme } = await edited();
    const edit = readFileSync(readme, 'utf8');
    const approval = await engine.requestRestore({
      sessionId,
      clientEpoch,
      checkpointId: checkpoint.checkpointId,
      checkpointContentHash: checkpoint.contentHash,
      expectedRevision: project.revision,
    });
    await engine.decide(
      {
        sessionId,
        clientEpoch,
        toolCallId: approval.toolCallId,
        argumentHash: approval.argumentHash,
      },
      false,
    );
    await engine.jobsIdle();
    expect((await engine.reads.getToolCall(approval.toolCallId))?.status).toBe('DENIED');
    expect(readFileSync(readme, 'utf8')).toBe(edit);
  });
});
