/**
 * Patches, checkpoints and restores on real project folders: what the events and queries say is
 * compared with what is on disk, file by file.
 */
import { existsSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ContentStore } from '../../server/workspace/contentStore.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkpointManifest,
  APPROVE,
  CREATE_CHECKPOINT,
  REQUEST_RESTORE,
  attach,
  createSession,
  decideInput,
  failCode,
  getProject,
  getSession,
  history,
  keepAlive,
  key,
  listCheckpoints,
  makeClient,
  manifestHash,
  manifestOf,
  ok,
  projectDir,
  readTree,
  sendMessage,
  sortedFiles,
  startHarness,
  typesOf,
  waitForEvent,
  waitForRunEnd,
} from './harness.ts';
import type {
  ApprovalData,
  Attachment,
  CheckpointData,
  Ev,
  Harness,
  StudioClient,
} from './harness.ts';

let h: Harness;
let c: StudioClient;

beforeAll(async () => {
  h = await startHarness();
  c = makeClient(h);
});

afterAll(async () => {
  await h.dispose();
});

interface Build {
  a: Attachment;
  dir: string;
  stop(): void;
}

async function buildSession(projectId: string): Promise<Build> {
  const session = await createSession(c, 'BUILD', projectId);
  const a = await attach(c, session.sessionId);
  return { a, dir: projectDir(h, projectId), stop: keepAlive(c, a) };
}

async function manualCheckpoint(a: Attachment): Promise<CheckpointData> {
  return (
    await ok<{ studioCreateCheckpoint: CheckpointData }>(c, CREATE_CHECKPOINT, {
      input: { idempotencyKey: key('cp'), sessionId: a.sessionId, clientEpoch: a.clientEpoch },
    })
  ).studioCreateCheckpoint;
}

async function requestRestore(
  a: Attachment,
  cp: { checkpointId: string; contentHash: string },
  expectedRevision: string,
) {
  return ok<{ studioRequestCheckpointRestore: ApprovalData }>(c, REQUEST_RESTORE, {
    input: {
      idempotencyKey: key('restore'),
      sessionId: a.sessionId,
      clientEpoch: a.clientEpoch,
      checkpointId: cp.checkpointId,
      checkpointContentHash: cp.contentHash,
      expectedRevision,
    },
  }).then((d) => d.studioRequestCheckpointRestore);
}

/** A human edit of the folder: one file changed, one added, one removed. */
function humanEdit(dir: string, tag: string): void {
  writeFileSync(join(dir, 'README.md'), `# edited by a human (${tag})\n`);
  mkdirSync(join(dir, 'notes'), { recursive: true });
  writeFileSync(join(dir, 'notes', `${tag}.md`), `note ${tag}\n`);
  rmSync(join(dir, '.gitignore'), { force: true });
}

function storedBlob(hash: string): string {
  return new ContentStore(join(h.dataDir, 'blobs')).get(hash).toString('utf8');
}

