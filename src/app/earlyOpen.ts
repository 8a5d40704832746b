/**
 * The first data requests of a session's address, sent by the built index.html's inline script
 * before any of the app's code has loaded (issue 13: the studio's first request left about
 * 300 ms after navigation, once the app chunk had run; the raw client's at about 60 ms).
 *
 * `earlyOpen` is that script: vite.config.ts writes its source into the page
 * (`earlyOpenScript`), so it must stay self-contained (no imports, no outer names). It asks for
 * the deploy config at once (no token), and on a session's address, once the config has named
 * the endpoint (the same rules as `loadEndpoint`: nothing carries the token before that, and
 * only to an http(s) endpoint), sends the session screen's `StudioSession` query and then the
 * newest page's `StudioEventPage` query with this tab's token in the Authorization header,
 * with the query texts the app's urql Client sends for them (without ignored whitespace). The responses are not read
 * into anything: the app's Client takes each one as the answer to its own identical request
 * (`earlyFetch`), so Graphcache writes them and the screens read them from it, and no second
 * request goes out.
 */
import { formatDocument, stringifyDocument } from '@urql/core';
import type { DocumentNode } from 'graphql';
import { SessionQuery } from '../features/sessions/documents.ts';
import { EventPageQuery, PAGE_SIZE } from '../graphql/eventDocuments.ts';
import { TOKEN_KEY } from './bootstrap.ts';
import { compactQuery } from './earlyFetch.ts';

/** One request the inline script sent, to be taken over by the app's identical one. */
export interface EarlyRequest {
  endpoint: string;
  body: string;
  response: Promise<Response>;
}

/** What the inline script leaves for the app (`window.__studioEarly`). */
export interface EarlyRequests {
  sent: EarlyRequest[];
  /** Settles once the script has sent everything it will send. */
  done: Promise<void>;
}

declare global {
  interface Window {
    __studioEarly?: EarlyRequests;
  }
}

export interface EarlyOpenConfig {
  /** Chunks of the session screen to `modulepreload` on a session's address. */
  hrefs: string[];
  tokenKey: string;
  pageSize: number;
  sessionQuery: string;
  pageQuery: string;
}

/** The inline script (see above); its source is written into index.html. */
export function earlyOpen(cfg: EarlyOpenConfig): void {
  const config = fetch('/studio-config.json', { cache: 'no-store' });
  window.__studioConfig = config;
  config.catch(() => undefined);
  const parts = location.pathname.split('/').filter(Boolean);
  if (parts[0] !== 'sessions' || !parts[1]) return;
  for (const href of cfg.hrefs) {
    const link = document.createElement('link');
    link.rel = 'modulepreload';
    link.crossOrigin = '';
    link.href = href;
    document.head.appendChild(link);
  }
  if (parts.length !== 2 && !(parts.length === 4 && parts[2] === 'events')) return;
  const sent: EarlyRequest[] = [];
  const run = async () => {
    const sessionId = decodeURIComponent(parts[1] ?? '');
    const fromHash = new URLSearchParams(location.hash.replace(/^#/, '')).get('token');
    const token = fromHash?.trim() || sessionStorage.getItem(cfg.tokenKey);
    if (!token) return;
    const response = await config;
    let endpoint = new URL('/graphql', location.origin).toString();
    if (response.ok) {
      // A clone: the app reads the config's own body.
      const value = ((await response.clone().json()) as { graphqlEndpoint?: unknown } | null)
        ?.graphqlEndpoint;
      if (value !== null && value !== undefined) {
        if (typeof value !== 'string') return;
        const url = new URL(value, location.origin);
        if (url.protocol !== 'http:' && url.protocol !== 'https:') return;
        endpoint = url.toString();
      }
    }
    const post = (body: string) => {
      const answer = fetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/graphql+json, application/json',
          Authorization: `Bearer ${token}`,
        },
        body,
      });
      answer.catch(() => undefined);
      sent.push({ endpoint, body, response: answer });
      return answer;
    };
    const session = await post(
      JSON.stringify({
        query: cfg.sessionQuery,
        operationName: 'StudioSession',
        variables: { sessionId },
      }),
    );
    if (!session.ok) return;
    const result = (await session.clone().json()) as {
      data?: { crowdyStudioAgentSession?: { lastEventSeq?: unknown } | null };
    } | null;
    const last = result?.data?.crowdyStudioAgentSession?.lastEventSeq;
    if (typeof last !== 'string' || !/^(0|[1-9][0-9]*)$/.test(last)) return;
    // The page the next event lands in (newestPageOf): seq last + 1 is in page last / size.
    const page = (BigInt(last) / BigInt(cfg.pageSize)).toString();
    post(
      JSON.stringify({
        query: cfg.pageQuery,
        operationName: 'StudioEventPage',
        variables: { sessionId, page, size: cfg.pageSize },
      }),
    );
  };
  window.__studioEarly = { sent, done: run().catch(() => undefined) };
}

/** A document as the app's Client sends it (Graphcache adds `__typename`; urql prints it). */
export function sentQueryText(document: DocumentNode): string {
  return stringifyDocument(formatDocument(document));
}

/** The inline script's source for index.html, with the session screen's chunks to preload. */
export function earlyOpenScript(hrefs: string[]): string {
  const cfg: EarlyOpenConfig = {
    hrefs,
    tokenKey: TOKEN_KEY,
    pageSize: PAGE_SIZE,
    sessionQuery: compactQuery(sentQueryText(SessionQuery)),
    pageQuery: compactQuery(sentQueryText(EventPageQuery)),
  };
  // `<` escaped so no string in it can close the script element.
  return `(${earlyOpen.toString()})(${JSON.stringify(cfg).replace(/</g, '\\u003c')});`;
}
