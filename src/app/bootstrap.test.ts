import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  bootstrap,
  checkToken,
  loadEndpoint,
  takeTokenFromLocation,
  TOKEN_KEY,
} from './bootstrap.ts';
import { askOpenTabsForToken, shareTokenWithNewTabs, tokenFromPaste } from './tokenHandoff.ts';

function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

afterEach(() => {
  sessionStorage.clear();
  window.history.replaceState(null, '', '/');
});

describe('takeTokenFromLocation', () => {
  it('moves #token= into sessionStorage and out of the address bar', () => {
    window.history.replaceState(null, '', '/sessions/s-1?x=1#token=secret-1');
    expect(takeTokenFromLocation()).toBe('secret-1');
    expect(sessionStorage.getItem(TOKEN_KEY)).toBe('secret-1');
    expect(window.location.href).not.toContain('secret-1');
    expect(window.location.pathname + window.location.search + window.location.hash).toBe(
      '/sessions/s-1?x=1',
    );
  });

  it('keeps the stored token when the address has none', () => {
    sessionStorage.setItem(TOKEN_KEY, 'kept');
    window.history.replaceState(null, '', '/inbox');
    expect(takeTokenFromLocation()).toBe('kept');
  });
});

describe('loadEndpoint', () => {
  it('uses the page origin when the config says null or is missing', async () => {
    expect(
      await loadEndpoint(async () => jsonResponse({ graphqlEndpoint: null }), 'http://studio.test'),
    ).toBe('http://studio.test/graphql');
    expect(
      await loadEndpoint(async () => new Response('', { status: 404 }), 'http://studio.test'),
    ).toBe('http://studio.test/graphql');
  });

  it('uses the deploy-time endpoint and refuses non-http ones', async () => {
    expect(
      await loadEndpoint(
        async () => jsonResponse({ graphqlEndpoint: 'https://api.example.com/graphql' }),
        'http://studio.test',
      ),
    ).toBe('https://api.example.com/graphql');
    await expect(
      loadEndpoint(
        async () => jsonResponse({ graphqlEndpoint: 'javascript:alert(1)' }),
        'http://studio.test',
      ),
    ).rejects.toThrow(/http\(s\) URL/);
  });
});

describe('checkToken and bootstrap', () => {
  it('sends the token as a bearer header and reads 401 as rejected', async () => {
    const fetchImpl = vi.fn(async (_url: RequestInfo | URL, init?: RequestInit) => {
      expect(new Headers(init?.headers).get('Authorization')).toBe('Bearer nope');
      return jsonResponse({ errors: [{ message: 'unauthenticated' }] }, 401);
    });
    expect(await checkToken('http://studio.test/graphql', 'nope', fetchImpl as typeof fetch)).toBe(
      'rejected',
    );
  });

  it('reports a missing token, a rejected token (and forgets it), and an unreachable server', async () => {
    window.history.replaceState(null, '', '/');
    expect(
      await bootstrap(
        window,
        async () => jsonResponse({ graphqlEndpoint: null }),
        async () => null,
      ),
    ).toEqual({
      ok: false,
      problem: { kind: 'missingToken' },
    });

    window.history.replaceState(null, '', '/#token=wrong');
    const rejecting = async (url: RequestInfo | URL) =>
      String(url).endsWith('studio-config.json')
        ? jsonResponse({ graphqlEndpoint: null })
        : jsonResponse({}, 401);
    expect(await bootstrap(window, rejecting as typeof fetch)).toEqual({
      ok: false,
      problem: { kind: 'rejectedToken' },
    });
    expect(sessionStorage.getItem(TOKEN_KEY)).toBeNull();

    window.history.replaceState(null, '', '/#token=right');
    const down = async (url: RequestInfo | URL) => {
      if (String(url).endsWith('studio-config.json'))
        return jsonResponse({ graphqlEndpoint: null });
      throw new TypeError('Failed to fetch');
    };
    const result = await bootstrap(window, down as typeof fetch);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problem.kind).toBe('unreachable');

    const fine = async (url: RequestInfo | URL) =>
      String(url).endsWith('studio-config.json')
        ? jsonResponse({ graphqlEndpoint: null })
        : jsonResponse({ data: { __typename: 'Query' } });
    expect(await bootstrap(window, fine as typeof fetch)).toEqual({
      ok: true,
      endpoint: `${window.location.origin}/graphql`,
      token: 'right',
    });
  });
});

describe('bootstrap in a new tab', () => {
  it('takes the token an open tab hands over and keeps it for this tab', async () => {
    window.history.replaceState(null, '', '/sessions/s-1/events/4');
    const checked: string[] = [];
    const fine = async (url: RequestInfo | URL, init?: RequestInit) => {
      if (String(url).endsWith('studio-config.json'))
        return jsonResponse({ graphqlEndpoint: null });
      checked.push(String(new Headers(init?.headers).get('authorization')));
      return jsonResponse({ data: { __typename: 'Query' } });
    };
    const stopSharing = shareTokenWithNewTabs('from-the-open-tab');
    try {
      const result = await bootstrap(window, fine as typeof fetch);
      expect(result).toEqual({
        ok: true,
        endpoint: `${window.location.origin}/graphql`,
        token: 'from-the-open-tab',
      });
    } finally {
      stopSharing();
    }
    expect(checked).toEqual(['Bearer from-the-open-tab']);
    expect(sessionStorage.getItem(TOKEN_KEY)).toBe('from-the-open-tab');
    expect(window.location.href).not.toContain('from-the-open-tab');
  });

  it('asks nobody once it has a token, and hears nothing once the open tab stopped sharing', async () => {
    const stopSharing = shareTokenWithNewTabs('old');
    stopSharing();
    expect(await askOpenTabsForToken(100)).toBeNull();
  });
});

describe('tokenFromPaste', () => {
  it('reads the printed address or a bare token, and refuses anything else', () => {
    expect(tokenFromPaste('http://127.0.0.1:4000/#token=abc123')).toBe('abc123');
    expect(tokenFromPaste('  abc123 \n')).toBe('abc123');
    expect(tokenFromPaste('http://127.0.0.1:4000/')).toBeNull();
    expect(tokenFromPaste('two words')).toBeNull();
    expect(tokenFromPaste('   ')).toBeNull();
  });
});