describe('patches and checkpoints', () => {
  it("the agent's patch takes an AGENT_WRITE checkpoint of exactly the files on disk before it, then moves the revision by one", async () => {
    const b = await buildSession('sample-app');
    try {
      const before = readTree(b.dir);
      const projectBefore = await getProject(c, b.a.sessionId);
      expect(sortedFiles(projectBefore.files)).toEqual(manifestOf(before));
      expect(projectBefore.contentHash).toBe(manifestHash(manifestOf(before)));

      const { runId } = await sendMessage(
        c,
        b.a,
        'Record the new greeting option in the changelog',
      );
      const events = await waitForRunEnd(c, b.a.sessionId, runId);
      expect(events.filter((e) => e.runId === runId).pop()?.type).toBe('RUN_SUCCEEDED');
      const cps = events.filter((e) => e.type === 'CHECKPOINT_CREATED' && e.runId === runId);
      expect(cps).toHaveLength(1);
      const cp = cps[0]!;
      expect(cp.checkpointReason).toBe('AGENT_WRITE');
      expect(cp.projectRevision).toBe(projectBefore.revision);
      const cpFiles = await checkpointManifest(c, cp.checkpointId!);
      expect(sortedFiles(cpFiles)).toEqual(manifestOf(before));
      expect(cp.contentHash).toBe(projectBefore.contentHash);
      // The pre-image's content is kept by sha256 in the data dir.
      for (const f of cpFiles) expect(storedBlob(f.contentHash)).toBe(before[f.path]);

      // The patch tool ran under a WORKSPACE lease, after the checkpoint.
      const patch = events.filter(
        (e) => e.runId === runId && e.toolName === 'workspace.file.patch',
      );
      expect(typesOf(patch)).toEqual(['TOOL_PROPOSED', 'TOOL_DISPATCHED', 'TOOL_SUCCEEDED']);
      expect(BigInt(cp.seq)).toBeGreaterThan(BigInt(patch[1]!.seq));
      expect(BigInt(cp.seq)).toBeLessThan(BigInt(patch[2]!.seq));
      expect(events.some((e) => e.type === 'LEASE_GRANTED' && BigInt(e.seq) < BigInt(cp.seq))).toBe(
        true,
      );

      const after = readTree(b.dir);
      expect(after['CHANGELOG.md']).toContain('Record the new greeting option in the changelog');
      const projectAfter = await getProject(c, b.a.sessionId);
      expect(BigInt(projectAfter.revision)).toBe(BigInt(projectBefore.revision) + 1n);
      expect(sortedFiles(projectAfter.files)).toEqual(manifestOf(after));
      expect(projectAfter.contentHash).toBe(manifestHash(manifestOf(after)));
      expect(projectAfter.contentHash).not.toBe(projectBefore.contentHash);

      const listed = await listCheckpoints(c, b.a.sessionId);
      expect(listed[0]!.checkpointId).toBe(cp.checkpointId);
      expect(sortedFiles(listed[0]!.files)).toEqual(manifestOf(before));
      expect(listed[0]!.restoredAt).toBeNull();
    } finally {
      b.stop();
    }
  });

  it('studioCreateCheckpoint takes a MANUAL checkpoint of the folder as it is now, newest first in studioCheckpoints', async () => {
    const b = await buildSession('sample-app');
    try {
      humanEdit(b.dir, 'manual');
      const tree = readTree(b.dir);
      const cp = await manualCheckpoint(b.a);
      const project = await getProject(c, b.a.sessionId);
      expect(cp.reason).toBe('MANUAL');
      expect(cp.exactPreImage).toBe(false);
      expect(sortedFiles(cp.files)).toEqual(manifestOf(tree));
      expect(cp.fileCount).toBe(Object.keys(tree).length);
      expect(cp.totalBytes).toBe(
        String(Object.values(tree).reduce((n, t) => n + Buffer.byteLength(t), 0)),
      );
      expect(cp.contentHash).toBe(manifestHash(manifestOf(tree)));
      expect(cp.contentHash).toBe(project.contentHash);
      expect(cp.projectRevision).toBe(project.revision);
      const second = await manualCheckpoint(b.a);
      const listed = await listCheckpoints(c, b.a.sessionId);
      expect(listed.map((x) => x.checkpointId).slice(0, 2)).toEqual([
        second.checkpointId,
        cp.checkpointId,
      ]);
      const events = await history(c, b.a.sessionId);
      expect(
        events.filter((e) => e.type === 'CHECKPOINT_CREATED').map((e) => e.checkpointId),
      ).toEqual([cp.checkpointId, second.checkpointId]);
    } finally {
      b.stop();
    }
  });
});

