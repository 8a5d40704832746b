import { graphql, type ResultOf } from '../../graphql/graphql.ts';

/** One page of whole-session search matches, newest first (server-side FTS index). */
export const SearchEventsQuery = graphql(`
  query SearchEvents($sessionId: String!, $query: String!, $first: Int, $after: String) {
    studioSearchEvents(sessionId: $sessionId, query: $query, first: $first, after: $after) {
      sessionId
      query
      endCursor
      hasNextPage
      hits {
        seq
        type
        snippet {
          text
          match
        }
      }
    }
  }
`);

export type SearchHit = ResultOf<typeof SearchEventsQuery>['studioSearchEvents']['hits'][number];
