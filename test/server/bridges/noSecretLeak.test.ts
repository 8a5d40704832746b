import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ManagedAgentsSource,
  managedAgentsStudioSessionId,
} from '../../../server/sources/managed-agents/ManagedAgentsSource.ts';
import {
  LeviathSource,
  leviathStudioSessionId,
} from '../../../server/sources/leviath/LeviathSource.ts';
import type { ApprovalDraft } from '../../../server/engine/eventDrafts.ts';
import { FakeManagedAgentsPeer, type FakeEvent } from '../../fakes/FakeManagedAgentsPeer.ts';
import { FakeLeviathPeer, type FakeRun } from '../../fakes/FakeLeviathPeer.ts';
import { MemorySourceHost } from '../../fakes/MemorySourceHost.ts';
import type { RecordedRequest } from '../../fakes/recordedRequest.ts';

const API_KEY = 'sk-ant-api03-leakcheck-9f8e7d6c5b4a';
const TOKEN = 'lev-leakcheck-token-5566778899';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The secret travels in exactly one header of every request and nowhere else. */
function expectOnlyInHeader(
  requests: RecordedRequest[],
  secret: string,
  header: string,
  value: string,
): void {
  expect(requests.length).toBeGreaterThan(0);
  for (const request of requests) {
    expect(request.url).not.toContain(secret);
    expect(request.body).not.toContain(secret);
    for (const [name, headerValue] of Object.entries(request.headers)) {
      if (name === header) expect(headerValue).toBe(value);
      else expect(String(headerValue)).not.toContain(secret);
    }
  }
}

function expectNowhere(host: MemorySourceHost, secret: string, errors: unknown[]): void {
  expect(host.logger.secrets).toContain(secret);
  expect(host.logger.lines.length).toBeGreaterThan(0);
  for (const line of host.logger.lines) expect(line).not.toContain(secret);
  expect(JSON.stringify(host.allEvents())).not.toContain(secret);
  for (const status of host.statuses) expect(String(status.detail)).not.toContain(secret);
  for (const error of errors)
    expect(String((error as Error).message) + JSON.stringify(error)).not.toContain(secret);
}

