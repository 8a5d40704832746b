/**
 * `npm run bench:history` (issue 11): the history scrubber's reads on a large session. Starts
 * the real server in-process (port 0, temp data dir), creates one session and fills it through
 * the Store's insertEvent (as searchBench does) with a mix that gives the fold real work: runs,
 * tool calls, approvals, budgets and checkpoints among log lines. Then times over real HTTP:
 * studioSessionHistory cold (the fold catching up, FOLD_ROWS_PER_REQUEST per request, until
 * throughSeq reaches the end), warm (nothing new to fold), and studioSessionAt at a few seqs.
 * Figures are printed, never asserted.
 *
 * Env: BENCH_HISTORY_EVENTS (default 1000000), BENCH_HISTORY_RUNS (default 10).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startStudioServer, type StudioServer } from '../../server/app.ts';
import { SqliteStore } from '../../server/store/SqliteStore.ts';

const EVENTS = Number(process.env.BENCH_HISTORY_EVENTS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_HISTORY_RUNS ?? 10);
const PER_TRANSACTION = 10_000;

function event(sessionId: string, seq: number): { type: string; runId: string; json: string } {
  const runId = `run-${Math.floor(seq / 100)}`;
  const base = {
    eventId: `h-${seq}`,
    sessionId,
    seq: String(seq),
    runId,
    createdAt: '2026-12-01T10:00:00.000Z',
  };
  const call = `call-${Math.floor(seq / 10)}`;
  const at = seq % 100;
  const make = (type: string, typename: string, fields: Record<string, unknown>) => ({
    type,
    runId,
    json: JSON.stringify({ __typename: typename, ...base, type, ...fields }),
  });
  if (at === 0) return make('RUN_STARTED', 'AgentRunEvent', { status: 'RUNNING' });
  if (at === 99) return make('RUN_SUCCEEDED', 'AgentRunEvent', { status: 'SUCCEEDED' });
  if (at === 50)
    return make('CHECKPOINT_CREATED', 'AgentCheckpointEvent', {
      checkpointId: `cp-${seq}`,
      reason: 'AGENT_WRITE',
    });
  if (at === 60)
    return make('BUDGET_UPDATED', 'AgentBudgetEvent', {
      budget: { dimensions: [], resetAt: null, platformFunded: true, payer: 'PLATFORM' },
    });
  switch (seq % 10) {
    case 1:
      return make('TOOL_PROPOSED', 'AgentToolEvent', {
        toolCallId: call,
        toolName: 'workspace.file.write',
        status: 'PROPOSED',
      });
    case 2:
      return make('APPROVAL_REQUESTED', 'AgentApprovalEvent', {
        approvalId: `a-${call}`,
        toolCallId: call,
        status: 'PENDING',
        safeSummary: 'write a file',
      });
    case 3:
      return make('APPROVAL_GRANTED', 'AgentApprovalEvent', {
        approvalId: `a-${call}`,
        toolCallId: call,
        status: 'GRANTED',
        safeSummary: 'write a file',
      });
    case 4:
      return make('TOOL_SUCCEEDED', 'AgentToolEvent', {
        toolCallId: call,
        toolName: 'workspace.file.write',
        status: 'SUCCEEDED',
      });
    default:
      return make('STUDIO_LOG', 'StudioLogEvent', {
        level: 'info',
        message: `line ${seq}`,
        origin: 'bench',
      });
  }
}

const HISTORY = `query($sessionId: String!) { studioSessionHistory(sessionId: $sessionId) { throughSeq marksThinned marks { seq kind } } }`;
const AT = `query($sessionId: String!, $seq: BigInt!) { studioSessionAt(sessionId: $sessionId, seq: $seq) { seq toolCallCount pendingApprovalCount checkpoint { checkpointId } } }`;

async function gql<T>(server: StudioServer, query: string, variables: unknown): Promise<T> {
  const res = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown };
  if (!body.data) throw new Error(`GraphQL failed: ${JSON.stringify(body.errors)}`);
  return body.data;
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'studio-history-bench-'));
  let server: StudioServer | null = null;
  try {
    server = await startStudioServer({
      port: 0,
      dataDir,
      demoStepMs: 0,
      quiet: true,
      staticDir: null,
    });
    const created = await gql<{ crowdyStudioAgentCreateSession: { sessionId: string } }>(
      server,
      `mutation($input: CreateAgentSessionInput!) { crowdyStudioAgentCreateSession(input: $input) { sessionId } }`,
      {
        input: {
          idempotencyKey: 'history-bench',
          appId: '1',
          projectId: 'sample-app',
          mode: 'ASK',
        },
      },
    );
    const sessionId = created.crowdyStudioAgentCreateSession.sessionId;
    // The fill writes the log straight through a second store connection (not the engine's
    // append, which would take minutes): only the history reads are measured here.
    const store = new SqliteStore(join(dataDir, 'studio.db'));
    const first =
      (await store.transaction((tx) => tx.countEvents(sessionId), { readOnly: true })) + 1;
    for (let seq = first; seq < first + EVENTS;) {
      const end = Math.min(first + EVENTS, seq + PER_TRANSACTION);
      await store.transaction(async (tx) => {
        for (; seq < end; seq++) {
          const e = event(sessionId, seq);
          await tx.insertEvent({
            sessionId,
            seq: BigInt(seq),
            eventId: `h-${seq}`,
            type: e.type,
            runId: e.runId,
            createdAt: '2026-12-01T10:00:00.000Z',
            payload: e.json,
            foreignId: null,
          });
        }
      });
    }
    await store.close();
    const last = first + EVENTS - 1;

    const cold: number[] = [];
    let through = '0';
    while (BigInt(through) < BigInt(last)) {
      const started = performance.now();
      const data = await gql<{ studioSessionHistory: { throughSeq: string } }>(server, HISTORY, {
        sessionId,
      });
      cold.push(performance.now() - started);
      through = data.studioSessionHistory.throughSeq;
    }
    const warm: number[] = [];
    let marks = 0;
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      const data = await gql<{ studioSessionHistory: { marks: unknown[] } }>(server, HISTORY, {
        sessionId,
      });
      warm.push(performance.now() - started);
      marks = data.studioSessionHistory.marks.length;
    }
    const atTimes: Record<string, number[]> = {};
    for (const seq of [Math.floor(last / 100), Math.floor(last / 2), last]) {
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const started = performance.now();
        await gql(server, AT, { sessionId, seq: String(seq) });
        times.push(performance.now() - started);
      }
      atTimes[String(seq)] = times;
    }
    console.log(
      `history bench: ${EVENTS.toLocaleString('en')} events in one session; ${cpus().length} cores, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    console.log(
      `studioSessionHistory cold: ${cold.length} requests to fold everything, ${cold.map((ms) => ms.toFixed(0)).join(' / ')} ms (${(cold.reduce((a, b) => a + b, 0) / 1000).toFixed(1)} s in all)`,
    );
    console.log(
      `studioSessionHistory warm: median ${median(warm).toFixed(1)} ms, max ${Math.max(...warm).toFixed(1)} ms (${marks} marks returned)`,
    );
    for (const [seq, times] of Object.entries(atTimes))
      console.log(
        `studioSessionAt seq ${seq}: median ${median(times).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms`,
      );
  } finally {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
