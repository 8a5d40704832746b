/**
 * What one request may cost: every limit of the front door in one place (docs/EVENTS.md,
 * "Request limits", lists them). The contract's own bounds (ids ≤ 128 chars, pages, message
 * sizes) live in protocol/contract.ts; the input checks that apply them are
 * server/schema/inputLimits.ts.
 */
export const REQUEST_LIMITS = {
  /** An HTTP request body (a GraphQL POST); beyond it the answer is 413. */
  bodyBytes: 1024 * 1024,
  /** A GraphQL document's tokens (graphql-armor max-tokens); the web app's longest has about 500. */
  documentTokens: 5_000,
  /** Field nesting (graphql-armor max-depth); the web app's deepest document has 5 levels. */
  depth: 12,
  /**
   * Aliases per operation (graphql-armor max-aliases, counted through fragments). The contract
   * makes clients alias fields whose types differ between union members: the web app's event
   * documents have 67, a document selecting every field of every member (test/server/
   * eventShapes.test.ts) 329. What many aliases of one list field could cost is bounded by
   * rowsPerRequest instead.
   */
  aliases: 400,
  /** Directives per operation (graphql-armor max-directives). */
  directives: 20,
  /**
   * Static cost (graphql-armor cost-limit: 2 per object, 1 per scalar, × 1.5 per depth level):
   * it grows with breadth times depth. The largest legitimate document here, every field of every
   * event member (test/server/eventShapes.test.ts), costs 331,544.
   */
  cost: 500_000,
  /** A WebSocket frame before the server's connection_ack: connection_init carries only a token. */
  wsFrameBytesBeforeAck: 8 * 1024,
  /** A WebSocket frame after connection_ack (a subscribe message), as an HTTP body. */
  wsFrameBytes: 1024 * 1024,
  /** How long a WebSocket may wait before its connection_init (graphql-ws closes it with 4408). */
  wsInitTimeoutMs: 3_000,
  /**
   * Rows one request may read across all its list fields: events (studioEventPage size, History
   * first), sessions (first), checkpoints and their files, pending approvals.
   */
  rowsPerRequest: 5_000,
  /** Largest integer a GraphQL Int argument may carry where it is a position (BigInt seqs ≤ int64). */
  int64Max: 9_223_372_036_854_775_807n,
} as const;
