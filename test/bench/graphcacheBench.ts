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
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { print } from 'graphql';
import type { DocumentNode } from 'graphql';
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

async function fetchEvents(url: string, token: string, sessionId: string): Promise<Row[]> {
  const query = print(formatDocument(EventHistoryQuery as unknown as DocumentNode));
  const out: Row[] = [];
  let afterSeq = '0';
  for (;;) {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables: { sessionId, afterSeq, first: 200 } }),
    });
    const body = (await response.json()) as {
      data: { crowdyStudioAgentHistory: { events: Row[]; hasMore: boolean } };
    };
    const page = body.data.crowdyStudioAgentHistory;
    out.push(...page.events);
    if (!page.hasMore || page.events.length === 0) return out;
    afterSeq = String(page.events[page.events.length - 1]!.seq);
  }
}

const tick = () => new Promise((done) => setImmediate(done));

/** Streams `events` (starting on a page boundary) in batches; returns ms per batch. */
async function stream(
  events: Row[],
  sessionId: string,
  batch: number,
  watched: boolean,
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
  const subscription = test.client
    .subscription(EventBatchesSubscription, {
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
  for (let i = 0; i < events.length; i += batch) {
    const slice = events.slice(i, i + batch);
    const started = performance.now();
    test.push('studioAgentEventBatches', {
      studioAgentEventBatches: {
        __typename: 'StudioAgentEventBatch',
        sessionId,
        fromSeq: slice[0]!.seq,
        throughSeq: slice[slice.length - 1]!.seq,
        events: slice,
      },
    });
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

/** The run with the median time of three (the machine is shared). */
async function best<T extends { perBatch: number }>(run: () => Promise<T>): Promise<T> {
  const runs = [await run(), await run(), await run()].sort((a, b) => a.perBatch - b.perBatch);
  return runs[1]!;
}

function readCost(events: Row[], sessionId: string, size: number): number {
  const page = '0';
  const slice = events.slice(0, size);
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
      const all = await fetchEvents(server.url, server.token, sessionId);
      // Stream pages 1..PAGES (page 0 holds the session's own first events).
      const live = all.filter((e) => {
        const seq = BigInt(String(e.seq));
        return seq > BigInt(PAGE_SIZE) && seq <= BigInt(PAGE_SIZE * (PAGES + 1));
      });
      console.log(`\n  ${mix}-heavy mix: ${live.length} events streamed into ${PAGES} pages`);
      console.log(
        '    batch   write only (ms/batch, ms/1k ev)   write + re-read of the watched page (ms/batch, ms/1k ev)',
      );
      for (const size of BATCHES) {
        // Warm the JIT once, then measure.
        await stream(live, sessionId, size, true);
        const alone = await best(() => stream(live, sessionId, size, false));
        const watched = await best(() => stream(live, sessionId, size, true));
        console.log(
          `    ${String(size).padStart(5)}   ${fmt(alone.perBatch).padStart(8)} ${fmt(alone.per1k, 0).padStart(8)}              ${fmt(watched.perBatch).padStart(8)} ${fmt(watched.per1k, 0).padStart(8)}   (${watched.reads} re-reads)`,
        );
      }
      // What the raw client does with the same batches: JSON.parse of each socket message.
      const messages: string[] = [];
      for (let i = 0; i < live.length; i += 33)
        messages.push(
          JSON.stringify({
            id: '1',
            type: 'next',
            payload: { data: { studioAgentEventBatches: { events: live.slice(i, i + 33) } } },
          }),
        );
      const parses: number[] = [];
      for (let run = 0; run < 7; run += 1) {
        const started = performance.now();
        for (const message of messages) JSON.parse(message);
        parses.push(((performance.now() - started) * 1000) / live.length);
      }
      parses.sort((a, b) => a - b);
      console.log(
        `    the raw client's work, JSON.parse of the same 33-event messages: ${fmt(parses[3]!)} ms per 1k events (median of 7)`,
      );
      for (const size of [PAGE_SIZE, 64]) {
        await readCost(live, sessionId, size);
        const ms = await readCost(live, sessionId, size);
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
