/**
 * Durable effects through a real process death: a child server records an approval and is killed
 * with SIGKILL at each named step between the decision's commit and the end of what it
 * authorizes (Engine FAULT_STEPS), on three paths: a restore (the engine's own tool), the demo
 * agent's delete (its continuation), and a delivery to a foreign runtime (Managed Agents, the
 * fake runtime living in this process so it outlives the kill). A server restarted on the same
 * data dir must finish or fail the approved call: never a call left GRANTED, waiting or RUNNING,
 * never a job left claimed, a restore written once, the runtime confirmed at most once.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { FaultStep } from '../../../server/engine/Engine.ts';
import { ManagedAgentsSource } from '../../../server/sources/managed-agents/ManagedAgentsSource.ts';
import { TERMINAL_TOOL_STATUSES } from '../../../protocol/events.ts';
import { FakeManagedAgentsPeer, type FakeEvent } from '../../fakes/FakeManagedAgentsPeer.ts';
import { makeTempDir, startHarness, waitUntil } from '../harness.ts';
import type { Harness } from '../harness.ts';
import { harnessDatabaseUrl, releaseHarnessDatabase } from '../../support/harnessStore.ts';

const child = fileURLToPath(new URL('./decisionCrashChild.ts', import.meta.url));
const ROUNDS = 2;
const API_KEY = 'sk-ant-api03-crash-test-aabbccddeeff';

type Scenario = 'restore' | 'demo' | 'delivery';
/** The named steps each path passes through, in order. */
const PATHS: Record<Scenario, readonly FaultStep[]> = {
  restore: [
    'decision-committed',
    'job-claimed',
    'restore-started',
    'restore-written',
    'restore-committed',
  ],
  demo: ['decision-committed', 'job-claimed', 'demo-dispatched', 'demo-written'],
  delivery: ['decision-committed', 'job-claimed', 'delivery-sent'],
};

/** The statuses that end a call (a call in any other is waiting, granted or running). */
const ENDED = new Set<string>(TERMINAL_TOOL_STATUSES);

const outcomes: { scenario: Scenario; step: string; status: string }[] = [];

afterAll(() => {
  const stuck = outcomes.filter((o) => !ENDED.has(o.status)).length;
  const byStatus = new Map<string, number>();
  for (const o of outcomes)
    byStatus.set(`${o.scenario}:${o.status}`, (byStatus.get(`${o.scenario}:${o.status}`) ?? 0) + 1);
  console.log(
    `approved calls killed at every named step x ${ROUNDS}: ${stuck} of ${outcomes.length} left neither run nor failed after the restart (${[...byStatus].map(([k, n]) => `${k} ${n}`).join(', ')})`,
  );
});

interface Ids {
  sessionId: string;
  toolCallId: string;
  approvalId: string;
  checkpointId?: string;
  readme?: string;
  runId?: string;
}

