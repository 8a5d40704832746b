import { afterEach, describe, expect, it, vi } from 'vitest';
import { SESSION_ID } from '../test/fixtures.ts';
import { TOKEN_KEY } from './bootstrap.ts';
import { fakeBootServer } from '../test/fakeBootServer.ts';
import { startStudio, type StudioStart } from './startStudio.ts';

/** A server on fetch: the deploy config, the token check, the session and its pages. */
const fakeServer = fakeBootServer;

let started: StudioStart | null = null;
afterEach(() => {
  started?.dispose();
  started = null;
  vi.unstubAllGlobals();
  sessionStorage.clear();
  window.history.replaceState(null, '', '/');
});

describe('startStudio on a session address', () => {
  it('sends nothing with the token before the config named the endpoint, then asks for the session and its newest page beside the token check', async () => {
    window.history.replaceState(null, '', `/sessions/${SESSION_ID}`);
    sessionStorage.setItem(TOKEN_KEY, 'tok-1');
    let configAnswered = () => undefined as void;
    const server = fakeServer({
      configDelay: new Promise((resolve) => (configAnswered = resolve)),
    });
    vi.stubGlobal('fetch', server.fetchImpl);
    started = startStudio({ fetchImpl: server.fetchImpl as typeof fetch });
    await vi.waitFor(() => expect(server.calls.map((c) => c.what)).toEqual(['config']));
    // Nothing else leaves while the config is out, and the config carries no token.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.calls.map((c) => [c.what, c.authorization])).toEqual([['config', null]]);
    configAnswered();

    const outcome = await started.outcome;
    expect(outcome.ok).toBe(true);
    const after = server.calls.slice(1);
    expect(after.map((c) => c.what).sort()).toEqual(
      ['StudioEventPage', 'StudioSession', 'StudioTokenCheck'].sort(),
    );
    for (const call of after) expect(call.authorization).toBe('Bearer tok-1');
    // The page is asked for after the session said where the newest events are.
    const names = after.map((c) => c.what);
    expect(names.indexOf('StudioEventPage')).toBeGreaterThan(names.indexOf('StudioSession'));
  });

  it('ends in the rejected-token page when the server refuses the token', async () => {
    window.history.replaceState(null, '', `/sessions/${SESSION_ID}`);
    sessionStorage.setItem(TOKEN_KEY, 'wrong');
    const server = fakeServer({ reject: true });
    vi.stubGlobal('fetch', server.fetchImpl);
    started = startStudio({ fetchImpl: server.fetchImpl as typeof fetch });
    expect(await started.outcome).toEqual({ ok: false, problem: { kind: 'rejectedToken' } });
    expect(sessionStorage.getItem(TOKEN_KEY)).toBeNull();
    expect(server.calls.map((c) => c.what)).not.toContain('StudioEventPage');
  });
});
