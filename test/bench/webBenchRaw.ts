/**
 * The raw client of `npm run bench:web` (issue 13): what the live timeline costs with no
 * framework at all. A page served from the studio's own origin (the bench answers its URL with
 * Playwright's page.route) that
 *  - reads the session's lastEventSeq and its newest event page over HTTP, with the studio's own
 *    documents (the exact text urql sends, __typename included), JSON-parses them and keeps the
 *    events in one array;
 *  - speaks graphql-transport-ws itself on a WebSocket, subscribing to `studioAgentEventBatches`
 *    with the studio's selection set and variables, and appends each batch's new events (a
 *    batch links tool calls by key and carries each call's state once, in studioToolCalls: the
 *    raw client keeps those in a Map by toolCallId, as any client of that shape must);
 *  - renders a windowed list of WINDOW fixed-height rows that follows the end: once per animation
 *    frame it sets the sizer's height, writes the rows' text and writes scrollTop from the
 *    array's length and a ResizeObserver-kept viewport height (never reading layout).
 * Rows carry `data-seq` / `data-last-seq` inside a `role="feed"` element, as the studio's do, so
 * the bench's frame loop (webBenchPage.ts) measures both pages the same way.
 */
import { print } from 'graphql';
import { formatDocument } from '@urql/core';
import type { DocumentNode } from 'graphql';
import {
  EventBatchesSubscription,
  EventPageQuery,
  PAGE_SIZE,
} from '../../src/graphql/eventDocuments.ts';
import { EVENT_BATCH_DEFAULT } from '../../protocol/contract.ts';
import { WEB_TOKEN_KEY } from './webBenchPage.ts';

/** Where the raw page is served (the bench writes it into a copy of the build it serves). */
export const RAW_PAGE_PATH = '/__bench/raw.html';

/** Rows the raw page keeps in the DOM (about what the 800 px viewport shows, plus slack). */
const WINDOW = 50;
const ROW_PX = 24;

const SESSION_QUERY = `query RawSession($sessionId: String!) {
  crowdyStudioAgentSession(sessionId: $sessionId) { __typename sessionId lastEventSeq }
}`;

/** The document text urql puts on the wire for a gql.tada document. */
function wireText(document: unknown): string {
  return print(formatDocument(document as DocumentNode) as DocumentNode);
}