function json<T>(path: string): T {
  return JSON.parse(readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8')) as T;
}

/**
 * Runs the child until its SIGKILL; returns the ids it wrote. Asynchronous, so the fake runtime
 * in this process keeps answering the child meanwhile.
 */
async function killChild(args: Record<string, unknown>): Promise<Ids> {
  const proc = spawn(process.execPath, ['--import', 'tsx', child, JSON.stringify(args)], {
    cwd: process.cwd(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => proc.kill('SIGTERM'), 90_000);
  const [, signal] = (await once(proc, 'exit')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  expect(stderr).toBe('');
  expect(signal).toBe('SIGKILL');
  return JSON.parse(readFileSync(join(String(args.dataDir), 'crash-ids.json'), 'utf8')) as Ids;
}

async function typesOfCall(h: Harness, ids: Ids): Promise<string[]> {
  const payloads = await h.server.engine.snapshot((reads) =>
    reads.readEventPayloads(ids.sessionId, 0n, 10_000),
  );
  return payloads
    .map((p) => JSON.parse(p) as { type: string; toolCallId?: string })
    .filter((e) => e.toolCallId === ids.toolCallId)
    .map((e) => e.type);
}

/** What holds on every path: the call ended, its job is done, the outbox is empty. */
async function expectSettled(h: Harness, scenario: Scenario, step: string, ids: Ids) {
  const engine = h.server.engine;
  await engine.jobsIdle();
  const call = await waitUntil(async () => {
    const now = await engine.reads.getToolCall(ids.toolCallId);
    return now && ENDED.has(now.status) ? now : undefined;
  }, `the approved call to end (${scenario} at ${step})`).catch(() => undefined);
  const status = call?.status ?? (await engine.reads.getToolCall(ids.toolCallId))?.status;
  outcomes.push({ scenario, step, status: status ?? 'MISSING' });
  expect(ENDED.has(status ?? 'MISSING')).toBe(true);
  expect(await engine.listJobs(['PENDING', 'CLAIMED'])).toEqual([]);
  return call!;
}

describe('a decision and what it authorizes survive SIGKILL at every named step', () => {
  const cases = (Object.keys(PATHS) as Scenario[]).flatMap((scenario) =>
    PATHS[scenario].flatMap((step) =>
      Array.from({ length: ROUNDS }, (_, round) => [scenario, step, round + 1] as const),
    ),
  );
  it.each(cases)(
    '%s killed at %s (round %i): the restart runs or fails the approved call',
    async (scenario, step) => {
      const dataDir = makeTempDir('studio-crash-');
      const s = json<{
        session: Record<string, unknown>;
        history: FakeEvent[];
        live: FakeEvent[];
        afterAllow: FakeEvent[];
      }>('managed-agents/live-approval.json');
      const foreignId = String(s.session.id);
      const peer =
        scenario === 'delivery'
          ? await FakeManagedAgentsPeer.start({
              apiKey: API_KEY,
              sessions: { [foreignId]: { session: s.session, history: [...s.history, ...s.live] } },
            })
          : null;
      if (peer)
        // The runtime runs the tool once it is confirmed (whichever server confirmed it).
        peer.onEventsSent = (id, sent) => {
          if (sent.some((e) => e.type === 'user.tool_confirmation'))
            setTimeout(() => peer.emit(id, s.afterAllow), 20);
        };
      const managedAgents = () =>
        new ManagedAgentsSource({
          sessionIds: [foreignId],
          apiKey: API_KEY,
          baseUrl: peer!.url,
          backoff: { initialMs: 20, maxMs: 50 },
        });
      try {
        const ids = await killChild({
          dataDir,
          step,
          scenario,
          databaseUrl: await harnessDatabaseUrl(dataDir),
          ...(peer ? { peerUrl: peer.url, foreignId, apiKey: API_KEY } : {}),
        });
        const h = await startHarness({
          dataDir,
          keepDataDir: true,
          ...(peer ? { demo: false, sources: [managedAgents()] } : {}),
        });
        try {
          const call = await expectSettled(h, scenario, step, ids);
          const engine = h.server.engine;
          if (scenario === 'restore') {
            expect(call.status).toBe('SUCCEEDED');
            expect((await engine.reads.getApproval(ids.approvalId))?.status).toBe('CONSUMED');
            expect(await typesOfCall(h, ids)).toEqual([
              'TOOL_PROPOSED',
              'APPROVAL_REQUESTED',
              'APPROVAL_GRANTED',
              'APPROVAL_CONSUMED',
              'TOOL_DISPATCHED',
              'TOOL_SUCCEEDED',
            ]);
            const restored = (
              await engine.snapshot((reads) => reads.readEventPayloads(ids.sessionId, 0n, 10_000))
            )
              .map((p) => JSON.parse(p) as { type: string; checkpointId?: string })
              .filter(
                (e) => e.type === 'CHECKPOINT_RESTORED' && e.checkpointId === ids.checkpointId,
              );
            expect(restored).toHaveLength(1);
            expect(readFileSync(join(dataDir, 'projects', 'sample-app', 'README.md'), 'utf8')).toBe(
              ids.readme,
            );
            expect(await engine.pendingRestores()).toEqual([]);
          } else if (scenario === 'demo') {
            // Before the dispatch commits the delete runs after the restart; once dispatched, the
            // restarted agent cannot know whether the files went, and says so.
            const dispatched = step === 'demo-dispatched' || step === 'demo-written';
            expect(call.status).toBe(dispatched ? 'OUTCOME_UNKNOWN' : 'SUCCEEDED');
            expect((await engine.reads.getApproval(ids.approvalId))?.status).toBe('CONSUMED');
            const scratch = join(dataDir, 'projects', 'cleanup-app', 'tmp', 'agent-scratch.md');
            if (!dispatched) expect(existsSync(scratch)).toBe(false);
            const run = await engine.reads.getRun(ids.runId!);
            expect(run?.status).toBe(dispatched ? 'PREEMPTED' : 'SUCCEEDED');
          } else {
            // At most one confirmation ever reached the runtime, and the call ran there.
            const confirmations = peer!
              .postedEvents(foreignId)
              .filter((e) => e.type === 'user.tool_confirmation');
            expect(confirmations).toHaveLength(1);
            expect(call.status).toBe('SUCCEEDED');
          }
        } finally {
          await h.close();
        }
      } finally {
        await peer?.close();
        rmSync(dataDir, { recursive: true, force: true });
        await releaseHarnessDatabase(dataDir);
      }
    },
    120_000,
  );
});
