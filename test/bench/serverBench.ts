/**
 * `npm run bench:server`: the studio server's delivery benchmark (issue 2, section 11).
 *
 * Starts the real server in-process (port 0, temp data dir, demo off), seeds one session with
 * 100,000 realistic events through a source's `host.append`, then measures, with real clients in
 * a worker thread (serverBenchClient.ts):
 *  1. History replay: crowdyStudioAgentHistory(first: 200) paged over HTTP;
 *  2. studioAgentEventBatches replay over graphql-ws with maxBatch 200 and 1000;
 *  3. live delivery to 50 observers while 1,000 events/s are appended for 10 s.
 * A miss is printed, never an exit code: this is a benchmark, not a test.
 *
 * Env: BENCH_EVENTS (default 100000), BENCH_OBSERVERS (50), BENCH_RATE (1000), BENCH_LIVE_S (10),
 * BENCH_PROFILE=1 profiles the server thread per phase (summary printed, .cpuprofile files kept
 * in BENCH_PROFILE_DIR, default the working directory).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ClientWorker } from './clientWorker.ts';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { execute, parse } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { execFileSync } from 'node:child_process';
import { startStudioServer } from '../../server/app.ts';
import { startPostgres } from '../support/postgres.ts';
import type { PostgresCluster } from '../support/postgres.ts';
import type { StudioServer } from '../../server/app.ts';
import { createStudioSchema } from '../../server/http.ts';
import { eventView } from '../../server/schema/views.ts';
import { jitExecute } from '../../server/schema/execution.ts';
import { BENCH_SESSION_ID, ServerBenchSource, benchDrafts, take } from './serverBenchDrafts.ts';
import {
  HISTORY_QUERY,
  HISTORY_QUERY_BASE_ONLY,
  HISTORY_QUERY_WITHOUT_TOOL_CALL,
} from './serverBenchDocuments.ts';
import type { ClientReply, ObserveResult, ReplayResult } from './serverBenchClient.ts';
import { ServerBenchProfiler } from './serverBenchProfile.ts';
import type { ProfileSummary } from './serverBenchProfile.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const OBSERVERS = Number(process.env.BENCH_OBSERVERS ?? 50);
const RATE = Number(process.env.BENCH_RATE ?? 1_000);
const LIVE_S = Number(process.env.BENCH_LIVE_S ?? 10);
const PROFILE = process.env.BENCH_PROFILE === '1';
const PROFILE_DIR = resolve(process.env.BENCH_PROFILE_DIR ?? '.');
const SEED_BATCH = 500;
const TICK_MS = 10;
/** The store under test: BENCH_STORE=postgres runs on a real PostgreSQL started for the run. */
const STORE = process.env.BENCH_STORE === 'postgres' ? 'postgres' : 'sqlite';
const REPLAY_TARGET_MS = STORE === 'postgres' ? 1_500 : 1_000;
const P99_TARGET_MS = 50;
const WATCHDOG_MS = 12 * 60_000;

const clock = () => performance.timeOrigin + performance.now();
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mark = (ok: boolean) => (ok ? 'PASS' : 'MISS');

const rows: [string, string, string][] = [];
function row(name: string, value: string, verdict = ''): void {
  rows.push([name, value, verdict]);
  console.log(`  ${name.padEnd(58)} ${value.padStart(22)}  ${verdict}`);
}

// ------------------------------------------------------------------------------------------
// The client worker
// ------------------------------------------------------------------------------------------

// ------------------------------------------------------------------------------------------
// Phases
// ------------------------------------------------------------------------------------------

interface Phase<T> {
  value: T;
  serverElu: number;
  clientElu: number;
  /** CPU time of the whole process (server and client threads), ms: less bent by a busy machine than the wall clock. */
  cpuMs: number;
  profile: ProfileSummary | null;
}

/** Runs `fn`, measuring both threads' event-loop utilisation, optionally profiling the server thread. */
async function phase<T>(
  name: string,
  client: ClientWorker,
  fn: () => Promise<T>,
): Promise<Phase<T>> {
  const profiler = PROFILE ? new ServerBenchProfiler() : null;
  await profiler?.start();
  const server0 = performance.eventLoopUtilization();
  const client0 = client.elu();
  const cpu0 = process.cpuUsage();
  const value = await fn();
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const serverElu = performance.eventLoopUtilization(server0).utilization;
  const clientElu = client.elu(client0).utilization;
  const profile = profiler
    ? await profiler.stop(join(PROFILE_DIR, `serverBench-${name}.cpuprofile`))
    : null;
  return { value, serverElu, clientElu, cpuMs, profile };
}

