/**
 * `npm run bench:frontdoor`: every attack of issue 7 against a real studio process, with a
 * /healthz probe running beside each one. Prints, per attack: what the server answered, how long
 * it took, the peak RSS growth (VmHWM from /proc, the process restarted before each memory
 * figure) and the slowest /healthz answer while it ran. A benchmark, not a test: a miss is
 * printed, never an exit code.
 *
 * Env: FRONTDOOR_ROOT (the checkout to run, default this one), FRONTDOOR_CMD (how to start its
 * server, default `node build/server.js`; for the code before issue 7:
 * `node --import tsx server/main.ts`).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { execSync } from 'node:child_process';
import WebSocket from 'ws';
import {
  MALFORMED_TARGETS,
  aliasedQuery,
  eventPageField,
  nestedApprovalQuery,
  probeHealthInWorker,
  projectField,
  rawGet,
  rawRequest,
} from './frontdoorAttacks.ts';
import { startStudioServer } from '../../server/app.ts';
import { BENCH_SESSION_ID, ServerBenchSource, benchDrafts, take } from './serverBenchDrafts.ts';

const ROOT = process.env.FRONTDOOR_ROOT ?? new URL('../..', import.meta.url).pathname;
const CMD = (process.env.FRONTDOOR_CMD ?? 'node build/server.js').split(' ');
const TOKEN = 'bench-frontdoor-token-0123456789';
const HEALTH_TARGET_MS = 100;
const SEED_EVENTS = Number(process.env.FRONTDOOR_EVENTS ?? 2_000);

interface Studio {
  child: ChildProcess;
  port: number;
  startMs: number;
  exited: Promise<number | null>;
}

const dataDir = mkdtempSync(join(tmpdir(), 'studio-frontdoor-'));

async function start(): Promise<Studio> {
  const started = performance.now();
  const child = spawn(CMD[0]!, [...CMD.slice(1), '--port', '0', '--data-dir', dataDir], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', STUDIO_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on http:\/\/[^:]+:(\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    void exited.then((code) => reject(new Error(`server exited ${code}: ${output}`)));
  });
  return { child, port, startMs: performance.now() - started, exited };
}

async function stop(studio: Studio): Promise<void> {
  if (studio.child.exitCode !== null || studio.child.signalCode !== null) return;
  studio.child.kill('SIGTERM');
  const timer = setTimeout(() => studio.child.kill('SIGKILL'), 5_000);
  await studio.exited;
  clearTimeout(timer);
}

function memory(pid: number): { rssMiB: number; hwmMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMiB: kb('VmRSS') / 1024, hwmMiB: kb('VmHWM') / 1024 };
}

const alive = (s: Studio) => s.child.exitCode === null && s.child.signalCode === null;

async function gql(
  port: number,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<{ status: number; bytes: number; json: unknown; headers: Headers }> {
  const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${TOKEN}`,
      ...headers,
    },
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text.slice(0, 200);
  }
  return { status: res.status, bytes: text.length, json, headers: res.headers };
}

function summary(json: unknown): string {
  const body = json as { errors?: { message?: string; extensions?: { code?: string } }[] };
  const first = body?.errors?.[0];
  if (first) return `error ${first.extensions?.code ?? '?'}: ${String(first.message).slice(0, 90)}`;
  return typeof json === 'string' ? json : 'data';
}

const rows: string[][] = [];
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)]! : 0;
};
const fmt = (n: number) => n.toFixed(0);

/** Runs one attack on a freshly started server with a /healthz probe beside it. */
async function attack(
  name: string,
  run: (s: Studio) => Promise<string>,
  options: { fresh?: boolean } = {},
): Promise<void> {
  const s = await start();
  try {
    // Let the start settle (demo seeding, first scans) before measuring.
    await new Promise((r) => setTimeout(r, 500));
    const before = memory(s.child.pid!);
    const probe = probeHealthInWorker(s.port);
    await probe.ready;
    const t0 = performance.now();
    let outcome: string;
    try {
      outcome = await run(s);
    } catch (error) {
      outcome = `client error: ${error instanceof Error ? error.message : String(error)}`;
    }
    const ms = performance.now() - t0;
    const health = await probe.stop();
    const after = alive(s) ? memory(s.child.pid!) : null;
    rows.push([
      name,
      outcome.slice(0, 260),
      fmt(ms),
      after ? `+${fmt(after.hwmMiB - before.rssMiB)}` : '-',
      `${fmt(health.maxMs)} / ${fmt(median(health.latencies))}${health.failed ? ` (${health.failed} failed)` : ''}`,
      alive(s) ? 'yes' : `NO (exit ${s.child.exitCode ?? s.child.signalCode})`,
    ]);
  } finally {
    await stop(s);
  }
  void options;
}

