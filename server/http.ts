/**
 * One port: GraphQL over HTTP (GET and POST) and graphql-ws at /graphql, GET /healthz, and the
 * built web app. The API needs `Authorization: Bearer TOKEN` (HTTP header, or the graphql-ws
 * connection_init payload); static files carry no secrets and are served to anyone.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { readFileSync } from 'node:fs';
import { WebSocketServer } from 'ws';
import type WebSocket from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { createSchema, createYoga } from 'graphql-yoga';
import { GraphQLError } from 'graphql';
import type { ExecutionArgs, ExecutionResult, ValidationContext } from 'graphql';
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { jitExecute, maskUnexpected, sharedSubscribe } from './schema/execution.ts';
import {
  sharedPayload,
  sharedPayloadReplacer,
  spliceSharedPayloads,
  withJsonBytes,
} from './schema/sharedPayloads.ts';
import type { Engine } from './engine/Engine.ts';
import type { Logger } from './logger.ts';
import { Credentials, isAuthorized } from './auth.ts';
import { makeResolvers } from './schema/resolvers.ts';
import { studioTypeDefs } from './schema/studioSchema.ts';
import type { StudioContext } from './schema/resolvers.ts';
import { CONTRACT_VERSION } from '../protocol/contract.ts';
import { REQUEST_LIMITS } from './limits.ts';
import { OriginPolicy } from './originPolicy.ts';
import { makeStaticHandler } from './staticFiles.ts';

const SCHEMA_FILE = new URL('../schema.graphql', import.meta.url);

/**
 * The contract's executable schema: schema.graphql (read from here, which is where the bundled
 * server in dist-server/ finds it too) with one-byte names (studioSchema.ts) and the resolvers.
 * The server builds it once; the benchmarks' in-process stages build the same one.
 */
export function createStudioSchema() {
  return createSchema<StudioContext>({
    typeDefs: studioTypeDefs(readFileSync(SCHEMA_FILE, 'utf8')),
    resolvers: makeResolvers(),
  });
}

/** An HTTP operation: graphql-jit, the response body sent as bytes (sharedPayloads.ts, withJsonBytes). */
async function httpExecute(args: ExecutionArgs): Promise<ExecutionResult> {
  return withJsonBytes(await jitExecute(args));
}

export interface StudioHttpOptions {
  engine: Engine;
  token: string;
  /** The owner token plus reviewer tokens (--tokens-file); default: the owner token alone. */
  credentials?: Credentials;
  logger: Logger;
  /** The built web app (dist/); when missing, `/` explains how to build it. */
  staticDir: string | null;
  version: string;
  /** The interface the server listens on: a Host name it answers to. */
  listenHost: string;
  /** More Host names to answer (`--allowed-host`, e.g. a reverse proxy's name). */
  allowedHosts?: string[];
  /** More origins whose pages may call the API (`--allowed-origin`); CORS answers only them. */
  allowedOrigins?: string[];
  /** Serve dist/**.map (`--serve-source-maps`); off by default. */
  serveSourceMaps?: boolean;
}

/** ws keeps the frame limit on its receiver; graphql-ws raises it once connection_init is accepted. */
function setFrameLimit(socket: WebSocket, bytes: number): void {
  const receiver = (socket as unknown as { _receiver?: { _maxPayload?: number } })._receiver;
  if (receiver && typeof receiver._maxPayload === 'number') receiver._maxPayload = bytes;
}

/** The path of a request target without decoding it (`new URL` and decodeURIComponent throw). */
function pathOf(target: string | undefined): string | null {
  if (!target || !target.startsWith('/')) return null;
  const end = target.search(/[?#]/);
  return end < 0 ? target : target.slice(0, end);
}

class BodyTooLarge extends Error {}

/** Reads a request body up to `limit` bytes; rejects with BodyTooLarge as soon as it is over. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return Promise.reject(new BodyTooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}

/** Bytes of a refused body read and dropped so the client sees the 413 instead of a reset. */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Reads the rest of a refused body and throws it away (nothing is kept), so the 413 arrives after
 * the client finished sending instead of as a reset under it. Resolves false (socket closed) past
 * DRAIN_LIMIT_BYTES.
 */
function drain(req: IncomingMessage): Promise<boolean> {
  return new Promise((resolve) => {
    let drained = 0;
    req.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained <= DRAIN_LIMIT_BYTES) return;
      req.socket.destroy();
      resolve(false);
    });
    req.once('end', () => resolve(true));
    req.once('close', () => resolve(req.complete));
    req.resume();
  });
}

