import type { Client } from '@urql/core';
import { pageOfSeq } from '../graphql/eventDocuments.ts';
// Direct module imports, not the barrels: this runs in the first chunk, before the route's own.
import { SessionQuery } from '../features/sessions/documents.ts';
import {
  newestPageOf,
  prefetchEventPages,
  PREFETCH_HOLD_MS,
} from '../features/timeline/eventPageStore.ts';
import type { Route } from './routes.ts';

/** The early requests of one address. */
export interface EarlyOpen {
  /**
   * Settles once the route's first data is asked for (a session's newest page), or cannot be:
   * 'accepted' when the server answered the session with data (so it accepted the token),
   * else 'unknown'.
   */
  sent: Promise<'accepted' | 'unknown'>;
  /**
   * Settles once the newest page's answer is in Graphcache, or there will be none (no such
   * session, another address, closed).
   */
  answered: Promise<void>;
  /** Lets go of what the screen has not taken over. */
  close(): void;
}

/**
 * Starts the requests of the page the address names before its screen mounts (issue 13: the
 * newest rows of a session were requested only after the app, the session screen and the
 * timeline had rendered). For a session's timeline: the session (its lastEventSeq), then the
 * newest page and a linked event's page, through the app's urql Client with the documents and
 * variables the screens use themselves, so their own queries share these operations and read
 * the results from Graphcache.
 */
export function openRouteEarly(client: Client, route: Route): EarlyOpen {
  if (route.name !== 'session' && route.name !== 'event')
    return {
      sent: Promise.resolve('unknown'),
      answered: Promise.resolve(),
      close: () => undefined,
    };
  const { sessionId } = route;
  const focusSeq = route.name === 'event' ? route.seq : null;
  let releasePages: (() => void) | null = null;
  let markSent: (how: 'accepted' | 'unknown') => void = () => undefined;
  const sent = new Promise<'accepted' | 'unknown'>((resolve) => (markSent = resolve));
  let markAnswered: () => void = () => undefined;
  const answered = new Promise<void>((resolve) => (markAnswered = resolve));
  const session = client.query(SessionQuery, { sessionId }).subscribe((result) => {
    if (releasePages) return;
    const last = result.data?.crowdyStudioAgentSession?.lastEventSeq;
    if (typeof last !== 'string') {
      // No such session, or it could not be read: the screen shows why.
      if (!result.stale) {
        markSent(result.error ? 'unknown' : 'accepted');
        markAnswered();
      }
      return;
    }
    const pages = [newestPageOf(last)];
    if (focusSeq && BigInt(focusSeq) >= 1n && BigInt(focusSeq) <= BigInt(last))
      pages.push(pageOfSeq(focusSeq));
    releasePages = prefetchEventPages(client, sessionId, pages, markAnswered);
    markSent(result.operation.context.meta?.cacheOutcome === 'hit' ? 'unknown' : 'accepted');
  });
  // The session screen's own query holds the session from its first render on.
  const timer = setTimeout(() => session.unsubscribe(), PREFETCH_HOLD_MS);
  return {
    sent,
    answered,
    close: () => {
      clearTimeout(timer);
      session.unsubscribe();
      releasePages?.();
      markSent('unknown');
      markAnswered();
    },
  };
}
