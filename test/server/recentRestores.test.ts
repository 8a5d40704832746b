/**
 * studioRecentRestores against the real server: a checkpoint restored through the approval
 * appears, with its session, newest restore first; nothing before any restore.
 */
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
  keepAlive,
  key,
  makeClient,
  ok,
  startHarness,
  waitForEvent,
} from './harness.ts';
import type { ApprovalData, CheckpointData, Harness, StudioClient } from './harness.ts';

const RECENT = `query Recent($first: Int) {
  studioRecentRestores(first: $first) {
    restoredAt
    checkpoint { checkpointId reason restoredAt }
    session { sessionId studioTitle }
  }
}`;
interface Recent {
  studioRecentRestores: {
    restoredAt: string;
    checkpoint: { checkpointId: string; restoredAt: string };
    session: { sessionId: string };
  }[];
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

describe('studioRecentRestores', () => {
  it('lists restored checkpoints with their session, newest first', async () => {
    expect((await ok<Recent>(c, RECENT)).studioRecentRestores).toEqual([]);
    const session = await createSession(c, 'BUILD', 'sample-app');
    const a = await attach(c, session.sessionId);
    const stop = keepAlive(c, a);
    try {
      const restoreOnce = async () => {
        const cp = (
          await ok<{ studioCreateCheckpoint: CheckpointData }>(c, CREATE_CHECKPOINT, {
            input: {
              idempotencyKey: key('cp'),
              sessionId: a.sessionId,
              clientEpoch: a.clientEpoch,
            },
          })
        ).studioCreateCheckpoint;
        const project = await getProject(c, a.sessionId);
        const approval = (
          await ok<{ studioRequestCheckpointRestore: ApprovalData }>(c, REQUEST_RESTORE, {
            input: {
              idempotencyKey: key('restore'),
              sessionId: a.sessionId,
              clientEpoch: a.clientEpoch,
              checkpointId: cp.checkpointId,
              checkpointContentHash: cp.contentHash,
              expectedRevision: project.revision,
            },
          })
        ).studioRequestCheckpointRestore;
        await ok(c, APPROVE, decideInput(a, approval));
        await waitForEvent(
          c,
          a.sessionId,
          (e) => e.type === 'CHECKPOINT_RESTORED' && e.checkpointId === cp.checkpointId,
          'the restore',
        );
        return cp;
      };
      const first = await restoreOnce();
      const second = await restoreOnce();
      const recent = (await ok<Recent>(c, RECENT, { first: 5 })).studioRecentRestores;
      expect(recent.map((r) => r.checkpoint.checkpointId)).toEqual([
        second.checkpointId,
        first.checkpointId,
      ]);
      expect(recent[0]!.session.sessionId).toBe(a.sessionId);
      expect(recent[0]!.restoredAt).toBe(recent[0]!.checkpoint.restoredAt);
      expect((await ok<Recent>(c, RECENT, { first: 1 })).studioRecentRestores).toHaveLength(1);
      expect(await failCode(c, RECENT, { first: 0 })).toBe('BAD_USER_INPUT');
    } finally {
      stop();
    }
  });
});
