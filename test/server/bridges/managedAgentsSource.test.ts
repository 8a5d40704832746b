import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ManagedAgentsSource,
  managedAgentsStudioSessionId,
} from '../../../server/sources/managed-agents/ManagedAgentsSource.ts';
import { StudioError } from '../../../server/engine/StudioError.ts';
import { ManagedAgentsMapper } from '../../../server/sources/managed-agents/ManagedAgentsMapper.ts';
import { FakeManagedAgentsPeer, type FakeEvent } from '../../fakes/FakeManagedAgentsPeer.ts';
import { MemorySourceHost } from '../../fakes/MemorySourceHost.ts';
import type { ToolDecision } from '../../../server/sources/Source.ts';
import type { ApprovalDraft } from '../../../server/engine/eventDrafts.ts';

const API_KEY = 'sk-ant-api03-test-0123456789abcdef';

interface Scenario {
  session: Record<string, unknown>;
  history: FakeEvent[];
  [section: string]: unknown;
}

function scenario(name: string): Scenario {
  return JSON.parse(
    readFileSync(new URL(`../../fixtures/managed-agents/${name}`, import.meta.url), 'utf8'),
  ) as Scenario;
}

function section(s: Scenario, key: string): FakeEvent[] {
  return s[key] as FakeEvent[];
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(
  fixture: string,
  options: {
    pageSize?: number;
    apiKey?: string;
    host?: MemorySourceHost;
    random?: () => number;
  } = {},
) {
  const s = scenario(fixture);
  const foreignId = String(s.session.id);
  const peer = await FakeManagedAgentsPeer.start({
    apiKey: API_KEY,
    sessions: { [foreignId]: { session: s.session, history: s.history } },
    pageSize: options.pageSize,
  });
  cleanups.push(() => peer.close());
  const host = options.host ?? new MemorySourceHost();
  const source = new ManagedAgentsSource({
    sessionIds: [foreignId],
    apiKey: options.apiKey ?? API_KEY,
    baseUrl: peer.url,
    logger: host.logger,
    backoff: { initialMs: 20, maxMs: 80 },
    confirmationRetry: { attempts: 4, initialMs: 10, maxMs: 40 },
    ...(options.random ? { random: options.random } : {}),
  });
  cleanups.push(() => source.stop());
  return { s, peer, host, source, foreignId, sessionId: managedAgentsStudioSessionId(foreignId) };
}

/** A new bridge on the same studio (host) and API: a restart. */
async function startedAgain(
  peer: FakeManagedAgentsPeer,
  host: MemorySourceHost,
  foreignId: string,
): Promise<ManagedAgentsSource> {
  const again = new ManagedAgentsSource({
    sessionIds: [foreignId],
    apiKey: API_KEY,
    baseUrl: peer.url,
    logger: host.logger,
    backoff: { initialMs: 20, maxMs: 80 },
  });
  cleanups.push(() => again.stop());
  await again.start(host);
  return again;
}

function decisionFor(
  host: MemorySourceHost,
  sessionId: string,
  toolCallId: string,
  approved: boolean,
  reason: string | null = null,
): ToolDecision {
  const approval = host
    .events(sessionId)
    .find((e) => e.type === 'APPROVAL_REQUESTED' && e.toolCallId === toolCallId) as
    (ApprovalDraft & { runId: string | null }) | undefined;
  if (!approval) throw new Error(`no approval for ${toolCallId}`);
  return {
    sessionId,
    runId: approval.runId,
    toolCallId,
    toolName: 'bash',
    approvalId: approval.approvalId,
    argumentHash: approval.argumentHash,
    approved,
    reason,
  };
}

describe('ManagedAgentsSource', () => {
  it('catches up from the paged history, then follows the stream, with the documented requests', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('live-approval.json', {
      pageSize: 3,
    });
    await source.start(host);
    expect(host.types(sessionId)).toEqual([
      'USER_MESSAGE',
      'RUN_STARTED',
      'STUDIO_LOG',
      'TOOL_PROPOSED',
      'TOOL_DISPATCHED',
      'TOOL_SUCCEEDED',
    ]);
    expect(host.sessions.get(sessionId)?.spec).toMatchObject({
      title: 'Fix the flaky test',
      mode: 'BUILD',
      requestedModel: 'claude-sonnet-4-6',
    });
    expect(host.lastStatus).toBe('LIVE');

    const paths = peer.requests.map((r) => `${r.method} ${r.url}`);
    expect(paths).toEqual([
      `GET /v1/sessions/${foreignId}`,
      `GET /v1/sessions/${foreignId}/events/stream`,
      `GET /v1/sessions/${foreignId}/events?limit=1000`,
      `GET /v1/sessions/${foreignId}/events?limit=1000&page=page_3`,
      `GET /v1/sessions/${foreignId}/threads?limit=1000`,
    ]);
    for (const request of peer.requests) {
      expect(request.headers).toMatchObject({
        authorization: `Bearer ${API_KEY}`,
        'anthropic-version': '2026-10-21',
        'anthropic-beta': 'managed-agents-2026-04-01',
      });
      expect(request.headers['x-api-key']).toBeUndefined();
    }

    peer.emit(foreignId, section(s, 'live'));
    await host.waitFor(() => host.types(sessionId).includes('APPROVAL_REQUESTED'), 'the approval');
    await host.waitFor(() => host.types(sessionId).length === 10, 'the idle row');
    expect(host.types(sessionId).slice(6)).toEqual([
      'ASSISTANT_MESSAGE',
      'TOOL_PROPOSED',
      'APPROVAL_REQUESTED',
      'STUDIO_LOG',
    ]);
  });

  it('posts exactly the documented confirmation for an approve, and lets the engine record the decision', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('live-approval.json');
    await source.start(host);
    peer.onEventsSent = (id, sent) => {
      if (sent.some((e) => e.type === 'user.tool_confirmation'))
        peer.emit(id, section(s, 'afterAllow'));
    };
    peer.emit(foreignId, section(s, 'live'));
    await host.waitFor(() => host.types(sessionId).includes('APPROVAL_REQUESTED'));

    const decision = decisionFor(host, sessionId, 'sevt_L006', true);
    await source.deliverDecision(decision);
    source.onDecisionRecorded(decision);

    const post = peer.requests.filter((r) => r.method === 'POST');
    expect(post).toHaveLength(1);
    expect(post[0]?.url).toBe(`/v1/sessions/${foreignId}/events`);
    expect(post[0]?.headers).toMatchObject({
      authorization: `Bearer ${API_KEY}`,
      'anthropic-version': '2026-10-21',
      'anthropic-beta': 'managed-agents-2026-04-01',
      'content-type': 'application/json',
    });
    expect(post[0]?.json).toEqual({
      events: [{ type: 'user.tool_confirmation', tool_use_id: 'sevt_L006', result: 'allow' }],
    });

    await host.waitFor(() => host.types(sessionId).includes('RUN_SUCCEEDED'), 'the end of the run');
    const events = host.events(sessionId);
    // The echo of the studio's own confirmation records no second decision.
    expect(events.filter((e) => e.type.startsWith('APPROVAL_')).map((e) => e.type)).toEqual([
      'APPROVAL_REQUESTED',
    ]);
    expect(events.find((e) => e.foreignId === 'sevt_L006/confirmation')).toMatchObject({
      type: 'STUDIO_LOG',
    });
    expect(
      events
        .filter(
          (e) => e.type.startsWith('TOOL_') && 'toolCallId' in e && e.toolCallId === 'sevt_L006',
        )
        .map((e) => e.type),
    ).toEqual(['TOOL_PROPOSED', 'TOOL_DISPATCHED', 'TOOL_SUCCEEDED']);
  });

  it('a delivery the outbox retries after a restart does not confirm twice', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('live-approval.json');
    await source.start(host);
    peer.emit(foreignId, section(s, 'live'));
    await host.waitFor(() => host.types(sessionId).includes('APPROVAL_REQUESTED'));
    const decision = decisionFor(host, sessionId, 'sevt_L006', true);
    await source.deliverDecision(decision);
    await source.stop();
    // A new server: the same studio store (host), a new bridge that replays the history, which
    // now holds the confirmation; the API has no idempotency key, so the bridge must not resend.
    const again = await startedAgain(peer, host, foreignId);
    await again.deliverDecision(decision);
    expect(
      peer.postedEvents(foreignId).filter((e) => e.type === 'user.tool_confirmation'),
    ).toHaveLength(1);
    // A different decision for the same call is still refused.
    await expect(again.deliverDecision({ ...decision, approved: false })).rejects.toMatchObject({
      code: 'AGENT_APPROVAL_MISMATCH',
    });
  });

  it('denies, once and saying why, a call whose approval the studio revoked', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('live-approval.json');
    await source.start(host);
    peer.emit(foreignId, section(s, 'live'));
    await host.waitFor(() => host.types(sessionId).includes('APPROVAL_REQUESTED'));
    const {
      approved: _approved,
      reason: _reason,
      ...revoked
    } = decisionFor(host, sessionId, 'sevt_L006', false);
    source.onApprovalRevoked(revoked);
    source.onApprovalRevoked(revoked);
    await host.waitFor(
      () => host.events(sessionId).some((e) => e.foreignId === 'sevt_L006/confirmation'),
      'the deny to be sent',
    );
    expect(peer.postedEvents(foreignId).filter((e) => e.type === 'user.tool_confirmation')).toEqual(
      [
        {
          type: 'user.tool_confirmation',
          tool_use_id: 'sevt_L006',
          result: 'deny',
          deny_message:
            'The studio revoked this approval before anyone approved it; the call was not run.',
        },
      ],
    );
    // The engine recorded the revoke; the bridge records no decision of its own.
    expect(host.types(sessionId).filter((t) => t.startsWith('APPROVAL_'))).toEqual([
      'APPROVAL_REQUESTED',
    ]);
  });

  it('after a restart, denies a call still waiting whose approval the studio revoked meanwhile', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('live-approval.json');
    await source.start(host);
    peer.emit(foreignId, section(s, 'live'));
    await host.waitFor(() => host.types(sessionId).includes('APPROVAL_REQUESTED'));
    const asked = decisionFor(host, sessionId, 'sevt_L006', false);
    await source.stop();
    await host.recordRevoked(sessionId, asked);
    await startedAgain(peer, host, foreignId);
    await host.waitFor(
      () => peer.postedEvents(foreignId).some((e) => e.type === 'user.tool_confirmation'),
      'the deny to be sent',
    );
    expect(
      peer.postedEvents(foreignId).filter((e) => e.type === 'user.tool_confirmation'),
    ).toMatchObject([{ tool_use_id: 'sevt_L006', result: 'deny' }]);
  });

  it('posts a deny with its deny_message and no thread id', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('live-approval.json');
    await source.start(host);
    peer.emit(foreignId, section(s, 'live'));
    await host.waitFor(() => host.types(sessionId).includes('APPROVAL_REQUESTED'));
    await source.deliverDecision(
      decisionFor(host, sessionId, 'sevt_L006', false, 'Run only the date tests.'),
    );
    expect(peer.postedEvents(foreignId)).toEqual([
      {
        type: 'user.tool_confirmation',
        tool_use_id: 'sevt_L006',
        result: 'deny',
        deny_message: 'Run only the date tests.',
      },
    ]);
    await expect(
      source.deliverDecision(decisionFor(host, sessionId, 'sevt_L006', true)),
    ).rejects.toMatchObject({ code: 'AGENT_APPROVAL_MISMATCH' });
  });

  it('retries a confirmation the API answers with 400 "does not match"', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('live-approval.json');
    await source.start(host);
    peer.emit(foreignId, section(s, 'live'));
    await host.waitFor(() => host.types(sessionId).includes('APPROVAL_REQUESTED'));
    peer.failNextConfirmation('sevt_L006');
    await source.deliverDecision(decisionFor(host, sessionId, 'sevt_L006', true));
    const posts = peer.requests.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(posts[0]?.json).toEqual(posts[1]?.json);
    expect(
      host.logger.lines.some((l) => l.includes('confirmation not accepted yet; retrying')),
    ).toBe(true);
  });

  it('refuses, without retrying, a confirmation the API says the call cannot take', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('live-approval.json');
    await source.start(host);
    peer.emit(foreignId, section(s, 'live'));
    await host.waitFor(() => host.types(sessionId).includes('APPROVAL_REQUESTED'));
    peer.failNextConfirmation(
      'sevt_L006',
      400,
      'invalid_request_error',
      'tool_use_id sevt_L006 is not awaiting confirmation',
    );
    const error = await source
      .deliverDecision(decisionFor(host, sessionId, 'sevt_L006', true))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StudioError);
    expect(error).toMatchObject({ code: 'AGENT_APPROVAL_REVOKED' });
    expect(peer.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    // No re-request for a call that cannot be confirmed.
    source.onApprovalExpired({ ...decisionFor(host, sessionId, 'sevt_L006', true) });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(host.types(sessionId).filter((t) => t === 'APPROVAL_REQUESTED')).toHaveLength(1);
  });

  it('waits for the cross-posted ask an idle event listed first, attributes it to the subagent, and dedupes the two echoes', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('subagent-race.json');
    await source.start(host);
    peer.emit(foreignId, section(s, 'racingIdle'));
    await host.waitFor(() => host.types(sessionId).length === 7, 'the idle rows');
    expect(host.types(sessionId).includes('APPROVAL_REQUESTED')).toBe(false);
    // Confirming now would be the race the docs warn about: the studio has nothing to approve yet.
    await expect(
      source.deliverDecision({
        sessionId,
        runId: null,
        toolCallId: 'sevt_M009',
        toolName: 'bash',
        approvalId: 'approval-sevt_M009',
        argumentHash: 'sha256:' + '0'.repeat(64),
        approved: true,
        reason: null,
      }),
    ).rejects.toMatchObject({ code: 'AGENT_APPROVAL_MISMATCH' });
    expect(peer.requests.filter((r) => r.method === 'POST')).toHaveLength(0);

    peer.emit(foreignId, section(s, 'crossPostedAsk'));
    await host.waitFor(() => host.types(sessionId).includes('APPROVAL_REQUESTED'), 'the ask');
    const proposed = host.events(sessionId).find((e) => e.type === 'TOOL_PROPOSED');
    expect(proposed).toMatchObject({ askedBy: 'subagent reviewer', toolCallId: 'sevt_M009' });

    await source.deliverDecision(decisionFor(host, sessionId, 'sevt_M009', true));
    expect(peer.postedEvents(foreignId)).toEqual([
      { type: 'user.tool_confirmation', tool_use_id: 'sevt_M009', result: 'allow' },
    ]);
    // Both echoes (primary and subagent thread, different ids) arrive; neither records a decision.
    const echoes = peer.history(foreignId).filter((e) => e.type === 'user.tool_confirmation');
    expect(new Set(echoes.map((e) => e.id)).size).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(
      host
        .events(sessionId)
        .filter((e) => e.type.startsWith('APPROVAL_') || e.foreignId?.endsWith('/confirmation'))
        .map((e) => e.type),
    ).toEqual(['APPROVAL_REQUESTED', 'STUDIO_LOG']);
  });

  it('reconnects after a drop, re-pages the history and stores nothing twice', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('stream-drop.json', {
      pageSize: 2,
    });
    await source.start(host);
    peer.emit(foreignId, section(s, 'beforeDrop'));
    await host.waitFor(
      () => host.events(sessionId).some((e) => e.foreignId === 'sevt_D007/dispatched'),
      'the live events',
    );
    const listsBefore = peer.requests.filter(
      (r) => r.pathname.endsWith('/events') && r.method === 'GET',
    ).length;

    peer.dropStreams(foreignId);
    peer.appendToHistory(foreignId, section(s, 'duringDrop'));
    await host.waitFor(
      () => host.types(sessionId).includes('APPROVAL_REQUESTED'),
      'the events missed during the drop',
    );
    await peer.waitForStreams(foreignId, 1);
    peer.emit(foreignId, section(s, 'afterReconnect'));
    await host.waitFor(
      () => host.events(sessionId).some((e) => e.foreignId === 'sevt_D010'),
      'the event after the reconnect',
    );

    expect(host.statuses.map((x) => x.status)).toContain('RECONNECTING');
    expect(host.lastStatus).toBe('LIVE');
    const pages = peer.requests
      .filter((r) => r.pathname.endsWith('/events') && r.method === 'GET')
      .slice(listsBefore);
    expect(pages.map((r) => r.query.page?.[0] ?? null)).toEqual([
      null,
      'page_2',
      'page_4',
      'page_6',
      'page_8',
    ]);
    const foreignIds = host.events(sessionId).map((e) => e.foreignId);
    expect(new Set(foreignIds).size).toBe(foreignIds.length);
    // Exactly what mapping the whole history once, in order, gives.
    const reference = new ManagedAgentsMapper({ now: () => host.clock });
    const expected = peer
      .history(foreignId)
      .flatMap((e) => reference.map(e))
      .map((d) => d.foreignId);
    expect(foreignIds).toEqual(expected);
  });

  it('waits a jittered delay, drawn from its random source, before it reconnects', async () => {
    const draws: number[] = [];
    const random = () => {
      draws.push(draws.length);
      return 0.5;
    };
    const { s, peer, host, source, foreignId } = await setup('stream-drop.json', {
      pageSize: 2,
      random,
    });
    await source.start(host);
    peer.emit(foreignId, section(s, 'beforeDrop'));
    await peer.waitForStreams(foreignId, 1);
    const drawsBefore = draws.length;
    peer.dropStreams(foreignId);
    await peer.waitForStreams(foreignId, 1);
    await host.waitFor(() => host.lastStatus === 'LIVE', 'live again');
    // One draw per reconnect wait: the drop made the source wait once before it reconnected.
    expect(draws.length).toBeGreaterThan(drawsBefore);
  });

  it('keeps reading a terminated session until session.deleted, then lets the stream go', async () => {
    const { peer, host, source, foreignId, sessionId } = await setup('live-approval.json');
    await source.start(host);
    peer.emit(foreignId, [
      { id: 'sevt_End1', type: 'session.status_terminated', processed_at: '2026-11-30T12:10:00Z' },
    ]);
    await host.waitFor(() => host.types(sessionId).includes('SESSION_CLOSED'), 'the close');
    // Still following: what comes after the termination is read.
    expect(peer.openStreams(foreignId)).toBe(1);
    peer.emit(foreignId, [
      { id: 'sevt_End2', type: 'session.deleted', processed_at: '2026-11-30T12:10:01Z' },
    ]);
    await host.waitFor(() => peer.openStreams(foreignId) === 0, 'the stream to close');
    expect(host.events(sessionId).some((e) => e.foreignId === 'sevt_End2')).toBe(true);
  });

  it('reconnects after an in-band error frame', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('live-approval.json');
    await source.start(host);
    peer.errorStreams(foreignId);
    await peer.waitForStreams(foreignId, 1);
    peer.emit(foreignId, section(s, 'live'));
    await host.waitFor(() => host.types(sessionId).includes('APPROVAL_REQUESTED'));
    expect(host.logger.lines.some((l) => l.includes('Overloaded'))).toBe(true);
  });

  it('a restarted source re-pages everything and appends nothing already stored', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('live-approval.json');
    await source.start(host);
    peer.emit(foreignId, section(s, 'live'));
    await host.waitFor(() => host.types(sessionId).includes('APPROVAL_REQUESTED'));
    await source.deliverDecision(decisionFor(host, sessionId, 'sevt_L006', true));
    await host.waitFor(() =>
      peer.history(foreignId).some((e) => e.type === 'user.tool_confirmation'),
    );
    await new Promise((resolve) => setTimeout(resolve, 30));
    await source.stop();
    const before = host.events(sessionId).length;

    const again = new ManagedAgentsSource({
      sessionIds: [foreignId],
      apiKey: API_KEY,
      baseUrl: peer.url,
      logger: host.logger,
    });
    cleanups.push(() => again.stop());
    await again.start(host);
    expect(host.events(sessionId).length).toBe(before);
  });

  it('sends a message as user.message and records it once, then interrupts with user.interrupt', async () => {
    const { peer, host, source, foreignId, sessionId } = await setup('live-approval.json');
    await source.start(host);
    // The history ended mid-run; close that run first.
    peer.emit(foreignId, [
      {
        id: 'sevt_X1',
        type: 'session.status_idle',
        processed_at: '2026-11-21T09:02:00Z',
        stop_reason: { type: 'end_turn' },
        stop_details: null,
      },
    ]);
    await host.waitFor(() => host.types(sessionId).includes('RUN_SUCCEEDED'));

    const session = await host.findSession(sessionId);
    if (!session) throw new Error('no session');
    const { runId } = await source.sendMessage(session, 'Also fix the timezone test.');
    expect(peer.postedEvents(foreignId)).toEqual([
      { type: 'user.message', content: [{ type: 'text', text: 'Also fix the timezone test.' }] },
    ]);
    const sentId = String(
      peer.history(foreignId).find((e) => e.type === 'user.message' && e.id?.startsWith('sevt_F'))
        ?.id,
    );
    expect(runId).toBe(`run-${sentId}`);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const messages = host.events(sessionId).filter((e) => e.type === 'USER_MESSAGE');
    expect(messages.map((m) => ('content' in m ? m.content : null))).toEqual([
      'The date test is flaky, fix it.',
      'Also fix the timezone test.',
    ]);

    await source.cancelRun(session, runId);
    expect(peer.postedEvents(foreignId).at(-1)).toEqual({ type: 'user.interrupt' });
    // The engine records the cancellation itself once cancelRun resolved.
    await host.append(sessionId, [
      { type: 'RUN_CANCELLED', runId, reason: 'Cancelled by a human.' },
    ]);
    peer.emit(foreignId, [
      {
        id: 'sevt_X2',
        type: 'session.status_idle',
        processed_at: '2026-11-21T09:03:00Z',
        stop_reason: { type: 'end_turn' },
        stop_details: null,
      },
    ]);
    await host.waitFor(
      () => host.events(sessionId).some((e) => e.foreignId === 'sevt_X2'),
      'the end of the turn',
    );
    expect(host.types(sessionId).filter((t) => t === 'RUN_CANCELLED')).toHaveLength(1);
    expect(host.events(sessionId).find((e) => e.foreignId === 'sevt_X2')).toMatchObject({
      type: 'STUDIO_LOG',
      message: 'The cancelled turn ended',
    });

    // A restarted bridge knows the interrupt was the studio's and records no second end either.
    await source.stop();
    const before = host.events(sessionId).length;
    const again = new ManagedAgentsSource({
      sessionIds: [foreignId],
      apiKey: API_KEY,
      baseUrl: peer.url,
      logger: host.logger,
    });
    cleanups.push(() => again.stop());
    await again.start(host);
    expect(host.events(sessionId).length).toBe(before);
  });

  it('after a restart, requests again an approval that lapsed while the studio was down', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('live-approval.json');
    await source.start(host);
    peer.emit(foreignId, section(s, 'live'));
    await host.waitFor(() => host.types(sessionId).includes('APPROVAL_REQUESTED'));
    await source.stop();
    // The engine expired it while no source listened.
    const pending = host
      .events(sessionId)
      .find((e) => e.type === 'APPROVAL_REQUESTED') as ApprovalDraft;
    host.clock += 300_000;
    await host.append(sessionId, [
      { ...pending, type: 'APPROVAL_EXPIRED', status: 'EXPIRED', foreignId: undefined },
    ]);

    const again = new ManagedAgentsSource({
      sessionIds: [foreignId],
      apiKey: API_KEY,
      baseUrl: peer.url,
      logger: host.logger,
    });
    cleanups.push(() => again.stop());
    await again.start(host);
    const requests = host
      .events(sessionId)
      .filter((e) => e.type === 'APPROVAL_REQUESTED') as ApprovalDraft[];
    expect(requests.map((r) => r.approvalId)).toEqual([
      'approval-sevt_L006',
      'approval-sevt_L006-2',
    ]);
    expect(requests[1]?.expiresAt).toBe(new Date(host.clock + 120_000).toISOString());
    expect(requests[1]?.argumentHash).toBe(pending.argumentHash);
  });

  it('requests an approval again when the engine expires it while the session still waits', async () => {
    const { s, peer, host, source, foreignId, sessionId } = await setup('live-approval.json');
    await source.start(host);
    peer.emit(foreignId, section(s, 'live'));
    await host.waitFor(() => host.types(sessionId).includes('APPROVAL_REQUESTED'));
    host.clock += 121_000;
    source.onApprovalExpired(decisionFor(host, sessionId, 'sevt_L006', false));
    await host.waitFor(
      () => host.types(sessionId).filter((t) => t === 'APPROVAL_REQUESTED').length === 2,
      'the second request',
    );
    const second = host
      .events(sessionId)
      .filter((e) => e.type === 'APPROVAL_REQUESTED')[1] as ApprovalDraft;
    expect(second).toMatchObject({
      approvalId: 'approval-sevt_L006-2',
      toolCallId: 'sevt_L006',
      expiresAt: new Date(host.clock + 120_000).toISOString(),
    });
  });

  it('gives up on a session the API refuses (401) and says so', async () => {
    const { host, source } = await setup('live-approval.json', {
      apiKey: 'sk-ant-wrong-key-000000',
    });
    await source.start(host);
    expect(host.lastStatus).toBe('FAILED');
    expect(host.statuses.at(-1)?.detail).toContain('401');
  });
});
