/**
 * How operations execute. Queries and mutations run through graphql-jit (each document is
 * compiled once), which is what makes replaying 100,000 events fast. Subscriptions share work:
 * observers at the same cursor receive the same batch object from subscriptions.ts, and the
 * execution of one (batch, document, variables) is memoised, so 50 observers of one session cost
 * one execution per batch instead of 50.
 */
import { GraphQLError, createSourceEventStream, getOperationAST } from 'graphql';
import { getVariableValues } from 'graphql/execution/values.js';
import type { DocumentNode, ExecutionArgs, ExecutionResult } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { CompiledQuery } from 'graphql-jit';

type Compiled = CompiledQuery | ExecutionResult;
const compiledByDocument = new WeakMap<DocumentNode, Map<string, Compiled>>();

function compiled(args: ExecutionArgs): Compiled {
  let byOperation = compiledByDocument.get(args.document);
  if (!byOperation) {
    byOperation = new Map();
    compiledByDocument.set(args.document, byOperation);
  }
  const key = args.operationName ?? '';
  let found = byOperation.get(key);
  if (!found) {
    found = compileQuery(args.schema, args.document, args.operationName ?? undefined, {
      // Custom scalars (BigInt, DateTime) serialise through their own functions.
      customJSONSerializer: false,
    });
    byOperation.set(key, found);
  }
  return found;
}

/** Executes a query or mutation with the compiled form of its document. */
export function jitExecute(args: ExecutionArgs): ExecutionResult | Promise<ExecutionResult> {
  const query = compiled(args);
  if (!isCompiledQuery(query)) return query;
  // graphql-jit replaces a scalar's own message ("BigInt input must be a decimal string") with a
  // generic one; graphql-js keeps it, so variables are checked here first.
  const operation = getOperationAST(args.document, args.operationName);
  if (operation?.variableDefinitions?.length) {
    const coerced = getVariableValues(
      args.schema,
      operation.variableDefinitions,
      args.variableValues ?? {},
    );
    if (coerced.errors)
      return {
        errors: coerced.errors.map(
          (e) =>
            new GraphQLError(e.message, {
              nodes: e.nodes,
              extensions: { code: 'BAD_USER_INPUT', retryable: false },
            }),
        ),
      };
  }
  return query.query(args.rootValue, args.contextValue, args.variableValues ?? {}) as
    ExecutionResult | Promise<ExecutionResult>;
}

const documentIds = new WeakMap<DocumentNode, number>();
let nextDocumentId = 1;

/** What makes two subscribers' executions of one payload identical: document, operation, variables but the cursor. */
function shareKey(args: ExecutionArgs): string {
  let id = documentIds.get(args.document);
  if (id === undefined) {
    id = nextDocumentId++;
    documentIds.set(args.document, id);
  }
  const variables = { ...(args.variableValues ?? {}) };
  delete variables.afterSeq;
  return `${id}\u0000${args.operationName ?? ''}\u0000${JSON.stringify(variables)}`;
}

const executions = new WeakMap<object, Map<string, ExecutionResult | Promise<ExecutionResult>>>();

function executeShared(
  args: ExecutionArgs,
  payload: unknown,
): ExecutionResult | Promise<ExecutionResult> {
  if (typeof payload !== 'object' || payload === null)
    return jitExecute({ ...args, rootValue: payload });
  let byKey = executions.get(payload);
  if (!byKey) {
    byKey = new Map();
    executions.set(payload, byKey);
  }
  const key = shareKey(args);
  let result = byKey.get(key);
  if (!result) {
    result = jitExecute({ ...args, rootValue: payload });
    byKey.set(key, result);
  }
  return result;
}

/**
 * graphql-js `subscribe`, with each payload executed through `executeShared`. Returning the
 * mapped iterator passes `return()` straight to the source, so a client going away ends the
 * store loop at once.
 */
export async function sharedSubscribe(
  args: ExecutionArgs,
  onResult: (result: ExecutionResult) => void = () => {},
): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
  const source = await createSourceEventStream(args);
  if (!isAsyncIterable(source)) return source as ExecutionResult;
  const iterator = source[Symbol.asyncIterator]();
  const mapped: AsyncIterableIterator<ExecutionResult> = {
    next: async () => {
      const step = await iterator.next();
      if (step.done) return { done: true, value: undefined };
      const raw = await executeShared(args, step.value);
      const value = maskUnexpected(raw);
      if (value !== raw) onResult(value);
      return { done: false, value };
    },
    return: async () => {
      await iterator.return?.();
      return { done: true, value: undefined };
    },
    throw: async (error: unknown) => {
      await iterator.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return mapped;
    },
  };
  return mapped;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/** Errors without a code are bugs: their text stays in the server, the client gets a generic one. */
export function maskUnexpected(result: ExecutionResult): ExecutionResult {
  if (!result.errors?.some((e) => !e.extensions?.code)) return result;
  return {
    ...result,
    errors: result.errors.map((e) =>
      e.extensions?.code
        ? e
        : new GraphQLError('Unexpected error.', {
            path: e.path,
            extensions: { code: 'INTERNAL_SERVER_ERROR' },
          }),
    ),
  };
}
