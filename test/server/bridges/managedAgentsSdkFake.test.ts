/**
 * The fake Managed Agents peer is only worth its tests if the official SDK accepts it as the real
 * API: this points a stock `@anthropic-ai/sdk` client (no custom headers, its own defaults) at the
 * fake and calls every `client.beta.sessions` method the bridge uses, parsing every answer.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { BetaManagedAgentsSession } from '@anthropic-ai/sdk/resources/beta/sessions/sessions';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeManagedAgentsPeer, type FakeEvent } from '../../fakes/FakeManagedAgentsPeer.ts';
import {
  SDK_EVENTS,
  SDK_EVENTS_BY_TYPE,
  SDK_SESSION_ID,
  SDK_THREAD_ID,
} from '../../fixtures/managed-agents/sdkEvents.ts';
import {
  MANAGED_AGENTS_EVENT_HANDLING,
  ManagedAgentsMapper,
} from '../../../server/sources/managed-agents/ManagedAgentsMapper.ts';

const API_KEY = 'sk-ant-api03-sdkfake-0123456789abcdef';

const SESSION = {
  id: SDK_SESSION_ID,
  type: 'session',
  agent: {
    id: 'agent_01Csv',
    type: 'agent',
    name: 'csv-agent',
    description: null,
    execution_identity: { type: 'service_account' },
    mcp_servers: [],
    model: { id: 'claude-sonnet-4-6' },
    multiagent: null,
    skills: [],
    system: null,
    tools: [],
    version: 1,
  },
  archived_at: null,
  budget: { type: 'limit', max_list_cost: { amount: '2500', currency: 'USD' } },
  created_at: '2026-11-30T11:59:00Z',
  updated_at: '2026-11-30T12:00:00Z',
  environment_id: 'env_01Csv',
  metadata: {},
  outcome_evaluations: [],
  resources: [],
  stats: {},
  status: 'running',
  title: 'Parse CSV',
  usage: {},
  vault_ids: [],
} satisfies BetaManagedAgentsSession;

/** History holds persisted events only: previews never are. */
const PERSISTED = SDK_EVENTS.filter(
  (e) => e.type !== 'event_start' && e.type !== 'event_delta',
) as FakeEvent[];

const peers: FakeManagedAgentsPeer[] = [];
afterEach(async () => {
  await Promise.all(peers.splice(0).map((p) => p.close()));
});

async function start(pageSize = 7) {
  const peer = await FakeManagedAgentsPeer.start({
    apiKey: API_KEY,
    pageSize,
    sessions: {
      [SDK_SESSION_ID]: {
        session: SESSION,
        history: PERSISTED.slice(0, 10),
        threadHistories: { [SDK_THREAD_ID]: PERSISTED.slice(0, 3) },
      },
    },
  });
  peers.push(peer);
  // A stock client, as a user would build it: the fake must accept its defaults as they are.
  const client = new Anthropic({ apiKey: API_KEY, baseURL: peer.url, maxRetries: 0 });
  return { peer, client };
}

