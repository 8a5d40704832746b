/**
 * A real urql Client with the production Graphcache config and a scripted transport, for web
 * tests that must exercise keys, updaters and optimistic results (a mock client would skip them).
 */
import {
  Client,
  makeErrorResult,
  makeResult,
  type Exchange,
  type Operation,
  type OperationResult,
} from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import {
  filter,
  fromPromise,
  makeSubject,
  map,
  mergeMap,
  pipe,
  share,
  takeUntil,
  type Subject,
} from 'wonka';
import { print } from 'graphql';
import { makeCacheConfig } from '../graphql/cache.ts';
import { asSent } from './fixtures.ts';

export interface ScriptedAnswer {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

export type Resolver = (operation: Operation) => ScriptedAnswer | Promise<ScriptedAnswer>;

export interface TestClient {
  client: Client;
  /** Every operation that reached the transport (not served from cache), in order. */
  operations: Operation[];
  /**
   * Pushes a result to every open subscription whose root field is `field`. A batch of fixture
   * events (each embedding its call) goes out as the server sends it (fixtures.ts, `asSent`) to
   * a document that selects `studioToolCalls`.
   */
  push(field: string, data: Record<string, unknown>): void;
  /** Open subscriptions by operation key. */
  subscriptions(): Operation[];
}

function rootField(operation: Operation): string | null {
  for (const definition of operation.query.definitions) {
    if (definition.kind === 'OperationDefinition') {
      const selection = definition.selectionSet.selections[0];
      if (selection?.kind === 'Field') return selection.name.value;
    }
  }
  return null;
}

const selecting = new WeakMap<object, boolean>();
function selectsToolCalls(operation: Operation): boolean {
  let found = selecting.get(operation.query);
  if (found === undefined) {
    found = print(operation.query).includes('studioToolCalls');
    selecting.set(operation.query, found);
  }
  return found;
}

export function makeTestClient(
  resolve: Resolver = () => ({ data: null }),
  /** The cache config (benchmarks compare variants of the production one). */
  cacheConfig = makeCacheConfig(),
): TestClient {
  const operations: Operation[] = [];
  const open = new Map<number, { operation: Operation; subject: Subject<OperationResult> }>();

  const transport: Exchange = () => (ops$) => {
    const shared = pipe(ops$, share);
    const teardown = (key: number) =>
      pipe(
        shared,
        filter((op) => op.kind === 'teardown' && op.key === key),
      );
    return pipe(
      shared,
      filter((op) => op.kind !== 'teardown'),
      mergeMap((operation) => {
        operations.push(operation);
        if (operation.kind === 'subscription') {
          const subject = makeSubject<OperationResult>();
          open.set(operation.key, { operation, subject });
          return pipe(
            subject.source,
            takeUntil(
              pipe(
                teardown(operation.key),
                map((op) => {
                  open.delete(op.key);
                  return op;
                }),
              ),
            ),
          );
        }
        return pipe(
          fromPromise(Promise.resolve().then(() => resolve(operation))),
          map((answer) =>
            answer.data === undefined && !answer.errors
              ? makeErrorResult(operation, new Error('No scripted answer'))
              : makeResult(operation, { data: answer.data ?? null, errors: answer.errors }),
          ),
          takeUntil(teardown(operation.key)),
        );
      }),
    );
  };

  const client = new Client({
    url: 'http://studio.test/graphql',
    exchanges: [cacheExchange(cacheConfig), transport],
  });

  return {
    client,
    operations,
    push(field, given) {
      const batch = given[field] as { events?: unknown } | null | undefined;
      const sent =
        field === 'studioAgentEventBatches' && batch && typeof batch === 'object'
          ? { ...given, [field]: asSent(batch) }
          : given;
      for (const { operation, subject } of open.values()) {
        if (rootField(operation) !== field) continue;
        // As a server answers: only a document that selects studioToolCalls gets the wire shape.
        const data = selectsToolCalls(operation) ? sent : given;
        subject.next(makeResult(operation, { data }));
      }
    },
    subscriptions: () => [...open.values()].map((entry) => entry.operation),
  };
}
