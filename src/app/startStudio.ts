import { makeStudioClient, type StudioClient } from '../graphql/client.ts';
import { makeConnectionStore, type ConnectionStore } from '../graphql/connectionStore.ts';
import { makeStudioHttp, type StudioHttp } from '../graphql/studioHttp.ts';
import { queryClientOf } from '../graphql/StudioHttpProvider.tsx';
import {
  checkBootToken,
  forgetToken,
  prepareBoot,
  type BootProblem,
  type BootResult,
} from './bootstrap.ts';
import { earlyFetch, takeEarlyRequests } from './earlyFetch.ts';
import type { EarlyRequests } from './earlyOpen.ts';
import { openRouteEarly } from './openRouteEarly.ts';
import { parseRoute } from './routes.ts';
import { shareTokenWithNewTabs } from './tokenHandoff.ts';
import { waitForFirstContent } from './firstContent.ts';

/** The longest the first render waits for the route's first request to be sent. */
const EARLY_SEND_MAX_MS = 1_000;

/**
 * The longest the first render then waits for that request's answer (the newest page) to be in
 * Graphcache. Mostly it is there already (index.html asked for it before the app's code
 * loaded), and the shell and the timeline then render once with their rows and lay out once,
 * instead of rendering an empty timeline, laying the page out, and doing both again a moment
 * later (ARCHITECTURE.md, "Why this shape", round 8).
 */
const EARLY_ANSWER_MAX_MS = 100;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What the app renders with once the server accepted the token. */
export interface StudioParts {
  studio: StudioClient;
  connection: ConnectionStore;
  http: StudioHttp;
  token: string;
}

export type StartOutcome = { ok: true; parts: StudioParts } | { ok: false; problem: BootProblem };

/** One boot of the studio: its outcome, a later rejection of its token, and its end. */
export interface StudioStart {
  outcome: Promise<StartOutcome>;
  /**
   * Calls `listener` once when the server rejects the token after boot (401 on a request, 4401
   * on the socket); the token is forgotten and the client disposed by then.
   */
  onRejected(listener: () => void): void;
  dispose(): void;
}

/**
 * Boots the studio: token and deploy config, then, as soon as the config has named the endpoint,
 * the one urql Client, and the token check beside the first requests of the page the address
 * names (`openRouteEarly`: a session's newest events), so they do not wait for the check and
 * the app's first render. Nothing carries the token before the config named where it goes, and
 * everything the early requests bring is written to Graphcache, which the screens read.
 */
export function startStudio(
  options: {
    win?: Window;
    fetchImpl?: typeof fetch;
    /** What index.html's inline script already asked for (earlyOpen.ts), for the Client. */
    early?: EarlyRequests;
  } = {},
): StudioStart {
  const win = options.win ?? window;
  const fetchImpl = options.fetchImpl ?? fetch.bind(globalThis);
  let disposed = false;
  let rejected = false;
  let rejectedListener: (() => void) | null = null;
  let studio: StudioClient | null = null;
  let http: StudioHttp | null = null;
  let stopSharing: (() => void) | null = null;
  let closeEarly: (() => void) | null = null;
  let ended = false;

  const end = () => {
    if (ended) return;
    ended = true;
    closeEarly?.();
    closeEarly = null;
    stopSharing?.();
    stopSharing = null;
    void studio?.dispose();
    if (http) queryClientOf(http)?.clear();
  };

  const studioRejected = () => {
    if (rejected) return;
    rejected = true;
    forgetToken(win);
    end();
    rejectedListener?.();
  };

  const outcome = (async (): Promise<StartOutcome> => {
    const prepared = await prepareBoot(win, fetchImpl);
    if (!prepared.ok) return prepared;
    // Disposed while the config loaded: nobody reads this outcome any more.
    if (disposed) return { ok: false, problem: { kind: 'missingToken' } };
    const connection = makeConnectionStore();
    studio = makeStudioClient({
      endpoint: prepared.endpoint,
      token: prepared.token,
      onConnection: (status, detail) => connection.set({ status, detail }),
      onUnauthorized: () => studioRejected(),
      ...(options.early
        ? { fetch: earlyFetch(options.early, (input, init) => fetch(input, init)) }
        : {}),
    });
    http = makeStudioHttp({ endpoint: prepared.endpoint, token: prepared.token });
    const opened = openRouteEarly(studio.client, parseRoute(win.location.pathname));
    closeEarly = opened.close;
    // The app's first render (the whole shell) takes the main thread for a while: it starts
    // once the route's first data is asked for, so the newest page's request does not wait
    // behind it. The token check runs beside those requests; a session the server answered
    // with data proves the token as well as the check does, so whichever comes first counts.
    const sent = Promise.race([
      opened.sent,
      delay(EARLY_SEND_MAX_MS).then(() => 'unknown' as const),
    ]);
    const check = checkBootToken(prepared, win, fetchImpl);
    const proven = sent.then((how): Promise<BootResult> | BootResult =>
      how === 'accepted' ? prepared : check,
    );
    const checked: BootResult = await Promise.race([check, proven]);
    if (!checked.ok) {
      end();
      return checked;
    }
    await sent;
    await Promise.race([opened.answered, delay(EARLY_ANSWER_MAX_MS)]);
    // A check that ends in a refusal after all (the token was revoked meanwhile) ends the boot.
    void check.then((late) => {
      if (!late.ok && late.problem.kind === 'rejectedToken') studioRejected();
    });
    if (rejected) return { ok: false, problem: { kind: 'rejectedToken' } };
    // The server accepted this token: new tabs of this origin may ask for it.
    if (!disposed) stopSharing = shareTokenWithNewTabs(checked.token);
    return { ok: true, parts: { studio, connection, http, token: checked.token } };
  })();

  return {
    outcome,
    onRejected(listener) {
      rejectedListener = listener;
      if (rejected) listener();
    },
    dispose() {
      disposed = true;
      end();
    },
  };
}

declare global {
  interface Window {
    /** The deploy config's response, asked for by the built index.html's first script. */
    __studioConfig?: Promise<Response>;
  }
}

let early: StudioStart | null = null;

/**
 * Starts booting before React renders (main.tsx); the first StudioRoot takes it over. The
 * deploy config is the one index.html already asked for, when it did (vite.config.ts).
 */
export function startStudioEarly(): void {
  if (early) return;
  const route = parseRoute(window.location.pathname);
  if (route.name === 'session' || route.name === 'event') waitForFirstContent();
  let asked = window.__studioConfig;
  window.__studioConfig = undefined;
  const fetchImpl: typeof fetch = (input, init) => {
    if (asked && input === '/studio-config.json') {
      const response = asked;
      asked = undefined;
      return response;
    }
    return fetch(input, init);
  };
  early = startStudio({ fetchImpl, early: takeEarlyRequests(window) });
}

/** The boot `startStudioEarly` began, once (a second StudioRoot or a retry boots anew). */
export function takeEarlyStart(): StudioStart | null {
  const taken = early;
  early = null;
  return taken;
}
