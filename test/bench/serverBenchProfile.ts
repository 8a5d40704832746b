/**
 * Optional CPU profiling of the server's thread for one benchmark phase (BENCH_PROFILE=1): the
 * V8 sampling profiler through node:inspector, summarised by self time per function and per
 * area (SQLite, GraphQL execution, JSON, WebSocket, studio server code, GC), and saved as a
 * .cpuprofile that Chrome DevTools opens.
 */
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  totalMs: number;
  areas: { area: string; ms: number }[];
  functions: { name: string; ms: number }[];
}

function areaOf(url: string, name: string): string {
  if (name === '(garbage collector)') return 'GC';
  if (name === '(idle)' || name === '(program)') return name;
  if (url.includes('better-sqlite3') || name === 'all' || name === 'get' || name === 'run')
    return 'SQLite (better-sqlite3)';
  if (url.includes('/graphql-ws/')) return 'graphql-ws';
  if (url.includes('/ws/lib/')) return 'ws (framing, socket)';
  if (url.includes('/graphql/execution/')) return 'graphql execute';
  if (url.includes('/graphql/')) return 'graphql (other)';
  if (
    url.includes('graphql-yoga') ||
    url.includes('@envelop') ||
    url.includes('@graphql-yoga') ||
    url.includes('@whatwg-node')
  )
    return 'yoga / envelop / whatwg-node';
  if (url.includes('@repeaterjs')) return 'repeater';
  if (url.includes('/server/schema/views')) return 'server views.ts (eventView)';
  if (url.includes('/server/schema/')) return 'server schema (resolvers, subscriptions)';
  if (url.includes('/server/store/')) return 'server store';
  if (url.includes('/server/engine/')) return 'server engine';
  if (url.includes('/test/bench/')) return 'bench driver';
  if (name === 'parse' || name === 'stringify') return 'JSON parse/stringify';
  if (url.startsWith('node:') || url === '')
    return `node internals / native (${name || 'anonymous'})`.slice(0, 60);
  return url.replace(/^.*node_modules\//, '').split('/')[0] ?? url;
}

export class ServerBenchProfiler {
  private readonly session = new Session();
  private running = false;

  async start(): Promise<void> {
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.setSamplingInterval', { interval: 200 });
    await this.session.post('Profiler.start');
    this.running = true;
  }

  /** Stops, writes `file` and returns the summary. */
  async stop(file: string): Promise<ProfileSummary> {
    if (!this.running) throw new Error('profiler not started');
    const { profile } = (await this.session.post('Profiler.stop')) as { profile: Profile };
    this.running = false;
    await this.session.post('Profiler.disable');
    this.session.disconnect();
    writeFileSync(file, JSON.stringify(profile));
    return summarise(profile);
  }
}

export function summarise(profile: Profile): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i += 1) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const area = areaOf(url, functionName);
    if (area === '(idle)') continue;
    total += us;
    areas.set(area, (areas.get(area) ?? 0) + us);
    const short = url
      .replace(/^.*node_modules\//, '')
      .replace(/^file:\/\/.*?\/(server|test)\//, '$1/');
    const key =
      `${functionName || '(anonymous)'} ${short ? `${short}:${lineNumber + 1}` : ''}`.trim();
    functions.set(key, (functions.get(key) ?? 0) + us);
  }
  const sorted = (m: Map<string, number>) =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, ms: us / 1000 }));
  return {
    totalMs: total / 1000,
    areas: sorted(areas).map(({ name, ms }) => ({ area: name, ms })),
    functions: sorted(functions).slice(0, 15),
  };
}
