import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/** One request a fake peer received, exactly as it came (secrets included, so tests can check where they travel). */
export interface RecordedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  pathname: string;
  query: Record<string, string[]>;
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body when it was JSON. */
  json: unknown;
}

export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function record(request: IncomingMessage, body: string): RecordedRequest {
  const url = new URL(request.url ?? '/', 'http://fake.local');
  const query: Record<string, string[]> = {};
  for (const [key, value] of url.searchParams) (query[key] ??= []).push(value);
  let json: unknown;
  try {
    json = body ? JSON.parse(body) : undefined;
  } catch {
    json = undefined;
  }
  return {
    method: request.method ?? 'GET',
    url: request.url ?? '/',
    pathname: url.pathname,
    query,
    headers: request.headers,
    body,
    json,
  };
}

/** Resolves when `check` returns true, polling every 10 ms; rejects after `timeoutMs`. */
export async function waitUntil(
  check: () => boolean,
  timeoutMs = 5000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
