/**
 * Durable effects through a real process death: a child server approves a restore and is killed
 * with SIGKILL at each named step between the decision's commit and the restore's end (Engine
 * FAULT_STEPS: the decision committed, its job claimed, the restore started, the folder written,
 * the restore committed). A server restarted on the same data dir must finish the approved call:
 * never a call left GRANTED or RUNNING, never a job left claimed, the folder restored once.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { FAULT_STEPS } from '../../../server/engine/Engine.ts';
import { makeTempDir, startHarness } from '../harness.ts';
import { harnessDatabaseUrl, releaseHarnessDatabase } from '../../support/harnessStore.ts';

const child = fileURLToPath(new URL('./decisionCrashChild.ts', import.meta.url));
const ROUNDS = 2;
const outcomes: { step: string; status: string }[] = [];

afterAll(() => {
  const unfinished = outcomes.filter((o) => o.status !== 'SUCCEEDED').length;
  console.log(
    `approved restores killed at ${FAULT_STEPS.length} steps x ${ROUNDS}: ${unfinished} of ${outcomes.length} left unfinished after the restart`,
  );
});

describe('a decision and its restore survive SIGKILL at every durable step', () => {
  const cases = FAULT_STEPS.flatMap((step) =>
    Array.from({ length: ROUNDS }, (_, round) => [step, round + 1] as const),
  );
  it.each(cases)(
    'killed at %s (round %i): the restart finishes the restore exactly once',
    async (step) => {
      const dataDir = makeTempDir('studio-crash-');
      try {
        const result = spawnSync(
          process.execPath,
          [
            '--import',
            'tsx',
            child,
            // On PostgreSQL (STUDIO_TEST_STORE) the child and the restart share the data dir's database.
            JSON.stringify({ dataDir, step, databaseUrl: await harnessDatabaseUrl(dataDir) }),
          ],
          { cwd: process.cwd(), encoding: 'utf8', timeout: 90_000 },
        );
        expect(result.stderr).toBe('');
        expect(result.signal).toBe('SIGKILL');
        const ids = JSON.parse(readFileSync(join(dataDir, 'crash-ids.json'), 'utf8')) as {
          sessionId: string;
          toolCallId: string;
          checkpointId: string;
          readme: string;
        };

        const h = await startHarness({ dataDir, keepDataDir: true });
        try {
          const engine = h.server.engine;
          // startStudioServer returns once recovery ran (restores, then the outbox's left jobs).
          await engine.jobsIdle();
          const call = await engine.reads.getToolCall(ids.toolCallId);
          outcomes.push({ step, status: call?.status ?? 'MISSING' });
          expect(call?.status).toBe('SUCCEEDED');
          const approval = await engine.reads.getApproval(call!.approvalId!);
          expect(approval?.status).toBe('CONSUMED');
          const events = (
            await engine.snapshot((reads) => reads.readEventPayloads(ids.sessionId, 0n, 10_000))
          ).map(
            (json) =>
              JSON.parse(json) as { type: string; toolCallId?: string; checkpointId?: string },
          );
          const ofCall = events.filter((e) => e.toolCallId === ids.toolCallId).map((e) => e.type);
          expect(ofCall).toEqual([
            'TOOL_PROPOSED',
            'APPROVAL_REQUESTED',
            'APPROVAL_GRANTED',
            'APPROVAL_CONSUMED',
            'TOOL_DISPATCHED',
            'TOOL_SUCCEEDED',
          ]);
          expect(
            events.filter(
              (e) => e.type === 'CHECKPOINT_RESTORED' && e.checkpointId === ids.checkpointId,
            ),
          ).toHaveLength(1);
          expect(readFileSync(join(dataDir, 'projects', 'sample-app', 'README.md'), 'utf8')).toBe(
            ids.readme,
          );
          expect(await engine.listJobs(['PENDING', 'CLAIMED'])).toEqual([]);
          expect(await engine.pendingRestores()).toEqual([]);
        } finally {
          await h.close();
        }
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
        await releaseHarnessDatabase(dataDir);
      }
    },
    120_000,
  );
});
