/**
 * `npm run bench:graphcache`: what Graphcache itself costs the live timeline (issue 13), in
 * isolation from React and the DOM: Node, NODE_ENV=production, the production cache config
 * (makeCacheConfig) in a real urql Client with a scripted transport (src/test/testClient.ts).
 * The events are real: a studio server in-process (port 0, temp dir) stores the log- and
 * tool-heavy mixes of bench:web, and History returns them with the studio's selection set.
 *
 * For each mix and batch size it streams three pages' worth of events through the
 * `studioAgentEventBatches` updater, batch by batch, and prints the milliseconds per batch and
 * per 1,000 events:
 *  - write only: no query watches the newest page (the updater's writes and links alone);
 *  - write + re-read: the timeline's newest-page query is watched, so every write re-reads it
 *    (Graphcache rebuilds the whole page result from normalized records, however few events
 *    changed: the per-write cost grows with the page's length, not with the batch).
 * Then one re-read of a full page (readQuery of a page of 256 events, and of one of 64), the
 * unit the second figure is made of.
 *
 * Each stream runs in two wire shapes in the same run: "once" is the app's document (events link
 * their call by key, the batch carries each named call once in `studioToolCalls`), "embedded"
 * the shape before it (every tool and approval event embeds the whole call; no list).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Kind, parse, print, visit } from 'graphql';
import type { DocumentNode, SelectionSetNode } from 'graphql';
import { formatDocument } from '@urql/core';
import { startStudioServer } from '../../server/app.ts';
import type { EventDraft } from '../../server/engine/eventDrafts.ts';
import {
  EventBatchesSubscription,
  EventHistoryQuery,
  EventPageQuery,
  PAGE_SIZE,
  pageOfSeq,
} from '../../src/graphql/eventDocuments.ts';
import { makeTestClient } from '../../src/test/testClient.ts';
import { BENCH_PROJECT_ID, ServerBenchSource } from './serverBenchDrafts.ts';
import { mixDrafts, STREAM_MIXES, type StreamMix } from './webBenchMixes.ts';

type Row = Record<string, unknown>;
const BATCHES = (process.env.BENCH_BATCHES ?? '8,33').split(',').map(Number);
const PAGES = 3;
const fmt = (n: number, digits = 2) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

type Shape = 'once' | 'embedded';

/**
 * The batch subscription as the app sent it before `studioToolCalls`: each tool and approval
 * event embeds `...ToolCallFields` in place of the key, and the batch has no list of calls.
 */
const EMBEDDED_BATCHES: DocumentNode = parse(
  print(
    visit(EventBatchesSubscription as unknown as DocumentNode, {
      Field(field) {
        if (field.name.value === 'studioToolCalls') return null;
        if (field.name.value !== 'studioToolCall') return undefined;
        const selectionSet: SelectionSetNode = {
          kind: Kind.SELECTION_SET,
          selections: [
            { kind: Kind.FRAGMENT_SPREAD, name: { kind: Kind.NAME, value: 'ToolCallFields' } },
          ],
        };
        return { ...field, selectionSet };
      },
    }),
  ),
);

/** History's events, and the current state of every call they name (by toolCallId). */
async function fetchEvents(
  url: string,
  token: string,
  sessionId: string,
): Promise<{ events: Row[]; calls: Map<string, Row> }> {
  const query = print(formatDocument(EventHistoryQuery as unknown as DocumentNode));
  const out: Row[] = [];
  const calls = new Map<string, Row>();
  let afterSeq = '0';
  for (;;) {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables: { sessionId, afterSeq, first: 200 } }),
    });
    const body = (await response.json()) as {
      data: {
        crowdyStudioAgentHistory: { events: Row[]; hasMore: boolean; studioToolCalls: Row[] };
      };
    };
    const page = body.data.crowdyStudioAgentHistory;
    out.push(...page.events);
    for (const call of page.studioToolCalls) calls.set(call.toolCallId as string, call);
    if (!page.hasMore || page.events.length === 0) return { events: out, calls };
    afterSeq = String(page.events[page.events.length - 1]!.seq);
  }
}

const tick = () => new Promise((done) => setImmediate(done));

const callIdOf = (event: Row) => (event.studioToolCall as Row | null | undefined)?.toolCallId;

/** Each event with its whole call embedded (the page query's and the old wire's shape). */
function embedded(events: Row[], calls: Map<string, Row>): Row[] {
  return events.map((event) => {
    const id = callIdOf(event);
    return typeof id === 'string' ? { ...event, studioToolCall: calls.get(id) ?? null } : event;
  });
}

