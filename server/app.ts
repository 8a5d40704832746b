/**
 * Assembles the studio server: store, engine, sources and the HTTP/WebSocket front door.
 * Tests start it in-process on port 0 with a temp data dir; `server/main.ts` starts it from the CLI.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import { openStore } from './store/openStore.ts';
import { PgStore } from './store/postgres/PgStore.ts';
import { MultiInstance } from './multi/multiInstance.ts';
import { Engine } from './engine/Engine.ts';
import { createStudioHttp } from './http.ts';
import { Credentials, loadOrCreateToken } from './auth.ts';
import { makeLogger } from './logger.ts';
import type { Logger } from './logger.ts';
import type { Source } from './sources/Source.ts';
import type { SourceFactory } from './sources/fromFlags.ts';
import { DemoAgent } from './sources/demo/DemoAgent.ts';
import { seedDemo } from './sources/demo/seedDemo.ts';

export interface StudioServerOptions {
  /** 0 picks a free port (default 4000). */
  port?: number;
  host?: string;
  dataDir: string;
  /** PostgreSQL URL (`--database-url`); absent or null: the embedded SQLite file in the data dir. */
  databaseUrl?: string | null;
  /** The bearer token; generated and kept in the data dir when absent. */
  token?: string;
  /** A JSON file of reviewer name -> token (--tokens-file); re-read when it changes. */
  tokensFile?: string | null;
  /** Run the built-in offline agent and seed demo sessions into an empty data dir (default true). */
  demo?: boolean;
  /** Drop info lines from the log. */
  quiet?: boolean;
  /** Where log lines go (default stderr). */
  logWrite?: (line: string) => void;
  /** The built web app (default ./dist next to the package; null serves no app). */
  staticDir?: string | null;
  approvalTtlMs?: number;
  heartbeatStaleMs?: number;
  workspaceLeaseMs?: number;
  /** Milliseconds between the demo agent's steps (default 350). */
  demoStepMs?: number;
  /** More Host names to answer than the listening host, localhost and 127.0.0.1 (`--allowed-host`). */
  allowedHosts?: string[];
  /** More origins whose pages may call the API (`--allowed-origin`); same origin always may. */
  allowedOrigins?: string[];
  /** Serve the web app's source maps (`--serve-source-maps`; off by default). */
  serveSourceMaps?: boolean;
  /** Extra sources (the Managed Agents and Leviath bridges), or factories that need the engine. */
  sources?: (Source | SourceFactory)[];
  /** How long idempotency records are kept (`--idempotency-retention-hours`; default 24 h). */
  idempotencyRetentionMs?: number;
  /** Test-only: called at the engine's named durable steps (the crash tests kill the process there). */
  faultInjector?: (step: string) => void;
}

export interface StudioServer {
  url: string;
  port: number;
  host: string;
  token: string;
  credentials: Credentials;
  dataDir: string;
  engine: Engine;
  logger: Logger;
  close(): Promise<void>;
}

const PACKAGE = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export async function startStudioServer(options: StudioServerOptions): Promise<StudioServer> {
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const logger = makeLogger(options.logWrite, { quiet: options.quiet ?? false });
  const token = loadOrCreateToken(dataDir, options.token);
  logger.addSecret(token);
  const credentials = new Credentials({
    ownerToken: token,
    tokensFile: options.tokensFile ?? null,
    onToken: (t) => logger.addSecret(t),
    onProblem: (message) => logger.error(message),
  });
  const store = await openStore({ dataDir, databaseUrl: options.databaseUrl ?? null, logger });
  // A shared store (PostgreSQL): sources run on one instance at a time (server/multi).
  const multi =
    store instanceof PgStore
      ? new MultiInstance({
          store,
          onProblem: (message) => logger.error(message),
          onInfo: (message) => logger.info(message),
        })
      : null;
  const engine = new Engine({
    store,
    dataDir,
    logger,
    ...(options.approvalTtlMs !== undefined ? { approvalTtlMs: options.approvalTtlMs } : {}),
    ...(options.heartbeatStaleMs !== undefined
      ? { heartbeatStaleMs: options.heartbeatStaleMs }
      : {}),
    ...(options.workspaceLeaseMs !== undefined
      ? { workspaceLeaseMs: options.workspaceLeaseMs }
      : {}),
    ...(options.idempotencyRetentionMs !== undefined
      ? { idempotencyRetentionMs: options.idempotencyRetentionMs }
      : {}),
    ...(options.faultInjector ? { faultInjector: options.faultInjector } : {}),
  });
  if (multi) multi.deliverInOrder = (source, decision) => engine.deliverInOrder(source, decision);
  if (options.demo ?? true) {
    const makeDemo = () => new DemoAgent({ engine, dataDir, stepMs: options.demoStepMs ?? 350 });
    if (multi) {
      // Several instances: the demo runs (and seeds) only on the one holding its lease.
      const leased = await multi.wrap(makeDemo, (demo) => seedDemo(engine, demo as DemoAgent));
      await (leased.shadow as DemoAgent).openProjects();
      await engine.start();
      await engine.addSource(leased);
    } else {
      const demo = makeDemo();
      await demo.openProjects();
      await engine.start();
      await engine.addSource(demo);
      await seedDemo(engine, demo);
    }
  } else {
    await engine.start();
  }
  for (const source of options.sources ?? []) {
    const make = async () => (typeof source === 'function' ? await source(engine) : source);
    await engine.addSource(multi ? await multi.wrap(make) : await make());
  }
  // Jobs a stopped server left (an approved restore, a rule's delivery) resume once every
  // source and project folder is back.
  await engine.startJobs();

  const staticDir =
    options.staticDir === undefined
      ? new URL('../dist', import.meta.url).pathname
      : options.staticDir;
  const host = options.host ?? '127.0.0.1';
  const http = createStudioHttp({
    engine,
    token,
    credentials,
    logger,
    staticDir,
    version: PACKAGE.version,
    listenHost: host,
    allowedHosts: options.allowedHosts ?? [],
    allowedOrigins: options.allowedOrigins ?? [],
    serveSourceMaps: options.serveSourceMaps ?? false,
  });
  await new Promise<void>((ready, fail) => {
    http.server.once('error', fail);
    http.server.listen(options.port ?? 4000, host, () => {
      http.server.off('error', fail);
      ready();
    });
  });
  const port = (http.server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  let closed: Promise<void> | null = null;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    host,
    token,
    credentials,
    dataDir,
    engine,
    logger,
    close: () => {
      closed ??= (async () => {
        await multi?.stop();
        await engine.stop();
        await http.close();
        await store.close();
      })();
      return closed;
    },
  };
}
