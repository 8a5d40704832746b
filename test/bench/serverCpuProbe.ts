/**
 * `npx tsx test/bench/serverCpuProbe.ts`: the server's CPU cost per event, in process (no sockets,
 * no client thread), for the two paths bench:server and bench:ingest time by the wall clock:
 * appending (host.append in batches of 500, as the seeding does) and executing the web app's
 * history selection page by page through graphql-jit (what a replay costs the server before the
 * socket), plus the JSON.stringify of each page. CPU time (process.cpuUsage), so the figure
 * holds on a machine shared with other work, where wall-clock figures swing with the load.
 * Env: BENCH_EVENTS (default 30000), BENCH_ROUNDS (3; the best round is printed too).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parse } from 'graphql';
import { startStudioServer } from '../../server/app.ts';
import { createStudioSchema } from '../../server/http.ts';
import { jitExecute } from '../../server/schema/execution.ts';
import { BENCH_SESSION_ID, ServerBenchSource, benchDrafts, take } from './serverBenchDrafts.ts';
import { HISTORY_QUERY } from './serverBenchDocuments.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 30_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

function cpuMs(since?: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
}

function quartile(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 4)] ?? Number.NaN;
}

const dataDir = mkdtempSync(join(tmpdir(), 'studio-cpu-'));
const source = new ServerBenchSource();
const server = await startStudioServer({
  port: 0,
  dataDir,
  token: randomBytes(24).toString('hex'),
  demo: false,
  quiet: true,
  staticDir: null,
  sources: [source],
});
try {
  console.log(`uptime: ${execSync('uptime').toString().trim()}`);
  await source.openSession();
  const drafts = benchDrafts(() => server.engine.now());
  // Each batch of 500 timed apart; the lower quartile of the batches is what the code costs
  // (the upper ones are other work on the machine taking the cores).
  const appendCpu: number[] = [];
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  for (let done = 0; done < EVENTS; done += 500) {
    const b0 = process.cpuUsage();
    await source.live.append(BENCH_SESSION_ID, take(drafts, Math.min(500, EVENTS - done)));
    appendCpu.push((cpuMs(b0) * 1000) / Math.min(500, EVENTS - done));
  }
  const seeded = EVENTS;
  console.log(
    `append: ${EVENTS} events in batches of 500, ${(performance.now() - w0).toFixed(0)} ms wall, ` +
      `${((cpuMs(c0) * 1000) / EVENTS).toFixed(1)} CPU-µs/event overall, ` +
      `lower quartile of the batches ${quartile(appendCpu).toFixed(1)} CPU-µs/event`,
  );
  const lastSeq = BigInt((await source.live.findSession(BENCH_SESSION_ID))!.lastEventSeq);
  const schema = createStudioSchema();
  const document = parse(HISTORY_QUERY);
  const replayCpu: number[] = [];
  for (let round = 0; round <= ROUNDS; round += 1) {
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    let stringifyMs = 0;
    let cursor = 0n;
    while (cursor < lastSeq) {
      const result = await jitExecute({
        schema,
        document,
        variableValues: { sessionId: BENCH_SESSION_ID, afterSeq: cursor.toString(), first: 200 },
        contextValue: { engine: server.engine },
      });
      const s0 = performance.now();
      JSON.stringify(result);
      stringifyMs += performance.now() - s0;
      const events = (
        result.data as { crowdyStudioAgentHistory: { events: { seq: string }[] } } | null
      )?.crowdyStudioAgentHistory.events;
      if (!events?.length) throw new Error(`history failed: ${JSON.stringify(result.errors)}`);
      cursor = BigInt(events[events.length - 1]!.seq);
    }
    const cpu = cpuMs(c0);
    const n = Number(lastSeq);
    if (round === 0) continue; // warm-up
    replayCpu.push((cpu * 1000) / n);
    console.log(
      `replay round ${round}: ${n} events, ${(performance.now() - w0).toFixed(0)} ms wall, ` +
        `${((cpu * 1000) / n).toFixed(1)} CPU-µs/event (stringify ${((stringifyMs * 1000) / n).toFixed(1)} µs/event wall)`,
    );
  }
  console.log(
    `best: append ${quartile(appendCpu).toFixed(1)} CPU-µs/event (${seeded} seeded), ` +
      `history execute+stringify ${Math.min(...replayCpu).toFixed(1)} CPU-µs/event ` +
      `(= ${((Math.min(...replayCpu) * 100_000) / 1e6).toFixed(2)} CPU-s per 100,000 events)`,
  );
  console.log(`uptime: ${execSync('uptime').toString().trim()}`);
} finally {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
}