/** The calls `events` name, once each, in order of first mention (the batch's studioToolCalls). */
function namedCalls(events: Row[], calls: Map<string, Row>): Row[] {
  const ids = new Set<string>();
  for (const event of events) {
    const id = callIdOf(event);
    if (typeof id === 'string') ids.add(id);
  }
  return [...ids].flatMap((id) => (calls.has(id) ? [calls.get(id)!] : []));
}

/** Streams `events` (starting on a page boundary) in batches; returns ms per batch. */
async function stream(
  events: Row[],
  calls: Map<string, Row>,
  sessionId: string,
  batch: number,
  watched: boolean,
  shape: Shape,
): Promise<{ perBatch: number; per1k: number; reads: number }> {
  const first = String(events[0]!.seq);
  const page = pageOfSeq(first);
  const test = makeTestClient((operation) => {
    const vars = operation.variables as { page?: string; size?: number };
    if (vars.page !== undefined)
      return {
        data: {
          studioEventPage: {
            __typename: 'StudioEventPage',
            sessionId,
            page: vars.page,
            size: vars.size,
            fromSeq: String(BigInt(vars.page) * BigInt(vars.size ?? PAGE_SIZE) + 1n),
            throughSeq: String((BigInt(vars.page) + 1n) * BigInt(vars.size ?? PAGE_SIZE)),
            complete: false,
            events: [],
          },
        },
      };
    return { data: null };
  });
  const document = shape === 'once' ? EventBatchesSubscription : EMBEDDED_BATCHES;
  const subscription = test.client
    .subscription(document as typeof EventBatchesSubscription, {
      sessionId,
      afterSeq: String(BigInt(first) - 1n),
      maxBatch: 200,
    })
    .subscribe(() => undefined);
  let reads = 0;
  // The page is always cached (answered empty), so the updater links into it either way;
  // watched or not is whether a live query keeps re-reading it.
  await test.client.query(EventPageQuery, { sessionId, page, size: PAGE_SIZE }).toPromise();
  const watch = watched
    ? test.client
        .query(
          EventPageQuery,
          { sessionId, page, size: PAGE_SIZE },
          { requestPolicy: 'cache-first' },
        )
        .subscribe(() => {
          reads += 1;
        })
    : null;
  await tick();
  let batches = 0;
  let ms = 0;
  // The messages as the server sends them, built before timing.
  const messages: Row[] = [];
  for (let i = 0; i < events.length; i += batch) {
    const slice = events.slice(i, i + batch);
    messages.push({
      studioAgentEventBatches: {
        __typename: 'StudioAgentEventBatch',
        sessionId,
        fromSeq: slice[0]!.seq,
        throughSeq: slice[slice.length - 1]!.seq,
        ...(shape === 'once'
          ? { events: slice, studioToolCalls: namedCalls(slice, calls) }
          : { events: embedded(slice, calls) }),
      },
    });
  }
  for (const message of messages) {
    const started = performance.now();
    test.push('studioAgentEventBatches', message);
    // Each batch is its own socket message in the browser: let the re-reads it scheduled run.
    await tick();
    ms += performance.now() - started;
    batches += 1;
  }
  await tick();
  watch?.unsubscribe();
  subscription.unsubscribe();
  return { perBatch: ms / batches, per1k: (ms * 1000) / events.length, reads };
}

type Run = Awaited<ReturnType<typeof stream>>;

/** The run with the median time (the machine is shared). */
function median(runs: Run[]): Run {
  return [...runs].sort((a, b) => a.perBatch - b.perBatch)[Math.floor(runs.length / 2)]!;
}

function readCost(events: Row[], sessionId: string, size: number): number {
  const page = '0';
  const slice = events.slice(0, size);
  // The page query's own answer embeds each call (as far as a row shows it: a superset here).
  const test = makeTestClient(() => ({
    data: {
      studioEventPage: {
        __typename: 'StudioEventPage',
        sessionId,
        page,
        size,
        fromSeq: '1',
        throughSeq: String(size),
        complete: true,
        events: slice,
      },
    },
  }));
  return test.client
    .query(EventPageQuery, { sessionId, page, size })
    .toPromise()
    .then(() => {
      const runs = 200;
      const started = performance.now();
      for (let i = 0; i < runs; i += 1)
        test.client.readQuery(EventPageQuery, { sessionId, page, size });
      return (performance.now() - started) / runs;
    }) as unknown as number;
}

