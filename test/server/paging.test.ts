/**
 * History and Sessions paging, the wire format of BigInt values, and malformed input, against the
 * real server through urql and through raw HTTP where the exact JSON matters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HISTORY,
  SESSION_FIELDS,
  appendMany,
  attach,
  createSession,
  failCode,
  history,
  keepAlive,
  key,
  makeClient,
  ok,
  run,
  startHarness,
} from './harness.ts';
import type { HistoryPage, Harness, SessionData, StudioClient } from './harness.ts';
import { StudioError } from '../../server/engine/StudioError.ts';
import type { ApprovalDraft, EventDraft } from '../../server/engine/eventDrafts.ts';

let h: Harness;
let c: StudioClient;

beforeAll(async () => {
  h = await startHarness();
  c = makeClient(h);
});

afterAll(async () => {
  await h.dispose();
});

async function page(sessionId: string, vars: { afterSeq?: string; first?: number }) {
  return (await ok<HistoryPage>(c, HISTORY, { sessionId, ...vars })).crowdyStudioAgentHistory;
}

/** POSTs a GraphQL request with the token and returns the raw response text and status. */
async function rawPost(body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(h.httpUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${h.token}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

describe('crowdyStudioAgentHistory', () => {
  let sessionId: string;
  let last: bigint;

  beforeAll(async () => {
    sessionId = (await createSession(c, 'ASK')).sessionId;
    await appendMany(h, sessionId, 448, 'p');
    last = BigInt((await h.server.engine.requireSession(sessionId)).lastEventSeq);
  });

  it('pages 100 events by default, ascending after the exclusive afterSeq', async () => {
    const p = await page(sessionId, {});
    expect(p.events.map((e) => e.seq)).toEqual(
      Array.from({ length: 100 }, (_, i) => String(i + 1)),
    );
    expect(p.hasMore).toBe(true);
    expect(p.pageInfo).toEqual({ hasNextPage: true, endCursor: '100' });
  });

  it('caps a page at 200 events', async () => {
    const p = await page(sessionId, { first: 500 });
    expect(p.events).toHaveLength(200);
    expect(p.events[0]!.seq).toBe('1');
    expect(p.events[199]!.seq).toBe('200');
    expect(p.hasMore).toBe(true);
  });

  it('starts strictly after afterSeq and gives every edge its seq as cursor', async () => {
    const p = await page(sessionId, { afterSeq: '100', first: 50 });
    expect(p.events.map((e) => e.seq)).toEqual(
      Array.from({ length: 50 }, (_, i) => String(i + 101)),
    );
    expect(p.edges.map((e) => e.cursor)).toEqual(p.events.map((e) => e.seq));
    expect(p.edges.map((e) => e.node.eventId)).toEqual(p.events.map((e) => e.eventId));
  });

  it('says hasMore false on the last page and returns nothing after the last seq', async () => {
    const tail = await page(sessionId, { afterSeq: (last - 10n).toString(), first: 10 });
    expect(tail.events).toHaveLength(10);
    expect(tail.hasMore).toBe(false);
    expect(tail.pageInfo.hasNextPage).toBe(false);
    const empty = await page(sessionId, { afterSeq: last.toString() });
    expect(empty.events).toEqual([]);
    expect(empty.hasMore).toBe(false);
    expect(empty.pageInfo.endCursor).toBeNull();
  });

  it('walks the whole log page by page with no gap and no duplicate', async () => {
    const all = await history(c, sessionId);
    expect(all.map((e) => e.seq)).toEqual(
      Array.from({ length: Number(last) }, (_, i) => String(i + 1)),
    );
  });

  it('refuses afterSeq beyond the committed history with AGENT_EVENT_CURSOR_INVALID', async () => {
    expect(await failCode(c, HISTORY, { sessionId, afterSeq: (last + 1n).toString() })).toBe(
      'AGENT_EVENT_CURSOR_INVALID',
    );
  });

  it('refuses an unknown session with AGENT_SESSION_NOT_FOUND', async () => {
    expect(await failCode(c, HISTORY, { sessionId: 'ses_nope' })).toBe('AGENT_SESSION_NOT_FOUND');
  });
});

describe('crowdyStudioAgentSessions', () => {
  const SESSIONS = `query Sessions($appId: BigInt!, $after: String, $first: Int) {
    crowdyStudioAgentSessions(appId: $appId, after: $after, first: $first) {
      edges { cursor node { ${SESSION_FIELDS} } }
      nodes { sessionId }
      pageInfo { hasNextPage endCursor }
      hasNextPage endCursor
    }
  }`;
  interface SessionsPage {
    crowdyStudioAgentSessions: {
      edges: { cursor: string; node: SessionData }[];
      nodes: { sessionId: string }[];
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
      hasNextPage: boolean;
      endCursor: string | null;
    };
  }
  const sessions = async (vars: { after?: string | null; first?: number }) =>
    (await ok<SessionsPage>(c, SESSIONS, { appId: '1', ...vars })).crowdyStudioAgentSessions;

  let created: string[];

  beforeAll(async () => {
    created = [];
    for (let i = 0; i < 52; i++) created.push((await createSession(c, 'ASK')).sessionId);
  });

  it('lists the newest sessions first, 20 by default', async () => {
    const p = await sessions({});
    expect(p.edges).toHaveLength(20);
    expect(p.edges.map((e) => e.node.sessionId)).toEqual([...created].reverse().slice(0, 20));
    expect(p.nodes.map((n) => n.sessionId)).toEqual(p.edges.map((e) => e.node.sessionId));
    expect(p.hasNextPage).toBe(true);
    expect(p.pageInfo.hasNextPage).toBe(true);
    expect(p.endCursor).toBe(p.edges[19]!.cursor);
    expect(p.pageInfo.endCursor).toBe(p.endCursor);
  });

  it('caps a page at 50 sessions', async () => {
    const p = await sessions({ first: 500 });
    expect(p.edges).toHaveLength(50);
    expect(p.hasNextPage).toBe(true);
  });

  it('walks every session exactly once with the cursors, newest first', async () => {
    const seen: SessionData[] = [];
    let after: string | null = null;
    for (let guard = 0; guard < 20; guard++) {
      const p = await sessions({ after, first: 7 });
      seen.push(...p.edges.map((e) => e.node));
      if (!p.hasNextPage) break;
      after = p.endCursor;
    }
    const ids = seen.map((s) => s.sessionId);
    const all = (await h.server.engine.reads.listAllSessions()).map((s) => s.sessionId);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual([...all].sort());
    expect(ids.slice(0, created.length)).toEqual([...created].reverse());
    for (let i = 1; i < seen.length; i++)
      expect(Date.parse(seen[i - 1]!.createdAt)).toBeGreaterThanOrEqual(
        Date.parse(seen[i]!.createdAt),
      );
  });

  it('refuses another app with AGENT_PERMISSION_DENIED', async () => {
    expect(await failCode(c, SESSIONS, { appId: '2' })).toBe('AGENT_PERMISSION_DENIED');
  });
});

describe('the wire format', () => {
  it('sends every BigInt as a decimal string (raw HTTP JSON)', async () => {
    const session = await createSession(c, 'BUILD', 'sample-app');
    const a = await attach(c, session.sessionId);
    const stop = keepAlive(c, a);
    try {
      await ok(
        c,
        `mutation ($input: StudioCreateCheckpointInput!) { studioCreateCheckpoint(input: $input) { checkpointId } }`,
        {
          input: {
            idempotencyKey: key('cp'),
            sessionId: session.sessionId,
            clientEpoch: a.clientEpoch,
          },
        },
      );
      const { status, text } = await rawPost({
        query: `query ($sessionId: String!) {
          crowdyStudioAgentSession(sessionId: $sessionId) { appId lastEventSeq currentClientEpoch clientEpoch }
          crowdyStudioAgentHistory(sessionId: $sessionId) {
            events { ... on AgentEventBase { seq } ... on AgentLifecycleEvent { clientEpoch replayAfterSeq } ... on AgentCheckpointEvent { projectRevision } }
          }
          studioCheckpoints(sessionId: $sessionId) { edges { node { projectRevision totalBytes } } }
          studioProject(sessionId: $sessionId) { revision }
        }`,
        variables: { sessionId: session.sessionId },
      });
      expect(status).toBe(200);
      const body = JSON.parse(text) as { data: Record<string, unknown>; errors?: unknown };
      expect(body.errors).toBeUndefined();
      const bigIntKeys = [
        'appId',
        'lastEventSeq',
        'currentClientEpoch',
        'clientEpoch',
        'seq',
        'replayAfterSeq',
        'projectRevision',
        'totalBytes',
        'revision',
      ];
      const found: Record<string, unknown[]> = {};
      JSON.parse(text, (k, v: unknown) => {
        if (bigIntKeys.includes(k) && v !== null) (found[k] ??= []).push(v);
        return v;
      });
      for (const k of bigIntKeys) {
        expect(found[k], k).toBeDefined();
        for (const v of found[k]!) expect(v, k).toMatch(/^(0|[1-9][0-9]*)$/);
      }
      // And no number sneaks in under those names anywhere in the raw text.
      expect(text).not.toMatch(
        /"(seq|lastEventSeq|appId|projectRevision|revision|totalBytes|clientEpoch)":\s*[0-9]/,
      );
    } finally {
      stop();
    }
  });
});

describe('malformed input', () => {
  it('refuses a BigInt sent as a JSON number with a clear error', async () => {
    const session = await createSession(c, 'ASK');
    const { text } = await rawPost({
      query: HISTORY,
      variables: { sessionId: session.sessionId, afterSeq: 1 },
    });
    const body = JSON.parse(text) as {
      data?: unknown;
      errors?: { message: string; extensions?: { code?: string } }[];
    };
    expect(body.data ?? null).toBeNull();
    expect(body.errors?.[0]?.message).toMatch(/decimal string/);
    expect(body.errors?.[0]?.message).toMatch(/afterSeq/);

    // The same through urql.
    const viaUrql = await run(c, HISTORY, { sessionId: session.sessionId, afterSeq: 1 });
    expect(viaUrql.data ?? null).toBeNull();
    expect(viaUrql.error?.graphQLErrors[0]?.message).toMatch(/decimal string/);
  });

  it('refuses a BigInt that is not a non-negative decimal', async () => {
    const session = await createSession(c, 'ASK');
    for (const bad of ['-1', '1.5', '0x10', 'abc', '']) {
      const result = await run(c, HISTORY, { sessionId: session.sessionId, afterSeq: bad });
      expect(result.error, bad).toBeDefined();
      expect(result.data ?? null, bad).toBeNull();
    }
  });

  it('refuses a malformed draft whole with AGENT_EVENT_CURSOR_INVALID and stores nothing', async () => {
    const session = await createSession(c, 'ASK');
    const engine = h.server.engine;
    const before = (await engine.requireSession(session.sessionId)).lastEventSeq;
    const count = await engine.reads.countEvents(session.sessionId);
    const good: EventDraft = { type: 'STUDIO_LOG', level: 'info', message: 'fine', origin: 'test' };
    const bad: ApprovalDraft = {
      type: 'APPROVAL_REQUESTED',
      runId: null,
      approvalId: 'ap_1',
      toolCallId: 'tc_1',
      argumentHash: 'not-a-hash',
      status: 'PENDING',
      safeSummary: 'x',
      reasons: [],
      expiresAt: new Date().toISOString(),
    };
    const attempts = [
      () => engine.append(session.sessionId, [good, bad]),
      () => engine.append(session.sessionId, [{ ...good, runId: 'r'.repeat(129) }]),
      () => engine.append(session.sessionId, [{ type: 'NOT_A_TYPE' } as never]),
      () =>
        engine.append(session.sessionId, [
          { ...bad, argumentHash: 'sha256:' + 'a'.repeat(64), expiresAt: 'yesterday' },
        ]),
    ];
    for (const attempt of attempts) {
      let caught: unknown;
      try {
        await attempt();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(StudioError);
      expect((caught as StudioError).code).toBe('AGENT_EVENT_CURSOR_INVALID');
    }
    expect((await engine.requireSession(session.sessionId)).lastEventSeq).toBe(before);
    expect(await engine.reads.countEvents(session.sessionId)).toBe(count);
    const events = await history(c, session.sessionId);
    expect(events.map((e) => e.seq)).toEqual(
      Array.from({ length: count }, (_, i) => String(i + 1)),
    );
  });
});