export function createStudioHttp(options: StudioHttpOptions): {
  server: Server;
  close(): Promise<void>;
} {
  const { engine, logger } = options;
  const token = options.credentials ?? new Credentials({ ownerToken: options.token });
  const policy = new OriginPolicy({
    listenHost: options.listenHost,
    allowedHosts: options.allowedHosts ?? [],
    allowedOrigins: options.allowedOrigins ?? [],
  });
  const schema = createStudioSchema();
  const limitCode = (error: GraphQLError) =>
    error.extensions?.code
      ? error
      : new GraphQLError(error.message, {
          nodes: error.nodes,
          extensions: { ...error.extensions, code: 'BAD_USER_INPUT', retryable: false },
        });
  // Armor throws out of validation by default; reported instead, a rejection is a validation
  // error that the onValidate hook below gives the contract's code.
  const reportAsValidation = {
    propagateOnRejection: false,
    onReject: [(ctx: ValidationContext | null, error: GraphQLError) => ctx?.reportError(error)],
  };
  const yoga = createYoga({
    schema,
    graphqlEndpoint: '/graphql',
    graphiql: false,
    landingPage: false,
    // CORS is decided by OriginPolicy before Yoga sees a request (Yoga's default echoes any Origin).
    cors: false,
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
      // What a document may cost, checked while parsing and validating (REQUEST_LIMITS).
      maxTokensPlugin({ n: REQUEST_LIMITS.documentTokens }),
      maxDepthPlugin({ n: REQUEST_LIMITS.depth, flattenFragments: true, ...reportAsValidation }),
      maxAliasesPlugin({ n: REQUEST_LIMITS.aliases, ...reportAsValidation }),
      maxDirectivesPlugin({ n: REQUEST_LIMITS.directives, ...reportAsValidation }),
      costLimitPlugin({ maxCost: REQUEST_LIMITS.cost, ...reportAsValidation }),
      {
        // The limits' rejections are bad input, with the contract's extensions.
        onValidate:
          () =>
          ({
            result,
            setResult,
          }: {
            result: readonly GraphQLError[];
            setResult: (errors: GraphQLError[]) => void;
          }) => {
            if (result.length) setResult(result.map(limitCode));
          },
      },
      // Compiled execution (graphql-jit) for queries and mutations over HTTP, bodies as bytes.
      {
        onExecute: ({ setExecuteFn }: { setExecuteFn: (fn: never) => void }) =>
          setExecuteFn(httpExecute as never),
      },
    ],
    logging: {
      debug: () => {},
      info: () => {},
      warn: (...args: unknown[]) => logger.warn(args.map(String).join(' ')),
      error: (...args: unknown[]) => logger.error(args.map(String).join(' ')),
    },
  });
  const serveStatic = makeStaticHandler(options.staticDir, {
    serveSourceMaps: options.serveSourceMaps ?? false,
    logger,
  });

  const send = (
    res: ServerResponse,
    status: number,
    body: string,
    type = 'application/json; charset=utf-8',
    extra: Record<string, string> = {},
  ) => {
    res.writeHead(status, {
      'Content-Type': type,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
      ...extra,
    });
    res.end(body);
  };
  const refuse = (res: ServerResponse, status: number, message: string, code: string) =>
    // The body may not have been read: close the connection instead of draining it.
    send(
      res,
      status,
      JSON.stringify({ errors: [{ message, extensions: { code, retryable: false } }] }),
      'application/json; charset=utf-8',
      { Connection: 'close' },
    );

  /** Every request ends here when something throws: a 500 and a log line, never a crash. */
  const fail = (req: IncomingMessage, res: ServerResponse, error: unknown) => {
    logger.error('request failed', {
      method: req.method,
      url: String(req.url).slice(0, 200),
      error: error instanceof Error ? error.message : String(error),
    });
    if (res.headersSent) res.destroy();
    else refuse(res, 500, 'Unexpected error.', 'INTERNAL_SERVER_ERROR');
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const verdict = policy.check(req);
    if (!verdict.ok) {
      refuse(res, verdict.status, verdict.message, 'AGENT_PERMISSION_DENIED');
      return;
    }
    const path = pathOf(req.url);
    if (path === null) {
      refuse(res, 400, 'The request target must be a path.', 'BAD_USER_INPUT');
      return;
    }
    for (const [name, value] of Object.entries(policy.corsHeaders(req)))
      res.setHeader(name, value as string);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'Content-Length': '0' });
      res.end();
      return;
    }
    if (path === '/graphql') {
      if (!isAuthorized(req.headers.authorization, token)) {
        refuse(
          res,
          401,
          'Missing or wrong bearer token. Send Authorization: Bearer <token>, the token printed by npm start.',
          'AGENT_UNAUTHENTICATED',
        );
        return;
      }
      if (req.method === 'POST') {
        try {
          // Yoga takes a body that was already read (see @whatwg-node/server normalizeNodeRequest).
          (req as IncomingMessage & { body?: Buffer }).body = await readBody(
            req,
            REQUEST_LIMITS.bodyBytes,
          );
        } catch (error) {
          if (!(error instanceof BodyTooLarge)) throw error;
          if (!(await drain(req))) return;
          refuse(
            res,
            413,
            `The request body is over ${REQUEST_LIMITS.bodyBytes} bytes.`,
            'BAD_USER_INPUT',
          );
          return;
        }
      }
      await yoga(req, res);
      return;
    }
    if (path.startsWith('/api/blobs/')) {
      serveBlob(req, res, path.slice('/api/blobs/'.length));
      return;
    }
    if (path === '/healthz') {
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
    serveStatic(req, res);
  };

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    try {
      route(req, res).catch((error: unknown) => fail(req, res, error));
    } catch (error) {
      fail(req, res, error);
    }
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
  // A malformed request line or header never reaches `handler`: answer 400 and close.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  server.on('error', (error) => logger.error('HTTP server error', { error: error.message }));

  const wss = new WebSocketServer({ noServer: true, maxPayload: REQUEST_LIMITS.wsFrameBytes });
  wss.on('error', (error) => logger.error('WebSocket server error', { error: error.message }));
  const refuseUpgrade = (socket: Duplex, status: number, message: string) => {
    const body = JSON.stringify({ error: message });
    socket.end(
      `HTTP/1.1 ${status} ${status === 404 ? 'Not Found' : status === 400 ? 'Bad Request' : 'Forbidden'}\r\n` +
        'Connection: close\r\nContent-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  };
  // Host and Origin are checked before the upgrade: a foreign page gets a 403, not a socket.
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    try {
      const verdict = policy.check(req);
      if (!verdict.ok) return refuseUpgrade(socket, verdict.status, verdict.message);
      if (pathOf(req.url) !== '/graphql') return refuseUpgrade(socket, 404, 'not found');
      wss.handleUpgrade(req, socket, head, (ws) => {
        // Until connection_init is accepted a frame may carry little more than a token.
        setFrameLimit(ws, REQUEST_LIMITS.wsFrameBytesBeforeAck);
        const onError = (error: Error) =>
          logger.warn('WebSocket closed on a protocol error', { error: error.message });
        ws.on('error', onError);
        // Each result is encoded once, however many sockets it goes to (sharedPayloads.ts).
        spliceSharedPayloads(ws);
        wss.emit('connection', ws, req);
        // ws has already closed the socket (1009 for an oversized frame); graphql-ws's own
        // listener would only print the error to stderr, once per socket an attacker opens.
        for (const listener of ws.listeners('error'))
          if (listener !== onError) ws.off('error', listener as (error: Error) => void);
      });
    } catch (error) {
      logger.error('WebSocket upgrade failed', {
        error: error instanceof Error ? error.message : String(error),
      });
      socket.destroy();
    }
  });
  const wsServer = useServer<Record<string, unknown>>(
    {
      connectionInitWaitTimeout: REQUEST_LIMITS.wsInitTimeoutMs,
      execute: async (args: ExecutionArgs) => {
        const result = maskUnexpected(await jitExecute(args));
        logUnexpected(result);
        return result as never;
      },
      subscribe: (args: ExecutionArgs) => sharedSubscribe(args, logUnexpected) as never,
      onNext: (_ctx, _id, _payload, _args, result) => sharedPayload(result) as never,
      jsonMessageReplacer: sharedPayloadReplacer,
      onConnect: (ctx) => {
        const ok = isAuthorized(
          ctx.connectionParams?.Authorization ?? ctx.connectionParams?.authorization,
          token,
        );
        if (ok) setFrameLimit(ctx.extra.socket, REQUEST_LIMITS.wsFrameBytes);
        return ok;
      },
      onSubscribe: async (ctx, _id, params) => {
        const enveloped = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params,
        });
        let document;
        try {
          document = enveloped.parse(params.query);
        } catch (error) {
          // A syntax error or a document over the token cap: an error message, not a closed socket.
          return [
            limitCode(
              error instanceof GraphQLError ? error : new GraphQLError('The document is invalid.'),
            ),
          ];
        }
        const errors = enveloped.validate(enveloped.schema, document);
        if (errors.length) return errors.map(limitCode);
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
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
    },
  };
}
