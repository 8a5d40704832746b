/**
 * `npm run bench:server`, PostgreSQL part 2: delivery across instances and appends through a
 * bridge. Two studio servers (in this process, each with its own PgStore: its own pool and LISTEN
 * connection) share one database on a real PostgreSQL started for the run (test/support/postgres.ts,
 * fsync off: a test cluster). A source on instance A appends; 50 observers subscribed on instance B
 * (studioAgentEventBatches over graphql-ws, in a worker thread) receive the events, which reach B
 * only through NOTIFY and B's own reads. Both servers share this process's event loop, so the
 * figures are conservative. A miss is printed, never an exit code: a benchmark, not a test.
 *
 * Env: BENCH_OBSERVERS (default 50), BENCH_RATE (1000), BENCH_LIVE_S (10), BENCH_APPENDS (2000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { ClientWorker } from './clientWorker.ts';
import { performance } from 'node:perf_hooks';
import { startStudioServer } from '../../server/app.ts';
import type { StudioServer } from '../../server/app.ts';
import { startPostgres } from '../support/postgres.ts';
import type { PostgresCluster } from '../support/postgres.ts';
import { BENCH_SESSION_ID, ServerBenchSource, benchDrafts, take } from './serverBenchDrafts.ts';
import type { ObserveResult } from './serverBenchClient.ts';

const OBSERVERS = Number(process.env.BENCH_OBSERVERS ?? 50);
const RATE = Number(process.env.BENCH_RATE ?? 1_000);
const LIVE_S = Number(process.env.BENCH_LIVE_S ?? 10);
const APPENDS = Number(process.env.BENCH_APPENDS ?? 2_000);
const TICK_MS = 10;
const P99_TARGET_MS = 100;

const clock = () => performance.timeOrigin + performance.now();
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mark = (ok: boolean) => (ok ? 'PASS' : 'MISS');
const row = (name: string, value: string, verdict = '') =>
  console.log(`  ${name.padEnd(58)} ${value.padStart(22)}  ${verdict}`);

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  console.log('Agent Studio cross-instance benchmark (PostgreSQL, two servers, one database)');
  console.log(
    `  node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores`,
  );
  console.log(`  uptime: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
  console.log(
    `  load average before start: ${loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')}\n`,
  );

  let cluster: PostgresCluster | null = null;
  const servers: StudioServer[] = [];
  let client: ClientWorker | null = null;
  const dirs: string[] = [];
  try {
    cluster = await startPostgres();
    const databaseUrl = await cluster.createDatabase();
    const token = randomBytes(24).toString('hex');
    const source = new ServerBenchSource();
    const start = async (sources: ServerBenchSource[]) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'studio-xbench-'));
      dirs.push(dataDir);
      const server = await startStudioServer({
        port: 0,
        dataDir,
        databaseUrl,
        token,
        demo: false,
        quiet: true,
        staticDir: null,
        sources,
      });
      servers.push(server);
      return server;
    };
    await start([source]);
    const b = await start([]);
    // The bench source runs on A: it took the source's lease while A started (the only
    // instance that registered it), so `source.live` is A's host.
    await source.openSession();
    const drafts = benchDrafts(() => Date.now());

    console.log(
      `1. Appends through a bridge (SourceHost.append on instance A), ${fmt(APPENDS)} events`,
    );
    let t = clock();
    for (let i = 0; i < APPENDS; i++) await source.live.append(BENCH_SESSION_ID, take(drafts, 1));
    let ms = clock() - t;
    row(
      'one event per append (one transaction each)',
      `${fmt((APPENDS * 1000) / ms)} ev/s`,
      `${fmt(ms / APPENDS, 2)} ms each`,
    );
    t = clock();
    for (let i = 0; i < APPENDS; i += 50)
      await source.live.append(BENCH_SESSION_ID, take(drafts, 50));
    ms = clock() - t;
    row('50 events per append', `${fmt((APPENDS * 1000) / ms)} ev/s`);

    console.log(
      `\n2. Cross-instance live: ${OBSERVERS} observers on instance B, ${fmt(RATE)} events/s appended on A for ${LIVE_S} s`,
    );
    const lastSeq = BigInt((await source.live.findSession(BENCH_SESSION_ID))!.lastEventSeq);
    const warmSeq = lastSeq + 1n;
    client = new ClientWorker();
    client.send({
      cmd: 'observe',
      url: b.url,
      token,
      sessionId: BENCH_SESSION_ID,
      observers: OBSERVERS,
      afterSeq: lastSeq.toString(),
      warmSeq: warmSeq.toString(),
      timeoutMs: 60_000,
    });
    await new Promise((done) => setTimeout(done, 500));
    await source.live.append(BENCH_SESSION_ID, take(drafts, 1));
    const ready = await client.next(70_000);
    if (ready.kind !== 'ready')
      throw new Error(`observers not ready: ${ready.kind === 'failed' ? ready.error : ready.kind}`);
    row('observers on B connected and caught up', `${fmt(ready.ms)} ms`);

    const count = RATE * LIVE_S;
    const commits = new Float64Array(count * 2).fill(Number.NaN);
    const started = clock();
    let appended = 0;
    while (appended < count) {
      const due = Math.min(count, Math.floor(((clock() - started) * RATE) / 1000)) - appended;
      if (due > 0) {
        const stored = await source.live.append(BENCH_SESSION_ID, take(drafts, due));
        const at = clock();
        for (const event of stored) commits[Number(BigInt(event.seq) - warmSeq - 1n)] = at;
        appended += due;
      }
      await new Promise((done) => setTimeout(done, TICK_MS));
    }
    const appendMs = clock() - started;
    const throughSeq = BigInt((await source.live.findSession(BENCH_SESSION_ID))!.lastEventSeq);
    client.send({ cmd: 'finish', throughSeq: throughSeq.toString(), timeoutMs: 60_000 });
    const reply = await client.next(120_000);
    row('appended on A', `${fmt(count)} in ${fmt(appendMs / 1000, 2)} s`);
    if (reply.kind !== 'observed') {
      row(
        'cross-instance delivery',
        'no result',
        `MISS: ${reply.kind === 'failed' ? reply.error : reply.kind}`,
      );
      return;
    }
    const result: ObserveResult = reply.result;
    const span = Number(throughSeq - warmSeq);
    let lost = 0;
    let n = 0;
    const latencies = new Float64Array(result.received.length * span);
    for (const times of result.received)
      for (let i = 0; i < span; i++) {
        if (Number.isNaN(commits[i]!)) continue;
        if (Number.isNaN(times[i]!)) lost += 1;
        else latencies[n++] = times[i]! - commits[i]!;
      }
    const sorted = latencies.subarray(0, n).sort();
    const p99 = percentile(sorted, 99);
    row('events lost on B (summed over observers)', fmt(lost), mark(lost === 0));
    row(
      'duplicates / out of order',
      `${fmt(result.duplicates)} / ${fmt(result.outOfOrder)}`,
      mark(result.duplicates === 0 && result.outOfOrder === 0),
    );
    row('commit on A to delivery on B, p50', `${fmt(percentile(sorted, 50), 1)} ms`);
    row(
      'commit on A to delivery on B, p99 (target < 100 ms)',
      `${fmt(p99, 1)} ms`,
      mark(p99 < P99_TARGET_MS && n > 0),
    );
    row(
      'commit on A to delivery on B, max',
      `${fmt(sorted[sorted.length - 1] ?? Number.NaN, 1)} ms`,
    );
    console.log(`\n  uptime after: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
  } finally {
    await client?.terminate().catch(() => 0);
    for (const server of servers.reverse()) await server.close().catch(() => undefined);
    await cluster?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error('benchmark failed:', error);
    process.exit(1);
  },
);
