/**
 * studioSearchEvents: whole-session full-text search through the Store's index (FTS5 in
 * SqliteStore). Typed arguments, validated here; results are JSON-safe views.
 */
import { ErrorCode } from '../../protocol/contract.ts';
import type { Engine } from '../engine/Engine.ts';
import { StudioError } from '../engine/StudioError.ts';

/** Hits per page when `first` is not given, and the most a page may hold. */
export const SEARCH_PAGE_DEFAULT = 20;
export const SEARCH_PAGE_MAX = 100;
/** A query longer than this is refused (it could only be a paste gone wrong). */
export const SEARCH_QUERY_MAX_CHARS = 500;

export interface SearchEventsArgs {
  sessionId: string;
  query: string;
  first?: number | null;
  after?: string | null;
}

export interface SearchHitView {
  seq: string;
  type: string;
  snippet: { text: string; match: boolean }[];
  cursor: string;
}

export interface SearchConnectionView {
  sessionId: string;
  query: string;
  hits: SearchHitView[];
  endCursor: string | null;
  hasNextPage: boolean;
}

function parseFirst(first: number | null | undefined): number {
  if (first === null || first === undefined) return SEARCH_PAGE_DEFAULT;
  if (!Number.isInteger(first) || first < 1)
    throw new StudioError(ErrorCode.BAD_REQUEST, 'first must be at least 1.', { field: 'first' });
  return Math.min(first, SEARCH_PAGE_MAX);
}

function parseAfter(after: string | null | undefined): bigint | null {
  if (after === null || after === undefined) return null;
  if (!/^[1-9][0-9]{0,18}$/.test(after))
    throw new StudioError(ErrorCode.BAD_REQUEST, 'after is not a cursor this server gave out.', {
      field: 'after',
    });
  return BigInt(after);
}

export async function searchEvents(
  engine: Engine,
  args: SearchEventsArgs,
): Promise<SearchConnectionView> {
  const session = await engine.requireSession(args.sessionId);
  if (args.query.length > SEARCH_QUERY_MAX_CHARS)
    throw new StudioError(
      ErrorCode.BAD_REQUEST,
      `query is longer than ${SEARCH_QUERY_MAX_CHARS} characters.`,
      { field: 'query' },
    );
  const first = parseFirst(args.first);
  const after = parseAfter(args.after);
  // One more than asked tells whether another page follows.
  const rows = await engine.reads.searchEvents(session.sessionId, args.query, after, first + 1);
  const hits = rows.slice(0, first).map((hit) => ({
    seq: hit.seq.toString(),
    type: hit.type,
    snippet: hit.snippet,
    cursor: hit.cursor.toString(),
  }));
  return {
    sessionId: session.sessionId,
    query: args.query,
    hits,
    endCursor: hits.at(-1)?.cursor ?? null,
    hasNextPage: rows.length > first,
  };
}