describe('no secret leaks', () => {
  it('Managed Agents: the API key only ever travels in the Authorization header, and never reaches a log line or an event', async () => {
    const s = JSON.parse(
      readFileSync(
        new URL('../../fixtures/managed-agents/live-approval.json', import.meta.url),
        'utf8',
      ),
    ) as {
      session: Record<string, unknown>;
      history: FakeEvent[];
      live: FakeEvent[];
    };
    const foreignId = String(s.session.id);
    const peer = await FakeManagedAgentsPeer.start({
      apiKey: API_KEY,
      sessions: { [foreignId]: { session: s.session, history: s.history } },
    });
    cleanups.push(() => peer.close());
    const host = new MemorySourceHost();
    const source = new ManagedAgentsSource({
      sessionIds: [foreignId],
      apiKey: API_KEY,
      baseUrl: peer.url,
      logger: host.logger,
      backoff: { initialMs: 10, maxMs: 20 },
      confirmationRetry: { attempts: 2, initialMs: 5, maxMs: 5 },
    });
    cleanups.push(() => source.stop());
    await source.start(host);
    const sessionId = managedAgentsStudioSessionId(foreignId);

    // A runtime that echoes the key everywhere it can.
    peer.emit(foreignId, [
      ...s.live,
      {
        id: 'sevt_K1',
        type: 'agent.message',
        processed_at: '2026-11-21T09:00:08Z',
        content: [{ type: 'text', text: `env says ANTHROPIC_API_KEY=${API_KEY}` }],
      },
      {
        id: 'sevt_K2',
        type: 'agent.tool_use',
        processed_at: '2026-11-21T09:00:09Z',
        name: 'bash',
        input: { command: `curl -H 'x-api-key: ${API_KEY}' https://api.anthropic.com` },
        evaluated_permission: 'ask',
        evaluation: { type: 'always_ask' },
      },
      {
        id: 'sevt_K3',
        type: 'session.error',
        processed_at: '2026-11-21T09:00:10Z',
        error: {
          type: 'unknown_error',
          message: `bad key ${API_KEY}`,
          retry_status: { type: 'retrying' },
        },
      },
      {
        id: 'sevt_K4',
        type: 'agent.new_kind',
        processed_at: '2026-11-21T09:00:11Z',
        leaked: API_KEY,
      },
    ]);
    await host.waitFor(
      () => host.events(sessionId).some((e) => e.foreignId === 'sevt_K4'),
      'the leaky events',
    );

    const errors: unknown[] = [];
    const approval = host
      .events(sessionId)
      .find(
        (e) => e.type === 'APPROVAL_REQUESTED' && e.toolCallId === 'sevt_L006',
      ) as ApprovalDraft;
    peer.failNextConfirmation(
      'sevt_L006',
      400,
      'invalid_request_error',
      `rejected for key ${API_KEY}`,
    );
    await source
      .deliverDecision({
        sessionId,
        runId: null,
        toolCallId: 'sevt_L006',
        toolName: 'bash',
        approvalId: approval.approvalId,
        argumentHash: approval.argumentHash,
        approved: true,
        reason: null,
      })
      .catch((e: unknown) => errors.push(e));
    expect(errors).toHaveLength(1);
    peer.dropStreams(foreignId);
    await peer.waitForStreams(foreignId, 1);

    expectOnlyInHeader(peer.requests, API_KEY, 'authorization', `Bearer ${API_KEY}`);
    expectNowhere(host, API_KEY, errors);
  });

  it('Managed Agents: a refused key is not logged either', async () => {
    const wrong = 'sk-ant-api03-wrong-1122334455';
    const peer = await FakeManagedAgentsPeer.start({
      apiKey: API_KEY,
      sessions: { sesn_1: { session: { id: 'sesn_1' }, history: [] } },
    });
    cleanups.push(() => peer.close());
    const host = new MemorySourceHost();
    const source = new ManagedAgentsSource({
      sessionIds: ['sesn_1'],
      apiKey: wrong,
      baseUrl: peer.url,
      logger: host.logger,
    });
    cleanups.push(() => source.stop());
    await source.start(host);
    expect(host.lastStatus).toBe('FAILED');
    expectOnlyInHeader(peer.requests, wrong, 'authorization', `Bearer ${wrong}`);
    expectNowhere(host, wrong, []);
  });

  it('Leviath: the token only ever travels as Authorization: Bearer, on REST and the WebSocket, and never reaches a log line or an event', async () => {
    const run: FakeRun = {
      run_id: 'leaky-1',
      agent_name: 'leaky',
      status: 'waiting_input',
      current_stage: 'work',
      workdir: '/srv/leaky',
      callback_secret: TOKEN,
    };
    const peer = await FakeLeviathPeer.start({ token: TOKEN, runs: [run] });
    cleanups.push(() => peer.close());
    const host = new MemorySourceHost();
    const source = new LeviathSource({
      url: peer.url,
      token: TOKEN,
      logger: host.logger,
      backoff: { initialMs: 10, maxMs: 20 },
      settleMs: 10,
    });
    cleanups.push(() => source.stop());
    await source.start(host);
    const sessionId = leviathStudioSessionId('leaky-1');

    peer.openInteraction('leaky-1', { id: 'ask-call_1', kind: 'free_text' });
    peer.send(
      {
        type: 'log',
        agent_id: 'leaky-1',
        run_id: 'leaky-1',
        line: `[tool] export LEVIATH_TOKEN=${TOKEN}`,
      },
      {
        type: 'interaction_needed',
        agent_id: 'leaky-1',
        run_id: 'leaky-1',
        request: {
          id: 'approve-t1',
          kind: 'tool_approval',
          prompt: `Allow curl -H "Authorization: Bearer ${TOKEN}"?`,
          options: [],
          tool_name: 'bash',
          tool_arguments: { command: `echo ${TOKEN}` },
          required: true,
          stage_name: 'work',
          body: null,
          body_format: 'plain',
        },
      },
      {
        type: 'interaction_needed',
        agent_id: 'leaky-1',
        run_id: 'leaky-1',
        request: {
          id: 'ask-call_1',
          kind: 'free_text',
          prompt: `Is ${TOKEN} right?`,
          options: [],
          tool_name: null,
          tool_arguments: null,
          required: true,
          stage_name: 'work',
          body: TOKEN,
          body_format: 'plain',
        },
      },
      { type: 'agent_new_thing', agent_id: 'leaky-1', run_id: 'leaky-1', value: TOKEN },
      { type: 'gateway_notice', note: `token ${TOKEN}` },
      {
        type: 'agent_completed',
        agent_id: 'leaky-1',
        run_id: 'leaky-1',
        status: 'error',
        result: `auth failed with ${TOKEN}`,
        final_output: { content: `done ${TOKEN}` },
      },
    );
    await host.waitFor(() => host.types(sessionId).includes('RUN_FAILED'), 'the leaky frames');
    await host.waitFor(
      () => host.logger.lines.some((l) => l.includes('gateway_notice')),
      'the gateway frame log',
    );

    const errors: unknown[] = [];
    const question = await host.findQuestion(sessionId, 'ask-call_1');
    if (!question) throw new Error('no question');
    peer.closeInteraction('ask-call_1');
    await source
      .deliverAnswer({ sessionId, question, text: 'yes', choiceIndex: null, approved: null })
      .catch((e: unknown) => errors.push(e));
    peer.dropSockets();
    await host.waitFor(
      () => host.statuses.filter((x) => x.status === 'LIVE').length >= 2,
      'the reconnect',
    );

    expectOnlyInHeader(peer.requests, TOKEN, 'authorization', `Bearer ${TOKEN}`);
    expectNowhere(host, TOKEN, errors);
  });

  it('Leviath: a refused token is not logged either', async () => {
    const wrong = 'lev-wrong-token-000111222';
    const peer = await FakeLeviathPeer.start({ token: TOKEN });
    cleanups.push(() => peer.close());
    const host = new MemorySourceHost();
    const source = new LeviathSource({ url: peer.url, token: wrong, logger: host.logger });
    cleanups.push(() => source.stop());
    await source.start(host);
    expect(host.lastStatus).toBe('FAILED');
    expectOnlyInHeader(peer.requests, wrong, 'authorization', `Bearer ${wrong}`);
    expectNowhere(host, wrong, []);
  });
});
