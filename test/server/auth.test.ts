/**
 * The bearer token: HTTP and graphql-ws refuse anything else, /healthz tells strangers nothing
 * about sources, and the token never reaches the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createClient as createWsClient } from 'graphql-ws';
import {
  APPROVE,
  BATCHES_SUBSCRIPTION,
  SESSION,
  attach,
  codeOf,
  collect,
  createSession,
  decideInput,
  keepAlive,
  makeClient,
  ok,
  run,
  sendMessage,
  startHarness,
  waitForEvent,
  waitForRunEnd,
} from './harness.ts';
import type { Batch, Harness } from './harness.ts';

let h: Harness;

beforeAll(async () => {
  // A fixed token that is easy to spot in a log line.
  h = await startHarness({ token: 'tok-AUTHTEST-5f0c2b7e9d' });
});

afterAll(async () => {
  await h.dispose();
});

const QUERY = JSON.stringify({ query: '{ studioSources { sourceId } }' });

async function post(headers: Record<string, string>): Promise<{
  status: number;
  body: { data?: unknown; errors?: { extensions?: { code?: string } }[] };
}> {
  const res = await fetch(h.httpUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: QUERY,
  });
  return { status: res.status, body: (await res.json()) as never };
}

/** Opens a graphql-ws connection eagerly and resolves with how it ended (or 'connected'). */
function connectWs(
  connectionParams: Record<string, unknown> | undefined,
): Promise<{ outcome: 'connected' | 'closed'; code?: number }> {
  return new Promise((resolve) => {
    const client = createWsClient({
      url: h.wsUrl,
      webSocketImpl: WebSocket,
      ...(connectionParams ? { connectionParams } : {}),
      lazy: false,
      retryAttempts: 0,
      onNonLazyError: () => {},
      on: {
        connected: () => {
          resolve({ outcome: 'connected' });
          void client.dispose();
        },
        closed: (event) => resolve({ outcome: 'closed', code: (event as { code: number }).code }),
      },
    });
  });
}

describe('auth over HTTP', () => {
  it('refuses a request without a token with 401 and AGENT_UNAUTHENTICATED', async () => {
    const { status, body } = await post({});
    expect(status).toBe(401);
    expect(body.data ?? null).toBeNull();
    expect(body.errors?.[0]?.extensions?.code).toBe('AGENT_UNAUTHENTICATED');
  });

  it('refuses a wrong token, a bare token and a token in the query string', async () => {
    for (const headers of [
      { Authorization: 'Bearer wrong-token' },
      { Authorization: h.token },
      { Authorization: `Basic ${h.token}` },
    ]) {
      const { status, body } = await post(headers);
      expect(status).toBe(401);
      expect(body.errors?.[0]?.extensions?.code).toBe('AGENT_UNAUTHENTICATED');
    }
    const viaQuery = await fetch(
      `${h.httpUrl}?query=${encodeURIComponent('{ studioSources { sourceId } }')}&token=${h.token}`,
    );
    expect(viaQuery.status).toBe(401);
    const viaGet = await fetch(
      `${h.httpUrl}?query=${encodeURIComponent('{ studioSources { sourceId } }')}`,
      {
        headers: { Authorization: `Bearer ${h.token}` },
      },
    );
    expect(viaGet.status).toBe(200);
  });

  it('answers the right token, and the urql client sees AGENT_UNAUTHENTICATED with a wrong one', async () => {
    const { status, body } = await post({ Authorization: `Bearer ${h.token}` });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    const wrong = makeClient(h, { token: 'not-the-token' });
    const result = await run(wrong, SESSION, { sessionId: 'anything' });
    expect(result.data ?? null).toBeNull();
    expect(codeOf(result.error)).toBe('AGENT_UNAUTHENTICATED');
  });

  it('serves /healthz to anyone but lists sources only with the token', async () => {
    const anonymous = (await (await fetch(`${h.server.url}/healthz`)).json()) as Record<
      string,
      unknown
    >;
    expect(anonymous).toMatchObject({ ok: true, contract: 'crowdy.studio-agent/1' });
    expect(anonymous).not.toHaveProperty('sources');
    const wrong = (await (
      await fetch(`${h.server.url}/healthz`, { headers: { Authorization: 'Bearer nope' } })
    ).json()) as Record<string, unknown>;
    expect(wrong).not.toHaveProperty('sources');
    const known = (await (
      await fetch(`${h.server.url}/healthz`, { headers: { Authorization: `Bearer ${h.token}` } })
    ).json()) as {
      sources?: { sourceId: string }[];
    };
    expect(known.sources?.map((s) => s.sourceId)).toContain('demo');
  });
});

describe('auth over graphql-ws', () => {
  it('closes a connection without a token or with a wrong one with 4403', async () => {
    expect(await connectWs(undefined)).toEqual({ outcome: 'closed', code: 4403 });
    expect(await connectWs({ Authorization: 'Bearer wrong-token' })).toEqual({
      outcome: 'closed',
      code: 4403,
    });
    expect(await connectWs({ Authorization: h.token })).toEqual({ outcome: 'closed', code: 4403 });
    expect(await connectWs({ Authorization: `Bearer ${h.token}` })).toEqual({
      outcome: 'connected',
    });
  });

  it('delivers nothing to a subscription made with a wrong token', async () => {
    const good = makeClient(h);
    const session = await createSession(good, 'ASK');
    const wrong = makeClient(h, { token: 'not-the-token' });
    const sub = collect<Batch>(
      wrong,
      BATCHES_SUBSCRIPTION,
      { sessionId: session.sessionId, afterSeq: '0' },
      'studioAgentEventBatches',
    );
    await sub.ended;
    expect(sub.items).toEqual([]);
    expect(sub.errors.length).toBeGreaterThan(0);
  });
});

describe('the log', () => {
  it('never contains the token, over a whole run of requests, decisions and failures', async () => {
    const c = makeClient(h);
    const session = await createSession(c, 'BUILD', 'cleanup-app');
    const a = await attach(c, session.sessionId);
    const stop = keepAlive(c, a);
    try {
      const { runId } = await sendMessage(c, a, `Delete the scratch file. My token is ${h.token}`);
      const { event } = await waitForEvent(
        c,
        session.sessionId,
        (e) => e.type === 'APPROVAL_REQUESTED' && e.runId === runId,
        'the approval',
      );
      await ok(
        c,
        APPROVE,
        decideInput(a, {
          toolCallId: event.approvalToolCallId!,
          argumentHash: event.argumentHash!,
        }),
      );
      await waitForRunEnd(c, session.sessionId, runId);
    } finally {
      stop();
    }
    // Lines that would carry the token if the logger did not redact it.
    h.server.logger.warn('auth check', { authorization: `Bearer ${h.token}`, token: h.token });
    h.server.logger.error(`request with Authorization: Bearer ${h.token}`);
    await post({ Authorization: `Bearer ${h.token}x` });
    expect(h.logs.length).toBeGreaterThan(0);
    const leaked = h.logs.filter((line) => line.includes(h.token) || line.includes('AUTHTEST'));
    expect(leaked).toEqual([]);
  });
});
