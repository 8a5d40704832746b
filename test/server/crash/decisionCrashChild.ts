/**
 * Test-only child process: a real studio server (SQLite in `dataDir`) that records one approval
 * and kills itself with SIGKILL at the named durable step (Engine FAULT_STEPS). Scenarios:
 * - `restore`: requests a restore of the sample project and approves it (the engine's own tool);
 * - `demo`: asks the demo agent to clean up, which proposes a delete, and approves it (the demo
 *   agent's continuation);
 * - `delivery`: approves a Managed Agents call (the fake runtime runs in the parent test, at
 *   `peerUrl`), so the decision is delivered to a foreign runtime.
 * decisions.crash.test.ts restarts a server on the same data dir and checks what became of the
 * approved call. argv[2] is JSON `{ dataDir, step, scenario, peerUrl?, foreignId?, apiKey? }`;
 * the ids are written to `<dataDir>/crash-ids.json` before the decision.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStudioServer } from '../../../server/app.ts';
import { ManagedAgentsSource } from '../../../server/sources/managed-agents/ManagedAgentsSource.ts';
import { LOCAL_APP_ID } from '../../../protocol/contract.ts';
import type { Engine } from '../../../server/engine/Engine.ts';

const args = JSON.parse(process.argv[2] ?? '{}') as {
  dataDir: string;
  step: string;
  scenario: 'restore' | 'demo' | 'delivery';
  peerUrl?: string;
  foreignId?: string;
  apiKey?: string;
  /** On PostgreSQL (STUDIO_TEST_STORE) the child and the restart share the data dir's database. */
  databaseUrl?: string | null;
};
const { dataDir, step, scenario } = args;

const server = await startStudioServer({
  dataDir,
  databaseUrl: args.databaseUrl ?? null,
  port: 0,
  demoStepMs: 0,
  staticDir: null,
  quiet: true,
  logWrite: () => undefined,
  demo: scenario !== 'delivery',
  ...(scenario === 'delivery'
    ? {
        sources: [
          new ManagedAgentsSource({
            sessionIds: [args.foreignId!],
            apiKey: args.apiKey!,
            baseUrl: args.peerUrl!,
            backoff: { initialMs: 20, maxMs: 50 },
          }),
        ],
      }
    : {}),
  faultInjector: (at) => {
    if (at === step) process.kill(process.pid, 'SIGKILL');
  },
});
const engine = server.engine;

/** Waits for the session's first pending approval (the source appends it in the background). */
async function firstPending(sessionId: string) {
  for (let i = 0; i < 2000; i++) {
    const [approval] = await engine.reads.listPendingApprovals(sessionId);
    if (approval) return approval;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no pending approval');
}

async function restore(e: Engine) {
  const session = await e.createSession({
    appId: LOCAL_APP_ID,
    projectId: 'sample-app',
    mode: 'BUILD',
  });
  const { clientEpoch } = await e.attach({ sessionId: session.sessionId });
  const checkpoint = await e.createManualCheckpoint({ sessionId: session.sessionId, clientEpoch });
  const readme = join(dataDir, 'projects', 'sample-app', 'README.md');
  const original = readFileSync(readme, 'utf8');
  writeFileSync(readme, `${original}\nAn edit the restore takes back.\n`);
  const project = await e.syncProject('sample-app');
  const approval = await e.requestRestore({
    sessionId: session.sessionId,
    clientEpoch,
    checkpointId: checkpoint.checkpointId,
    checkpointContentHash: checkpoint.contentHash,
    expectedRevision: project.revision,
  });
  return {
    sessionId: session.sessionId,
    clientEpoch,
    approval,
    extra: { checkpointId: checkpoint.checkpointId, readme: original },
  };
}

async function demo(e: Engine) {
  const session = await e.createSession({
    appId: LOCAL_APP_ID,
    projectId: 'cleanup-app',
    mode: 'BUILD',
  });
  const { clientEpoch } = await e.attach({ sessionId: session.sessionId });
  const runId = await e.sendMessage({
    sessionId: session.sessionId,
    clientEpoch,
    content: 'Update the changelog, then clean up the scratch file',
  });
  const approval = await firstPending(session.sessionId);
  return { sessionId: session.sessionId, clientEpoch, approval, extra: { runId } };
}

async function delivery(e: Engine) {
  const sessionId = `ma-${args.foreignId!}`;
  const approval = await firstPending(sessionId);
  const { clientEpoch } = await e.attach({ sessionId });
  return { sessionId, clientEpoch, approval, extra: {} };
}

const made = await { restore, demo, delivery }[scenario](engine);
writeFileSync(
  join(dataDir, 'crash-ids.json'),
  JSON.stringify({
    sessionId: made.sessionId,
    toolCallId: made.approval.toolCallId,
    approvalId: made.approval.approvalId,
    ...made.extra,
  }),
);
await engine.decide(
  {
    sessionId: made.sessionId,
    clientEpoch: made.clientEpoch,
    toolCallId: made.approval.toolCallId,
    argumentHash: made.approval.argumentHash,
  },
  true,
);
// The kill comes from the job the decision enqueued; wait for it (the test fails on a clean exit).
for (let i = 0; i < 200; i++) {
  await engine.jobsIdle();
  await new Promise((resolve) => setTimeout(resolve, 25));
}
await server.close();
