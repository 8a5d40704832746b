/**
 * One port: GraphQL over HTTP (GET and POST) and graphql-ws at /graphql, GET /healthz, and the
 * built web app. The API needs `Authorization: Bearer TOKEN` (HTTP header, or the graphql-ws
 * connection_init payload); static files carry no secrets and are served to anyone.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { createSchema, createYoga } from 'graphql-yoga';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { jitExecute, maskUnexpected, sharedSubscribe } from './schema/execution.ts';
import type { Engine } from './engine/Engine.ts';
import type { Logger } from './logger.ts';
import { Credentials, isAuthorized } from './auth.ts';
import { makeResolvers } from './schema/resolvers.ts';
import type { StudioContext } from './schema/resolvers.ts';
import { CONTRACT_VERSION } from '../protocol/contract.ts';

const SCHEMA_FILE = new URL('../schema.graphql', import.meta.url);

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

export interface StudioHttpOptions {
  engine: Engine;
  token: string;
  /** The owner token plus reviewer tokens (--tokens-file); default: the owner token alone. */
  credentials?: Credentials;
  logger: Logger;
  /** The built web app (dist/); when missing, `/` explains how to build it. */
  staticDir: string | null;
  version: string;
}

export function createStudioHttp(options: StudioHttpOptions): {
  server: Server;
  close(): Promise<void>;
} {
  const { engine, logger } = options;
  const token = options.credentials ?? new Credentials({ ownerToken: options.token });
  const schema = createSchema<StudioContext>({
    typeDefs: readFileSync(SCHEMA_FILE, 'utf8'),
    resolvers: makeResolvers(),
  });
  const yoga = createYoga({
    schema,
    graphqlEndpoint: '/graphql',
    graphiql: false,
    landingPage: false,
    // The reviewer behind the bearer token (HTTP header, or graphql-ws connection_init).
    context: (initial: {
      request?: Request;
      connectionParams?: Record<string, unknown>;
    }): StudioContext => ({
      engine,
      reviewer: token.reviewerOf(
        initial.connectionParams?.Authorization ??
          initial.connectionParams?.authorization ??
          initial.request?.headers.get('authorization'),
      ),
    }),
    // Compiled execution (graphql-jit) for queries and mutations over HTTP.
    plugins: [
      {
        onExecute: ({ setExecuteFn }: { setExecuteFn: (fn: never) => void }) =>
          setExecuteFn(jitExecute as never),
      },
    ],
    logging: {
      debug: () => {},
      info: () => {},
      warn: (...args: unknown[]) => logger.warn(args.map(String).join(' ')),
      error: (...args: unknown[]) => logger.error(args.map(String).join(' ')),
    },
  });

  const send = (
    res: ServerResponse,
    status: number,
    body: string,
    type = 'application/json; charset=utf-8',
  ) => {
    res.writeHead(status, {
      'Content-Type': type,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
    });
    res.end(body);
  };

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://studio.local');
    if (url.pathname === '/graphql') {
      if (!isAuthorized(req.headers.authorization, token)) {
        send(
          res,
          401,
          JSON.stringify({
            errors: [
              {
                message: 'Missing or wrong bearer token.',
                extensions: {
                  code: 'AGENT_UNAUTHENTICATED',
                  retryable: false,
                  remediation:
                    'Send Authorization: Bearer <token>, the token printed by npm start.',
                },
              },
            ],
          }),
        );
        return;
      }
      void yoga(req, res);
      return;
    }
    if (url.pathname.startsWith('/api/blobs/')) {
      serveBlob(req, res, url.pathname.slice('/api/blobs/'.length));
      return;
    }
    if (url.pathname === '/healthz') {
      const detailed = isAuthorized(req.headers.authorization, token);
      send(
        res,
        200,
        JSON.stringify({
          ok: true,
          contract: CONTRACT_VERSION,
          version: options.version,
          ...(detailed ? { sources: engine.sourceList() } : {}),
        }),
      );
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, JSON.stringify({ error: 'method not allowed' }));
      return;
    }
    serveStatic(options.staticDir, url.pathname, res, send);
  };

  const logUnexpected = (result: ExecutionResult) => {
    for (const error of result.errors ?? [])
      if (error.extensions?.code === 'INTERNAL_SERVER_ERROR')
        logger.error('unexpected GraphQL error over WebSocket', { path: error.path });
  };

  /**
   * GET /api/blobs/sha256:<hex>: one stored file version (checkpoint content), for file diffs.
   * Content-addressed, so it never changes: the browser may cache it for good.
   */
  const serveBlob = (req: IncomingMessage, res: ServerResponse, hash: string) => {
    if (!isAuthorized(req.headers.authorization, token)) {
      send(res, 401, JSON.stringify({ error: 'Missing or wrong bearer token.' }));
      return;
    }
    if (!/^sha256:[0-9a-f]{64}$/.test(hash) || !engine.contentStore.has(hash)) {
      send(res, 404, JSON.stringify({ error: `No stored content ${hash.slice(0, 80)}.` }));
      return;
    }
    const bytes = engine.contentStore.get(hash);
    res.writeHead(200, {
      'Content-Type': 'application/octet-stream',
      'Content-Length': String(bytes.length),
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; sandbox",
      'Cache-Control': 'private, max-age=31536000, immutable',
    });
    res.end(bytes);
  };

  const server = createServer(handler);
  const wss = new WebSocketServer({ server, path: '/graphql' });
  const wsServer = useServer<Record<string, unknown>>(
    {
      execute: async (args: ExecutionArgs) => {
        const result = maskUnexpected(await jitExecute(args));
        logUnexpected(result);
        return result as never;
      },
      subscribe: (args: ExecutionArgs) => sharedSubscribe(args, logUnexpected) as never,
      onConnect: (ctx) =>
        isAuthorized(
          ctx.connectionParams?.Authorization ?? ctx.connectionParams?.authorization,
          token,
        ),
      onSubscribe: async (ctx, _id, params) => {
        const enveloped = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params,
        });
        const document = enveloped.parse(params.query);
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length) return errors;
        return {
          schema: enveloped.schema,
          operationName: params.operationName,
          document,
          variableValues: params.variables,
          contextValue: await enveloped.contextFactory(),
        } as never;
      },
    },
    wss,
  );

  return {
    server,
    close: async () => {
      await wsServer.dispose();
      await new Promise<void>((done) => wss.close(() => done()));
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
    },
  };
}

function serveStatic(
  staticDir: string | null,
  pathname: string,
  res: ServerResponse,
  send: (res: ServerResponse, status: number, body: string, type?: string) => void,
): void {
  if (!staticDir || !existsSync(join(staticDir, 'index.html'))) {
    send(
      res,
      503,
      'The web app is not built. Run `npm run build` (npm start does it for you).',
      'text/plain; charset=utf-8',
    );
    return;
  }
  const root = resolve(staticDir);
  const target = resolve(root, '.' + normalize(decodeURIComponent(pathname)));
  const inside = target === root || target.startsWith(root + sep);
  let file = inside && existsSync(target) && statSync(target).isFile() ? target : null;
  // Client-side routes (/sessions/..., /inbox) get the app shell.
  if (!file && !extname(pathname)) file = join(root, 'index.html');
  if (!file) {
    send(res, 404, 'not found', 'text/plain; charset=utf-8');
    return;
  }
  const type = MIME[extname(file)] ?? 'application/octet-stream';
  res.writeHead(200, {
    'Content-Type': type,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': file.includes(`${sep}assets${sep}`)
      ? 'public, max-age=31536000, immutable'
      : 'no-cache',
  });
  res.end(readFileSync(file));
}
