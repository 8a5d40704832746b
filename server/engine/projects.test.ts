/**
 * Projects and checkpoints (projects.ts) on the real server, store and folders: a folder that
 * cannot be read makes its project unavailable with the reason instead of throwing; an agent
 * write against a stale revision changes nothing; a write takes its pre-image checkpoint and
 * moves the revision; a folder edited by hand moves to a new revision on the next sync.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, projectDir, startHarness } from '../../test/server/harness.ts';
import type { Harness } from '../../test/server/harness.ts';
import { LOCAL_APP_ID } from '../../protocol/contract.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.dispose();
});

describe('projects', () => {
  it('marks a project whose folder is a file unavailable, with the reason, and never throws', async () => {
    const engine = h.server.engine;
    const root = join(makeTempDir('studio-not-a-folder-'), 'file.txt');
    writeFileSync(root, 'not a folder');
    const record = await engine.registerProject({ projectId: 'odd', name: 'Odd', root });
    expect(record.unavailableReason).toBeTruthy();
    await expect(engine.workspace('odd')).rejects.toMatchObject({
      code: 'AGENT_HOST_UNAVAILABLE',
    });
  });

  it('refuses an agent write against a stale revision and changes nothing', async () => {
    const engine = h.server.engine;
    const session = await engine.createSession({
      appId: LOCAL_APP_ID,
      mode: 'BUILD',
      projectId: 'sample-app',
    });
    const before = await engine.syncProject('sample-app');
    await expect(
      engine.patchProject({
        sessionId: session.sessionId,
        runId: null,
        toolCallId: 'tc_stale',
        toolName: 'workspace.file.patch',
        expectedRevision: (BigInt(before.revision) + 5n).toString(),
        changes: [{ path: 'NEW.md', content: 'x' }],
      }),
    ).rejects.toMatchObject({ code: 'CROWDY_STUDIO_REVISION_CONFLICT' });
    const after = await engine.syncProject('sample-app');
    expect(after.revision).toBe(before.revision);
    expect(after.contentHash).toBe(before.contentHash);
  });

  it('takes a pre-image checkpoint for a write and moves the revision by one', async () => {
    const engine = h.server.engine;
    const session = await engine.createSession({
      appId: LOCAL_APP_ID,
      mode: 'BUILD',
      projectId: 'sample-app',
    });
    const before = await engine.syncProject('sample-app');
    const result = await engine.patchProject({
      sessionId: session.sessionId,
      runId: null,
      toolCallId: 'tc_write',
      toolName: 'workspace.file.patch',
      expectedRevision: before.revision,
      changes: [{ path: 'NOTES.md', content: 'notes\n' }],
    });
    expect(result.projectRevision).toBe((BigInt(before.revision) + 1n).toString());
    expect(result.changedFiles).toEqual(['NOTES.md']);
    const preImage = await engine.reads.getCheckpoint(result.checkpointId);
    expect(preImage).toMatchObject({ reason: 'AGENT_WRITE', contentHash: before.contentHash });
  });

  it('moves a folder edited by hand to a new revision on the next sync', async () => {
    const engine = h.server.engine;
    const before = await engine.syncProject('sample-app');
    writeFileSync(join(projectDir(h, 'sample-app'), 'HAND.md'), 'edited by a human\n');
    const after = await engine.syncProject('sample-app');
    expect(after.revision).toBe((BigInt(before.revision) + 1n).toString());
    expect(after.contentHash).not.toBe(before.contentHash);
  });
});