function printProfile(name: string, profile: ProfileSummary | null): void {
  if (!profile) return;
  console.log(`\n  profile of the server thread during ${name}: ${fmt(profile.totalMs)} ms busy`);
  for (const { area, ms } of profile.areas.slice(0, 12))
    console.log(
      `    ${area.padEnd(56)} ${fmt(ms).padStart(8)} ms  ${fmt((100 * ms) / profile.totalMs, 1).padStart(5)}%`,
    );
  console.log('    top functions by self time:');
  for (const { name: fn, ms } of profile.functions.slice(0, 12))
    console.log(`      ${fmt(ms).padStart(7)} ms  ${fn}`);
  console.log('');
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[
    Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  ]!;
}

function replayRows(label: string, p: Phase<ReplayResult>, expected: number): void {
  const r = p.value;
  const rate = r.ms > 0 ? (r.events * 1000) / r.ms : 0;
  const per100k = rate > 0 ? (100_000 / rate) * 1000 : Number.POSITIVE_INFINITY;
  const complete = r.events === expected && r.orderErrors === 0 && !r.error;
  row(`${label}: events/s`, fmt(rate));
  row(
    `${label}: seconds for 100,000 events (target < ${REPLAY_TARGET_MS / 1000} s)`,
    `${fmt(per100k / 1000, 2)} s`,
    mark(per100k < REPLAY_TARGET_MS && complete),
  );
  row(
    `${label}: received / messages / MB`,
    `${fmt(r.events)} / ${fmt(r.messages)} / ${fmt(r.bytes / 1e6, 1)}`,
    complete
      ? ''
      : `INCOMPLETE${r.error ? `: ${r.error}` : ''}${r.orderErrors ? ` (${r.orderErrors} order errors)` : ''}`,
  );
  row(
    `${label}: event-loop busy, server / client thread`,
    `${fmt(100 * p.serverElu)}% / ${fmt(100 * p.clientElu)}%`,
  );
  row(
    `${label}: process CPU per event (server + client threads)`,
    `${fmt(r.events > 0 ? (p.cpuMs * 1000) / r.events : 0, 1)} µs`,
  );
}

