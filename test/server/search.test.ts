/**
 * studioSearchEvents against the real server: every event's text is indexed in the append's
 * transaction (a search right after the append finds it), hits come newest first with marked
 * snippets, pages chain through `after`, other sessions never match, and bad input is refused
 * with BAD_USER_INPUT while query syntax can never fail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendMany,
  createSession,
  failCode,
  makeClient,
  ok,
  startHarness,
  type Harness,
  type StudioClient,
} from './harness.ts';
import { SqliteStore } from '../../server/store/SqliteStore.ts';
import { join } from 'node:path';

const SEARCH = `query Search($sessionId: String!, $query: String!, $first: Int, $after: String) {
  studioSearchEvents(sessionId: $sessionId, query: $query, first: $first, after: $after) {
    sessionId query endCursor hasNextPage hits { seq type snippet { text match } }
  }
}`;

interface SearchData {
  studioSearchEvents: {
    sessionId: string;
    query: string;
    endCursor: string | null;
    hasNextPage: boolean;
    hits: { seq: string; type: string; snippet: { text: string; match: boolean }[] }[];
  };
}

let h: Harness;
let c: StudioClient;

beforeAll(async () => {
  h = await startHarness();
  c = makeClient(h);
});

afterAll(async () => {
  await h.dispose();
});

async function search(vars: { sessionId: string; query: string; first?: number; after?: string }) {
  return (await ok<SearchData>(c, SEARCH, vars)).studioSearchEvents;
}

describe('studioSearchEvents', () => {
  it('finds an event the moment it is appended, newest first, with the match marked', async () => {
    const session = await createSession(c, 'ASK');
    await appendMany(h, session.sessionId, 30, 'filler');
    await h.server.engine.append(session.sessionId, [
      {
        type: 'STUDIO_LOG',
        level: 'warn',
        message: 'The zebra deploy failed on host one',
        origin: 'test',
      },
    ]);
    await appendMany(h, session.sessionId, 5, 'more');
    await h.server.engine.append(session.sessionId, [
      { type: 'STUDIO_LOG', level: 'info', message: 'A second ZEBRA sighting', origin: 'test' },
    ]);
    const result = await search({ sessionId: session.sessionId, query: 'zebra' });
    // The snippet is the event's text (level, message, origin here), ids and times left out.
    expect(result.hits.map((hit) => hit.snippet.map((p) => p.text).join(''))).toEqual([
      'info\nA second ZEBRA sighting\ntest',
      'warn\nThe zebra deploy failed on host one\ntest',
    ]);
    expect(BigInt(result.hits[0]!.seq)).toBeGreaterThan(BigInt(result.hits[1]!.seq));
    expect(result.hits[1]!.snippet).toContainEqual({ text: 'zebra', match: true });
    expect(result.hits[1]!.snippet).toContainEqual({ text: 'warn\nThe ', match: false });
    expect(result.hits[0]!.type).toBe('STUDIO_LOG');
    expect(result.hasNextPage).toBe(false);
    // Every word must match, whole words unless typed with a trailing * (a prefix).
    expect((await search({ sessionId: session.sessionId, query: 'zeb* depl*' })).hits).toHaveLength(
      1,
    );
    expect((await search({ sessionId: session.sessionId, query: 'zeb' })).hits).toEqual([]);
    expect((await search({ sessionId: session.sessionId, query: 'zebra nowhere' })).hits).toEqual(
      [],
    );
  });

  it('pages through every match with after, and never matches another session', async () => {
    const a = await createSession(c, 'ASK');
    const b = await createSession(c, 'ASK');
    await appendMany(h, a.sessionId, 45, 'paged');
    await appendMany(h, b.sessionId, 10, 'paged');
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await search({
        sessionId: a.sessionId,
        query: 'paged',
        first: 20,
        ...(after ? { after } : {}),
      });
      seen.push(...page.hits.map((hit) => hit.seq));
      if (!page.hasNextPage) break;
      after = page.endCursor!;
    }
    expect(seen).toHaveLength(45);
    expect(new Set(seen).size).toBe(45);
    expect(seen.map(BigInt)).toEqual(
      [...seen.map(BigInt)].sort((x, y) => (x > y ? -1 : x < y ? 1 : 0)),
    );
    expect(
      (await search({ sessionId: b.sessionId, query: 'paged', first: 100 })).hits,
    ).toHaveLength(10);
  });

  it('treats query syntax as words, and refuses bad paging and unknown sessions', async () => {
    const session = await createSession(c, 'ASK');
    await h.server.engine.append(session.sessionId, [
      { type: 'STUDIO_LOG', level: 'info', message: 'path "a/b" AND (c) NEAR d*', origin: 'test' },
    ]);
    for (const query of ['"', 'AND', '(c', 'NEAR(', '*', '   ', '"a/b" AND'])
      await search({ sessionId: session.sessionId, query });
    expect((await search({ sessionId: session.sessionId, query: '"a/b" (c)' })).hits).toHaveLength(
      1,
    );
    expect(await failCode(c, SEARCH, { sessionId: session.sessionId, query: 'x', first: 0 })).toBe(
      'BAD_USER_INPUT',
    );
    expect(
      await failCode(c, SEARCH, { sessionId: session.sessionId, query: 'x', after: 'nope' }),
    ).toBe('BAD_USER_INPUT');
    expect(
      await failCode(c, SEARCH, { sessionId: session.sessionId, query: 'x'.repeat(501) }),
    ).toBe('BAD_USER_INPUT');
    expect(await failCode(c, SEARCH, { sessionId: 'no-such-session', query: 'x' })).toBeTruthy();
  });

  it('indexes a data dir written before the index existed when the store opens it', async () => {
    const file = join(h.dataDir, 'old-store.sqlite');
    const store = new SqliteStore(file);
    await store.transaction((tx) =>
      tx.insertEvent({
        sessionId: 'old-1',
        seq: 1n,
        eventId: 'old-1-1',
        type: 'STUDIO_LOG',
        runId: null,
        createdAt: '2026-01-01T00:00:00.000Z',
        payload: JSON.stringify({ __typename: 'StudioLogEvent', message: 'written long ago' }),
        foreignId: null,
      }),
    );
    // As if written by a server without the index: no rows in it, no marker.
    (store as unknown as { db: { exec(sql: string): void } }).db.exec(
      "DELETE FROM event_search; DELETE FROM meta WHERE key = 'eventSearch'",
    );
    const search = (s: SqliteStore) =>
      s.transaction((tx) => tx.searchEvents('old-1', 'long', null, 10), { readOnly: true });
    expect(await search(store)).toEqual([]);
    await store.close();
    const reopened = new SqliteStore(file);
    expect((await search(reopened)).map((hit) => hit.seq)).toEqual([1n]);
    await reopened.close();
  });
});
