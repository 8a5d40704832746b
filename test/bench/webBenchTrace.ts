/**
 * Where the renderer's main thread spends its time during one benchmark phase (BENCH_TRACE=1 or
 * BENCH_PROFILE=1), over the page's CDP session:
 *  - 'trace': a Chromium performance trace (devtools.timeline), summarised by self time per
 *    trace event name (scripting, style, layout, paint, GC …) and the longest tasks' contents;
 *  - 'profile': the V8 sampling profiler, with frames mapped back to src/ and node_modules
 *    through dist/'s source map, summarised by self and inclusive time per original function.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CDPSession } from 'playwright-core';

interface TraceEvent {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  args?: { name?: string; data?: Record<string, unknown> };
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const ms = (us: number) => (us / 1000).toFixed(1).padStart(8);

export class WebBenchRecorder {
  private mode: 'trace' | 'profile' = 'trace';
  private events: TraceEvent[] = [];
  private readonly onData = (params: { value: object[] }) => {
    for (const event of params.value) this.events.push(event as TraceEvent);
  };

  constructor(
    private readonly cdp: CDPSession,
    /** The served build, whose source maps name the profile's frames. */
    private readonly staticDir: string,
  ) {}

  async start(mode: 'trace' | 'profile'): Promise<void> {
    this.mode = mode;
    if (mode === 'trace') {
      this.events = [];
      this.cdp.on('Tracing.dataCollected', this.onData);
      await this.cdp.send('Tracing.start', {
        transferMode: 'ReportEvents',
        traceConfig: {
          includedCategories: [
            'devtools.timeline',
            'disabled-by-default-devtools.timeline',
            'v8',
            'v8.execute',
            'blink',
            // BENCH_TRACE_INVALIDATIONS=1: which nodes dirtied style and layout, and why.
            ...(process.env.BENCH_TRACE_INVALIDATIONS === '1'
              ? ['disabled-by-default-devtools.timeline.invalidationTracking']
              : []),
          ],
        },
      });
    } else {
      await this.cdp.send('Profiler.enable');
      await this.cdp.send('Profiler.setSamplingInterval', { interval: 250 });
      await this.cdp.send('Profiler.start');
    }
  }

  async stopAndPrint(label: string): Promise<void> {
    if (this.mode === 'trace') {
      const complete = new Promise<void>((done) =>
        this.cdp.once('Tracing.tracingComplete', () => done()),
      );
      await this.cdp.send('Tracing.end');
      await complete;
      this.cdp.off('Tracing.dataCollected', this.onData);
      printTrace(label, this.events);
      this.events = [];
    } else {
      const { profile } = (await this.cdp.send('Profiler.stop')) as unknown as { profile: Profile };
      await this.cdp.send('Profiler.disable');
      await printProfile(label, profile, this.staticDir);
    }
  }
}

