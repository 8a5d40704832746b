import { initGraphQLTada } from 'gql.tada';
import type { introspection } from './graphql-env.d.ts';

/**
 * The one typed `graphql()` for every document in the app. BigInt values (seq, epochs,
 * revisions) stay decimal strings; compare them only through protocol/seq.ts.
 */
export const graphql = initGraphQLTada<{
  introspection: introspection;
  scalars: { BigInt: string; DateTime: string };
}>();

export type { FragmentOf, ResultOf, VariablesOf } from 'gql.tada';
export { readFragment } from 'gql.tada';
