import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type {
  ApprovalDraft,
  BudgetDraft,
  EventDraft,
  QuestionDraft,
  ToolDraft,
} from '../../../server/engine/eventDrafts.ts';
import {
  LeviathMapper,
  normalizeFrame,
  runWordOf,
  type LeviathFrame,
  type MappedFrame,
} from '../../../server/sources/leviath/LeviathMapper.ts';
import { leviathStudioSessionId } from '../../../server/sources/leviath/LeviathSource.ts';
import { foreignArgumentHash } from '../../../server/sources/redact.ts';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const TESTER = 'tester-1786409500-ee55ff66';
const LEGACY = 'legacy-1786000000-12345678';

function ndjson(name: string): LeviathFrame[] {
  return readFileSync(new URL(`../../fixtures/leviath/${name}`, import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as LeviathFrame);
}

function state(): { runs: LeviathFrame[]; interactions: Record<string, LeviathFrame> } {
  return JSON.parse(
    readFileSync(new URL('../../fixtures/leviath/state-at-connect.json', import.meta.url), 'utf8'),
  ) as {
    runs: LeviathFrame[];
    interactions: Record<string, LeviathFrame>;
  };
}

function mapper(answered: Set<string> = new Set()) {
  return new LeviathMapper({
    now: () => NOW,
    sessionIdFor: leviathStudioSessionId,
    secrets: ['lev-token-secret'],
    answeredInStudio: (id) => answered.has(id),
  });
}

function types(mapped: MappedFrame[]): string[][] {
  return mapped.map((m) => m.drafts.map((d) => d.type));
}

describe('normalizeFrame', () => {
  it('unwraps world frames and raw WorldEvents into the flat dialect', () => {
    expect(
      normalizeFrame({
        type: 'world',
        event: {
          event: 'stage_transition',
          run_id: 'r',
          agent_id: 'r',
          from: 'a',
          to: 'b',
          iteration: 2,
        },
      }),
    ).toMatchObject({
      dialect: 'world',
      frame: { type: 'stage_transition', run_id: 'r', from: 'a', to: 'b', iteration: 2 },
    });
    expect(
      normalizeFrame({
        event: 'spawned',
        run_id: 'r',
        agent_id: 'r',
        blueprint: 'coder',
        parent_run_id: 'p',
      }),
    ).toMatchObject({
      dialect: 'raw',
      frame: { type: 'agent_spawned', parent_id: 'p', blueprint: 'coder' },
    });
    expect(
      normalizeFrame({ event: 'context', run_id: 'r', total_tokens: 1, max_tokens: 2 }).frame.type,
    ).toBe('context_update');
    expect(
      normalizeFrame({ type: 'world', event: { event: 'checkpointed', run_id: 'r' } }).frame.type,
    ).toBe('world.checkpointed');
  });

  it('reads both families of status words', () => {
    expect(
      ['idle', 'active', 'waiting', 'paused', 'complete', 'error', 'cancelled'].map(runWordOf),
    ).toEqual(['running', 'running', 'waiting', 'paused', 'complete', 'error', 'cancelled']);
    expect(['starting', 'running', 'waiting_input', 'complete_interactive'].map(runWordOf)).toEqual(
      ['starting', 'running', 'waiting', 'complete'],
    );
    expect(runWordOf('hibernating')).toBeNull();
  });
});

describe('LeviathMapper: state at connect', () => {
  it('starts each run, places its stage, shows its tokens and ends finished runs', () => {
    const m = mapper();
    const mapped = state().runs.map((run) => m.applyRunMeta(run));
    expect(types(mapped)).toEqual([
      ['RUN_STARTED', 'STUDIO_STAGE_CHANGED', 'BUDGET_UPDATED'],
      ['RUN_STARTED', 'STUDIO_STAGE_CHANGED', 'BUDGET_UPDATED'],
      ['RUN_STARTED', 'STUDIO_STAGE_CHANGED', 'BUDGET_UPDATED'],
      ['RUN_STARTED', 'STUDIO_STAGE_CHANGED', 'BUDGET_UPDATED', 'RUN_SUCCEEDED'],
    ]);
    expect(mapped[2]?.drafts[1]).toMatchObject({
      toStage: 'plan',
      fromStage: null,
      detail: 'Stage 1 of 3 (at connect)',
    });
    // Reconnecting with the same state changes nothing.
    expect(types(state().runs.map((run) => m.applyRunMeta(run)))).toEqual([[], [], [], []]);
  });

  it('never keeps the callback secret of a run', () => {
    const m = mapper();
    const drafts = state().runs.flatMap((run) => m.applyRunMeta(run).drafts);
    expect(JSON.stringify(drafts)).not.toContain('cbsecret_fixtureValue789');
  });

  it('maps an open tool approval read over REST to a pending approval tied to its call', () => {
    const m = mapper();
    const s = state();
    const request = s.interactions['reviewer-1786409300-aa11bb22'];
    if (!request) throw new Error('fixture');
    const drafts = m.mapOpenInteraction('reviewer-1786409300-aa11bb22', request);
    expect(drafts.map((d) => d.type)).toEqual([
      'RUN_STARTED',
      'TOOL_PROPOSED',
      'APPROVAL_REQUESTED',
    ]);
    const approval = drafts[2] as ApprovalDraft;
    expect(approval).toMatchObject({
      toolCallId: 'toolu_01RM',
      approvalId: 'approval-approve-toolu_01RM',
      safeSummary: 'Allow tool call: `bash` - `rm -rf build && make`?',
    });
    expect(approval.argumentHash).toBe(
      foreignArgumentHash('bash', { command: 'rm -rf build && make' }),
    );
    expect(approval.reasons).toContain('Stage: implement');
    // The same request read again (a reconnect) maps to nothing.
    expect(m.mapOpenInteraction('reviewer-1786409300-aa11bb22', request)).toEqual([]);
  });
});

describe('LeviathMapper: flat frames (post-0.4.0)', () => {
  const m = mapper();
  const mapped = ndjson('frames-flat.ndjson').map((frame) => m.mapFrame(frame));

  it('maps every frame', () => {
    expect(types(mapped)).toEqual([
      [],
      ['RUN_STARTED', 'STUDIO_LOG'],
      ['STUDIO_STAGE_CHANGED'],
      ['STUDIO_STAGE_CHANGED'],
      ['BUDGET_UPDATED'],
      ['BUDGET_UPDATED'],
      ['STUDIO_LOG'],
      ['STUDIO_LOG'],
      ['STUDIO_LOG'],
      ['STUDIO_LOG'],
      ['TOOL_PROPOSED', 'TOOL_DISPATCHED'],
      ['TOOL_SUCCEEDED'],
      ['TOOL_PROPOSED', 'APPROVAL_REQUESTED'],
      ['STUDIO_LOG'],
      ['STUDIO_LOG'],
      ['BUDGET_UPDATED'],
      [],
      ['STUDIO_FOREIGN_EVENT'],
      ['STUDIO_FOREIGN_EVENT'],
    ]);
    expect(mapped[0]?.gateway?.type).toBe('daemon_link');
    expect(mapped[16]?.gateway?.type).toBe('update_progress');
  });

  it('turns tokens and context usage into budget gauges', () => {
    const context = mapped[5]?.drafts[0] as BudgetDraft;
    const dims = Object.fromEntries(context.budget.dimensions.map((d) => [d.name, d]));
    expect(dims.INPUT_TOKENS).toMatchObject({ consumed: '1200', unit: 'tokens' });
    expect(dims.OUTPUT_TOKENS).toMatchObject({ consumed: '340' });
    expect(dims.CACHE_READ_TOKENS).toMatchObject({ consumed: '800' });
    expect(dims.CACHE_WRITE_TOKENS).toMatchObject({ consumed: '100' });
    expect(dims.CONTEXT_TOKENS).toMatchObject({
      consumed: '45000',
      limit: '200000',
      remaining: '155000',
    });
    const spend = mapped[15]?.drafts[0] as BudgetDraft;
    expect(spend.budget.dimensions.find((d) => d.name === 'PROVIDER_COST')).toMatchObject({
      consumed: '420000',
      limit: '5000000',
      unit: 'micro-USD',
    });
  });

  it('rows stage transitions and log lines with their level', () => {
    expect(mapped[3]?.drafts[0]).toMatchObject({
      type: 'STUDIO_STAGE_CHANGED',
      fromStage: 'plan',
      toStage: 'implement',
      detail: 'Iteration 1',
      foreignId: `${TESTER}/stage/implement/1`,
    });
    expect(
      mapped.slice(6, 10).map((x) => (x.drafts[0] as { level: string; origin: string }).level),
    ).toEqual(['info', 'info', 'error', 'debug']);
    expect((mapped[7]?.drafts[0] as { origin: string }).origin).toBe('tool');
  });

  it('makes a tool approval a pending approval and masks secrets in its arguments', () => {
    const [proposed, approval] = mapped[12]?.drafts as [ToolDraft, ApprovalDraft];
    expect(proposed).toMatchObject({
      toolCallId: 'toolu_01B',
      toolName: 'bash',
      status: 'WAITING_FOR_APPROVAL',
      runId: TESTER,
    });
    expect(proposed.argumentsJson).toContain('"API_TOKEN":"[redacted]"');
    expect(approval.argumentHash).toBe(
      foreignArgumentHash('bash', {
        command: 'cargo test',
        env: { API_TOKEN: 'lev_fixtureSecretInArgs' },
      }),
    );
    expect(JSON.stringify(mapped)).not.toContain('lev_fixtureSecretInArgs');
    expect(JSON.stringify(mapped)).not.toContain('lev_fixtureSecretInFrame');
  });

  it('keeps an unknown frame type and an unknown status word as foreign events', () => {
    expect(mapped[17]?.drafts[0]).toMatchObject({
      source: 'leviath',
      foreignType: 'agent_heartbeat',
    });
    expect(mapped[18]?.drafts[0]).toMatchObject({ foreignType: 'agent_status' });
    expect(
      JSON.parse((mapped[18]?.drafts[0] as { payloadJson: string }).payloadJson),
    ).toMatchObject({ status: 'hibernating' });
  });

  it('after the approval: the call runs, finishes, and the run completes with its final output', () => {
    const after = ndjson('frames-flat-after-approval.ndjson').map((frame) => m.mapFrame(frame));
    expect(types(after)).toEqual([
      ['APPROVAL_GRANTED', 'TOOL_DISPATCHED'],
      [],
      ['TOOL_SUCCEEDED'],
      ['STUDIO_STAGE_CHANGED'],
      ['ASSISTANT_MESSAGE', 'RUN_SUCCEEDED'],
    ]);
    // Nobody answered in the studio, so the start of the call means it was allowed elsewhere.
    expect(after[0]?.drafts[0]).toMatchObject({
      decisionReason: 'Allowed outside the studio',
      toolCallId: 'toolu_01B',
    });
    expect(after[2]?.toolFinished).toEqual({ toolCallId: 'toolu_01B', toolName: 'bash' });
    expect(after[4]?.drafts[0]).toMatchObject({
      content: 'All 14 CSV tests pass.',
      messageId: `${TESTER}/final-output`,
    });
  });
});

describe('LeviathMapper: older wrapped world frames and engine words', () => {
  it('maps every frame of a 0.1.2–0.4.0 gateway', () => {
    const m = mapper();
    const mapped = ndjson('frames-world.ndjson').map((frame) => m.mapFrame(frame));
    expect(types(mapped)).toEqual([
      ['RUN_STARTED', 'STUDIO_LOG'],
      ['STUDIO_STAGE_CHANGED'],
      ['STUDIO_STAGE_CHANGED'],
      ['TOOL_PROPOSED', 'TOOL_DISPATCHED'],
      ['TOOL_FAILED'],
      ['BUDGET_UPDATED'],
      ['BUDGET_UPDATED'],
      ['STUDIO_LOG'],
      ['STUDIO_QUESTION_ASKED'],
      ['STUDIO_LOG'],
      ['STUDIO_FOREIGN_EVENT'],
      ['STUDIO_LOG'],
      ['RUN_PAUSED'],
      ['RUN_STARTED'],
      ['STUDIO_QUESTION_ANSWERED', 'RUN_FAILED'],
    ]);
    expect(mapped[2]?.drafts[0]).toMatchObject({
      fromStage: 'plan',
      toStage: 'implement',
      runId: LEGACY,
    });
    expect(mapped[4]?.drafts[0]).toMatchObject({
      status: 'FAILED',
      error: { message: '[error] permission denied: /etc/hosts' },
    });
    expect(mapped[8]?.drafts[0]).toMatchObject({
      question: {
        questionId: 'ask-call_9',
        kind: 'CONFIRM',
        choices: ['Yes', 'No'],
        status: 'OPEN',
        sessionId: leviathStudioSessionId(LEGACY),
      },
    });
    expect(mapped[10]?.drafts[0]).toMatchObject({ foreignType: 'world.checkpointed' });
    // The paused frame had wait_reason null after a user_prompt wait: ask whether it was answered elsewhere.
    expect(mapped[12]?.checkInteractions).toBe(true);
    // The run failed while its question was open: the card closes as expired.
    expect((mapped[14]?.drafts[0] as QuestionDraft).question.status).toBe('EXPIRED');
    expect(mapped[14]?.drafts[1]).toMatchObject({
      code: 'LEVIATH_RUN_ERROR',
      reason: 'provider returned 500 three times',
    });
  });
});

describe('LeviathMapper: questions and approvals settled elsewhere', () => {
  const question = {
    id: 'ask-call_1',
    kind: 'free_text',
    prompt: 'Name?',
    options: [],
    tool_name: null,
    tool_arguments: null,
    required: true,
    stage_name: 's',
    body: null,
    body_format: 'plain',
  };
  const approval = {
    id: 'approve-toolu_9',
    kind: 'tool_approval',
    prompt: 'Allow?',
    options: [],
    tool_name: 'bash',
    tool_arguments: { command: 'ls' },
    required: true,
    stage_name: 's',
    body: null,
    body_format: 'plain',
  };

  it('closes questions as ANSWERED_ELSEWHERE and approvals as expired when the gateway no longer has them', () => {
    const m = mapper();
    m.mapOpenInteraction('r', question);
    m.mapOpenInteraction('r', approval);
    const drafts: EventDraft[] = m.reconcileInteractions('r', null);
    expect(drafts.map((d) => d.type)).toEqual([
      'STUDIO_QUESTION_ANSWERED',
      'APPROVAL_EXPIRED',
      'TOOL_OUTCOME_UNKNOWN',
    ]);
    expect((drafts[0] as QuestionDraft).question.status).toBe('ANSWERED_ELSEWHERE');
    expect(drafts[1]).toMatchObject({ automatic: true, toolCallId: 'toolu_9' });
    expect(m.reconcileInteractions('r', null)).toEqual([]);
  });

  it('leaves alone what the studio answered itself', () => {
    const m = mapper(new Set(['ask-call_1']));
    m.mapOpenInteraction('r', question);
    expect(m.reconcileInteractions('r', null)).toEqual([]);
  });

  it('keeps the interaction the gateway still has open', () => {
    const m = mapper();
    m.mapOpenInteraction('r', question);
    expect(m.reconcileInteractions('r', 'ask-call_1')).toEqual([]);
  });

  it('requests an expired approval again while Leviath waits', () => {
    const m = mapper();
    m.mapOpenInteraction('r', approval);
    expect(m.reRequestApproval('toolu_9', 'approval-approve-toolu_9')).toMatchObject([
      {
        type: 'APPROVAL_REQUESTED',
        approvalId: 'approval-approve-toolu_9-2',
        foreignId: 'interaction:approve-toolu_9/approval/2',
      },
    ]);
    m.markAnswered('approve-toolu_9', true);
    expect(m.reRequestApproval('toolu_9', 'approval-approve-toolu_9-2')).toEqual([]);
  });
});
