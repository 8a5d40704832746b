/**
 * A Leviath burst against the real studio server: the fake gateway sends `frames` frames at once
 * (log lines, tool calls, token counts: each one studio event) to a running LeviathSource, while
 * `/healthz` is probed back to back. Shared by the ingest test (does the server answer while it
 * ingests?) and `npm run bench:ingest` (how fast, how long does a probe wait?).
 */
import { performance } from 'node:perf_hooks';
import {
  LeviathSource,
  leviathStudioSessionId,
} from '../../server/sources/leviath/LeviathSource.ts';
import { FakeLeviathPeer } from '../fakes/FakeLeviathPeer.ts';
import { startHarness, type Harness } from '../server/harness.ts';

const TOKEN = 'lev-burst-token-0123456789';
export const BURST_RUN_ID = 'coder-1786409275-burst001';

export interface BurstResult {
  frames: number;
  /** Events the session holds when the burst is applied. */
  events: number;
  ingestMs: number;
  eventsPerSecond: number;
  /** Events per second of this process's CPU time (user + system), a figure less bent by a busy machine. */
  eventsPerCpuSecond: number;
  /** Every /healthz probe answered during the ingest: latency, and the session's events when it was answered. */
  probes: { ms: number; eventsAtAnswer: number }[];
}

export function burstFrames(count: number): Record<string, unknown>[] {
  const base = { agent_id: BURST_RUN_ID, run_id: BURST_RUN_ID };
  const frames: Record<string, unknown>[] = [];
  for (let i = 0; frames.length < count; i += 1) {
    const callId = `toolu_burst_${i}`;
    frames.push({ ...base, type: 'log', line: `Step ${i}: reading the next file` });
    if (frames.length < count)
      frames.push({ ...base, type: 'tool_call_started', call_id: callId, tool: 'read_file' });
    if (frames.length < count)
      frames.push({
        ...base,
        type: 'tool_call_finished',
        call_id: callId,
        tool: 'read_file',
        ok: true,
        summary: `src/file_${i}.rs: 120 lines`,
      });
    if (frames.length < count)
      frames.push({
        ...base,
        type: 'tokens',
        prompt_tokens: 1000 + i,
        completion_tokens: 100 + i,
        cached_tokens: 0,
        cache_write_tokens: 0,
      });
  }
  return frames;
}

export async function runLeviathBurst(options: {
  frames: number;
  dataDir?: string;
  /** Slice bound in ms (default: the source's own). */
  sliceMs?: number;
}): Promise<BurstResult> {
  const peer = await FakeLeviathPeer.start({
    token: TOKEN,
    runs: [
      {
        run_id: BURST_RUN_ID,
        agent_name: 'coder',
        task: 'Burst',
        model: 'claude-sonnet-4-6',
        status: 'running',
        current_stage: 'implement',
        iteration: 1,
        tool_calls: 0,
        workdir: null,
        title: 'Burst',
      },
    ],
  });
  let h: Harness | null = null;
  try {
    h = await startHarness({
      demo: false,
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      sources: [
        new LeviathSource({
          url: peer.url,
          token: TOKEN,
          backoff: { initialMs: 20, maxMs: 50 },
          ...(options.sliceMs ? { slice: { maxMs: options.sliceMs, maxItems: 100_000 } } : {}),
        }),
      ],
    });
    const engine = h.server.engine;
    const sessionId = leviathStudioSessionId(BURST_RUN_ID);
    const seqNow = async () => Number((await engine.requireSession(sessionId)).lastEventSeq);
    const startSeq = await seqNow();
    const frames = burstFrames(options.frames);
    const target = startSeq + frames.length;
    const started = performance.now();
    const cpuStart = process.cpuUsage();
    peer.send(...frames);
    const probes: BurstResult['probes'] = [];
    const url = `${h.server.url}/healthz`;
    let done = false;
    const probing = (async () => {
      while (!done) {
        const t0 = performance.now();
        const response = await fetch(url);
        await response.arrayBuffer();
        probes.push({
          ms: performance.now() - t0,
          eventsAtAnswer: (await seqNow()) - (await startSeq),
        });
      }
    })();
    // Frames map to at least one event each: wait for the target, then until the seq stops moving.
    let last = -1;
    let ingestMs = 0;
    for (let now = await seqNow(); now < target || now !== last; now = await seqNow()) {
      last = now;
      ingestMs = performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, now < target ? 5 : 100));
    }
    const cpu = process.cpuUsage(cpuStart);
    done = true;
    await probing;
    const events = (await seqNow()) - (await startSeq);
    return {
      frames: frames.length,
      events,
      ingestMs,
      eventsPerSecond: (events / ingestMs) * 1000,
      eventsPerCpuSecond: events / ((cpu.user + cpu.system) / 1e6),
      probes,
    };
  } finally {
    await h?.dispose();
    await peer.close();
  }
}
