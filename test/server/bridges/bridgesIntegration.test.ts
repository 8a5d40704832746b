/**
 * The real studio server (in-process, port 0, temp data dir, no demo) with a bridge source
 * against its fake peer, driven through the real urql + graphql-ws client: what lands in the
 * store, and what the runtime receives when a human decides in the studio.
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
  attach,
  decideInput,
  failCode,
  history,
  keepAlive,
  key,
  makeClient,
  ok,
  startHarness,
  waitForEvent,
  waitUntil,
  type Harness,
} from '../harness.ts';

const API_KEY = 'sk-ant-api03-integration-aabbccddeeff';
const TOKEN = 'lev-integration-token-112233445566';

const disposers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const d of disposers.splice(0).reverse()) await d();
});

function json<T>(path: string): T {
  return JSON.parse(readFileSync(new URL(`../../fixtures/${path}`, import.meta.url), 'utf8')) as T;
}

const SOURCE_QUERY = `query Sources { studioSources { sourceId kind status detail } }`;
const CHECKPOINTS_QUERY = `query C($sessionId: String!) { studioCheckpoints(sessionId: $sessionId) { supported unsupportedReason edges { cursor } } }`;
const SESSION_QUERY = `query S($sessionId: String!) {
  crowdyStudioAgentSession(sessionId: $sessionId) {
    sessionId studioSource studioTitle studioCheckpointsSupported
    currentRun { runId status }
    studioPendingApprovals { approvalId toolCallId argumentHash status studioToolCall { toolName askedBy status } }
  }
}`;
const ANSWER = `mutation Answer($input: StudioAnswerQuestionInput!) {
  studioAnswerQuestion(input: $input) { questionId kind status answerText answerChoiceIndex answerApproved }
}`;

interface SessionView {
  sessionId: string;
  studioSource: string;
  studioTitle: string | null;
  studioCheckpointsSupported: boolean;
  currentRun: { runId: string; status: string } | null;
  studioPendingApprovals: {
    approvalId: string;
    toolCallId: string;
    argumentHash: string;
    status: string;
    studioToolCall: { toolName: string; askedBy: string | null; status: string } | null;
  }[];
}

async function studio(sources: (ManagedAgentsSource | LeviathSource)[]): Promise<Harness> {
  const h = await startHarness({ demo: false, sources });
  disposers.push(() => h.dispose());
  return h;
}

describe('bridges in the real server', () => {
  it('Managed Agents: an ask becomes a pending approval, approving it posts the documented confirmation, the run finishes', async () => {
    const s = json<{
      session: Record<string, unknown>;
      history: FakeEvent[];
      live: FakeEvent[];
      afterAllow: FakeEvent[];
    }>('managed-agents/live-approval.json');
    const foreignId = String(s.session.id);
    const peer = await FakeManagedAgentsPeer.start({
      apiKey: API_KEY,
      sessions: { [foreignId]: { session: s.session, history: s.history } },
    });
    disposers.push(() => peer.close());
    peer.onEventsSent = (id, sent) => {
      if (sent.some((e) => e.type === 'user.tool_confirmation'))
        setTimeout(() => peer.emit(id, s.afterAllow), 20);
    };
    const h = await studio([
      new ManagedAgentsSource({
        sessionIds: [foreignId],
        apiKey: API_KEY,
        baseUrl: peer.url,
        backoff: { initialMs: 20, maxMs: 50 },
      }),
    ]);
    const c = makeClient(h);
    const sessionId = `ma-${foreignId}`;

    const sources = await ok<{ studioSources: { sourceId: string; status: string }[] }>(
      c,
      SOURCE_QUERY,
    );
    expect(sources.studioSources).toContainEqual(
      expect.objectContaining({ sourceId: 'managed-agents', status: 'LIVE' }),
    );
    const caughtUp = await history(c, sessionId);
    expect(caughtUp.map((e) => e.type)).toEqual([
      'SESSION_CREATED',
      'MODE_SELECTED',
      'USER_MESSAGE',
      'RUN_STARTED',
      'STUDIO_LOG',
      'TOOL_PROPOSED',
      'TOOL_DISPATCHED',
      'TOOL_SUCCEEDED',
    ]);
    const checkpoints = await ok<{
      studioCheckpoints: { supported: boolean; unsupportedReason: string | null; edges: unknown[] };
    }>(c, CHECKPOINTS_QUERY, { sessionId });
    expect(checkpoints.studioCheckpoints).toMatchObject({ supported: false, edges: [] });
    expect(checkpoints.studioCheckpoints.unsupportedReason).toContain('no checkpoint API');

    peer.emit(foreignId, s.live);
    const { event: requested } = await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'APPROVAL_REQUESTED',
      'the approval',
    );
    const view = (
      await ok<{ crowdyStudioAgentSession: SessionView }>(c, SESSION_QUERY, { sessionId })
    ).crowdyStudioAgentSession;
    expect(view).toMatchObject({
      studioSource: 'managed-agents',
      studioTitle: 'Fix the flaky test',
      studioCheckpointsSupported: false,
      currentRun: { status: 'WAITING_FOR_APPROVAL' },
    });
    expect(view.studioPendingApprovals).toEqual([
      expect.objectContaining({
        toolCallId: 'sevt_L006',
        status: 'PENDING',
        studioToolCall: expect.objectContaining({
          toolName: 'bash',
          status: 'WAITING_FOR_APPROVAL',
        }),
      }),
    ]);

    const a = await attach(c, sessionId);
    const stop = keepAlive(c, a);
    h.track(stop);
    const approved = await ok<{ crowdyStudioAgentApproveTool: { status: string } }>(
      c,
      APPROVE,
      decideInput(a, {
        toolCallId: requested.approvalToolCallId!,
        argumentHash: requested.argumentHash!,
      }),
    );
    expect(approved.crowdyStudioAgentApproveTool.status).toBe('GRANTED');
    // The outbox delivers the recorded decision after its commit.
    await waitUntil(() => peer.requests.some((r) => r.method === 'POST'), 'the confirmation');
    const posts = peer.requests.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(1);
    expect(posts[0]?.json).toEqual({
      events: [{ type: 'user.tool_confirmation', tool_use_id: 'sevt_L006', result: 'allow' }],
    });
    expect(posts[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);

    const { events } = await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'RUN_SUCCEEDED',
      'the end of the run',
    );
    const tail = events
      .filter((e) => BigInt(e.seq) > BigInt(requested.seq) && !e.type.startsWith('CLIENT_'))
      .map((e) => e.type);
    // The grant commits first; the outbox then sends the confirmation (its STUDIO_LOG row).
    expect(tail).toEqual([
      'STUDIO_LOG',
      'APPROVAL_GRANTED',
      'STUDIO_LOG',
      'TOOL_DISPATCHED',
      'STUDIO_LOG',
      'TOOL_SUCCEEDED',
      'ASSISTANT_MESSAGE',
      'RUN_SUCCEEDED',
    ]);
    expect(JSON.stringify(events)).not.toContain(API_KEY);
    expect(h.logs.join('\n')).not.toContain(API_KEY);
  });

  it('Managed Agents: when the engine expires an approval the session still waits on, it is requested again and stays decidable', async () => {
    const s = json<{ session: Record<string, unknown>; history: FakeEvent[]; live: FakeEvent[] }>(
      'managed-agents/live-approval.json',
    );
    const foreignId = String(s.session.id);
    const peer = await FakeManagedAgentsPeer.start({
      apiKey: API_KEY,
      sessions: { [foreignId]: { session: s.session, history: [...s.history, ...s.live] } },
    });
    disposers.push(() => peer.close());
    const h = await studio([
      new ManagedAgentsSource({
        sessionIds: [foreignId],
        apiKey: API_KEY,
        baseUrl: peer.url,
        approvalTtlMs: 1500,
      }),
    ]);
    const c = makeClient(h);
    const sessionId = `ma-${foreignId}`;
    const { event: second, events } = await waitForEvent(
      c,
      sessionId,
      (e) => e.type === 'APPROVAL_REQUESTED' && e.approvalId === 'approval-sevt_L006-2',
      'the second request',
    );
    const flow = events
      .filter((e) => e.approvalToolCallId === 'sevt_L006')
      .map((e) => [e.type, e.approvalId]);
    expect(flow.slice(0, 3)).toEqual([
      ['APPROVAL_REQUESTED', 'approval-sevt_L006'],
      ['APPROVAL_EXPIRED', 'approval-sevt_L006'],
      ['APPROVAL_REQUESTED', 'approval-sevt_L006-2'],
    ]);
    const a = await attach(c, sessionId);
    h.track(keepAlive(c, a));
    const approved = await ok<{
      crowdyStudioAgentApproveTool: { approvalId: string; status: string };
    }>(c, APPROVE, decideInput(a, { toolCallId: 'sevt_L006', argumentHash: second.argumentHash! }));
    expect(approved.crowdyStudioAgentApproveTool).toMatchObject({
      approvalId: 'approval-sevt_L006-2',
      status: 'GRANTED',
    });
    await waitUntil(() => peer.postedEvents(foreignId).length > 0, 'the confirmation');
    expect(peer.postedEvents(foreignId)).toEqual([
      { type: 'user.tool_confirmation', tool_use_id: 'sevt_L006', result: 'allow' },
    ]);
  });

  it('Leviath: runs become sessions, an approval and a question round-trip, a stale answer closes its card', async () => {
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
    const h = await studio([
      new LeviathSource({
        url: peer.url,
        token: TOKEN,
        backoff: { initialMs: 20, maxMs: 50 },
        settleMs: 20,
      }),
    ]);
    const c = makeClient(h);

    const reviewer = 'leviath-reviewer-1786409300-aa11bb22';
    const view = (
      await ok<{ crowdyStudioAgentSession: SessionView }>(c, SESSION_QUERY, { sessionId: reviewer })
    ).crowdyStudioAgentSession;
    expect(view).toMatchObject({
      studioSource: 'leviath',
      studioTitle: 'Clean and rebuild',
      studioCheckpointsSupported: false,
    });
    const pending = view.studioPendingApprovals[0];
    if (!pending) throw new Error('no pending approval');
    expect(pending).toMatchObject({ toolCallId: 'toolu_01RM', status: 'PENDING' });

    const a = await attach(c, reviewer);
    h.track(keepAlive(c, a));
    await ok(c, APPROVE, decideInput(a, pending));
    await waitUntil(() => peer.answers.length > 0, 'the answer to Leviath');
    expect(peer.answers).toEqual([
      {
        runId: 'reviewer-1786409300-aa11bb22',
        body: { request_id: 'approve-toolu_01RM', approved: true, scope: 'once' },
      },
    ]);

    const writer = 'leviath-writer-1786409400-cc33dd44';
    const w = await attach(c, writer);
    h.track(keepAlive(c, w));
    const answered = await ok<{ studioAnswerQuestion: { status: string; answerText: string } }>(
      c,
      ANSWER,
      {
        input: {
          idempotencyKey: key('answer'),
          sessionId: writer,
          clientEpoch: w.clientEpoch,
          questionId: 'ask-call_77',
          text: '0.5.0',
        },
      },
    );
    expect(answered.studioAnswerQuestion).toMatchObject({
      status: 'ANSWERED',
      answerText: '0.5.0',
    });
    expect(peer.answers.at(-1)).toEqual({
      runId: 'writer-1786409400-cc33dd44',
      body: { request_id: 'ask-call_77', value: '0.5.0' },
    });

    // A second question that someone answers in another console before the studio does.
    const late: FakeInteraction = {
      id: 'ask-call_78',
      kind: 'multiple_choice',
      prompt: 'Which channel?',
      options: ['stable', 'beta'],
      tool_name: null,
      tool_arguments: null,
      required: true,
      stage_name: 'draft',
      body: null,
      body_format: 'plain',
    };
    peer.openInteraction('writer-1786409400-cc33dd44', late);
    peer.send({
      type: 'interaction_needed',
      agent_id: 'writer-1786409400-cc33dd44',
      run_id: 'writer-1786409400-cc33dd44',
      request: late,
    });
    const QUESTIONS = `query H($sessionId: String!) { crowdyStudioAgentHistory(sessionId: $sessionId, first: 200) { events { __typename ... on StudioQuestionEvent { type question { questionId status } } } } }`;
    const questionEvents = async () =>
      (
        await ok<{
          crowdyStudioAgentHistory: {
            events: { type?: string; question?: { questionId: string; status: string } }[];
          };
        }>(c, QUESTIONS, { sessionId: writer })
      ).crowdyStudioAgentHistory.events.filter((e) => e.question);
    // This question's own event (the run already has the first question's).
    await waitUntil(
      async () =>
        (await questionEvents()).some(
          (e) => e.type === 'STUDIO_QUESTION_ASKED' && e.question?.questionId === 'ask-call_78',
        ),
      'the second question',
    );
    peer.closeInteraction('ask-call_78');
    const code = await failCode(c, ANSWER, {
      input: {
        idempotencyKey: key('answer'),
        sessionId: writer,
        clientEpoch: w.clientEpoch,
        questionId: 'ask-call_78',
        choiceIndex: 1,
      },
    });
    expect(code).toBe('STUDIO_QUESTION_CLOSED');
    expect(
      (await questionEvents()).map((e) => [e.type, e.question?.questionId, e.question?.status]),
    ).toEqual([
      ['STUDIO_QUESTION_ASKED', 'ask-call_77', 'OPEN'],
      ['STUDIO_QUESTION_ANSWERED', 'ask-call_77', 'ANSWERED'],
      ['STUDIO_QUESTION_ASKED', 'ask-call_78', 'OPEN'],
      ['STUDIO_QUESTION_ANSWERED', 'ask-call_78', 'ANSWERED_ELSEWHERE'],
    ]);
    expect(h.logs.join('\n')).not.toContain(TOKEN);
  });
});
