/**
 * A restart on the same data dir loses nothing: the log (eventIds and seqs), sessions,
 * checkpoints, pending approvals and the token survive, and a restore cut off after its
 * RESTORE_PREIMAGE step is finished at the next start; a patch cut off while it ran ends
 * outcome unknown.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  APPROVE,
  CREATE_CHECKPOINT,
  REQUEST_RESTORE,
  attach,
  createSession,
  decideInput,
  getProject,
  getSession,
  history,
  keepAlive,
  key,
  listCheckpoints,
  makeClient,
  makeTempDir,
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
  waitUntil,
} from './harness.ts';
import type { ApprovalData, CheckpointData, Ev, Harness, StudioClient } from './harness.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = makeTempDir('studio-restart-');
  dirs.push(dir);
  return dir;
}

const stamp = (e: Ev) => ({
  eventId: e.eventId,
  seq: e.seq,
  type: e.type,
  createdAt: e.createdAt,
  runId: e.runId,
});

async function snapshotAll(c: StudioClient, h: Harness) {
  const out = new Map<
    string,
    { events: ReturnType<typeof stamp>[]; checkpoints: CheckpointData[] }
  >();
  for (const s of await h.server.engine.reads.listAllSessions()) {
    out.set(s.sessionId, {
      events: (await history(c, s.sessionId)).map(stamp),
      checkpoints: s.projectId ? await listCheckpoints(c, s.sessionId) : [],
    });
  }
  return out;
}

describe('restart', () => {
  it('keeps the log, sessions, checkpoints, the token and a pending approval, which is still decidable', async () => {
    const dataDir = freshDir();
    const first = await startHarness({ dataDir, keepDataDir: true });
    const c1 = makeClient(first);
    const token = first.token;

    const build = await createSession(c1, 'BUILD', 'sample-app');
    const a1 = await attach(c1, build.sessionId);
    const stop1 = keepAlive(c1, a1);
    const { runId } = await sendMessage(c1, a1, 'Note the restart test in the changelog');
    await waitForRunEnd(c1, build.sessionId, runId);
    await ok(c1, CREATE_CHECKPOINT, {
      input: { idempotencyKey: key('cp'), sessionId: build.sessionId, clientEpoch: a1.clientEpoch },
    });
    stop1();

    const cleanup = await createSession(c1, 'BUILD', 'cleanup-app');
    const a2 = await attach(c1, cleanup.sessionId);
    const { runId: waitingRun } = await sendMessage(c1, a2, 'Clean up the scratch file');
    const { event: requested } = await waitForEvent(
      c1,
      cleanup.sessionId,
      (e) => e.type === 'APPROVAL_REQUESTED' && e.runId === waitingRun,
      'the approval',
    );

    const before = await snapshotAll(c1, first);
    const projectBefore = await getProject(c1, build.sessionId);
    const sessionsBefore = (await first.server.engine.reads.listAllSessions())
      .map((s) => s.sessionId)
      .sort();
    await first.close();

    const second = await startHarness({ dataDir });
    try {
      expect(second.token).toBe(token);
      const c2 = makeClient(second);
      expect(
        (await second.server.engine.reads.listAllSessions()).map((s) => s.sessionId).sort(),
      ).toEqual(sessionsBefore);
      const after = await snapshotAll(c2, second);
      for (const [sessionId, then] of before) {
        const now = after.get(sessionId)!;
        // Nothing is lost or rewritten; a restart may only append (for example RUN_PREEMPTED).
        expect(now.events.slice(0, then.events.length)).toEqual(then.events);
        expect(
          now.checkpoints.filter((x) =>
            then.checkpoints.some((y) => y.checkpointId === x.checkpointId),
          ),
        ).toEqual(then.checkpoints);
      }
      const projectAfter = await getProject(c2, build.sessionId);
      expect(projectAfter).toEqual(projectBefore);

      // The approval survived and is decided after the restart; the run finishes for real.
      const pending = (await getSession(c2, cleanup.sessionId)).pendingApproval;
      expect(pending?.approvalId).toBe(requested.approvalId);
      const a3 = await attach(c2, cleanup.sessionId);
      const granted = (
        await ok<{ crowdyStudioAgentApproveTool: ApprovalData }>(
          c2,
          APPROVE,
          decideInput(a3, {
            toolCallId: requested.approvalToolCallId!,
            argumentHash: requested.argumentHash!,
          }),
        )
      ).crowdyStudioAgentApproveTool;
      expect(granted.status).toBe('GRANTED');
      const events = await waitForRunEnd(c2, cleanup.sessionId, waitingRun);
      expect(events.filter((e) => e.runId === waitingRun).pop()?.type).toBe('RUN_SUCCEEDED');
      expect(existsSync(join(projectDir(second, 'cleanup-app'), 'tmp/agent-scratch.md'))).toBe(
        false,
      );
      // New events continue the same seq line.
      const seqs = events.map((e) => BigInt(e.seq));
      expect(seqs).toEqual(seqs.map((_, i) => BigInt(i + 1)));
      expect(second.logs.filter((l) => l.includes(token))).toEqual([]);
    } finally {
      await second.close();
    }
  });

  it('ends a patch the demo dispatched but never finished as outcome unknown, then preempts its run', async () => {
    const dataDir = freshDir();
    const first = await startHarness({ dataDir, keepDataDir: true });
    const c1 = makeClient(first);
    const session = await createSession(c1, 'BUILD', 'sample-app');
    // What a kill between the patch's TOOL_DISPATCHED and its result leaves in the log.
    const runId = 'run_cut_patch';
    const base = {
      runId,
      toolCallId: 'tc_cut_patch',
      toolName: 'workspace.file.patch',
      toolVersion: '1.0.0',
    };
    await first.server.engine.append(session.sessionId, [
      { type: 'RUN_STARTED', runId },
      {
        ...base,
        type: 'TOOL_PROPOSED',
        status: 'PROPOSED',
        executor: 'SERVER',
        safeSummary: 'Edit README.md',
        argumentHash: `sha256:${'0'.repeat(64)}`,
        argumentsJson: '{}',
        contextVersion: '1',
      },
      { ...base, type: 'TOOL_DISPATCHED', status: 'RUNNING', executor: 'SERVER' },
    ]);
    await first.close();

    const second = await startHarness({ dataDir });
    try {
      const c2 = makeClient(second);
      await waitForRunEnd(c2, session.sessionId, runId);
      const events = (await history(c2, session.sessionId)).filter((e) => e.runId === runId);
      expect(typesOf(events)).toEqual([
        'RUN_STARTED',
        'TOOL_PROPOSED',
        'TOOL_DISPATCHED',
        'TOOL_OUTCOME_UNKNOWN',
        'RUN_PREEMPTED',
      ]);
      expect((await second.server.engine.reads.getToolCall(base.toolCallId))?.status).toBe(
        'OUTCOME_UNKNOWN',
      );
    } finally {
      await second.close();
    }
  });

  it('finishes a restore that was cut off after its RESTORE_PREIMAGE step', async () => {
    const dataDir = freshDir();
    const first = await startHarness({ dataDir, keepDataDir: true });
    const c1 = makeClient(first);
    const session = await createSession(c1, 'BUILD', 'sample-app');
    const a = await attach(c1, session.sessionId);
    const stop = keepAlive(c1, a);
    const dir = projectDir(first, 'sample-app');
    const treeA = readTree(dir);
    const cp = (
      await ok<{ studioCreateCheckpoint: CheckpointData }>(c1, CREATE_CHECKPOINT, {
        input: {
          idempotencyKey: key('cp'),
          sessionId: session.sessionId,
          clientEpoch: a.clientEpoch,
        },
      })
    ).studioCreateCheckpoint;
    rmSync(join(dir, 'README.md'));
    const treeB = readTree(dir);
    const projectB = await getProject(c1, session.sessionId);
    const approval = (
      await ok<{ studioRequestCheckpointRestore: ApprovalData }>(c1, REQUEST_RESTORE, {
        input: {
          idempotencyKey: key('restore'),
          sessionId: session.sessionId,
          clientEpoch: a.clientEpoch,
          checkpointId: cp.checkpointId,
          checkpointContentHash: cp.contentHash,
          expectedRevision: projectB.revision,
        },
      })
    ).studioRequestCheckpointRestore;

    // Simulate the process dying right after the pre-image: the folder write never happens.
    const workspace = await first.server.engine.workspace('sample-app');
    workspace.restore = () => {
      throw new Error('simulated crash after RESTORE_PREIMAGE');
    };
    await ok(c1, APPROVE, decideInput(a, approval));
    const { event: preImage } = await waitForEvent(
      c1,
      session.sessionId,
      (e) => e.type === 'CHECKPOINT_CREATED' && e.checkpointReason === 'RESTORE_PREIMAGE',
      'the pre-image',
    );
    await waitUntil(
      () => first.logs.some((l) => l.includes('simulated crash')),
      'the crash to be logged',
    );
    const cut = await history(c1, session.sessionId);
    expect(
      cut.some(
        (e) =>
          e.type === 'CHECKPOINT_RESTORED' ||
          (e.type === 'TOOL_SUCCEEDED' && e.toolCallId === approval.toolCallId),
      ),
    ).toBe(false);
    expect(readTree(dir)).toEqual(treeB);
    expect((await first.server.engine.pendingRestores()).map((j) => j.toolCallId)).toEqual([
      approval.toolCallId,
    ]);
    stop();
    await first.close();

    const second = await startHarness({ dataDir });
    try {
      const c2 = makeClient(second);
      expect(
        second.logs.some((l) => l.includes('finishing a restore interrupted by a restart')),
      ).toBe(true);
      const events = await history(c2, session.sessionId);
      expect(events.slice(0, cut.length).map(stamp)).toEqual(cut.map(stamp));
      const rest = events
        .slice(cut.length)
        .filter((e) => e.toolCallId === approval.toolCallId || e.type.startsWith('CHECKPOINT_'));
      expect(typesOf(rest)).toEqual(['CHECKPOINT_RESTORED', 'TOOL_SUCCEEDED']);
      expect(rest[0]!.checkpointId).toBe(cp.checkpointId);
      expect(rest[0]!.restoredAt).toEqual(expect.any(String));
      const result = JSON.parse(rest[1]!.resultJson!) as {
        preRestoreCheckpoint: { checkpointId: string };
      };
      expect(result.preRestoreCheckpoint.checkpointId).toBe(preImage.checkpointId);

      expect(readTree(dir)).toEqual(treeA);
      const project = await getProject(c2, session.sessionId);
      expect(BigInt(project.revision)).toBe(BigInt(projectB.revision) + 1n);
      expect(project.contentHash).toBe(cp.contentHash);
      expect(sortedFiles(project.files)).toEqual(manifestOf(treeA));
      expect(await second.server.engine.pendingRestores()).toEqual([]);
    } finally {
      await second.close();
    }
  });
});
