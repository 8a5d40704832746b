/**
 * Shared steps of the bridge journeys (bridges.*.test.ts): a recorder of everything the browser
 * receives and sends, to prove a bridge's secret never reaches it, and small waiting helpers.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';

/** Where a secret was seen, for the failure message. */
export interface SecretSighting {
  secret: string;
  where: string;
}

/**
 * Records, for one page: every request URL and request body, the body of every same-origin
 * response (the HTML, the JS and CSS bundle, GraphQL over HTTP) and every WebSocket frame in
 * both directions (graphql-ws). `sightings()` waits for the bodies still being read.
 */
export class BrowserTraffic {
  readonly urls: string[] = [];
  readonly bodies: { url: string; text: string }[] = [];
  readonly frames: string[] = [];
  private readonly pending: Promise<void>[] = [];

  constructor(page: Page, origin: string) {
    page.on('request', (request) => {
      this.urls.push(request.url());
      const body = request.postData();
      if (body) this.bodies.push({ url: `request ${request.url()}`, text: body });
    });
    page.on('response', (response) => {
      if (!response.url().startsWith(origin)) return;
      this.pending.push(
        response.text().then(
          (text) => void this.bodies.push({ url: response.url(), text }),
          // Redirects and aborted loads have no body to read.
          () => undefined,
        ),
      );
    });
    page.on('websocket', (socket) => {
      this.urls.push(socket.url());
      const keep = ({ payload }: { payload: string | Buffer }) =>
        void this.frames.push(typeof payload === 'string' ? payload : payload.toString('utf8'));
      socket.on('framereceived', keep);
      socket.on('framesent', keep);
    });
  }

  /** Every place one of the secrets appears in what the browser saw. */
  async sightings(secrets: readonly string[]): Promise<SecretSighting[]> {
    await Promise.all(this.pending);
    const found: SecretSighting[] = [];
    for (const secret of secrets) {
      for (const url of this.urls) if (url.includes(secret)) found.push({ secret, where: url });
      for (const { url, text } of this.bodies)
        if (text.includes(secret)) found.push({ secret, where: `body of ${url}` });
      for (const frame of this.frames)
        if (frame.includes(secret))
          found.push({ secret, where: `ws frame ${frame.slice(0, 200)}` });
    }
    return found;
  }

  /** True once a JS bundle body was read, so a clean result is not clean by having seen nothing. */
  sawBundle(): boolean {
    return this.bodies.some((b) => /\.js(\?|$)/.test(b.url) && b.text.length > 10_000);
  }
}

/** Lines (server output) that contain one of the secrets. */
export function linesWithSecrets(lines: readonly string[], secrets: readonly string[]): string[] {
  return lines.filter((line) => secrets.some((s) => line.includes(s)));
}

/** Files under `dir` (the studio's data dir: SQLite store, WAL, project copies) that contain a secret. */
export function filesWithSecrets(dir: string, secrets: readonly string[]): string[] {
  const hits: string[] = [];
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const bytes = readFileSync(path);
        if (secrets.some((s) => bytes.includes(Buffer.from(s, 'utf8')))) hits.push(path);
      }
    }
  };
  walk(dir);
  return hits;
}

/** Polls `check` until it returns a value other than undefined (bounded; default 15 s). */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function expectVisible(locator: Locator, timeout = 15_000): Promise<void> {
  await locator.waitFor({ state: 'visible', timeout });
}

/** The tool-call card of one call (the app marks it with data-tool-call-id). */
export function toolCallCard(page: Page, toolCallId: string): Locator {
  return page.locator(`article[data-tool-call-id="${toolCallId}"]`);
}

/**
 * Clicks a decision button. Under the calm control model the first action attaches by itself
 * (a one-time notice follows, with no dialog to confirm), so a decision is one click.
 */
export async function decide(scope: Locator, button: string): Promise<void> {
  await scope.getByRole('button', { name: button, exact: true }).click();
}
