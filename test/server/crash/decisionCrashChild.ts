/**
 * Test-only child process: a real studio server (demo on, SQLite in `dataDir`) that requests a
 * restore of the sample project, approves it, and kills itself with SIGKILL at the named durable
 * step of the engine (Engine FAULT_STEPS). decisions.crash.test.ts restarts a server on the same
 * data dir and checks what became of the approved call.
 * argv[2] is a JSON `{ dataDir, step }`; the ids are written to `<dataDir>/crash-ids.json` first.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStudioServer } from '../../../server/app.ts';
import { LOCAL_APP_ID } from '../../../protocol/contract.ts';

const { dataDir, step, databaseUrl } = JSON.parse(process.argv[2] ?? '{}') as {
  dataDir: string;
  step: string;
  databaseUrl?: string | null;
};

const server = await startStudioServer({
  dataDir,
  databaseUrl: databaseUrl ?? null,
  port: 0,
  demoStepMs: 0,
  staticDir: null,
  quiet: true,
  logWrite: () => undefined,
  faultInjector: (at) => {
    if (at === step) process.kill(process.pid, 'SIGKILL');
  },
});
const engine = server.engine;
const session = await engine.createSession({
  appId: LOCAL_APP_ID,
  projectId: 'sample-app',
  mode: 'BUILD',
});
const { clientEpoch } = await engine.attach({ sessionId: session.sessionId });
const checkpoint = await engine.createManualCheckpoint({
  sessionId: session.sessionId,
  clientEpoch,
});
const readme = join(dataDir, 'projects', 'sample-app', 'README.md');
const original = readFileSync(readme, 'utf8');
writeFileSync(readme, `${original}\nAn edit the restore takes back.\n`);
const project = await engine.syncProject('sample-app');
const approval = await engine.requestRestore({
  sessionId: session.sessionId,
  clientEpoch,
  checkpointId: checkpoint.checkpointId,
  checkpointContentHash: checkpoint.contentHash,
  expectedRevision: project.revision,
});
writeFileSync(
  join(dataDir, 'crash-ids.json'),
  JSON.stringify({
    sessionId: session.sessionId,
    toolCallId: approval.toolCallId,
    checkpointId: checkpoint.checkpointId,
    readme: original,
  }),
);
await engine.decide(
  {
    sessionId: session.sessionId,
    clientEpoch,
    toolCallId: approval.toolCallId,
    argumentHash: approval.argumentHash,
  },
  true,
);
// The kill comes from the job the decision enqueued; wait for it (the test fails on a clean exit).
for (let i = 0; i < 200; i++) {
  await engine.jobsIdle();
  await new Promise((resolve) => setTimeout(resolve, 25));
}
await server.close();