/** In-process cost of each server stage for one full history replay, without HTTP. */
async function breakdown(server: StudioServer, lastSeq: bigint): Promise<void> {
  const reads = server.engine.reads;
  const schema = createStudioSchema();
  const pages = async (fn: (afterSeq: bigint) => Promise<bigint>) => {
    const started = clock();
    let cursor = 0n;
    while (cursor < lastSeq) cursor = await fn(cursor);
    return clock() - started;
  };
  const readMs = await pages(async (after) => {
    const rows = await reads.readEvents(BENCH_SESSION_ID, after, 201);
    return rows[Math.min(rows.length, 200) - 1]!.seq;
  });
  const viewMs = await pages(async (after) => {
    const rows = (await reads.readEvents(BENCH_SESSION_ID, after, 201)).slice(0, 200);
    const views = rows.map(eventView);
    return BigInt(views[views.length - 1]!.seq);
  });
  // A fresh context per execution, as the server gives each request (the row budget of
  // inputLimits.ts is counted per context).
  const context = () => ({ engine: server.engine });
  // Each page is stringified (timed apart) and dropped at once, so no heap pressure piles up.
  // graphql-jit (jitExecute) is what the server runs for queries, mutations and subscription
  // payloads; graphql-js `execute` is timed once beside it for comparison.
  const replay = async (query: string, run: typeof jitExecute = jitExecute) => {
    const document = parse(query);
    let executeMs = 0;
    let stringifyMs = 0;
    let bytes = 0;
    let cursor = 0n;
    while (cursor < lastSeq) {
      const t0 = clock();
      const result = await run({
        schema,
        document,
        variableValues: { sessionId: BENCH_SESSION_ID, afterSeq: cursor.toString(), first: 200 },
        contextValue: context(),
      });
      const t1 = clock();
      bytes += JSON.stringify(result).length;
      stringifyMs += clock() - t1;
      executeMs += t1 - t0;
      const events = (
        result.data as { crowdyStudioAgentHistory: { events: { seq: string }[] } } | null
      )?.crowdyStudioAgentHistory.events;
      if (!events?.length)
        throw new Error(`history execution failed: ${JSON.stringify(result.errors)}`);
      cursor = BigInt(events[events.length - 1]!.seq);
    }
    return { executeMs, stringifyMs, bytes };
  };
  // The same pages through a Yoga instance in-process: parse/validate caches, the server's executor,
  // result stringify and the fetch Response, but no socket and no client.
  const yoga = createYoga({
    schema,
    context,
    logging: false,
    graphiql: false,
    // The server's executor (server/http.ts): graphql-jit.
    plugins: [
      {
        onExecute: ({ setExecuteFn }: { setExecuteFn: (fn: never) => void }) =>
          setExecuteFn(jitExecute as never),
      },
    ],
  });
  let yogaMs = 0;
  for (let cursor = 0n; cursor < lastSeq;) {
    const started = clock();
    const response = await yoga.fetch('http://bench.local/graphql', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        query: HISTORY_QUERY,
        variables: { sessionId: BENCH_SESSION_ID, afterSeq: cursor.toString(), first: 200 },
      }),
    });
    const text = await response.text();
    yogaMs += clock() - started;
    const events = (
      JSON.parse(text) as { data?: { crowdyStudioAgentHistory: { events: { seq: string }[] } } }
    ).data?.crowdyStudioAgentHistory.events;
    if (!events?.length) throw new Error(`yoga replay failed: ${text.slice(0, 300)}`);
    cursor = BigInt(events[events.length - 1]!.seq);
  }
  const full = await replay(HISTORY_QUERY);
  const withoutToolCall = await replay(HISTORY_QUERY_WITHOUT_TOOL_CALL);
  const baseOnly = await replay(HISTORY_QUERY_BASE_ONLY);
  const graphqlJs = await replay(HISTORY_QUERY, execute);
  const n = Number(lastSeq);
  const each = (ms: number) => `${fmt(ms)} ms (${fmt((ms * 1e3) / n, 1)} µs/ev)`;
  row('stage: store.readEvents, pages of 200', each(readMs));
  row('stage: + eventView (payload JSON.parse, shaping)', each(viewMs));
  row('stage: graphql-jit execute, web app selection (incl. above)', each(full.executeMs));
  row(
    'stage:   same without tool calls (link and studioToolCalls)',
    each(withoutToolCall.executeMs),
  );
  row('stage:   AgentEventBase fields only', each(baseOnly.executeMs));
  row('  (graphql-js execute of the same, not what the server runs)', each(graphqlJs.executeMs));
  row(
    'stage: JSON.stringify of the web app selection results',
    `${each(full.stringifyMs)}, ${fmt(full.bytes / 1e6, 1)} MB`,
  );
  row('stage: Yoga in-process (yoga.fetch, no socket), web app selection', each(yogaMs));
}

