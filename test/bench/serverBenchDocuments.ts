/**
 * The GraphQL documents the server benchmark sends, built from the web app's own documents
 * (src/graphql/eventDocuments.ts and the fragments they spread), so the bench always measures
 * the selection the app really sends: each is formatted as urql's Graphcache formats it before
 * it goes on the wire (`__typename` in every selection set, client-only directives dropped).
 */
import { formatDocument } from '@urql/core';
import { Kind, print, visit, type ASTNode, type DocumentNode } from 'graphql';
import { EventBatchesSubscription, EventHistoryQuery } from '../../src/graphql/eventDocuments.ts';

/** The document as the app's urql client sends it. */
function onTheWire(document: DocumentNode): DocumentNode {
  return formatDocument(document as Parameters<typeof formatDocument>[0]) as DocumentNode;
}

/** Drops the fragment definitions no operation reaches (graphql-js validation rejects them). */
function withoutUnusedFragments(document: DocumentNode): DocumentNode {
  const fragments = new Map<string, ASTNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION)
      fragments.set(definition.name.value, definition);
  const used = new Set<string>();
  const reach = (node: ASTNode) =>
    visit(node, {
      FragmentSpread(spread) {
        const name = spread.name.value;
        if (used.has(name)) return;
        used.add(name);
        const fragment = fragments.get(name);
        if (fragment) reach(fragment);
      },
    });
  for (const definition of document.definitions)
    if (definition.kind === Kind.OPERATION_DEFINITION) reach(definition);
  return {
    ...document,
    definitions: document.definitions.filter(
      (definition) =>
        definition.kind !== Kind.FRAGMENT_DEFINITION || used.has(definition.name.value),
    ),
  };
}

const history = onTheWire(EventHistoryQuery);

/** History after a cursor (the web app's StudioEventHistory). */
export const HISTORY_QUERY = print(history);

/** Replay after `afterSeq`, then live, in batches; no clientEpoch, so an observer (the web app's StudioEventBatches). */
export const BATCHES_SUBSCRIPTION = print(onTheWire(EventBatchesSubscription));

/** Drops the tool calls: each event's `studioToolCall` link and the page's `studioToolCalls`. */
const withoutCalls = {
  Field: (field: { name: { value: string } }) =>
    field.name.value === 'studioToolCall' || field.name.value === 'studioToolCalls'
      ? null
      : undefined,
};

/** The same history page without tool calls (no `studioToolCall` link, no `studioToolCalls`; for the cost breakdown). */
export const HISTORY_QUERY_WITHOUT_TOOL_CALL = print(
  withoutUnusedFragments(visit(history, withoutCalls)),
);

/** The same history page with only `__typename` and the AgentEventBase fields (for the cost breakdown). */
export const HISTORY_QUERY_BASE_ONLY = print(
  withoutUnusedFragments(
    visit(visit(history, withoutCalls), {
      // EventFields is EventBaseFields plus the call's key: keep only the spread, and of
      // EventBaseFields only __typename and the AgentEventBase fields.
      FragmentDefinition(fragment) {
        const name = fragment.name.value;
        if (name !== 'EventFields' && name !== 'EventBaseFields') return undefined;
        const selections = fragment.selectionSet.selections.filter((selection) =>
          name === 'EventFields'
            ? selection.kind === Kind.FRAGMENT_SPREAD && selection.name.value === 'EventBaseFields'
            : (selection.kind === Kind.FIELD && selection.name.value === '__typename') ||
              (selection.kind === Kind.INLINE_FRAGMENT &&
                selection.typeCondition?.name.value === 'AgentEventBase'),
        );
        return { ...fragment, selectionSet: { ...fragment.selectionSet, selections } };
      },
    }),
  ),
);
