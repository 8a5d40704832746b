/**
 * The kill switch with the bridge sources: the real studio server (port 0, temp data dir, no
 * demo) against each source's fake peer over real sockets. Turning it on interrupts the run
 * through the source's documented wire call (Managed Agents: `user.interrupt` posted to the
 * session's events; Leviath: `DELETE /api/agents/{id}`), revokes the pending approval (a later
 * decision is refused with AGENT_APPROVAL_REVOKED and never reaches the runtime), and refuses new
 * runs with AGENT_DISABLED until it is turned off.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ManagedAgentsSource } from '../../../server/sources/managed-agents/ManagedAgentsSource.ts';
import { LeviathSource } from '../../../server/sources/leviath/LeviathSource.ts';
import { FakeManagedAgentsPeer, type FakeEvent } from '../../fakes/FakeManagedAgentsPeer.ts';
import {
  FakeLeviathPeer,
  type FakeInteraction,
  type FakeRun,
} from '../../fakes/FakeLeviathPeer.ts';
import {
  APPROVE,
  SEND,
  attach,
  decideInput,
  failCode,
  keepAlive,
  key,
  makeClient,
  ok,
  startHarness,
  waitForEvent,
  type Attachment,
  type Ev,
  type Harness,
  type StudioClient,
} from '../harness.ts';
import { SET_POLICY, toolCall, type PolicyData } from '../approvalKit.ts';

const API_KEY = 'sk-ant-api03-killswitch-aabbccddeeff';
const TOKEN = 'lev-killswitch-token-112233445566';

const disposers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const d of disposers.splice(0).reverse()) await d();
});

function json<T>(path: string): T {
  return JSON.parse(readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8')) as T;
}

async function studio(source: ManagedAgentsSource | LeviathSource): Promise<Harness> {
  const h = await startHarness({ demo: false, sources: [source] });
  disposers.push(() => h.dispose());
  return h;
}

async function setKill(c: StudioClient, on: boolean, expectedRevision: string) {
  return (
    await ok<{ setCrowdyStudioAgentPolicy: PolicyData }>(c, SET_POLICY, {
      input: { idempotencyKey: key('policy'), appId: '1', expectedRevision, killSwitch: on },
    })
  ).setCrowdyStudioAgentPolicy;
}

const send = (a: Attachment, content: string) => ({
  input: {
    idempotencyKey: key('send'),
    sessionId: a.sessionId,
    clientEpoch: a.clientEpoch,
    content,
  },
});

const asApproval = (e: Ev) => ({
  toolCallId: e.approvalToolCallId!,
  argumentHash: e.argumentHash!,
});

describe('the kill switch stops the bridge sources', () => {
  it('Managed Agents: interrupts the session over the API, revokes the ask, refuses new runs', async () => {
    const s = json<{ session: Record<string, unknown>; history: FakeEvent[]; live: FakeEvent[] }>(
      'managed-agents/live-approval.json',
    );
    const foreignId = String(s.session.id);
    const peer = await FakeManagedAgentsPeer.start({
      apiKey: API_KEY,
      sessions: { [foreignId]: { session: s.session, history: s.history } },
    });
    disposers.push(() => peer.close());
    const h = await studio(
      new ManagedAgentsSource({
        sessionIds: [foreignId],
        apiKey: API_KEY,
        baseUrl: peer.url,
        backoff: { initialMs: 20, maxMs: 50 },
      }),
    );
    const c = makeClient(h);
    const sessionId = `ma-${foreignId}`;
    peer.emit(foreignId, s.live);
    const { event } = await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'APPROVAL_REQUESTED',
      'the approval',
    );
    const a = await attach(c, sessionId);
    h.track(keepAlive(c, a));

    const on = await setKill(c, true, '0');
    expect(on).toMatchObject({ killSwitch: true, disableReasonCode: 'KILL_SWITCH' });
    expect(peer.postedEvents(foreignId)).toEqual([{ type: 'user.interrupt' }]);
    expect(peer.requests.find((r) => r.method === 'POST')?.headers.authorization).toBe(
      `Bearer ${API_KEY}`,
    );
    await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_CANCELLED' && e.runId === event.runId,
      'the run cancelled',
    );
    const call = await toolCall(c, event.approvalToolCallId!);
    expect(call.approval?.status).toBe('REVOKED');
    expect(call.status).toBe('CANCELLED');
    expect(await failCode(c, APPROVE, decideInput(a, asApproval(event)))).toBe(
      'AGENT_APPROVAL_REVOKED',
    );
    expect(await failCode(c, SEND, send(a, 'Carry on'))).toBe('AGENT_DISABLED');
    // Nothing but the interrupt reached the runtime: no confirmation, no message.
    expect(peer.postedEvents(foreignId)).toEqual([{ type: 'user.interrupt' }]);

    await setKill(c, false, '1');
    await ok(c, SEND, send(a, 'Carry on'));
    expect(peer.postedEvents(foreignId).map((e) => e.type)).toEqual([
      'user.interrupt',
      'user.message',
    ]);
  });

  it('Leviath: cancels the run with DELETE /api/agents/{id}, revokes the ask, refuses new runs', async () => {
    const state = json<{
      config: Record<string, unknown>;
      runs: FakeRun[];
      interactions: Record<string, FakeInteraction>;
    }>('leviath/state-at-connect.json');
    const peer = await FakeLeviathPeer.start({
      token: TOKEN,
      config: state.config,
      runs: state.runs,
      interactions: state.interactions,
    });
    disposers.push(() => peer.close());
    const h = await studio(
      new LeviathSource({
        url: peer.url,
        token: TOKEN,
        backoff: { initialMs: 20, maxMs: 50 },
        settleMs: 20,
      }),
    );
    const c = makeClient(h);
    const runId = 'reviewer-1786409300-aa11bb22';
    const sessionId = `leviath-${runId}`;
    const { event } = await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'APPROVAL_REQUESTED',
      'the approval',
    );
    const a = await attach(c, sessionId);
    h.track(keepAlive(c, a));

    await setKill(c, true, '0');
    // Every agent at once: each active Leviath run gets its DELETE, this one's included.
    const deletes = peer.requests.filter((r) => r.method === 'DELETE');
    expect(deletes.map((r) => r.pathname).sort()).toEqual(
      [
        '/api/agents/coder-1786409275-d17e8f82',
        `/api/agents/${runId}`,
        '/api/agents/writer-1786409400-cc33dd44',
      ].sort(),
    );
    for (const d of deletes) expect(d.headers.authorization).toBe(`Bearer ${TOKEN}`);
    await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_CANCELLED' && e.runId === runId,
      'the run cancelled',
    );
    const call = await toolCall(c, event.approvalToolCallId!);
    expect(call.approval?.status).toBe('REVOKED');
    expect(call.status).toBe('CANCELLED');
    expect(await failCode(c, APPROVE, decideInput(a, asApproval(event)))).toBe(
      'AGENT_APPROVAL_REVOKED',
    );
    expect(await failCode(c, SEND, send(a, 'Keep going'))).toBe('AGENT_DISABLED');
    // The runtime got the cancellation and nothing else: no interaction answer, no message.
    expect(peer.answers).toEqual([]);
    expect(peer.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });
});