async function main(): Promise<void> {
  console.log(
    'Graphcache in isolation (npm run bench:graphcache), NODE_ENV=' + process.env.NODE_ENV,
  );
  console.log(`  ${execSync('uptime').toString().trim()} (shared machine: figures move with load)`);
  const dataDir = mkdtempSync(join(tmpdir(), 'studio-cachebench-'));
  const source = new ServerBenchSource();
  const server = await startStudioServer({
    port: 0,
    dataDir,
    token: randomBytes(24).toString('hex'),
    demo: false,
    quiet: true,
    sources: [source],
  });
  try {
    for (const mix of STREAM_MIXES as StreamMix[]) {
      const sessionId = `ses_cache_${mix}`;
      await source.live.ensureSession({
        sessionId,
        title: sessionId,
        mode: 'BUILD',
        requestedModel: 'm',
        model: 'm',
        projectId: BENCH_PROJECT_ID,
      });
      const drafts = mixDrafts(mix, mix);
      const want = PAGE_SIZE * (PAGES + 1);
      const batch: EventDraft[] = [];
      for (let i = 0; i < want; i += 1) batch.push(drafts.next().value as EventDraft);
      await source.live.append(sessionId, batch);
      const { events: all, calls } = await fetchEvents(server.url, server.token, sessionId);
      // Stream pages 1..PAGES (page 0 holds the session's own first events).
      const live = all.filter((e) => {
        const seq = BigInt(String(e.seq));
        return seq > BigInt(PAGE_SIZE) && seq <= BigInt(PAGE_SIZE * (PAGES + 1));
      });
      const toolEvents = live.filter((e) => typeof callIdOf(e) === 'string').length;
      const named = new Set(live.map(callIdOf).filter((id) => typeof id === 'string')).size;
      console.log(
        `\n  ${mix}-heavy mix: ${live.length} events streamed into ${PAGES} pages (${toolEvents} name a tool call, ${named} distinct calls)`,
      );
      console.log(
        '    shape     batch   write only (ms/batch, ms/1k ev)   write + re-read of the watched page (ms/batch, ms/1k ev)',
      );
      for (const size of BATCHES) {
        const shapes: Shape[] = ['embedded', 'once'];
        for (const shape of shapes) await stream(live, calls, sessionId, size, true, shape);
        // Interleaved (embedded, once, embedded, …), median of five each: both meet the same
        // load and the same garbage left by the run before.
        const runs = new Map(
          shapes.map((shape) => [shape, { alone: [] as Run[], watched: [] as Run[] }]),
        );
        for (let round = 0; round < 5; round += 1)
          for (const watchedRun of [false, true])
            for (const shape of shapes) {
              const result = await stream(live, calls, sessionId, size, watchedRun, shape);
              runs.get(shape)![watchedRun ? 'watched' : 'alone'].push(result);
            }
        for (const shape of shapes) {
          const alone = median(runs.get(shape)!.alone);
          const watched = median(runs.get(shape)!.watched);
          console.log(
            `    ${shape.padEnd(8)}  ${String(size).padStart(5)}   ${fmt(alone.perBatch).padStart(8)} ${fmt(alone.per1k, 0).padStart(8)}              ${fmt(watched.perBatch).padStart(8)} ${fmt(watched.per1k, 0).padStart(8)}   (${watched.reads} re-reads)`,
          );
        }
      }
      const pageEvents = embedded(live, calls);
      // What the raw client does with the same batches: JSON.parse of each socket message.
      for (const shape of ['embedded', 'once'] as Shape[]) {
        const messages: string[] = [];
        for (let i = 0; i < live.length; i += 33) {
          const slice = live.slice(i, i + 33);
          const batch =
            shape === 'once'
              ? { events: slice, studioToolCalls: namedCalls(slice, calls) }
              : { events: embedded(slice, calls) };
          messages.push(
            JSON.stringify({
              id: '1',
              type: 'next',
              payload: { data: { studioAgentEventBatches: batch } },
            }),
          );
        }
        const parses: number[] = [];
        for (let run = 0; run < 7; run += 1) {
          const started = performance.now();
          for (const message of messages) JSON.parse(message);
          parses.push(((performance.now() - started) * 1000) / live.length);
        }
        parses.sort((a, b) => a - b);
        const bytes = messages.reduce((sum, m) => sum + m.length, 0);
        console.log(
          `    ${shape.padEnd(8)}  the raw client's work, JSON.parse of the same 33-event messages: ${fmt(parses[3]!)} ms per 1k events (median of 7), ${fmt(bytes / 1e3, 0)} KB`,
        );
      }
      for (const size of [PAGE_SIZE, 64]) {
        await readCost(pageEvents, sessionId, size);
        const ms = await readCost(pageEvents, sessionId, size);
        console.log(`    one re-read of a full page of ${size} events: ${fmt(ms)} ms`);
      }
    }
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error('benchmark failed:', error);
    process.exit(1);
  },
);
