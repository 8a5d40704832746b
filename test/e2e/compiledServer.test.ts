/**
 * Production runs compiled JavaScript: build/server.js starts with plain node (no tsx loader),
 * imports only runtime dependencies (so `npm ci --omit=dev` is enough for a built tree), and the
 * front door holds in that process too: malformed targets, a foreign Origin and an oversized body
 * leave it alive and answering /healthz.
 */
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MALFORMED_TARGETS, rawGet, rawRequest } from '../bench/frontdoorAttacks.ts';
import { ROOT, ensureBuilt, startStudio } from './harness.ts';
import type { RunningStudio } from './harness.ts';

let studio: RunningStudio;
let port: number;

beforeAll(async () => {
  ensureBuilt();
  studio = await startStudio({ args: ['--no-demo'] });
  port = Number(new URL(studio.url).port);
});

afterAll(async () => {
  await studio.stop();
});

const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** The packages the bundle imports, from the metafile esbuild writes next to it. */
function importedPackages(): Set<string> {
  const meta = JSON.parse(readFileSync(join(ROOT, 'build', 'meta.json'), 'utf8')) as {
    outputs: Record<string, { imports: { path: string; external?: boolean }[] }>;
  };
  const names = new Set<string>();
  for (const { path, external } of meta.outputs['build/server.js']!.imports) {
    if (!external || path.startsWith('node:') || builtinModules.includes(path)) continue;
    const parts = path.split('/');
    names.add(path.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!);
  }
  return names;
}

describe('the compiled server', () => {
  it('is the process the harness started: node build/server.js, without a TypeScript loader', () => {
    const args = studio.process.spawnargs;
    expect(args.slice(1, 2)).toEqual(['build/server.js']);
    expect(args.slice(0, 2).join(' ')).not.toMatch(/tsx|--import|--loader/);
  });

  it('imports only runtime dependencies, never tsx, esbuild or vite', () => {
    const imported = importedPackages();
    expect(imported.size).toBeGreaterThan(3);
    for (const name of imported) expect(Object.keys(PACKAGE.dependencies)).toContain(name);
    for (const dev of ['tsx', 'esbuild', 'vite']) {
      expect(PACKAGE.devDependencies[dev]).toBeDefined();
      expect(PACKAGE.dependencies[dev]).toBeUndefined();
    }
  });

  it('answers every malformed target and stays up', async () => {
    for (const target of MALFORMED_TARGETS) {
      const res = await rawGet(port, target);
      expect(res.status, target).toBeGreaterThanOrEqual(200);
      expect(res.status, target).toBeLessThan(500);
    }
    expect(studio.process.exitCode).toBeNull();
    expect((await fetch(`${studio.url}/healthz`)).status).toBe(200);
  });

  it('refuses a foreign Origin and a 10 MB body, and keeps answering /healthz', async () => {
    const foreign = await fetch(`${studio.url}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${studio.token}`,
        origin: 'http://evil.example',
      },
      body: JSON.stringify({ query: '{ studioSources { sourceId } }' }),
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    const body = 'x'.repeat(10 * 1024 * 1024);
    const big = await rawRequest(
      port,
      [
        'POST /graphql HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        `Authorization: Bearer ${studio.token}`,
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
      ].join('\r\n'),
      body,
    );
    expect(big.status).toBe(413);
    expect((await fetch(`${studio.url}/healthz`)).status).toBe(200);
  });
});
