import { vi } from 'vitest';
import { PAGE_SIZE } from '../graphql/eventDocuments.ts';
import { eventPage, logEvents } from './fixtures.ts';
import { makeSession } from './studioFixtures.ts';

/** The newest seq of the fake server's one session (its newest page is page 2). */
export const BOOT_LAST_SEQ = 2 * PAGE_SIZE + 3;

/** One request the fake server answered. */
export interface BootCall {
  what: 'config' | 'StudioTokenCheck' | 'StudioSession' | 'StudioEventPage' | 'other';
  authorization: string | null;
  /** The request's body, or its URL when it had none (urql sends a short query by GET). */
  body: string;
}

export interface BootServerOptions {
  /** Holds the deploy config's answer until it settles. */
  configDelay?: Promise<void>;
  /** The config's `graphqlEndpoint` (default null: same origin). */
  endpoint?: string | null;
  /** Every GraphQL request is refused with 401. */
  reject?: boolean;
}

/**
 * A studio on `fetch` for the boot tests: the deploy config, the token check, the session and
 * its newest page, recording what each request was and the token it carried.
 */
export function fakeBootServer(options: BootServerOptions = {}) {
  const calls: BootCall[] = [];
  const json = (body: unknown, status = 200) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const fetchImpl = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    const body = typeof init?.body === 'string' ? init.body : '';
    const what = url.endsWith('/studio-config.json')
      ? 'config'
      : ((/StudioTokenCheck|StudioSession|StudioEventPage/.exec(
          decodeURIComponent(`${url} ${body}`),
        )?.[0] as BootCall['what'] | undefined) ?? 'other');
    calls.push({
      what,
      authorization: new Headers(init?.headers).get('authorization'),
      body: body || url,
    });
    if (what === 'config') {
      await options.configDelay;
      return json({ graphqlEndpoint: options.endpoint ?? null });
    }
    if (options.reject) return json({ errors: [{ message: 'unauthenticated' }] }, 401);
    if (what === 'StudioTokenCheck') return json({ data: { __typename: 'Query' } });
    if (what === 'StudioSession')
      return json({
        data: { crowdyStudioAgentSession: makeSession({ lastEventSeq: String(BOOT_LAST_SEQ) }) },
      });
    if (what === 'StudioEventPage')
      return json({
        data: { studioEventPage: eventPage(2, logEvents(2 * PAGE_SIZE + 1, BOOT_LAST_SEQ)) },
      });
    return json({ data: null });
  });
  return { calls, fetchImpl };
}
