import { EventFields, EventRowFields, ToolCallFields } from './eventFragments.ts';
import { graphql } from './graphql.ts';

/**
 * Events per fixed-size page the web client asks for (`studioEventPage` size; the server takes
 * 1-1000 and defaults to the same 256, EVENT_PAGE_SIZE). The cache, the stream, the timeline
 * and every web test and fixture derive from it. 64 and 128 were measured against 256 on the
 * tool-heavy live mix and did not do better (docs/ARCHITECTURE.md, "Why this shape").
 */
export const PAGE_SIZE: number = 256;

/**
 * The scalars of a page entity (keyed by sessionId, page and size). The page query reads them and
 * the cache writes them when a live event opens a page after a cached one, so both agree.
 */
export const EventPageFields = graphql(`
  fragment EventPageFields on StudioEventPage @_unmask {
    __typename
    sessionId
    page
    size
    fromSeq
    throughSeq
    complete
  }
`);

/** One fixed-size page of a session's events: seq in [page * size + 1, (page + 1) * size]. */
export const EventPageQuery = graphql(
  `
    query StudioEventPage($sessionId: String!, $page: BigInt!, $size: Int!) {
      studioEventPage(sessionId: $sessionId, page: $page, size: $size) {
        ...EventPageFields
        events {
          ...EventRowFields
        }
      }
    }
  `,
  [EventPageFields, EventRowFields],
);

/**
 * Replay after `afterSeq`, then live, in batches. Observers pass no clientEpoch. The events link
 * their tool calls by key; `studioToolCalls` carries each named call's current state once.
 */
export const EventBatchesSubscription = graphql(
  `
    subscription StudioEventBatches($sessionId: String!, $afterSeq: BigInt!, $maxBatch: Int) {
      studioAgentEventBatches(sessionId: $sessionId, afterSeq: $afterSeq, maxBatch: $maxBatch) {
        sessionId
        fromSeq
        throughSeq
        events {
          ...EventFields
        }
        studioToolCalls {
          ...ToolCallFields
        }
      }
    }
  `,
  [EventFields, ToolCallFields],
);

/** History after a cursor, used to fill a gap in the live stream (calls once, as in a batch). */
export const EventHistoryQuery = graphql(
  `
    query StudioEventHistory($sessionId: String!, $afterSeq: BigInt, $first: Int) {
      crowdyStudioAgentHistory(sessionId: $sessionId, afterSeq: $afterSeq, first: $first) {
        hasMore
        events {
          ...EventFields
        }
        studioToolCalls {
          ...ToolCallFields
        }
      }
    }
  `,
  [EventFields, ToolCallFields],
);

/** The page a seq belongs to (seq 1..PAGE_SIZE is page 0), as a decimal string. */
export function pageOfSeq(seq: string | bigint): string {
  const value = typeof seq === 'bigint' ? seq : BigInt(seq);
  return ((value - 1n) / BigInt(PAGE_SIZE)).toString();
}

/** The first and last seq of a page, as decimal strings. */
export function pageBounds(page: string | bigint): { fromSeq: string; throughSeq: string } {
  const p = typeof page === 'bigint' ? page : BigInt(page);
  const size = BigInt(PAGE_SIZE);
  return { fromSeq: (p * size + 1n).toString(), throughSeq: ((p + 1n) * size).toString() };
}