function printTrace(label: string, events: TraceEvent[]): void {
  // The renderer main thread with the most work is the page's.
  const mains = events.filter(
    (e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain',
  );
  let best: { pid: number; tid: number; busy: number } | null = null;
  for (const m of mains) {
    const busy = events
      .filter((e) => e.pid === m.pid && e.tid === m.tid && e.ph === 'X' && e.name === 'RunTask')
      .reduce((sum, e) => sum + (e.dur ?? 0), 0);
    if (!best || busy > best.busy) best = { pid: m.pid, tid: m.tid, busy };
  }
  if (!best) {
    console.log(`\n  trace of ${label}: no renderer main thread found`);
    return;
  }
  const own = events
    .filter((e) => e.pid === best.pid && e.tid === best.tid && e.ph === 'X' && e.dur !== undefined)
    .sort((a, b) => a.ts - b.ts || (b.dur ?? 0) - (a.dur ?? 0));
  const self = new Map<string, number>();
  const tasks: { event: TraceEvent; self: Map<string, number> }[] = [];
  const stack: { event: TraceEvent; end: number; childUs: number; task: Map<string, number> }[] =
    [];
  const close = (upTo: number) => {
    while (stack.length && stack[stack.length - 1]!.end <= upTo) {
      const top = stack.pop()!;
      const selfUs = Math.max(0, (top.event.dur ?? 0) - top.childUs);
      self.set(top.event.name, (self.get(top.event.name) ?? 0) + selfUs);
      top.task.set(top.event.name, (top.task.get(top.event.name) ?? 0) + selfUs);
    }
  };
  for (const event of own) {
    close(event.ts);
    const parent = stack[stack.length - 1];
    if (parent) parent.childUs += event.dur ?? 0;
    const task = parent ? parent.task : new Map<string, number>();
    if (!parent) tasks.push({ event, self: task });
    stack.push({ event, end: event.ts + (event.dur ?? 0), childUs: 0, task });
  }
  close(Number.POSITIVE_INFINITY);
  const span = own.length ? own[own.length - 1]!.ts - own[0]!.ts : 0;
  const busy = tasks.reduce((sum, t) => sum + (t.event.dur ?? 0), 0);
  console.log(
    `\n  trace of ${label}: renderer main thread busy ${ms(busy).trim()} ms of ${ms(span).trim()} ms; self time by event:`,
  );
  for (const [name, us] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 14))
    console.log(`    ${ms(us)} ms  ${name}`);
  // How much each layout and style pass had to do: a layout that walks every object, or a
  // style pass over every element, is a whole-document invalidation worth finding.
  const layouts = own.filter((e) => e.name === 'Layout');
  const styles = own.filter((e) => e.name === 'UpdateLayoutTree');
  const sumOf = (list: TraceEvent[], field: string) =>
    list.reduce((sum, e) => {
      const begin = (e.args as { beginData?: Record<string, unknown> } | undefined)?.beginData;
      const value = Number(begin?.[field] ?? (e.args as Record<string, unknown>)?.[field] ?? 0);
      return sum + (Number.isFinite(value) ? value : 0);
    }, 0);
  console.log(
    `    Layout: ${layouts.length} passes, ${ms(layouts.reduce((s, e) => s + (e.dur ?? 0), 0)).trim()} ms, ` +
      `dirty objects ${sumOf(layouts, 'dirtyObjects')} of ${sumOf(layouts, 'totalObjects')} in total; ` +
      `UpdateLayoutTree: ${styles.length} passes, ${ms(styles.reduce((s, e) => s + (e.dur ?? 0), 0)).trim()} ms, ` +
      `elements ${sumOf(styles, 'elementCount')}`,
  );
  const tracked = events.filter(
    (e) =>
      e.pid === best.pid &&
      (e.name === 'StyleRecalcInvalidationTracking' ||
        e.name === 'LayoutInvalidationTracking' ||
        e.name === 'StyleInvalidatorInvalidationTracking'),
  );
  if (tracked.length > 0) {
    const byWhat = new Map<string, number>();
    for (const e of tracked) {
      const data = (e.args?.data ?? {}) as Record<string, unknown>;
      const what = `${e.name.replace('InvalidationTracking', '')}: ${String(data.nodeName ?? '?')} (${String(data.reason ?? data.invalidationSet ?? '')})`;
      byWhat.set(what, (byWhat.get(what) ?? 0) + 1);
    }
    console.log(`    invalidations (${tracked.length}), by node and reason:`);
    for (const [what, n] of [...byWhat.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30))
      console.log(`    ${String(n).padStart(8)}  ${what}`);
  }
  const longest = tasks.sort((a, b) => (b.event.dur ?? 0) - (a.event.dur ?? 0)).slice(0, 6);
  console.log('    longest tasks (self time inside, top 4):');
  for (const t of longest) {
    const inside = [...t.self.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([name, us]) => `${name} ${ms(us).trim()}`)
      .join(', ');
    const at = ms(t.event.ts - (own[0]?.ts ?? t.event.ts)).trim();
    console.log(`    ${ms(t.event.dur ?? 0)} ms  at +${at} ms: ${inside}`);
  }
}

interface Mapper {
  map(
    url: string,
    line: number,
    column: number,
  ): { source: string; line: number; name: string | null } | null;
}

