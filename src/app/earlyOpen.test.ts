import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventPageQuery, PAGE_SIZE } from '../graphql/eventDocuments.ts';
import { logEvents, SESSION_ID } from '../test/fixtures.ts';
import { TOKEN_KEY } from './bootstrap.ts';
import { BOOT_LAST_SEQ, fakeBootServer } from '../test/fakeBootServer.ts';
import { parse, print } from 'graphql';
import { SessionQuery } from '../features/sessions/documents.ts';
import { compactQuery } from './earlyFetch.ts';
import { earlyOpenScript, sentQueryText } from './earlyOpen.ts';
import { startStudioEarly, takeEarlyStart, type StudioStart } from './startStudio.ts';

const LAST = BOOT_LAST_SEQ;

/** A server on fetch: the deploy config, the token check, the session and its pages. */
const fakeServer = fakeBootServer;

/** Runs the inline script exactly as index.html carries it. */
function runInlineScript() {
  new Function(earlyOpenScript(['/assets/SessionScreen.js']))();
}

let started: StudioStart | null = null;
afterEach(() => {
  started?.dispose();
  started = null;
  window.__studioEarly = undefined;
  window.__studioConfig = undefined;
  vi.unstubAllGlobals();
  sessionStorage.clear();
  window.history.replaceState(null, '', '/');
  for (const link of document.head.querySelectorAll('link[rel="modulepreload"]')) link.remove();
});

describe("index.html's early requests", () => {
  it('asks for the session and its newest page before the app runs, and the app takes both answers into Graphcache without asking again', async () => {
    window.history.replaceState(null, '', `/sessions/${SESSION_ID}`);
    sessionStorage.setItem(TOKEN_KEY, 'tok-1');
    const server = fakeServer();
    vi.stubGlobal('fetch', server.fetchImpl);
    runInlineScript();
    await window.__studioEarly?.done;
    // Before any of the app's code: the config, then the session, then its newest page.
    expect(server.calls.map((c) => c.what)).toEqual(['config', 'StudioSession', 'StudioEventPage']);
    expect(server.calls[0]?.authorization).toBeNull();
    for (const call of server.calls.slice(1)) expect(call.authorization).toBe('Bearer tok-1');

    startStudioEarly();
    started = takeEarlyStart();
    const outcome = await started!.outcome;
    if (!outcome.ok) throw new Error(`boot failed: ${outcome.problem.kind}`);
    const page = await vi.waitFor(() => {
      const read = outcome.parts.studio.client.readQuery(EventPageQuery, {
        sessionId: SESSION_ID,
        page: '2',
        size: PAGE_SIZE,
      });
      const events = read?.data?.studioEventPage?.events;
      if (!events) throw new Error('the page is not in Graphcache yet');
      return events;
    });
    expect(page.map((event) => event.seq)).toEqual(
      logEvents(2 * PAGE_SIZE + 1, LAST).map((event) => event.seq),
    );
    // One request each: the app's own session and page queries were answered by the early ones
    // (same bodies), and the config was asked for once.
    expect(server.calls.map((c) => c.what).sort()).toEqual(
      ['config', 'StudioEventPage', 'StudioSession', 'StudioTokenCheck'].sort(),
    );
    expect(document.head.querySelector('link[rel="modulepreload"]')?.getAttribute('href')).toBe(
      '/assets/SessionScreen.js',
    );
  });

  it('sends nothing with the token before the config named the endpoint, and only there', async () => {
    window.history.replaceState(null, '', `/sessions/${SESSION_ID}/events/5#token=tok-2`);
    let configAnswered = () => undefined as void;
    const server = fakeServer({
      configDelay: new Promise((resolve) => (configAnswered = resolve)),
      endpoint: 'https://studio.example/graphql',
    });
    vi.stubGlobal('fetch', server.fetchImpl);
    runInlineScript();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.calls.map((c) => [c.what, c.authorization])).toEqual([['config', null]]);
    configAnswered();
    await window.__studioEarly?.done;
    const sent = window.__studioEarly?.sent ?? [];
    expect(sent.map((request) => request.endpoint)).toEqual([
      'https://studio.example/graphql',
      'https://studio.example/graphql',
    ]);
    for (const call of server.calls.slice(1)) expect(call.authorization).toBe('Bearer tok-2');
    // The token stays out of every URL and body.
    for (const call of server.calls) expect(call.body).not.toContain('tok-2');
  });

  it('asks for no data without a token, on other addresses, or for an endpoint that is not http(s)', async () => {
    const server = fakeServer({ endpoint: 'javascript:alert(1)' });
    vi.stubGlobal('fetch', server.fetchImpl);
    window.history.replaceState(null, '', `/sessions/${SESSION_ID}`);
    runInlineScript();
    await window.__studioEarly?.done;
    window.history.replaceState(null, '', '/inbox');
    sessionStorage.setItem(TOKEN_KEY, 'tok-3');
    runInlineScript();
    window.history.replaceState(null, '', `/sessions/${SESSION_ID}/checkpoints`);
    runInlineScript();
    window.history.replaceState(null, '', `/sessions/${SESSION_ID}`);
    runInlineScript();
    await window.__studioEarly?.done;
    expect(server.calls.map((c) => c.what)).toEqual(['config', 'config', 'config', 'config']);
  });

  it('carries the queries short and still the same documents', () => {
    for (const document of [SessionQuery, EventPageQuery]) {
      const sent = sentQueryText(document);
      const short = compactQuery(sent);
      expect(short.length).toBeLessThan(sent.length * 0.9);
      expect(print(parse(short))).toBe(print(parse(sent)));
    }
    // A text with a string in it is left alone (its spaces would matter).
    expect(compactQuery('{ a(b: "x  y") }')).toBe('{ a(b: "x  y") }');
  });
});
