/**
 * First steps before the app renders: take the token out of the address bar (or, in a new tab,
 * from an open studio tab of this origin), read the deploy config, and check the token against
 * the server. The token lives only in sessionStorage (this tab) and in Authorization headers;
 * it never goes back into a URL.
 */
import { askOpenTabsForToken } from './tokenHandoff.ts';

export const TOKEN_KEY = 'agent-studio:token';

/** Why the app cannot start, each with its own explanation page. */
export type BootProblem =
  | { kind: 'missingToken' }
  | { kind: 'rejectedToken' }
  | { kind: 'unreachable'; endpoint: string; detail: string }
  | { kind: 'badConfig'; detail: string };

export type BootResult =
  { ok: true; endpoint: string; token: string } | { ok: false; problem: BootProblem };

/**
 * Moves `#token=...` from the address bar into sessionStorage (replaceState, so it leaves no
 * history entry) and returns the token this tab should use, or null.
 */
export function takeTokenFromLocation(win: Window = window): string | null {
  const hash = win.location.hash.replace(/^#/, '');
  if (hash) {
    const params = new URLSearchParams(hash);
    const fromHash = params.get('token');
    if (fromHash !== null) {
      params.delete('token');
      const rest = params.toString();
      win.history.replaceState(
        win.history.state,
        '',
        `${win.location.pathname}${win.location.search}${rest ? `#${rest}` : ''}`,
      );
      if (fromHash.trim()) {
        win.sessionStorage.setItem(TOKEN_KEY, fromHash.trim());
      }
    }
  }
  return win.sessionStorage.getItem(TOKEN_KEY);
}

/** Keeps a token for this tab (pasted, or handed over by another tab). */
export function rememberToken(token: string, win: Window = window): void {
  win.sessionStorage.setItem(TOKEN_KEY, token);
}

/** Whether the address bar holds a `#token=` right now. */
export function locationHasToken(win: Window = window): boolean {
  return new URLSearchParams(win.location.hash.replace(/^#/, '')).has('token');
}

/** Forgets the token of this tab (after the server rejected it). */
export function forgetToken(win: Window = window): void {
  win.sessionStorage.removeItem(TOKEN_KEY);
}

/**
 * The GraphQL endpoint: `graphqlEndpoint` from /studio-config.json (deploy time), or this
 * page's own origin + /graphql. Never read from the URL, so a link cannot send the token to
 * another server.
 */
export async function loadEndpoint(
  fetchImpl: typeof fetch = fetch,
  origin = window.location.origin,
): Promise<string> {
  const fallback = new URL('/graphql', origin).toString();
  let response: Response;
  try {
    response = await fetchImpl('/studio-config.json', { cache: 'no-store' });
  } catch {
    return fallback;
  }
  if (!response.ok) return fallback;
  let config: unknown;
  try {
    config = await response.json();
  } catch {
    throw new Error('studio-config.json is not valid JSON.');
  }
  const endpoint = (config as { graphqlEndpoint?: unknown } | null)?.graphqlEndpoint;
  if (endpoint === null || endpoint === undefined) return fallback;
  if (typeof endpoint !== 'string')
    throw new Error('graphqlEndpoint in studio-config.json must be a string or null.');
  const url = new URL(endpoint, origin);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error('graphqlEndpoint in studio-config.json must be an http(s) URL.');
  }
  return url.toString();
}

/** Asks the server a trivial query with the token: 401 means the token is wrong. */
export async function checkToken(
  endpoint: string,
  token: string,
  fetchImpl: typeof fetch = fetch,
): Promise<'ok' | 'rejected' | { unreachable: string }> {
  try {
    const response = await fetchImpl(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json',
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ query: 'query StudioTokenCheck { __typename }' }),
    });
    if (response.status === 401 || response.status === 403) return 'rejected';
    if (!response.ok)
      return {
        unreachable: `The server answered ${response.status} ${response.statusText}`.trim(),
      };
    return 'ok';
  } catch (error) {
    return { unreachable: error instanceof Error ? error.message : String(error) };
  }
}

/** What boot knows before it asks the server anything: the endpoint and this tab's token. */
export type PreparedBoot =
  { ok: true; endpoint: string; token: string } | { ok: false; problem: BootProblem };

/**
 * The first half of boot: the token (address bar, sessionStorage or an open tab) and the
 * endpoint from the deploy config. Nothing is sent with the token before the config has named
 * the endpoint, so a token is never sent to a host the config did not name.
 */
export async function prepareBoot(
  win: Window = window,
  fetchImpl: typeof fetch = fetch,
  askOtherTabs: () => Promise<string | null> = askOpenTabsForToken,
): Promise<PreparedBoot> {
  let token = takeTokenFromLocation(win);
  // The config is read while an open tab is asked for its token: neither needs the other.
  const endpoint = loadEndpoint(fetchImpl, win.location.origin).then(
    (url) => ({ ok: true as const, url }),
    (error: unknown) => ({
      ok: false as const,
      detail: error instanceof Error ? error.message : String(error),
    }),
  );
  if (!token) {
    token = await askOtherTabs();
    if (token) rememberToken(token, win);
  }
  const config = await endpoint;
  if (!config.ok) return { ok: false, problem: { kind: 'badConfig', detail: config.detail } };
  if (!token) return { ok: false, problem: { kind: 'missingToken' } };
  return { ok: true, endpoint: config.url, token };
}

/** The second half of boot: the server's answer to the token, as a result. */
export async function checkBootToken(
  prepared: { endpoint: string; token: string },
  win: Window = window,
  fetchImpl: typeof fetch = fetch,
): Promise<BootResult> {
  const { endpoint, token } = prepared;
  const check = await checkToken(endpoint, token, fetchImpl);
  if (check === 'rejected') {
    forgetToken(win);
    return { ok: false, problem: { kind: 'rejectedToken' } };
  }
  if (check !== 'ok')
    return { ok: false, problem: { kind: 'unreachable', endpoint, detail: check.unreachable } };
  return { ok: true, endpoint, token };
}

/** Runs the whole boot sequence. */
export async function bootstrap(
  win: Window = window,
  fetchImpl: typeof fetch = fetch,
  askOtherTabs: () => Promise<string | null> = askOpenTabsForToken,
): Promise<BootResult> {
  const prepared = await prepareBoot(win, fetchImpl, askOtherTabs);
  if (!prepared.ok) return prepared;
  return checkBootToken(prepared, win, fetchImpl);
}
