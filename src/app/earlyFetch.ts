import type { EarlyRequest, EarlyRequests } from './earlyOpen.ts';

/** A GraphQL request as sent over HTTP, whether urql chose GET (short URLs) or POST. */
interface SentRequest {
  endpoint: string;
  operationName: unknown;
  query: unknown;
  variables: string;
}

/**
 * A query text without the whitespace GraphQL ignores (index.html carries the early queries
 * this short). Text with a string or a comment in it is left as it is.
 */
export function compactQuery(text: string): string {
  if (/["#]/.test(text)) return text;
  return text
    .replace(/\s+/g, ' ')
    .replace(/ ?([{}():,!$=@[\]|]) ?/g, '$1')
    .trim();
}

/** JSON with object keys in order, so two requests' variables compare as text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

function parse(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function readRequest(input: RequestInfo | URL, init?: RequestInit): SentRequest | null {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const [endpoint = url, search] = url.split('?', 2);
  if (typeof init?.body === 'string') {
    const body = parse(init.body) as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object') return null;
    return {
      endpoint,
      operationName: body.operationName,
      query: body.query,
      variables: canonical(body.variables ?? null),
    };
  }
  if (init?.body != null || search === undefined) return null;
  const params = new URLSearchParams(search);
  return {
    endpoint,
    operationName: params.get('operationName'),
    query: params.get('query'),
    variables: canonical(parse(params.get('variables')) ?? null),
  };
}

function matches(early: EarlyRequest, request: SentRequest): boolean {
  const sent = readRequest(early.endpoint, { body: early.body });
  return (
    sent !== null &&
    sent.endpoint === request.endpoint &&
    sent.operationName === request.operationName &&
    typeof sent.query === 'string' &&
    typeof request.query === 'string' &&
    sent.query === compactQuery(request.query) &&
    sent.variables === request.variables
  );
}

/**
 * A fetch for the app's urql Client that answers a request the inline script already sent (the
 * same endpoint, operation, query text and variables, by GET or POST) with that request's
 * response, once; every other request, and one whose early answer failed to arrive, goes out
 * as usual. A session or page query made before the script has sent its page waits for it (at
 * most the session's round trip) rather than asking twice.
 */
export function earlyFetch(
  early: EarlyRequests | undefined,
  fetchImpl: typeof fetch,
): typeof fetch {
  if (!early) return fetchImpl;
  let settled = false;
  void early.done.then(() => (settled = true));
  const take = (request: SentRequest): Promise<Response> | null => {
    const index = early.sent.findIndex((sent) => matches(sent, request));
    if (index < 0) return null;
    const [taken] = early.sent.splice(index, 1);
    return taken?.response ?? null;
  };
  return async (input, init) => {
    if (early.sent.length > 0 || !settled) {
      const request = readRequest(input, init);
      if (request) {
        let taken = take(request);
        if (
          !taken &&
          !settled &&
          (request.operationName === 'StudioSession' || request.operationName === 'StudioEventPage')
        ) {
          await early.done;
          taken = take(request);
        }
        if (taken) return taken.catch(() => fetchImpl(input, init));
      }
    }
    return fetchImpl(input, init);
  };
}

/** The inline script's requests, once: the first boot takes them (a retry boots without). */
export function takeEarlyRequests(win: Window = window): EarlyRequests | undefined {
  const early = win.__studioEarly;
  win.__studioEarly = undefined;
  return early;
}
