/**
 * Per-file restore (issue 11): `paths` on StudioCheckpointRestoreInput restores only the named
 * files and folders, behind one exact-hash approval whose hash covers the selection, with the
 * RESTORE_PREIMAGE checkpoint of the whole project first; every other file stays as it is.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVE,
  CREATE_CHECKPOINT,
  REQUEST_RESTORE,
  attach,
  createSession,
  decideInput,
  failCode,
  getProject,
  history,
  keepAlive,
  key,
  makeClient,
  ok,
  projectDir,
  readTree,
  startHarness,
  waitForEvent,
} from './harness.ts';
import type { ApprovalData, Attachment, CheckpointData, Harness, StudioClient } from './harness.ts';

let h: Harness;
let c: StudioClient;

beforeAll(async () => {
  h = await startHarness();
  c = makeClient(h);
});

afterAll(async () => {
  await h.dispose();
});

function vars(a: Attachment, cp: CheckpointData, expectedRevision: string, paths?: string[]) {
  return {
    input: {
      idempotencyKey: key('restore'),
      sessionId: a.sessionId,
      clientEpoch: a.clientEpoch,
      checkpointId: cp.checkpointId,
      checkpointContentHash: cp.contentHash,
      expectedRevision,
      ...(paths ? { paths } : {}),
    },
  };
}

async function restore(a: Attachment, cp: CheckpointData, revision: string, paths?: string[]) {
  return (
    await ok<{ studioRequestCheckpointRestore: ApprovalData }>(
      c,
      REQUEST_RESTORE,
      vars(a, cp, revision, paths),
    )
  ).studioRequestCheckpointRestore;
}

describe('per-file restore', () => {
  it('restores only the picked file and folder after one approval, the pre-image first, the rest untouched', async () => {
    const session = await createSession(c, 'BUILD', 'sample-app');
    const a = await attach(c, session.sessionId);
    const stop = keepAlive(c, a);
    try {
      const dir = projectDir(h, 'sample-app');
      mkdirSync(join(dir, 'notes'), { recursive: true });
      writeFileSync(join(dir, 'notes', 'kept.md'), 'kept v1\n');
      const cp = (
        await ok<{ studioCreateCheckpoint: CheckpointData }>(c, CREATE_CHECKPOINT, {
          input: { idempotencyKey: key('cp'), sessionId: a.sessionId, clientEpoch: a.clientEpoch },
        })
      ).studioCreateCheckpoint;
      const treeA = readTree(dir);
      // The human edits three places; only README.md and notes/ are picked for restore.
      writeFileSync(join(dir, 'README.md'), '# edited\n');
      writeFileSync(join(dir, 'notes', 'kept.md'), 'kept v2\n');
      writeFileSync(join(dir, 'notes', 'new.md'), 'new\n');
      rmSync(join(dir, '.gitignore'), { force: true });
      const treeB = readTree(dir);
      const project = await getProject(c, a.sessionId);

      const whole = await restore(a, cp, project.revision);
      const picked = await restore(a, cp, project.revision, ['notes/', 'README.md', 'README.md']);
      // The hash covers the selection: a different selection is a different approval.
      expect(picked.argumentHash).not.toBe(whole.argumentHash);
      expect(picked.safeSummary).toMatch(
        /Restore 2 path\(s\) of project "sample-app" \(README\.md, notes\)/,
      );
      const proposed = (await history(c, a.sessionId)).find(
        (e) => e.type === 'TOOL_PROPOSED' && e.toolCallId === picked.toolCallId,
      );
      expect(proposed).toBeDefined();

      await ok(c, APPROVE, decideInput(a, picked));
      const { events } = await waitForEvent(
        c,
        a.sessionId,
        (e) => e.type === 'TOOL_SUCCEEDED' && e.toolCallId === picked.toolCallId,
        'the per-file restore',
      );
      const preImage = events.filter((e) => e.type === 'CHECKPOINT_CREATED').at(-1)!;
      expect(preImage.checkpointReason).toBe('RESTORE_PREIMAGE');
      expect(preImage.contentHash).toBe(project.contentHash);

      const after = readTree(dir);
      expect(after['README.md']).toBe(treeA['README.md']);
      expect(after['notes/kept.md']).toBe('kept v1\n');
      expect(after['notes/new.md']).toBeUndefined();
      // Not picked: .gitignore stays deleted, every other file as the human left it.
      expect(after['.gitignore']).toBeUndefined();
      for (const [path, text] of Object.entries(treeB))
        if (path !== 'README.md' && !path.startsWith('notes/')) expect(after[path]).toBe(text);
    } finally {
      stop();
    }
  });

  it('refuses a selection that is empty, escapes the project or selects nothing, and changes nothing', async () => {
    const session = await createSession(c, 'BUILD', 'sample-app');
    const a = await attach(c, session.sessionId);
    const stop = keepAlive(c, a);
    try {
      const cp = (
        await ok<{ studioCreateCheckpoint: CheckpointData }>(c, CREATE_CHECKPOINT, {
          input: { idempotencyKey: key('cp'), sessionId: a.sessionId, clientEpoch: a.clientEpoch },
        })
      ).studioCreateCheckpoint;
      const project = await getProject(c, a.sessionId);
      const before = (await history(c, a.sessionId)).length;
      for (const paths of [[], ['../etc/passwd'], ['/abs'], ['a//b'], ['no/such/file']])
        expect(await failCode(c, REQUEST_RESTORE, vars(a, cp, project.revision, paths))).toBe(
          'BAD_USER_INPUT',
        );
      expect((await history(c, a.sessionId)).length).toBe(before);
    } finally {
      stop();
    }
  });
});