async function sourceMapper(staticDir: string): Promise<Mapper> {
  const consumers = new Map<string, unknown>();
  let lib: typeof import('source-map-js') | null = null;
  try {
    lib = await import('source-map-js');
  } catch {
    lib = null;
  }
  return {
    map(url, line, column) {
      if (!lib) return null;
      const file = /\/assets\/([^/?#]+\.js)/.exec(url)?.[1];
      if (!file) return null;
      let consumer = consumers.get(file) as
        InstanceType<typeof lib.SourceMapConsumer> | null | undefined;
      if (consumer === undefined) {
        const mapFile = join(staticDir, 'assets', `${file}.map`);
        consumer = existsSync(mapFile)
          ? new lib.SourceMapConsumer(JSON.parse(readFileSync(mapFile, 'utf8')))
          : null;
        consumers.set(file, consumer);
      }
      if (!consumer) return null;
      const at = consumer.originalPositionFor({ line: line + 1, column });
      if (!at.source) return null;
      return {
        source: at.source.includes('node_modules/')
          ? at.source.replace(/^.*node_modules\//, 'node_modules/')
          : at.source.replace(/^.*?(?=\bsrc\/)/, ''),
        line: at.line ?? 0,
        name: at.name ?? null,
      };
    },
  };
}

async function printProfile(label: string, profile: Profile, staticDir: string): Promise<void> {
  const mapper = await sourceMapper(staticDir);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const keyOf = new Map<number, string>();
  const key = (id: number): string => {
    const known = keyOf.get(id);
    if (known !== undefined) return known;
    const { functionName, url, lineNumber, columnNumber } = byId.get(id)!.callFrame;
    const mapped = url ? mapper.map(url, lineNumber, columnNumber) : null;
    const name = functionName || '(anonymous)';
    const out = mapped
      ? `${name} ${mapped.source}:${mapped.line}`
      : url
        ? `${name} ${url.replace(/^https?:\/\/[^/]+/, '')}:${lineNumber + 1}`
        : name;
    keyOf.set(id, out);
    return out;
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i += 1) {
    const id = profile.samples[i]!;
    const us = profile.timeDeltas[i] ?? 0;
    const leaf = key(id);
    if (leaf === '(idle)') continue;
    total += us;
    self.set(leaf, (self.get(leaf) ?? 0) + us);
    const file = leaf.includes(' ') ? leaf.slice(leaf.indexOf(' ') + 1).replace(/:\d+$/, '') : leaf;
    const area = file.startsWith('node_modules/')
      ? file
          .split('/')
          .slice(0, file.includes('/@') ? 3 : 2)
          .join('/')
      : file;
    byFile.set(area, (byFile.get(area) ?? 0) + us);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const k = key(at);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + us);
    }
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log(`\n  CPU profile of ${label}: ${ms(total).trim()} ms busy on the page's main thread`);
  console.log('    self time by file or package:');
  for (const [name, us] of top(byFile, 14)) console.log(`    ${ms(us)} ms  ${name}`);
  console.log('    self time by function:');
  for (const [name, us] of top(self, 16)) console.log(`    ${ms(us)} ms  ${name}`);
  console.log('    inclusive time, src/ functions:');
  for (const [name, us] of top(new Map([...inclusive].filter(([k]) => /\ssrc\//.test(k))), 16))
    console.log(`    ${ms(us)} ms  ${name}`);
  console.log('    inclusive time, node_modules functions:');
  for (const [name, us] of top(
    new Map([...inclusive].filter(([k]) => /\snode_modules\//.test(k))),
    24,
  ))
    console.log(`    ${ms(us)} ms  ${name}`);
  const slice = Number(process.env.BENCH_PROFILE_SLICES ?? 0);
  if (slice > 0) {
    // Time order (BENCH_PROFILE_SLICES=ms): per window from the profile's start, busy time and
    // the src/ functions (else packages) the window's samples were in, most inclusive time first.
    console.log(`    busy per ${slice} ms from the start, and where (inclusive):`);
    const windows = new Map<number, { busy: number; where: Map<string, number> }>();
    let at = 0;
    for (let i = 0; i < profile.samples.length; i += 1) {
      at += profile.timeDeltas[i] ?? 0;
      const id = profile.samples[i]!;
      const leaf = key(id);
      if (leaf === '(idle)') continue;
      const us = profile.timeDeltas[i] ?? 0;
      const w = Math.floor(at / 1000 / slice);
      let win = windows.get(w);
      if (!win) windows.set(w, (win = { busy: 0, where: new Map() }));
      win.busy += us;
      const seen = new Set<string>();
      let named = false;
      for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
        const k = key(n);
        if (!/\ssrc\//.test(k) || seen.has(k)) continue;
        seen.add(k);
        named = true;
        win.where.set(k, (win.where.get(k) ?? 0) + us);
      }
      if (!named) win.where.set(leaf, (win.where.get(leaf) ?? 0) + us);
    }
    for (const [w, win] of [...windows.entries()].sort((a, b) => a[0] - b[0])) {
      const where = top(win.where, 4)
        .map(([name, us]) => `${name.replace(/ (src|node_modules)\//, ' ')} ${ms(us).trim()}`)
        .join('; ');
      console.log(`    +${String(w * slice).padStart(5)}  ${ms(win.busy)}  ${where}`);
    }
  }
  const out = process.env.BENCH_PROFILE_OUT;
  if (out) {
    writeFileSync(out, JSON.stringify(profile));
    console.log(`    raw profile written to ${out} (open it in Chromium's DevTools)`);
  }
}