export function rawPageHtml(): string {
  const config = {
    tokenKey: WEB_TOKEN_KEY,
    sessionQuery: SESSION_QUERY,
    pageQuery: wireText(EventPageQuery),
    subscription: wireText(EventBatchesSubscription),
    pageSize: PAGE_SIZE,
    maxBatch: EVENT_BATCH_DEFAULT,
    window: WINDOW,
    rowPx: ROW_PX,
  };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>raw client</title><link rel="icon" href="data:,">
<style>
  html, body { margin: 0; height: 100%; font: 12px/1.4 monospace; }
  #wrap { position: relative; height: 100%; }
  #scroller { height: 100%; overflow-y: auto; contain: strict; }
  #feed { position: relative; width: 100%; }
  #feed > div { position: absolute; left: 0; right: 0; height: ${ROW_PX}px; padding: 0 8px;
    box-sizing: border-box; white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
    border-bottom: 1px solid #eee; line-height: ${ROW_PX}px; }
</style></head>
<body><div id="wrap"><div id="scroller"><div id="feed" role="feed" aria-label="Events"></div></div></div>
<script>
(() => {
  const C = ${JSON.stringify(config)};
  const sessionId = new URLSearchParams(location.search).get('session');
  const token = sessionStorage.getItem(C.tokenKey);
  const auth = 'Bearer ' + token;
  const scroller = document.getElementById('scroller');
  const feed = document.getElementById('feed');
  const events = [];
  /** Each tool call's newest state, by toolCallId, from the batches' studioToolCalls. */
  const calls = new Map();
  let lastSeq = 0;
  let viewport = 0;
  let scheduled = false;
  let shownFrom = -1;
  let shownCount = -1;
  const pool = [];
  for (let i = 0; i < C.window; i += 1) {
    const row = document.createElement('div');
    row.style.display = 'none';
    feed.appendChild(row);
    pool.push(row);
  }
  new ResizeObserver((entries) => {
    viewport = entries[entries.length - 1].contentRect.height;
    schedule();
  }).observe(scroller);

  const text = (e) => {
    const head = '#' + e.seq + ' ' + e.createdAt.slice(11, 23) + ' ' + e.type + ' ';
    if (e.logMessage !== undefined) return head + e.logLevel + ' ' + e.logMessage;
    // A batch links each call by key and carries its state once (studioToolCalls); a page
    // embeds the row-sized call itself.
    const call = e.studioToolCall && (calls.get(e.studioToolCall.toolCallId) || e.studioToolCall);
    if (call) return head + call.toolName + ' ' + call.status + ' ' + (call.safeSummary || '');
    if (e.messageContent !== undefined) return head + e.messageRole + ' ' + e.messageContent.slice(0, 160);
    if (e.budgetSnapshot) return head + e.budgetSnapshot.dimensions.map((d) => d.name + ' ' + d.consumed + '/' + d.limit).join(', ');
    if (e.runStatus !== undefined) return head + e.runStatus;
    return head;
  };

  const render = () => {
    scheduled = false;
    const n = events.length;
    const from = Math.max(0, n - C.window);
    feed.style.height = n * C.rowPx + 'px';
    for (let i = 0; i < C.window; i += 1) {
      const row = pool[i];
      const index = from + i;
      if (index >= n) {
        if (i < shownCount) row.style.display = 'none';
        continue;
      }
      const e = events[index];
      // A pooled row is rewritten only when it now shows another event.
      if (from !== shownFrom || i >= shownCount) {
        row.textContent = text(e);
        row.setAttribute('data-seq', e.seq);
        row.setAttribute('data-last-seq', e.seq);
        row.style.transform = 'translateY(' + index * C.rowPx + 'px)';
        row.style.display = '';
      }
    }
    shownFrom = from;
    shownCount = Math.min(n, C.window);
    scroller.scrollTop = Math.max(0, n * C.rowPx - viewport);
  };
  function schedule() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(render);
  }
  const append = (list, batchCalls) => {
    if (batchCalls) for (const c of batchCalls) calls.set(c.toolCallId, c);
    let added = false;
    for (const e of list) {
      const seq = Number(e.seq);
      if (seq <= lastSeq) continue;
      lastSeq = seq;
      events.push(e);
      added = true;
    }
    if (added) schedule();
  };

  const query = async (q, variables) => {
    const response = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: auth },
      body: JSON.stringify({ query: q, variables }),
    });
    const body = JSON.parse(await response.text());
    if (body.errors) throw new Error(body.errors[0].message);
    return body.data;
  };

  const subscribe = () => {
    const ws = new WebSocket(location.origin.replace(/^http/, 'ws') + '/graphql', 'graphql-transport-ws');
    ws.onopen = () => ws.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: auth } }));
    ws.onmessage = (message) => {
      const msg = JSON.parse(message.data);
      if (msg.type === 'connection_ack') {
        ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: {
          query: C.subscription,
          variables: { sessionId, afterSeq: String(lastSeq), maxBatch: C.maxBatch },
        } }));
      } else if (msg.type === 'next') {
        const batch = msg.payload.data && msg.payload.data.studioAgentEventBatches;
        if (batch) append(batch.events, batch.studioToolCalls);
      } else if (msg.type === 'ping') {
        ws.send(JSON.stringify({ type: 'pong' }));
      } else if (msg.type === 'error') {
        console.error('raw subscription error', JSON.stringify(msg.payload));
      }
    };
  };

  (async () => {
    const { crowdyStudioAgentSession: s } = await query(C.sessionQuery, { sessionId });
    const last = Number(s.lastEventSeq);
    const page = Math.max(0, Math.floor((last - 1) / C.pageSize));
    const pages = page > 0 ? [page - 1, page] : [page];
    const results = await Promise.all(pages.map((p) => query(C.pageQuery, { sessionId, page: String(p), size: C.pageSize })));
    for (const r of results) append(r.studioEventPage.events);
    subscribe();
  })().catch((error) => console.error('raw client failed', String(error)));
})();
</script></body></html>`;
}