describe('restore', () => {
  it('restores after the exact approval: RESTORE_PREIMAGE first, the folder becomes the checkpoint, revision + 1, and undo brings it back', async () => {
    const b = await buildSession('sample-app');
    try {
      const treeA = readTree(b.dir);
      const cpA = await manualCheckpoint(b.a);
      humanEdit(b.dir, 'restore');
      const treeB = readTree(b.dir);
      const projectB = await getProject(c, b.a.sessionId);
      expect(projectB.contentHash).toBe(manifestHash(manifestOf(treeB)));

      const approval = await requestRestore(b.a, cpA, projectB.revision);
      expect(approval.status).toBe('PENDING');
      expect(approval.argumentHash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect((await getSession(c, b.a.sessionId)).pendingApproval?.approvalId).toBe(
        approval.approvalId,
      );
      // Nothing happens before the human approves.
      expect(readTree(b.dir)).toEqual(treeB);
      const { event: proposed } = await waitForEvent(
        c,
        b.a.sessionId,
        (e) => e.type === 'TOOL_PROPOSED' && e.toolCallId === approval.toolCallId,
        'the proposal',
      );
      expect(proposed.toolName).toBe('project.checkpoint.restore');

      const requestedSeq = (await history(c, b.a.sessionId)).find(
        (e) => e.type === 'APPROVAL_REQUESTED' && e.approvalId === approval.approvalId,
      )!.seq;
      await ok(c, APPROVE, decideInput(b.a, approval));
      const { events } = await waitForEvent(
        c,
        b.a.sessionId,
        (e) => e.type === 'TOOL_SUCCEEDED' && e.toolCallId === approval.toolCallId,
        'the restore',
      );
      const flow = events.filter((e) => BigInt(e.seq) > BigInt(requestedSeq));
      expect(typesOf(flow)).toEqual([
        'APPROVAL_GRANTED',
        'APPROVAL_CONSUMED',
        'TOOL_DISPATCHED',
        'CHECKPOINT_CREATED',
        'CHECKPOINT_RESTORED',
        'TOOL_SUCCEEDED',
      ]);
      const preImage = flow[3]!;
      const restored = flow[4]!;
      expect(preImage.checkpointReason).toBe('RESTORE_PREIMAGE');
      expect(preImage.projectRevision).toBe(projectB.revision);
      expect(sortedFiles(await checkpointManifest(c, preImage.checkpointId!))).toEqual(
        manifestOf(treeB),
      );
      expect(preImage.contentHash).toBe(projectB.contentHash);
      expect(restored.checkpointId).toBe(cpA.checkpointId);
      expect(restored.restoredAt).toEqual(expect.any(String));
      const result = JSON.parse(flow[5]!.resultJson!) as {
        preRestoreCheckpoint: { checkpointId: string };
        project: { revision: string; contentHash: string };
      };
      expect(result.preRestoreCheckpoint.checkpointId).toBe(preImage.checkpointId);

      expect(readTree(b.dir)).toEqual(treeA);
      const projectC = await getProject(c, b.a.sessionId);
      expect(BigInt(projectC.revision)).toBe(BigInt(projectB.revision) + 1n);
      expect(projectC.contentHash).toBe(cpA.contentHash);
      expect(result.project).toMatchObject({
        revision: projectC.revision,
        contentHash: cpA.contentHash,
      });
      const listed = await listCheckpoints(c, b.a.sessionId);
      expect(listed.find((x) => x.checkpointId === cpA.checkpointId)?.restoredAt).toEqual(
        expect.any(String),
      );
      expect(listed[0]!.checkpointId).toBe(preImage.checkpointId);

      // Undo: restore the pre-image.
      const undo = await requestRestore(
        b.a,
        { checkpointId: preImage.checkpointId!, contentHash: preImage.contentHash! },
        projectC.revision,
      );
      await ok(c, APPROVE, decideInput(b.a, undo));
      await waitForEvent(
        c,
        b.a.sessionId,
        (e) => e.type === 'TOOL_SUCCEEDED' && e.toolCallId === undo.toolCallId,
        'the undo',
      );
      expect(readTree(b.dir)).toEqual(treeB);
      const projectD = await getProject(c, b.a.sessionId);
      expect(BigInt(projectD.revision)).toBe(BigInt(projectC.revision) + 1n);
      expect(projectD.contentHash).toBe(preImage.contentHash);
    } finally {
      b.stop();
    }
  });

  it('refuses a stale expectedRevision with CROWDY_STUDIO_REVISION_CONFLICT and changes nothing', async () => {
    const b = await buildSession('sample-app');
    try {
      const cp = await manualCheckpoint(b.a);
      humanEdit(b.dir, 'stale');
      const tree = readTree(b.dir);
      const project = await getProject(c, b.a.sessionId);
      const before = await history(c, b.a.sessionId);
      const stale = (BigInt(project.revision) - 1n).toString();
      expect(await failCode(c, REQUEST_RESTORE, restoreVars(b.a, cp, stale))).toBe(
        'CROWDY_STUDIO_REVISION_CONFLICT',
      );
      expect((await history(c, b.a.sessionId)).map((e) => e.eventId)).toEqual(
        before.map((e) => e.eventId),
      );
      expect(readTree(b.dir)).toEqual(tree);
      expect((await getProject(c, b.a.sessionId)).revision).toBe(project.revision);
    } finally {
      b.stop();
    }
  });

  it('refuses a wrong hash or an unknown checkpoint with AGENT_CHECKPOINT_NOT_FOUND and changes nothing', async () => {
    const b = await buildSession('sample-app');
    try {
      const cp = await manualCheckpoint(b.a);
      humanEdit(b.dir, 'hash');
      const tree = readTree(b.dir);
      const project = await getProject(c, b.a.sessionId);
      const before = await history(c, b.a.sessionId);
      const wrong = { checkpointId: cp.checkpointId, contentHash: 'sha256:' + 'f'.repeat(64) };
      expect(await failCode(c, REQUEST_RESTORE, restoreVars(b.a, wrong, project.revision))).toBe(
        'AGENT_CHECKPOINT_NOT_FOUND',
      );
      const unknown = { checkpointId: 'cp_unknown', contentHash: cp.contentHash };
      expect(await failCode(c, REQUEST_RESTORE, restoreVars(b.a, unknown, project.revision))).toBe(
        'AGENT_CHECKPOINT_NOT_FOUND',
      );
      // A checkpoint of another project is not this session's to restore.
      const other = await buildSession('cleanup-app');
      try {
        const foreign = await manualCheckpoint(other.a);
        expect(
          await failCode(c, REQUEST_RESTORE, restoreVars(b.a, foreign, project.revision)),
        ).toBe('AGENT_CHECKPOINT_NOT_FOUND');
      } finally {
        other.stop();
      }
      expect((await history(c, b.a.sessionId)).map((e) => e.eventId)).toEqual(
        before.map((e) => e.eventId),
      );
      expect(readTree(b.dir)).toEqual(tree);
    } finally {
      b.stop();
    }
  });

  it('fails an approved restore whose project moved on meanwhile, and changes nothing', async () => {
    const b = await buildSession('sample-app');
    try {
      const cp = await manualCheckpoint(b.a);
      humanEdit(b.dir, 'moved-1');
      const project = await getProject(c, b.a.sessionId);
      const approval = await requestRestore(b.a, cp, project.revision);
      humanEdit(b.dir, 'moved-2');
      const tree = readTree(b.dir);
      await ok(c, APPROVE, decideInput(b.a, approval));
      const { event, events } = await waitForEvent(
        c,
        b.a.sessionId,
        (e) =>
          (e.type === 'TOOL_FAILED' || e.type === 'TOOL_SUCCEEDED') &&
          e.toolCallId === approval.toolCallId,
        'the restore to end',
      );
      expect(event.type).toBe('TOOL_FAILED');
      expect(event.toolError?.code).toBe('CROWDY_STUDIO_REVISION_CONFLICT');
      expect(
        events.some(
          (e: Ev) => e.type === 'CHECKPOINT_RESTORED' && e.checkpointId === cp.checkpointId,
        ),
      ).toBe(false);
      expect(readTree(b.dir)).toEqual(tree);
      expect(existsSync(join(b.dir, 'notes', 'moved-2.md'))).toBe(true);
    } finally {
      b.stop();
    }
  });
});

function restoreVars(
  a: Attachment,
  cp: { checkpointId: string; contentHash: string },
  expectedRevision: string,
) {
  return {
    input: {
      idempotencyKey: key('restore'),
      sessionId: a.sessionId,
      clientEpoch: a.clientEpoch,
      checkpointId: cp.checkpointId,
      checkpointContentHash: cp.contentHash,
      expectedRevision,
    },
  };
}