async function main(): Promise<void> {
  const cpu = cpus();
  console.log('Agent Studio server benchmark (npm run bench:server)');
  console.log(
    `  node ${process.version}, ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${fmt(totalmem() / 2 ** 30, 1)} GiB`,
  );
  console.log(
    `  store: ${STORE === 'postgres' ? 'PostgreSQL (a test cluster on a temp dir: fsync off)' : 'SQLite (WAL; each commit fdatasynced before it is acknowledged)'}`,
  );
  console.log(`  uptime: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
  console.log(
    `  load average before start: ${loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')}`,
  );
  console.log(
    `  ${fmt(EVENTS)} events seeded, ${OBSERVERS} observers, ${fmt(RATE)} events/s for ${LIVE_S} s${PROFILE ? ', PROFILING (figures inflated)' : ''}\n`,
  );

  const dataDir = mkdtempSync(join(tmpdir(), 'studio-bench-'));
  const source = new ServerBenchSource();
  let server: StudioServer | null = null;
  let client: ClientWorker | null = null;
  let cluster: PostgresCluster | null = null;
  const cleanup = async () => {
    await client?.terminate().catch(() => 0);
    client = null;
    await server?.close().catch(() => undefined);
    server = null;
    await cluster?.stop().catch(() => undefined);
    cluster = null;
    rmSync(dataDir, { recursive: true, force: true });
  };
  const watchdog = setTimeout(() => {
    console.error(
      `\nbenchmark watchdog: still running after ${WATCHDOG_MS / 60_000} min, giving up`,
    );
    void cleanup().finally(() => process.exit(1));
  }, WATCHDOG_MS);
  try {
    if (STORE === 'postgres') cluster = await startPostgres();
    server = await startStudioServer({
      port: 0,
      dataDir,
      databaseUrl: cluster ? await cluster.createDatabase() : null,
      token: randomBytes(24).toString('hex'),
      demo: false,
      quiet: true,
      staticDir: null,
      sources: [source],
    });
    const { url, token } = server;
    await source.openSession();
    const drafts = benchDrafts(() => server!.engine.now());

    // Seed.
    const seedStarted = clock();
    for (let done = 0; done < EVENTS;) {
      const n = Math.min(SEED_BATCH, EVENTS - done);
      await source.live.append(BENCH_SESSION_ID, take(drafts, n));
      done += n;
    }
    const seedMs = clock() - seedStarted;
    const lastSeq = BigInt((await source.live.findSession(BENCH_SESSION_ID))!.lastEventSeq);
    const total = Number(lastSeq);
    console.log('Seeding');
    row(
      `appended ${fmt(EVENTS)} events in batches of ${SEED_BATCH}`,
      `${fmt(seedMs / 1000, 1)} s`,
      `${fmt((EVENTS * 1000) / seedMs)} ev/s`,
    );

    client = new ClientWorker();
    const c = client;
    const expectReplay = (reply: ClientReply): ReplayResult =>
      reply.kind === 'replay'
        ? reply.result
        : {
            events: 0,
            ms: 0,
            messages: 0,
            bytes: 0,
            orderErrors: 0,
            error: reply.kind === 'failed' ? reply.error : `unexpected ${reply.kind}`,
          };

    // Warm-up (not counted): JIT, connection pool, statement caches.
    await c.request(
      {
        cmd: 'history',
        url,
        token,
        sessionId: BENCH_SESSION_ID,
        first: 200,
        afterSeq: '0',
        throughSeq: '4000',
      },
      60_000,
    );
    await c.request(
      {
        cmd: 'batches',
        url,
        token,
        sessionId: BENCH_SESSION_ID,
        maxBatch: 200,
        afterSeq: '0',
        throughSeq: '4000',
        timeoutMs: 60_000,
      },
      70_000,
    );

    console.log(
      `\n1. History replay: crowdyStudioAgentHistory(first: 200) over HTTP, seq 1..${fmt(total)}`,
    );
    const history = await phase('history', c, async () =>
      expectReplay(
        await c.request(
          {
            cmd: 'history',
            url,
            token,
            sessionId: BENCH_SESSION_ID,
            first: 200,
            afterSeq: '0',
            throughSeq: lastSeq.toString(),
          },
          180_000,
        ),
      ),
    );
    replayRows('history', history, total);
    printProfile('history replay', history.profile);

    for (const maxBatch of [200, 1000]) {
      console.log(
        `\n2. studioAgentEventBatches replay over graphql-ws, maxBatch ${maxBatch}, seq 1..${fmt(total)}`,
      );
      const batches = await phase(`batches${maxBatch}`, c, async () =>
        expectReplay(
          await c.request(
            {
              cmd: 'batches',
              url,
              token,
              sessionId: BENCH_SESSION_ID,
              maxBatch,
              afterSeq: '0',
              throughSeq: lastSeq.toString(),
              timeoutMs: 180_000,
            },
            190_000,
          ),
        ),
      );
      replayRows(`batches(maxBatch ${maxBatch})`, batches, total);
      printProfile(`batches replay (maxBatch ${maxBatch})`, batches.profile);
    }

    console.log('\n   Where a history replay spends server time (in-process, no HTTP)');
    await breakdown(server, lastSeq);

    // 3. Live delivery.
    console.log(
      `\n3. Live: ${OBSERVERS} observers on studioAgentEventBatches, ${fmt(RATE)} events/s for ${LIVE_S} s`,
    );
    const warmSeq = lastSeq + 1n;
    c.send({
      cmd: 'observe',
      url,
      token,
      sessionId: BENCH_SESSION_ID,
      observers: OBSERVERS,
      afterSeq: lastSeq.toString(),
      warmSeq: warmSeq.toString(),
      timeoutMs: 60_000,
    });
    // One warm-up event proves every subscription is live before the clock starts.
    await new Promise((done) => setTimeout(done, 500));
    source.live.append(BENCH_SESSION_ID, take(drafts, 1));
    const ready = await c.next(70_000);
    if (ready.kind !== 'ready')
      throw new Error(`observers not ready: ${ready.kind === 'failed' ? ready.error : ready.kind}`);
    row('observers connected, subscribed and caught up', `${fmt(ready.ms)} ms`);

    const count = RATE * LIVE_S;
    // Commit time by seq - warmSeq - 1. Sized with slack: anything else the engine appends in the
    // window (none expected) gets a seq in range but no commit time, and is left out.
    const commits = new Float64Array(count * 2).fill(Number.NaN);
    let groups = 0;
    let maxGroup = 0;
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    const live = await phase('live', c, async () => {
      loopDelay.enable();
      const started = clock();
      let appended = 0;
      await new Promise<void>((done) => {
        const tick = async () => {
          const due = Math.min(count, Math.floor(((clock() - started) * RATE) / 1000)) - appended;
          if (due > 0) {
            const stored = await source.live.append(BENCH_SESSION_ID, take(drafts, due));
            const at = clock();
            for (const event of stored) commits[Number(BigInt(event.seq) - warmSeq - 1n)] = at;
            appended += due;
            groups += 1;
            maxGroup = Math.max(maxGroup, due);
          }
          if (appended >= count) done();
          else setTimeout(() => void tick(), TICK_MS);
        };
        setTimeout(() => void tick(), TICK_MS);
      });
      const appendMs = clock() - started;
      loopDelay.disable();
      const throughSeq = BigInt((await source.live.findSession(BENCH_SESSION_ID))!.lastEventSeq);
      const reply = await c.request(
        { cmd: 'finish', throughSeq: throughSeq.toString(), timeoutMs: 60_000 },
        120_000,
      );
      return { appendMs, reply, span: Number(throughSeq - warmSeq) };
    });
    const { appendMs, reply, span } = live.value;
    row(
      'appended',
      `${fmt(count)} in ${fmt(appendMs / 1000, 2)} s`,
      `${groups} groups, max ${maxGroup}`,
    );
    row(
      'server event-loop delay p50 / p99 / max',
      `${fmt(loopDelay.percentile(50) / 1e6, 1)} / ${fmt(loopDelay.percentile(99) / 1e6, 1)} / ${fmt(loopDelay.max / 1e6, 1)} ms`,
    );
    if (reply.kind !== 'observed') {
      row(
        'live delivery',
        'no result',
        `MISS: ${reply.kind === 'failed' ? reply.error : reply.kind}`,
      );
    } else {
      liveRows(reply.result, commits, span);
    }
    row(
      'event-loop busy, server / client thread',
      `${fmt(100 * live.serverElu)}% / ${fmt(100 * live.clientElu)}%`,
    );
    printProfile('live delivery', live.profile);

    console.log('\nSummary');
    for (const [name, value, verdict] of rows.filter(
      ([, , v]) => v === 'PASS' || v.startsWith('MISS'),
    ))
      console.log(`  ${name.padEnd(58)} ${value.padStart(22)}  ${verdict}`);
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
}

function liveRows(result: ObserveResult, commits: Float64Array, span: number): void {
  let lost = 0;
  const latencies = new Float64Array(result.received.length * span);
  let n = 0;
  let foreign = 0;
  for (let i = 0; i < span; i += 1) if (Number.isNaN(commits[i]!)) foreign += 1;
  if (foreign > 0)
    row('events appended by someone else in the window (not measured)', fmt(foreign));
  for (const times of result.received) {
    for (let i = 0; i < span; i += 1) {
      const at = times[i]!;
      if (Number.isNaN(commits[i]!)) continue;
      if (Number.isNaN(at)) lost += 1;
      else latencies[n++] = at - commits[i]!;
    }
  }
  const sorted = latencies.subarray(0, n).sort();
  const p99 = percentile(sorted, 99);
  row('events lost (expected - received, summed over observers)', fmt(lost), mark(lost === 0));
  row(
    'duplicates / out of order',
    `${fmt(result.duplicates)} / ${fmt(result.outOfOrder)}`,
    mark(result.duplicates === 0 && result.outOfOrder === 0),
  );
  row('commit-to-delivery latency p50', `${fmt(percentile(sorted, 50), 1)} ms`);
  row(
    'commit-to-delivery latency p99 (target < 50 ms)',
    `${fmt(p99, 1)} ms`,
    mark(p99 < P99_TARGET_MS && n > 0),
  );
  row('commit-to-delivery latency max', `${fmt(sorted[sorted.length - 1] ?? Number.NaN, 1)} ms`);
  if (result.errors.length)
    row('observer errors', String(result.errors.length), `MISS: ${result.errors[0]}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error('benchmark failed:', error);
    process.exit(1);
  },
);
