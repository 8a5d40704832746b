import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalDraft, QuestionDraft } from '../../../server/engine/eventDrafts.ts';
import { StudioError } from '../../../server/engine/StudioError.ts';
import {
  LeviathSource,
  leviathStudioSessionId,
  type LeviathSourceOptions,
  type LeviathToolContext,
} from '../../../server/sources/leviath/LeviathSource.ts';
import type { QuestionAnswer, ToolDecision } from '../../../server/sources/Source.ts';
import {
  FakeLeviathPeer,
  type FakeInteraction,
  type FakeRun,
} from '../../fakes/FakeLeviathPeer.ts';
import { MemorySourceHost } from '../../fakes/MemorySourceHost.ts';

const TOKEN = 'lev_gateway_token_0123456789';
const TESTER = 'tester-1786409500-ee55ff66';
const LEGACY = 'legacy-1786000000-12345678';

function fixture<T>(name: string): T {
  return JSON.parse(
    readFileSync(new URL(`../../fixtures/leviath/${name}`, import.meta.url), 'utf8'),
  ) as T;
}

function frames(name: string): Record<string, unknown>[] {
  return readFileSync(new URL(`../../fixtures/leviath/${name}`, import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

interface StateFixture {
  config: Record<string, unknown>;
  runs: FakeRun[];
  interactions: Record<string, FakeInteraction>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(
  options: {
    legacy?: boolean;
    token?: string;
    empty?: boolean;
    source?: Partial<LeviathSourceOptions>;
  } = {},
) {
  const state = fixture<StateFixture>('state-at-connect.json');
  const peer = await FakeLeviathPeer.start({
    token: TOKEN,
    config: state.config,
    runs: options.empty ? [] : state.runs,
    interactions: options.empty ? {} : state.interactions,
    legacyAgentsOnly: options.legacy,
  });
  cleanups.push(() => peer.close());
  const host = new MemorySourceHost();
  const source = makeSource(peer, host, { token: options.token ?? TOKEN, ...options.source });
  return { peer, host, source, state };
}

function makeSource(
  peer: FakeLeviathPeer,
  host: MemorySourceHost,
  options: Partial<LeviathSourceOptions> = {},
): LeviathSource {
  const source = new LeviathSource({
    url: peer.url,
    token: TOKEN,
    logger: host.logger,
    backoff: { initialMs: 20, maxMs: 80 },
    settleMs: 20,
    ...options,
  });
  cleanups.push(() => source.stop());
  return source;
}

/** A new bridge on the same studio (host) and gateway: a restart. */
async function startedAgain(peer: FakeLeviathPeer, host: MemorySourceHost): Promise<LeviathSource> {
  const again = makeSource(peer, host);
  await again.start(host);
  return again;
}

function decision(
  host: MemorySourceHost,
  runId: string,
  toolCallId: string,
  approved: boolean,
): ToolDecision {
  const sessionId = leviathStudioSessionId(runId);
  const approval = host
    .events(sessionId)
    .find((e) => e.type === 'APPROVAL_REQUESTED' && e.toolCallId === toolCallId) as
    ApprovalDraft | undefined;
  if (!approval) throw new Error(`no approval for ${toolCallId}`);
  return {
    sessionId,
    runId,
    toolCallId,
    toolName: 'bash',
    approvalId: approval.approvalId,
    argumentHash: approval.argumentHash,
    approved,
    reason: approved ? null : 'no',
  };
}

async function answerFor(
  host: MemorySourceHost,
  runId: string,
  questionId: string,
  answer: Pick<QuestionAnswer, 'text' | 'choiceIndex' | 'approved'>,
): Promise<QuestionAnswer> {
  const sessionId = leviathStudioSessionId(runId);
  const question = await host.findQuestion(sessionId, questionId);
  if (!question) throw new Error(`no question ${questionId}`);
  return { sessionId, question, ...answer };
}

describe('LeviathSource', () => {
  it('opens /ws, then reads the state over REST, all with the token only in the Authorization header', async () => {
    const { peer, host, source } = await setup();
    await source.start(host);
    expect(host.lastStatus).toBe('LIVE');
    expect(peer.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /ws',
      'GET /api/config',
      'GET /api/runs?limit=100&sort=started_at&order=desc',
      'GET /api/agents/reviewer-1786409300-aa11bb22/interaction',
      'GET /api/agents/writer-1786409400-cc33dd44/interaction',
    ]);
    for (const request of peer.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(request.url).not.toContain(TOKEN);
    }
    expect([...host.sessions.keys()]).toEqual([
      'leviath-planner-1786400000-0f0f0f0f',
      'leviath-coder-1786409275-d17e8f82',
      'leviath-reviewer-1786409300-aa11bb22',
      'leviath-writer-1786409400-cc33dd44',
    ]);
    expect(host.sessions.get('leviath-coder-1786409275-d17e8f82')?.spec).toMatchObject({
      title: 'Add CSV parser',
      requestedModel: 'leviath',
      mode: 'BUILD',
    });
    expect(host.types('leviath-planner-1786400000-0f0f0f0f')).toEqual([
      'RUN_STARTED',
      'STUDIO_STAGE_CHANGED',
      'BUDGET_UPDATED',
      'RUN_SUCCEEDED',
    ]);
    expect(host.types('leviath-reviewer-1786409300-aa11bb22').slice(-2)).toEqual([
      'TOOL_PROPOSED',
      'APPROVAL_REQUESTED',
    ]);
    expect(host.events('leviath-writer-1786409400-cc33dd44').at(-1)).toMatchObject({
      type: 'STUDIO_QUESTION_ASKED',
      question: { questionId: 'ask-call_77', kind: 'FREE_TEXT', status: 'OPEN' },
    });
  });

  it('falls back to GET /api/agents on a gateway without /api/runs', async () => {
    const { peer, host, source } = await setup({ legacy: true });
    await source.start(host);
    expect(peer.requests.map((r) => r.pathname)).toContain('/api/agents');
    expect(host.sessions.size).toBe(4);
  });

  it('follows flat frames; an approval in the studio posts exactly {request_id, approved, scope} after the pre-image hook', async () => {
    const calls: string[] = [];
    const { peer, host, source } = await setup({
      source: {
        workspaceDir: '/srv/work',
        hooks: {
          beforeDecision: async (ctx) =>
            void calls.push(
              `before ${ctx.toolCallId} posts=${peer.answers.length} approved=${ctx.approved}`,
            ),
          afterToolFinished: async (ctx: LeviathToolContext) =>
            void calls.push(`after ${ctx.toolCallId} ${ctx.workspaceDir}`),
        },
      },
    });
    expect(source.checkpointsSupported).toBe(true);
    await source.start(host);
    peer.send(...frames('frames-flat.ndjson'));
    const sessionId = leviathStudioSessionId(TESTER);
    await host.waitFor(
      () =>
        host
          .events(sessionId)
          .some(
            (e) =>
              e.type === 'STUDIO_FOREIGN_EVENT' &&
              'foreignType' in e &&
              e.foreignType === 'agent_status',
          ),
      'all flat frames',
    );
    expect(host.sessions.get(sessionId)?.spec.title).toBe('tester');
    expect(host.types(sessionId)).toEqual([
      'RUN_STARTED',
      'STUDIO_LOG',
      'STUDIO_STAGE_CHANGED',
      'STUDIO_STAGE_CHANGED',
      'BUDGET_UPDATED',
      'BUDGET_UPDATED',
      'STUDIO_LOG',
      'STUDIO_LOG',
      'STUDIO_LOG',
      'STUDIO_LOG',
      'TOOL_PROPOSED',
      'TOOL_DISPATCHED',
      'TOOL_SUCCEEDED',
      'TOOL_PROPOSED',
      'APPROVAL_REQUESTED',
      'STUDIO_LOG',
      'STUDIO_LOG',
      'BUDGET_UPDATED',
      'STUDIO_FOREIGN_EVENT',
      'STUDIO_FOREIGN_EVENT',
    ]);
    expect(host.statuses.some((s) => s.detail === 'daemon linked')).toBe(true);

    peer.openInteraction(TESTER, { id: 'approve-toolu_01B', kind: 'tool_approval' });
    // As the engine does: the hook (prepareDecision) first, then the answer.
    await source.prepareDecision(decision(host, TESTER, 'toolu_01B', true));
    await source.deliverDecision(decision(host, TESTER, 'toolu_01B', true));
    expect(peer.answers).toEqual([
      { runId: TESTER, body: { request_id: 'approve-toolu_01B', approved: true, scope: 'once' } },
    ]);
    const post = peer.requests.find((r) => r.method === 'POST');
    expect(post?.url).toBe(`/api/agents/${TESTER}/interaction`);
    expect(post?.headers['content-type']).toBe('application/json');

    peer.send(...frames('frames-flat-after-approval.ndjson'));
    await host.waitFor(() => host.types(sessionId).includes('RUN_SUCCEEDED'), 'the end of the run');
    const approvals = host
      .events(sessionId)
      .filter((e) => e.type.startsWith('APPROVAL_'))
      .map((e) => e.type);
    expect(approvals).toEqual(['APPROVAL_REQUESTED']);
    expect(calls).toEqual([
      'after toolu_01A /srv/work',
      'before toolu_01B posts=0 approved=true',
      'after toolu_01B /srv/work',
    ]);
  });

  it('follows the older wrapped world frames and engine status words', async () => {
    const { peer, host, source } = await setup({ empty: true });
    await source.start(host);
    peer.openInteraction(LEGACY, { id: 'ask-call_9', kind: 'confirm' });
    peer.send(...frames('frames-world.ndjson').slice(0, 10));
    const sessionId = leviathStudioSessionId(LEGACY);
    await host.waitFor(() => host.types(sessionId).length === 12, 'the first ten frames');
    expect(host.types(sessionId)).toEqual([
      'RUN_STARTED',
      'STUDIO_LOG',
      'STUDIO_STAGE_CHANGED',
      'STUDIO_STAGE_CHANGED',
      'TOOL_PROPOSED',
      'TOOL_DISPATCHED',
      'TOOL_FAILED',
      'BUDGET_UPDATED',
      'BUDGET_UPDATED',
      'STUDIO_LOG',
      'STUDIO_QUESTION_ASKED',
      'STUDIO_LOG',
    ]);
    await source.deliverAnswer(
      await answerFor(host, LEGACY, 'ask-call_9', {
        text: null,
        choiceIndex: null,
        approved: true,
      }),
    );
    expect(peer.answers.at(-1)?.body).toEqual({
      request_id: 'ask-call_9',
      approved: true,
      choice_index: 0,
    });
    peer.send(...frames('frames-world.ndjson').slice(10));
    await host.waitFor(() => host.types(sessionId).includes('RUN_FAILED'), 'the failed run');
    // Answered in the studio: neither the settle check nor the run's end closes it as "elsewhere".
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(host.events(sessionId).filter((e) => e.type === 'STUDIO_QUESTION_ANSWERED')).toEqual([]);
    expect(host.types(sessionId).slice(11)).toEqual([
      'STUDIO_LOG',
      'STUDIO_FOREIGN_EVENT',
      'STUDIO_LOG',
      'RUN_PAUSED',
      'RUN_STARTED',
      'RUN_FAILED',
    ]);
  });

  describe('answers every interaction kind with the exact documented body', () => {
    interface Case {
      name: string;
      request: FakeInteraction;
      decision?: { approved: boolean; reason: string | null };
      answer?: Pick<QuestionAnswer, 'text' | 'choiceIndex' | 'approved'>;
      expectedKind?: string;
      expectedBody: Record<string, unknown>;
    }
    const { runId, cases } = fixture<{ runId: string; cases: Case[] }>('interactions.json');

    it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      const { peer, host, source } = await setup({ empty: true });
      peer.addRun({
        run_id: runId,
        agent_name: 'asker',
        status: 'waiting_input',
        current_stage: 'implement',
        workdir: '/srv/work/ask',
        title: 'Ask things',
      });
      await source.start(host);
      peer.openInteraction(runId, c.request);
      peer.send({ type: 'interaction_needed', agent_id: runId, run_id: runId, request: c.request });
      const sessionId = leviathStudioSessionId(runId);
      if (c.decision) {
        const toolCallId = c.request.id.replace(/^approve-/, '');
        await host.waitFor(
          () => host.types(sessionId).includes('APPROVAL_REQUESTED'),
          'the approval',
        );
        await source.deliverDecision({
          ...decision(host, runId, toolCallId, c.decision.approved),
          reason: c.decision.reason,
        });
      } else if (c.answer) {
        await host.waitFor(
          () => host.types(sessionId).includes('STUDIO_QUESTION_ASKED'),
          'the question',
        );
        const question = await host.findQuestion(sessionId, c.request.id);
        expect(question?.kind).toBe(c.expectedKind);
        await source.deliverAnswer(await answerFor(host, runId, c.request.id, c.answer));
      }
      expect(peer.answers).toEqual([{ runId, body: c.expectedBody }]);
    });
  });

  it('closes a question answered elsewhere when Leviath answers 404, and refuses the answer', async () => {
    const { peer, host, source } = await setup();
    await source.start(host);
    const runId = 'writer-1786409400-cc33dd44';
    peer.closeInteraction('ask-call_77');
    const error = await source
      .deliverAnswer(
        await answerFor(host, runId, 'ask-call_77', {
          text: '0.5.0',
          choiceIndex: null,
          approved: null,
        }),
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StudioError);
    expect(error).toMatchObject({ code: 'STUDIO_QUESTION_CLOSED' });
    const closed = host.events(leviathStudioSessionId(runId)).at(-1) as QuestionDraft;
    expect(closed).toMatchObject({
      type: 'STUDIO_QUESTION_ANSWERED',
      question: { questionId: 'ask-call_77', status: 'ANSWERED_ELSEWHERE' },
    });
    expect(peer.requests.filter((r) => r.method === 'POST').map((r) => r.json)).toEqual([
      { request_id: 'ask-call_77', value: '0.5.0' },
    ]);
  });

  it('closes an approval answered elsewhere when Leviath answers 404', async () => {
    const { peer, host, source } = await setup();
    await source.start(host);
    const runId = 'reviewer-1786409300-aa11bb22';
    peer.closeInteraction('approve-toolu_01RM');
    await expect(
      source.deliverDecision(decision(host, runId, 'toolu_01RM', true)),
    ).rejects.toMatchObject({ code: 'AGENT_APPROVAL_REVOKED' });
    expect(host.types(leviathStudioSessionId(runId)).slice(-2)).toEqual([
      'APPROVAL_EXPIRED',
      'TOOL_OUTCOME_UNKNOWN',
    ]);
  });

  it('answers no, once, when the studio revokes an approval Leviath waits on', async () => {
    const { peer, host, source } = await setup();
    await source.start(host);
    const runId = 'reviewer-1786409300-aa11bb22';
    const {
      approved: _approved,
      reason: _reason,
      ...revoked
    } = decision(host, runId, 'toolu_01RM', false);
    source.onApprovalRevoked(revoked);
    // Told twice (a pause, then the kill switch): Leviath hears one answer.
    source.onApprovalRevoked(revoked);
    await host.waitFor(() => peer.answers.length > 0, 'the answer to the revoked approval');
    expect(peer.answers).toEqual([
      { runId, body: { request_id: 'approve-toolu_01RM', approved: false, scope: 'once' } },
    ]);
    source.onApprovalRevoked(revoked);
    expect(peer.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    // And a decision arriving after it is refused, not sent.
    await expect(
      source.deliverDecision(decision(host, runId, 'toolu_01RM', true)),
    ).rejects.toMatchObject({ code: 'AGENT_APPROVAL_MISMATCH' });
    expect(peer.answers).toHaveLength(1);
  });

  it('after a restart, answers no to an approval the studio revoked while it could not tell Leviath', async () => {
    const { peer, host, source } = await setup();
    await source.start(host);
    const runId = 'reviewer-1786409300-aa11bb22';
    const sessionId = leviathStudioSessionId(runId);
    const asked = decision(host, runId, 'toolu_01RM', false);
    await source.stop();
    // Recorded by the engine while the bridge was down (as a kill switch during a restart).
    await host.recordRevoked(sessionId, asked);
    await startedAgain(peer, host);
    await host.waitFor(() => peer.answers.length > 0, 'the answer to the revoked approval');
    expect(peer.answers).toEqual([
      { runId, body: { request_id: 'approve-toolu_01RM', approved: false, scope: 'once' } },
    ]);
  });

  it('notices a prompt answered elsewhere once the run stops waiting', async () => {
    const { peer, host, source } = await setup();
    await source.start(host);
    const runId = 'writer-1786409400-cc33dd44';
    peer.closeInteraction('ask-call_77');
    peer.send(
      {
        type: 'agent_status',
        agent_id: runId,
        run_id: runId,
        status: 'waiting_input',
        stage: 'draft',
        iteration: 1,
        tool_calls: 1,
        accepts_messages: true,
        wait_reason: { reason: 'user_prompt' },
      },
      {
        type: 'agent_status',
        agent_id: runId,
        run_id: runId,
        status: 'running',
        stage: 'draft',
        iteration: 1,
        tool_calls: 1,
        accepts_messages: true,
      },
    );
    const sessionId = leviathStudioSessionId(runId);
    await host.waitFor(
      () => host.types(sessionId).includes('STUDIO_QUESTION_ANSWERED'),
      'the closed card',
    );
    expect((await host.findQuestion(sessionId, 'ask-call_77'))?.status).toBe('ANSWERED_ELSEWHERE');
  });

  it('reconnects after a drop, re-reads the state, and stores nothing twice', async () => {
    const { peer, host, source } = await setup();
    await source.start(host);
    const before = host.allEvents().length;
    peer.dropSockets();
    // While the bridge is away, the coder moves on and the writer's question is answered elsewhere.
    peer.updateRun('coder-1786409275-d17e8f82', {
      current_stage: 'implement',
      prompt_tokens: 2000,
    });
    peer.closeInteraction('ask-call_77');
    await host.waitFor(
      () => host.statuses.filter((s) => s.status === 'LIVE').length >= 2,
      'the reconnect',
    );
    await peer.waitForSockets(1);
    const coder = leviathStudioSessionId('coder-1786409275-d17e8f82');
    expect(host.events(coder).slice(-2)).toMatchObject([
      { type: 'STUDIO_STAGE_CHANGED', fromStage: 'plan', toStage: 'implement' },
      { type: 'BUDGET_UPDATED' },
    ]);
    expect(
      (await host.findQuestion(leviathStudioSessionId('writer-1786409400-cc33dd44'), 'ask-call_77'))
        ?.status,
    ).toBe('ANSWERED_ELSEWHERE');
    expect(host.allEvents().length).toBe(before + 3);
    expect(host.statuses.map((s) => s.status)).toContain('RECONNECTING');

    peer.send({
      type: 'log',
      agent_id: 'coder-1786409275-d17e8f82',
      run_id: 'coder-1786409275-d17e8f82',
      line: 'after the reconnect',
    });
    await host.waitFor(() =>
      host
        .events(coder)
        .some(
          (e) => e.type === 'STUDIO_LOG' && 'message' in e && e.message === 'after the reconnect',
        ),
    );
  });

  it('steers a run with POST .../message and cancels it with DELETE', async () => {
    const { peer, host, source } = await setup();
    await source.start(host);
    const runId = 'coder-1786409275-d17e8f82';
    const session = await host.findSession(leviathStudioSessionId(runId));
    if (!session) throw new Error('no session');
    expect(await source.sendMessage(session, 'Prefer the csv crate.')).toEqual({ runId });
    expect(peer.requests.at(-1)).toMatchObject({
      method: 'POST',
      url: `/api/agents/${runId}/message`,
      json: { message: 'Prefer the csv crate.' },
    });
    expect(host.events(session.sessionId).at(-1)).toMatchObject({
      type: 'USER_MESSAGE',
      content: 'Prefer the csv crate.',
      runId,
    });
    await source.cancelRun(session, runId);
    expect(peer.requests.at(-1)).toMatchObject({ method: 'DELETE', url: `/api/agents/${runId}` });
    // The engine records RUN_CANCELLED; Leviath's own completion frame adds no second end.
    peer.send({
      type: 'agent_completed',
      agent_id: runId,
      run_id: runId,
      status: 'cancelled',
      result: null,
    });
    peer.send({ type: 'log', agent_id: runId, run_id: runId, line: 'after cancel' });
    await host.waitFor(() =>
      host
        .events(session.sessionId)
        .some((e) => e.type === 'STUDIO_LOG' && 'message' in e && e.message === 'after cancel'),
    );
    expect(
      host.types(session.sessionId).filter((t) => t.startsWith('RUN_') && t !== 'RUN_STARTED'),
    ).toEqual([]);
    expect(
      host.events(session.sessionId).find((e) => e.foreignId === `${runId}/completed`),
    ).toMatchObject({ type: 'STUDIO_LOG', message: 'Cancel sent to Leviath' });
    const finished = await host.findSession(leviathStudioSessionId('planner-1786400000-0f0f0f0f'));
    if (!finished) throw new Error('no session');
    await expect(source.sendMessage(finished, 'hi')).rejects.toMatchObject({
      code: 'AGENT_RUN_NOT_ACTIVE',
    });
  });

  it('refuses a decision when the pre-image checkpoint fails, and posts nothing', async () => {
    const { peer, host, source } = await setup({ source: { workspaceDir: '/srv/work' } });
    // Wired after construction, as the server does once its engine exists.
    source.configureWorkspace({
      hooks: { beforeDecision: () => Promise.reject(new Error('disk full')) },
      projectIdFor: (run) => `project-${run.runId}`,
    });
    await source.start(host);
    expect(host.sessions.get('leviath-reviewer-1786409300-aa11bb22')?.spec.projectId).toBe(
      'project-reviewer-1786409300-aa11bb22',
    );
    await expect(
      source.prepareDecision(decision(host, 'reviewer-1786409300-aa11bb22', 'toolu_01RM', true)),
    ).rejects.toMatchObject({ code: 'AGENT_HOST_UNAVAILABLE' });
    expect(peer.answers).toEqual([]);
  });

  it('says checkpoints are unsupported without a workspace folder', async () => {
    const { source } = await setup({ empty: true });
    expect(source.checkpointsSupported).toBe(false);
    expect(source.checkpointsUnsupportedReason).toContain('--leviath-workspace');
  });

  it('gives up when the gateway refuses the token', async () => {
    const { host, source } = await setup({ token: 'wrong-token-value' });
    await source.start(host);
    expect(host.lastStatus).toBe('FAILED');
    expect(host.statuses.at(-1)?.detail).toContain('LEVIATH_TOKEN');
  });
});
