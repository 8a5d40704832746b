import {
  Client,
  makeErrorResult,
  makeResult,
  type Exchange,
  type Operation,
  type OperationResult,
} from '@urql/core';
import { cacheExchange, type CacheExchangeOpts } from '@urql/exchange-graphcache';
import {
  buildSchema,
  execute,
  GraphQLError,
  GraphQLObjectType,
  subscribe,
  validate,
  type ExecutionResult,
} from 'graphql';
import { filter, make, merge, mergeMap, pipe, share, takeUntil, type Source } from 'wonka';
import sdl from '../../schema.graphql?raw';
import { makeCacheConfig } from '../graphql/cache.ts';
import { namedToolCalls } from './fixtures.ts';

/** A root field handler: receives the field's arguments, returns (or throws) like a resolver. */
export type Handler = (args: Record<string, unknown>) => unknown;

export interface FakeStudio {
  /** A real urql Client with the production Graphcache config, talking to the fake server. */
  client: Client;
  /** Root field handlers by field name; replace entries to change answers mid-test. */
  handlers: Record<string, Handler>;
  /** Every root field executed, in order, with its arguments. */
  calls: { field: string; args: Record<string, unknown> }[];
  /** Pushes one payload to every open subscription of `field`. */
  publish(field: string, payload: unknown): void;
}

const schema = buildSchema(sdl);
// A page's or batch's `studioToolCalls`, when a handler gives only events (each embedding its
// call, as fixtures do): the calls they name, once each, as the server resolves it.
for (const typename of ['AgentEventConnection', 'StudioAgentEventBatch']) {
  const field = (schema.getType(typename) as GraphQLObjectType).getFields().studioToolCalls;
  if (field)
    field.resolve = (parent: { events?: unknown[]; studioToolCalls?: unknown[] }) =>
      parent.studioToolCalls ?? namedToolCalls(parent.events ?? []);
}

/** A GraphQL error as the studio server sends it (`extensions.code`). */
export function studioError(code: string, message: string = code): GraphQLError {
  return new GraphQLError(message, { extensions: { code } });
}

function channelIterator(listeners: Set<(value: unknown) => void>): AsyncIterableIterator<unknown> {
  const queue: unknown[] = [];
  let waiting: ((result: IteratorResult<unknown>) => void) | null = null;
  let done = false;
  const listener = (value: unknown) => {
    if (waiting) {
      const resolve = waiting;
      waiting = null;
      resolve({ value, done: false });
    } else {
      queue.push(value);
    }
  };
  listeners.add(listener);
  return {
    next() {
      if (queue.length > 0) return Promise.resolve({ value: queue.shift(), done: false });
      if (done) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve) => {
        waiting = resolve;
      });
    },
    return() {
      done = true;
      listeners.delete(listener);
      waiting?.({ value: undefined, done: true });
      waiting = null;
      return Promise.resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

// JSON round trip: results reach the cache exactly as they would over the wire.
const wire = (result: ExecutionResult) => JSON.parse(JSON.stringify(result)) as ExecutionResult;

/**
 * A fake studio server for component tests: operations are validated against schema.graphql
 * and executed by graphql-js with the given root handlers, so documents, nullability and error
 * codes behave as on the wire, and results go through the real Graphcache config.
 */
export function makeFakeStudio(
  handlers: Record<string, Handler> = {},
  cacheOptions?: CacheExchangeOpts,
): FakeStudio {
  const calls: FakeStudio['calls'] = [];
  const channels = new Map<string, Set<(value: unknown) => void>>();
  const channel = (field: string) => {
    let set = channels.get(field);
    if (!set) {
      set = new Set();
      channels.set(field, set);
    }
    return set;
  };
  const subscriptionFields = Object.keys(schema.getSubscriptionType()?.getFields() ?? {});
  const rootValue = new Proxy(
    {},
    {
      get(_target, field: string) {
        if (subscriptionFields.includes(field) && !handlers[field]) {
          return () => channelIterator(channel(field));
        }
        return (args: Record<string, unknown>) => {
          calls.push({ field, args });
          const handler = handlers[field];
          if (!handler)
            throw studioError(
              'FAKE_NOT_IMPLEMENTED',
              `The fake server has no handler for ${field}`,
            );
          return handler(args);
        };
      },
    },
  );

  const run = (operation: Operation): Source<OperationResult> =>
    make((observer) => {
      let cancelled = false;
      let iterator: AsyncIterator<ExecutionResult> | null = null;
      const document = operation.query;
      const variableValues = operation.variables as Record<string, unknown>;
      void (async () => {
        const errors = validate(schema, document);
        if (errors.length > 0) {
          observer.next(makeResult(operation, wire({ errors: [...errors] })));
          observer.complete();
          return;
        }
        if (operation.kind === 'subscription') {
          const result = await subscribe({ schema, document, rootValue, variableValues });
          if (!(Symbol.asyncIterator in result)) {
            observer.next(makeResult(operation, wire(result)));
            observer.complete();
            return;
          }
          iterator = result;
          for await (const next of result) {
            if (cancelled) break;
            observer.next(makeResult(operation, wire(next)));
          }
          return;
        }
        // Answer asynchronously, as a network would.
        await Promise.resolve();
        const result = await execute({ schema, document, rootValue, variableValues });
        if (cancelled) return;
        observer.next(makeResult(operation, wire(result)));
        observer.complete();
      })().catch((error: unknown) => {
        if (!cancelled)
          observer.next(
            makeErrorResult(operation, error instanceof Error ? error : new Error(String(error))),
          );
      });
      return () => {
        cancelled = true;
        void iterator?.return?.();
      };
    });

  const fakeExchange: Exchange =
    ({ forward }) =>
    (operations$) => {
      const shared = pipe(operations$, share);
      const teardowns = pipe(
        shared,
        filter((operation) => operation.kind === 'teardown'),
      );
      const results = pipe(
        shared,
        filter((operation) => operation.kind !== 'teardown'),
        mergeMap((operation) =>
          pipe(
            run(operation),
            takeUntil(
              pipe(
                teardowns,
                filter((teardown) => teardown.key === operation.key),
              ),
            ),
          ),
        ),
      );
      return merge([results, forward(teardowns)]);
    };

  const config = cacheOptions ?? makeCacheConfig();
  const client = new Client({
    url: 'http://fake.invalid/graphql',
    exchanges: [cacheExchange(config), fakeExchange],
  });
  return {
    client,
    handlers,
    calls,
    publish(field, payload) {
      for (const listener of [...channel(field)]) listener({ [field]: payload });
    },
  };
}
