/**
 * A Leviath burst against the real studio server: the fake gateway (its own process,
 * leviathBurstPeer.ts) sends `frames` frames at once to a running LeviathSource, while a client
 * in a third process (healthzProber.ts) probes `/healthz` every 5 ms. Only the studio server
 * runs in this process, so the probe latencies and the CPU figure are the server's own. Shared by
 * the ingest test (does the server answer while it ingests?) and `npm run bench:ingest` (how
 * fast, how long does a probe wait?).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import {
  LeviathSource,
  leviathStudioSessionId,
} from '../../server/sources/leviath/LeviathSource.ts';
import { startHarness, type Harness } from '../server/harness.ts';
import { BURST_RUN_ID, BURST_TOKEN } from './leviathBurstFrames.ts';

export { BURST_RUN_ID, burstFrames } from './leviathBurstFrames.ts';

export interface BurstResult {
  frames: number;
  /** Events the session holds when the burst is applied. */
  events: number;
  ingestMs: number;
  eventsPerSecond: number;
  /** Events per second of this process's CPU time (user + system), a figure less bent by a busy machine. */
  eventsPerCpuSecond: number;
  /**
   * Every /healthz probe answered during the ingest, by a client in its own process: latency,
   * when it was sent (ms after the burst was), and at most the session's events when answered.
   */
  probes: { ms: number; sentAtMs: number; eventsAtAnswer: number }[];
}

/** A helper process (a TypeScript file beside this one) spoken to in lines over stdin/stdout. */
class Child {
  private readonly proc: ChildProcessByStdio<Writable, Readable, null>;
  private readonly lines: AsyncIterator<string>;
  private readonly exited: Promise<number | null>;

  constructor(
    private readonly script: string,
    args: string[],
  ) {
    const path = fileURLToPath(new URL(script, import.meta.url));
    this.proc = spawn(process.execPath, ['--import', 'tsx', path, ...args], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.exited = once(this.proc, 'exit').then(([code]) => code as number | null);
    this.lines = createInterface({ input: this.proc.stdout })[Symbol.asyncIterator]();
  }

  /** The next line it prints (fails if it exits first). */
  async nextLine(): Promise<string> {
    const next = await this.lines.next();
    if (next.done) throw new Error(`${this.script} exited`);
    return next.value;
  }

  send(line: string): void {
    this.proc.stdin.write(`${line}\n`);
  }

  /** Closes its stdin and resolves once it exited, with the last line it printed. */
  async end(): Promise<string | undefined> {
    this.proc.stdin.end();
    let last: string | undefined;
    for (let next = await this.lines.next(); !next.done; next = await this.lines.next())
      if (next.value) last = next.value;
    const code = await this.exited;
    if (code !== 0) throw new Error(`${this.script} exited with ${code}`);
    return last;
  }

  kill(): void {
    if (this.proc.exitCode === null) this.proc.kill();
  }
}

export async function runLeviathBurst(options: {
  frames: number;
  dataDir?: string;
  /** Slice bound in ms (default: the source's own). */
  sliceMs?: number;
}): Promise<BurstResult> {
  const peer = new Child('./leviathBurstPeer.ts', []);
  let prober: Child | null = null;
  let h: Harness | null = null;
  try {
    const { url: peerUrl } = JSON.parse(await peer.nextLine()) as { url: string };
    h = await startHarness({
      demo: false,
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      sources: [
        new LeviathSource({
          url: peerUrl,
          token: BURST_TOKEN,
          backoff: { initialMs: 20, maxMs: 50 },
          ...(options.sliceMs ? { slice: { maxMs: options.sliceMs, maxItems: 100_000 } } : {}),
        }),
      ],
    });
    const engine = h.server.engine;
    const sessionId = leviathStudioSessionId(BURST_RUN_ID);
    const seqNow = async () => Number((await engine.requireSession(sessionId)).lastEventSeq);
    const startSeq = await seqNow();
    const target = startSeq + options.frames;
    peer.send(JSON.stringify({ prepare: options.frames }));
    if ((await peer.nextLine()) !== 'prepared') throw new Error('the fake gateway did not prepare');
    prober = new Child('./healthzProber.ts', [`${h.server.url}/healthz`]);
    if ((await prober.nextLine()) !== 'ready') throw new Error('healthzProber did not start');
    const clock = () => performance.timeOrigin + performance.now();
    // The session's stored events over time, to tell which probes were answered mid-ingest.
    const timeline: { at: number; seq: number }[] = [];
    const started = performance.now();
    const startedAt = clock();
    const cpuStart = process.cpuUsage();
    peer.send(JSON.stringify({ send: true }));
    // Frames map to at least one event each: wait for the target, then until the seq stops moving.
    let last = -1;
    let ingestMs = 0;
    for (let now = await seqNow(); now < target || now !== last; now = await seqNow()) {
      timeline.push({ at: clock(), seq: now - startSeq });
      last = now;
      ingestMs = performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, now < target ? 5 : 100));
    }
    const cpu = process.cpuUsage(cpuStart);
    const events = (await seqNow()) - startSeq;
    timeline.push({ at: clock(), seq: events });
    const answered = JSON.parse((await prober.end()) ?? '[]') as {
      start: number;
      end: number;
      status: number;
    }[];
    const refused = answered.filter((p) => p.status !== 200).length;
    if (refused > 0) throw new Error(`${refused} /healthz probes were not answered 200`);
    return {
      frames: options.frames,
      events,
      ingestMs,
      eventsPerSecond: (events / ingestMs) * 1000,
      eventsPerCpuSecond: events / ((cpu.user + cpu.system) / 1e6),
      probes: answered.map((p) => ({
        ms: p.end - p.start,
        sentAtMs: p.start - startedAt,
        // An upper bound: the events stored at the first look at the session after the answer.
        eventsAtAnswer: (timeline.find((t) => t.at >= p.end) ?? { seq: events }).seq,
      })),
    };
  } finally {
    prober?.kill();
    await h?.dispose();
    await peer.end().catch(() => peer.kill());
  }
}