describe('FakeManagedAgentsPeer against the official SDK', () => {
  it('answers retrieve, paged list, stream, send and every threads call as the SDK expects', async () => {
    const { peer, client } = await start();
    const sessions = client.beta.sessions;

    const session = await sessions.retrieve(SDK_SESSION_ID);
    expect(session).toEqual(SESSION);

    // Auto-paging follows next_page through pages of 7.
    const listed: string[] = [];
    for await (const event of sessions.events.list(SDK_SESSION_ID, { limit: 1000 }))
      listed.push(event.type);
    expect(listed).toEqual(PERSISTED.slice(0, 10).map((e) => e.type));

    const stream = await sessions.events.stream(SDK_SESSION_ID);
    await peer.waitForStreams(SDK_SESSION_ID, 1);
    const live = PERSISTED.slice(10);
    peer.emit(SDK_SESSION_ID, live);
    const streamed: unknown[] = [];
    for await (const event of stream) {
      streamed.push(event);
      if (event.type === 'session.deleted') break;
    }
    expect(streamed).toEqual(live);

    // The tool use in the fixture asks; the SDK's send posts a confirmation the fake accepts.
    peer.appendToHistory(SDK_SESSION_ID, [
      { ...SDK_EVENTS_BY_TYPE['agent.tool_use'], id: 'sevt_Ask2' },
    ]);
    const sent = await sessions.events.send(SDK_SESSION_ID, {
      events: [
        {
          type: 'user.tool_confirmation',
          tool_use_id: 'sevt_Ask2',
          result: 'deny',
          deny_message: 'no',
        },
        { type: 'user.message', content: [{ type: 'text', text: 'try again' }] },
        { type: 'user.interrupt' },
      ],
    });
    expect(sent.data?.map((e) => e.type)).toEqual([
      'user.tool_confirmation',
      'user.message',
      'user.interrupt',
    ]);
    expect(sent.data?.every((e) => typeof e.id === 'string' && e.id.startsWith('sevt_'))).toBe(
      true,
    );

    const threads = [];
    for await (const thread of sessions.threads.list(SDK_SESSION_ID, { limit: 1000 }))
      threads.push(thread);
    expect(threads.map((t) => [t.id, t.parent_thread_id])).toEqual([
      [`sthr_primary_${SDK_SESSION_ID}`, null],
      [SDK_THREAD_ID, `sthr_primary_${SDK_SESSION_ID}`],
    ]);
    const thread = await sessions.threads.retrieve(SDK_THREAD_ID, { session_id: SDK_SESSION_ID });
    expect(thread.id).toBe(SDK_THREAD_ID);
    const threadEvents = [];
    for await (const event of sessions.threads.events.list(SDK_THREAD_ID, {
      session_id: SDK_SESSION_ID,
      limit: 2,
    }))
      threadEvents.push(event.id);
    expect(threadEvents).toEqual(PERSISTED.slice(0, 3).map((e) => (e as { id: string }).id));
    const threadStream = await sessions.threads.events.stream(SDK_THREAD_ID, {
      session_id: SDK_SESSION_ID,
    });
    await peer.waitForThreadStreams(SDK_SESSION_ID, SDK_THREAD_ID, 1);
    peer.emitThread(SDK_SESSION_ID, SDK_THREAD_ID, [PERSISTED[5]!]);
    for await (const event of threadStream) {
      expect(event).toEqual(PERSISTED[5]);
      break;
    }

    // What the SDK sent, exactly: the headers the fake checks, no query the SDK does not declare.
    for (const request of peer.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(request.headers['x-api-key']).toBeUndefined();
      expect(request.headers['anthropic-version']).toBe('2026-10-21');
      expect(request.headers['anthropic-beta']).toBe('managed-agents-2026-04-01');
      expect(request.query.beta).toBeUndefined();
    }
  });

  it('refuses what the old hand-written client sent (wrong version, ?beta=true, no credential)', async () => {
    const { peer } = await start();
    const base = `${peer.url}/v1/sessions/${SDK_SESSION_ID}`;
    const headers = {
      authorization: `Bearer ${API_KEY}`,
      'anthropic-version': '2026-10-21',
      'anthropic-beta': 'managed-agents-2026-04-01',
    };
    expect((await fetch(base, { headers })).status).toBe(200);
    expect(
      (await fetch(base, { headers: { ...headers, 'anthropic-version': '2023-06-01' } })).status,
    ).toBe(400);
    expect((await fetch(`${base}/events?beta=true`, { headers })).status).toBe(400);
    const { authorization: _omitted, ...anonymous } = headers;
    expect((await fetch(base, { headers: anonymous })).status).toBe(401);
    // An explicit X-Api-Key is a credential the SDK (and the API) accept.
    expect((await fetch(base, { headers: { ...anonymous, 'x-api-key': API_KEY } })).status).toBe(
      200,
    );
  });
});

describe('ManagedAgentsMapper and the SDK event types', () => {
  it('maps every event type the SDK declares to studio events, none as foreign', () => {
    const mapper = new ManagedAgentsMapper({
      now: () => Date.parse('2026-11-30T12:00:00Z'),
      secrets: [API_KEY],
      decidedInStudio: () => false,
      interruptFromStudio: () => false,
    });
    mapper.noteBudget(SESSION.budget);
    for (const [type, event] of Object.entries(SDK_EVENTS_BY_TYPE)) {
      const drafts = mapper.map(event);
      const handling =
        MANAGED_AGENTS_EVENT_HANDLING[type as keyof typeof MANAGED_AGENTS_EVENT_HANDLING];
      if (handling === 'preview') expect(drafts, type).toEqual([]);
      else {
        expect(drafts.length, type).toBeGreaterThan(0);
        expect(
          drafts.map((d) => d.type),
          type,
        ).not.toContain('STUDIO_FOREIGN_EVENT');
      }
      if (type === 'session.usage') {
        const cost = (
          drafts[0] as {
            budget: { dimensions: { name: string; consumed: string; limit: string }[] };
          }
        ).budget.dimensions.find((d) => d.name === 'PROVIDER_COST');
        // "137" minor units is $1.37, not $137; the limit is max_list_cost "2500" ($25.00).
        expect(cost).toMatchObject({ consumed: '1370000', limit: '25000000' });
      }
    }
    expect(mapper.sessionClosed).toBe(true);
  });
});
