/**
 * End-to-end harness: the real studio server as a child process (the compiled build/server.js
 * that `npm start` runs, with plain node), a temp data dir, and Debian's Chromium driven by
 * playwright-core.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const ARTIFACTS = join(ROOT, 'test', 'artifacts');
export const CHROMIUM = '/usr/bin/chromium';

/** Builds the web app and the server once if either is missing (npm test builds before running the suites). */
export function ensureBuilt(): void {
  if (existsSync(join(ROOT, 'dist', 'index.html')) && existsSync(join(ROOT, 'build', 'server.js')))
    return;
  const out = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (out.status !== 0) throw new Error('npm run build failed');
}

export interface RunningStudio {
  url: string;
  token: string;
  dataDir: string;
  /** Every line the server wrote to stdout and stderr. */
  output: string[];
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startStudio(
  options: { dataDir?: string; args?: string[]; env?: Record<string, string>; token?: string } = {},
): Promise<RunningStudio> {
  ensureBuilt();
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'studio-e2e-'));
  const token = options.token ?? `e2e-${Math.random().toString(36).slice(2)}`;
  const child = spawn(
    process.execPath,
    ['build/server.js', '--port', '0', '--data-dir', dataDir, ...(options.args ?? [])],
    {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: 'production', STUDIO_TOKEN: token, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`studio did not start:\n${output.join('\n')}`)),
      60_000,
    );
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        output.push(line);
        const match = /^Agent Studio listening on (http:\/\/\S+?)\/#token=(\S+)$/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`studio exited with ${code}:\n${output.join('\n')}`));
    });
  });
  return {
    url,
    token,
    dataDir,
    output,
    process: child,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((done) => child.once('exit', done));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((done) => setTimeout(done, 5_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}

/** A GraphQL call to the running studio (for setup and for checking what the server holds). */
export async function gql<T = Record<string, unknown>>(
  studio: Pick<RunningStudio, 'url' | 'token'>,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{ data?: T; errors?: { message: string; extensions?: { code?: string } }[] }> {
  const res = await fetch(`${studio.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${studio.token}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as {
    data?: T;
    errors?: { message: string; extensions?: { code?: string } }[];
  };
}