async function firstSessions(port: number): Promise<{ live: string; project: string }> {
  const out = await gql(
    port,
    '{ crowdyStudioAgentSessions(appId: "1", first: 50) { nodes { sessionId lastEventSeq projectId } } }',
  );
  const nodes = (
    out.json as {
      data: {
        crowdyStudioAgentSessions: {
          nodes: { sessionId: string; lastEventSeq: string; projectId: string | null }[];
        };
      };
    }
  ).data.crowdyStudioAgentSessions.nodes;
  const byLength = [...nodes].sort((a, b) =>
    Number(BigInt(b.lastEventSeq) - BigInt(a.lastEventSeq)),
  );
  return {
    live: byLength[0]!.sessionId,
    project: nodes.find((n) => n.projectId && n.sessionId !== BENCH_SESSION_ID)!.sessionId,
  };
}

async function main(): Promise<void> {
  process.stdout.write(`front-door bench: ${CMD.join(' ')} in ${ROOT}\n`);
  process.stdout.write(`uptime: ${execSync('uptime').toString().trim()}\n`);

  // Start-up: module load to the listening line, and the RSS there.
  const startups: { ms: number; rss: number }[] = [];
  for (let i = 0; i < 3; i++) {
    const s = await start();
    startups.push({ ms: s.startMs, rss: memory(s.child.pid!).rssMiB });
    await stop(s);
  }
  // One session with SEED_EVENTS realistic events, so a page of 1000 is full.
  const seeder = await startStudioServer({
    dataDir,
    port: 0,
    quiet: true,
    staticDir: null,
    demoStepMs: 0,
    token: TOKEN,
    sources: [],
  });
  const source = new ServerBenchSource();
  await seeder.engine.addSource(source);
  source.openSession();
  const drafts = benchDrafts(() => Date.now());
  for (let n = 0; n < SEED_EVENTS; n += 500)
    source.live.append(BENCH_SESSION_ID, take(drafts, 500));
  await seeder.close();
  const s0 = await start();
  const sessions = { live: BENCH_SESSION_ID, project: (await firstSessions(s0.port)).project };
  await stop(s0);

  // What the probe sees with no attack at all: the machine's own noise.
  await attack('baseline: no attack, 2 s', async () => {
    await new Promise((r) => setTimeout(r, 2_000));
    return 'nothing sent';
  });

  await attack('malformed URLs (/%E0%A4%A, /%, //, +24)', async (s) => {
    let survived = 0;
    let restarts = 0;
    const statuses = new Set<number>();
    let current = s;
    for (const target of MALFORMED_TARGETS) {
      const res = await rawGet(current.port, target).catch(() => ({ status: 0 }));
      statuses.add(res.status);
      await new Promise((r) => setTimeout(r, 50));
      if (alive(current)) survived++;
      else {
        restarts++;
        if (current !== s) await stop(current);
        current = await start();
      }
    }
    if (current !== s) await stop(current);
    return `${survived}/${MALFORMED_TARGETS.length} survived (${restarts} crashes); statuses ${[...statuses].sort().join(',')}`;
  });

  await attack('depth-500 nested query', async (s) => {
    const out = await gql(s.port, nestedApprovalQuery(500));
    return `${out.status}, ${out.bytes} B, ${summary(out.json)}`;
  });

  await attack('1000 aliases of studioEventPage(size: 1000)', async (s) => {
    const out = await gql(s.port, aliasedQuery(1000, eventPageField(sessions.live)));
    return `${out.status}, ${(out.bytes / 1048576).toFixed(1)} MiB, ${summary(out.json)}`;
  });

  await attack('1000 aliases of studioProject', async (s) => {
    const out = await gql(s.port, aliasedQuery(1000, projectField(sessions.project)));
    return `${out.status}, ${out.bytes} B, ${summary(out.json)}`;
  });

  await attack('10 MB body', async (s) => {
    const body = JSON.stringify({
      query: 'query ($pad: String) { studioSources { sourceId } }',
      variables: { pad: 'x'.repeat(10 * 1024 * 1024) },
    });
    const res = await rawRequest(
      s.port,
      [
        'POST /graphql HTTP/1.1',
        `Host: 127.0.0.1:${s.port}`,
        `Authorization: Bearer ${TOKEN}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
      ].join('\r\n'),
      body,
    );
    return `${res.status}`;
  });

  await attack('4 x 50 MB ws connection_init, no token', async (s) => {
    const frame = JSON.stringify({
      type: 'connection_init',
      payload: { pad: 'x'.repeat(50 * 1024 * 1024) },
    });
    const outcomes = await Promise.all(
      [0, 1, 2, 3].map(
        () =>
          new Promise<string>((resolve) => {
            const ws = new WebSocket(`ws://127.0.0.1:${s.port}/graphql`, 'graphql-transport-ws');
            ws.on('open', () => ws.send(frame));
            ws.on('close', (code) => resolve(`close ${code}`));
            ws.on('error', (e) => resolve(`error ${e.message.slice(0, 40)}`));
            ws.on('unexpected-response', (_req, res) => resolve(`http ${res.statusCode}`));
          }),
      ),
    );
    return [...new Set(outcomes)].join(', ');
  });

  await attack('cross-origin POST with token (Origin: evil)', async (s) => {
    const out = await gql(
      s.port,
      '{ studioSources { sourceId } }',
      {},
      {
        origin: 'http://evil.example',
      },
    );
    return `${out.status}, ACAO=${out.headers.get('access-control-allow-origin')}, ACAC=${out.headers.get('access-control-allow-credentials')}`;
  });

  await attack('cross-origin ws upgrade (Origin: evil)', async (s) => {
    return await new Promise<string>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${s.port}/graphql`, 'graphql-transport-ws', {
        origin: 'http://evil.example',
      });
      ws.on('open', () => {
        ws.close();
        resolve('upgraded');
      });
      ws.on('unexpected-response', (_req, res) => resolve(`http ${res.statusCode}`));
      ws.on('error', (e) => resolve(`error ${e.message.slice(0, 50)}`));
    });
  });

  await attack('Host: evil.example (DNS rebinding)', async (s) => {
    const res = await rawGet(s.port, '/healthz', { Host: 'evil.example' });
    return `${res.status}`;
  });

  await attack('source map', async (s) => {
    const html = await (await fetch(`http://127.0.0.1:${s.port}/`)).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    if (!script) return 'no script in index.html';
    const res = await fetch(`http://127.0.0.1:${s.port}${script}.map`);
    const bytes = (await res.arrayBuffer()).byteLength;
    return `${res.status}, ${bytes} B`;
  });

  await attack(
    'bad inputs (200 KB clientInstanceId, page 2^70, projectId ../../../../etc)',
    async (s) => {
      const attach = await gql(
        s.port,
        'mutation ($i: AttachAgentClientInput!) { crowdyStudioAgentAttachClient(input: $i) { clientEpoch } }',
        {
          i: {
            idempotencyKey: `k-${Date.now()}`,
            sessionId: sessions.live,
            clientInstanceId: 'c'.repeat(200_000),
          },
        },
      );
      const page = await gql(
        s.port,
        `{ studioEventPage(sessionId: ${JSON.stringify(sessions.live)}, page: "1180591620717411303424") { size } }`,
      );
      const ok = await gql(
        s.port,
        'mutation ($i: AttachAgentClientInput!) { crowdyStudioAgentAttachClient(input: $i) { clientEpoch } }',
        { i: { idempotencyKey: `k2-${Date.now()}`, sessionId: sessions.live } },
      );
      const epoch = (
        ok.json as { data?: { crowdyStudioAgentAttachClient?: { clientEpoch: string } } }
      ).data?.crowdyStudioAgentAttachClient?.clientEpoch;
      const mode = await gql(
        s.port,
        'mutation ($i: SetAgentModeInput!) { crowdyStudioAgentSetMode(input: $i) { projectId } }',
        {
          i: {
            idempotencyKey: `k3-${Date.now()}`,
            sessionId: sessions.live,
            clientEpoch: epoch ?? '1',
            mode: 'BUILD',
            projectId: '../../../../etc',
          },
        },
      );
      return [
        `attach: ${summary(attach.json)}`,
        `page: ${summary(page.json)}`,
        `setMode: ${summary(mode.json)} ${JSON.stringify((mode.json as { data?: unknown }).data ?? null).slice(0, 60)}`,
      ].join(' | ');
    },
  );

  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  process.stdout.write(
    `\nstart to listening: ${startups.map((x) => fmt(x.ms)).join(' / ')} ms (mean ${fmt(avg(startups.map((x) => x.ms)))}); RSS at listening ${startups.map((x) => fmt(x.rss)).join(' / ')} MiB\n\n`,
  );
  const header = [
    'attack',
    'answer',
    'ms',
    'peak RSS MiB',
    `healthz max / median ms (target ${HEALTH_TARGET_MS})`,
    'alive',
  ];
  for (const row of [header, ...rows]) process.stdout.write(row.join(' | ') + '\n');
  process.stdout.write(
    `\nuptime: ${execSync('uptime').toString().trim()}; loadavg ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}\n`,
  );
  rmSync(dataDir, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
});
