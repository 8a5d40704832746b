/**
 * The checkpoint browser's fields against the real server: studioMadeBy names the tool call
 * (and run and event) a checkpoint was taken for, or says a person took it; studioRestorePreview
 * gives, for the whole checkpoint or for picked files and folders, exactly the counts the
 * restore's approval card then states, and follows the project as it changes on disk.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CREATE_CHECKPOINT,
  REQUEST_RESTORE,
  attach,
  createSession,
  failCode,
  getProject,
  history,
  keepAlive,
  key,
  makeClient,
  ok,
  projectDir,
  startHarness,
} from './harness.ts';
import type { ApprovalData, CheckpointData, Harness, StudioClient } from './harness.ts';
import { startDelete } from './approvalKit.ts';

const INSIGHTS = `query Insights($checkpointId: String!, $paths: [String!]) {
  studioCheckpoint(checkpointId: $checkpointId) {
    checkpointId reason
    studioMadeBy { seq runId toolCallId toolName restoredCheckpointId summary }
    studioRestorePreview(paths: $paths) {
      checkpointId paths projectRevision projectContentHash
      changed added removed modeChanged notRestorable changedOutsideAgent
    }
  }
}`;

interface Insights {
  studioCheckpoint: {
    checkpointId: string;
    reason: string;
    studioMadeBy: {
      seq: string;
      runId: string | null;
      toolCallId: string | null;
      toolName: string | null;
      summary: string;
    };
    studioRestorePreview: {
      paths: string[] | null;
      projectRevision: string;
      changed: number;
      added: number;
      removed: number;
      modeChanged: number;
      notRestorable: number;
      changedOutsideAgent: number;
    };
  };
}

let h: Harness;
let c: StudioClient;

beforeAll(async () => {
  h = await startHarness();
  c = makeClient(h);
});

afterAll(async () => {
  await h.dispose();
});

const insights = async (checkpointId: string, paths?: string[]) =>
  (await ok<Insights>(c, INSIGHTS, { checkpointId, ...(paths ? { paths } : {}) })).studioCheckpoint;

describe('StudioCheckpoint.studioMadeBy', () => {
  it("names the agent write's tool call and run, and a manual checkpoint's author", async () => {
    const r = await startDelete(h, c);
    const events = await history(c, r.a.sessionId);
    const created = events.find((e) => e.type === 'CHECKPOINT_CREATED')!;
    const made = (await insights(created.checkpointId!)).studioMadeBy;
    expect(made.seq).toBe(created.seq);
    expect(made.runId).toBe(r.runId);
    // The first tool event of the run after the checkpoint: the write it was taken for.
    const write = events.find(
      (e) =>
        BigInt(e.seq) > BigInt(created.seq) && e.runId === r.runId && e.type.startsWith('TOOL_'),
    )!;
    expect(made.toolCallId).toBe(write.toolCallId);
    expect(made.toolName).toBe(write.toolName);
    expect(made.summary).toBe(`Taken before ${write.toolName} wrote to the project`);

    const manual = (
      await ok<{ studioCreateCheckpoint: CheckpointData }>(c, CREATE_CHECKPOINT, {
        input: {
          idempotencyKey: key('cp'),
          sessionId: r.a.sessionId,
          clientEpoch: r.a.clientEpoch,
        },
      })
    ).studioCreateCheckpoint;
    expect((await insights(manual.checkpointId)).studioMadeBy).toMatchObject({
      toolCallId: null,
      summary: 'Taken by hand in the studio',
    });
    r.stop();
  });
});

describe('StudioCheckpoint.studioRestorePreview', () => {
  it('counts what a restore of the whole checkpoint or of a picked folder changes, as the approval card says', async () => {
    const session = await createSession(c, 'BUILD', 'sample-app');
    const a = await attach(c, session.sessionId);
    const stop = keepAlive(c, a);
    try {
      const dir = projectDir(h, 'sample-app');
      mkdirSync(join(dir, 'notes'), { recursive: true });
      writeFileSync(join(dir, 'notes', 'a.md'), 'a v1\n');
      writeFileSync(join(dir, 'notes', 'b.md'), 'b v1\n');
      const cp = (
        await ok<{ studioCreateCheckpoint: CheckpointData }>(c, CREATE_CHECKPOINT, {
          input: { idempotencyKey: key('cp'), sessionId: a.sessionId, clientEpoch: a.clientEpoch },
        })
      ).studioCreateCheckpoint;
      const clean = (await insights(cp.checkpointId)).studioRestorePreview;
      expect(clean).toMatchObject({ changed: 0, added: 0, removed: 0, paths: null });

      // The project moves on under the preview: two notes edited, one new, README edited.
      writeFileSync(join(dir, 'notes', 'a.md'), 'a v2\n');
      writeFileSync(join(dir, 'notes', 'b.md'), 'b v2\n');
      writeFileSync(join(dir, 'notes', 'c.md'), 'c\n');
      writeFileSync(join(dir, 'README.md'), '# edited\n');
      const whole = (await insights(cp.checkpointId)).studioRestorePreview;
      expect(whole).toMatchObject({ changed: 3, added: 0, removed: 1 });
      expect(whole.changedOutsideAgent).toBe(4);
      const folder = (await insights(cp.checkpointId, ['notes/'])).studioRestorePreview;
      expect(folder).toMatchObject({ paths: ['notes'], changed: 2, added: 0, removed: 1 });
      const project = await getProject(c, a.sessionId);
      expect(folder.projectRevision).toBe(project.revision);

      const approval = (
        await ok<{ studioRequestCheckpointRestore: ApprovalData }>(c, REQUEST_RESTORE, {
          input: {
            idempotencyKey: key('restore'),
            sessionId: a.sessionId,
            clientEpoch: a.clientEpoch,
            checkpointId: cp.checkpointId,
            checkpointContentHash: cp.contentHash,
            expectedRevision: project.revision,
            paths: ['notes/'],
          },
        })
      ).studioRequestCheckpointRestore;
      expect(approval.safeSummary).toContain(
        `${folder.changed} file(s) change, ${folder.added} come back, ${folder.removed} are removed, ${folder.modeChanged} change mode`,
      );
      expect(await failCode(c, INSIGHTS, { checkpointId: cp.checkpointId, paths: ['../x'] })).toBe(
        'BAD_USER_INPUT',
      );
    } finally {
      stop();
    }
  });
});
