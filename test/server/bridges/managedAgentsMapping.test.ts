import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ApprovalDraft, EventDraft, ToolDraft } from '../../../server/engine/eventDrafts.ts';
import {
  approvalIdFor,
  eventIdOf,
  ManagedAgentsMapper,
  type ManagedAgentsEvent,
} from '../../../server/sources/managed-agents/ManagedAgentsMapper.ts';
import { foreignArgumentHash } from '../../../server/sources/redact.ts';
import { APPROVAL_TTL_MAX_MS, DIGEST_PATTERN } from '../../../protocol/contract.ts';

interface AllTypesFixture {
  events: ManagedAgentsEvent[];
  expected: Record<string, string[]>;
}

const fixture = JSON.parse(
  readFileSync(
    new URL('../../fixtures/managed-agents/all-event-types.json', import.meta.url),
    'utf8',
  ),
) as AllTypesFixture;

const NOW = Date.parse('2026-11-30T12:00:00Z');

function mapAll(events: ManagedAgentsEvent[], decidedInStudio?: (id: string) => boolean) {
  const mapper = new ManagedAgentsMapper({
    now: () => NOW,
    secrets: ['sk-ant-test-key'],
    decidedInStudio,
  });
  const byEvent = new Map<string, EventDraft[]>();
  for (const event of events)
    byEvent.set(eventIdOf(event) ?? String(event.type), mapper.map(event));
  return { mapper, byEvent, all: [...byEvent.values()].flat() };
}

function draftsOf(byEvent: Map<string, EventDraft[]>, id: string): EventDraft[] {
  const drafts = byEvent.get(id);
  if (!drafts) throw new Error(`no drafts for ${id}`);
  return drafts;
}

describe('ManagedAgentsMapper', () => {
  const { byEvent, all } = mapAll(fixture.events);

  it('maps every fixture event to the expected draft types', () => {
    const actual = Object.fromEntries(
      [...byEvent.entries()].map(([id, drafts]) => [id, drafts.map((d) => d.type)]),
    );
    expect(actual).toEqual(fixture.expected);
  });

  it('gives every stored draft a unique foreignId, the event id first', () => {
    const ids = all.map((d) => d.foreignId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0 && id.length <= 128)).toBe(
      true,
    );
    expect(new Set(ids).size).toBe(ids.length);
    expect(draftsOf(byEvent, 'sevt_0009')[0]?.foreignId).toBe('sevt_0009');
    expect(draftsOf(byEvent, 'sevt_0011')[0]?.foreignId).toBe('sevt_0009/confirmation');
  });

  it('is deterministic: mapping the same history twice yields the same drafts', () => {
    expect(mapAll(fixture.events).all).toEqual(all);
  });

  it('turns an ask into a pending approval with the documented hash and a 120 s horizon', () => {
    const [proposed, approval] = draftsOf(byEvent, 'sevt_0009') as [ToolDraft, ApprovalDraft];
    expect(proposed).toMatchObject({
      toolCallId: 'sevt_0009',
      toolName: 'bash',
      status: 'WAITING_FOR_APPROVAL',
      safeSummary: 'bash: npm test',
    });
    expect(approval).toMatchObject({
      type: 'APPROVAL_REQUESTED',
      approvalId: approvalIdFor('sevt_0009', 1),
      toolCallId: 'sevt_0009',
      status: 'PENDING',
      reasons: ['Policy: always_ask'],
      expiresAt: new Date(NOW + APPROVAL_TTL_MAX_MS).toISOString(),
    });
    expect(approval.argumentHash).toMatch(DIGEST_PATTERN);
    expect(approval.argumentHash).toBe(foreignArgumentHash('bash', { command: 'npm test' }));
    expect(proposed.argumentHash).toBe(approval.argumentHash);
  });

  it('shows an auto denial as denied by the runtime with its reason code, and no pending approval', () => {
    const [, approval, denied] = draftsOf(byEvent, 'sevt_0014') as [
      ToolDraft,
      ApprovalDraft,
      ToolDraft,
    ];
    expect(approval).toMatchObject({ type: 'APPROVAL_DENIED', status: 'DENIED', automatic: true });
    expect(approval.decisionReason).toContain('high_risk');
    expect(approval.reasons).toContain('Reason code: high_risk');
    expect(denied).toMatchObject({ type: 'TOOL_DENIED', status: 'DENIED' });
    // The runtime's rejection result for the denied call is a row, not a second outcome.
    expect(draftsOf(byEvent, 'sevt_0015')[0]).toMatchObject({ type: 'STUDIO_LOG', level: 'warn' });
  });

  it('treats a call denied before any policy (tool not enabled) as an automatic denial', () => {
    const approval = draftsOf(byEvent, 'sevt_0023')[1] as ApprovalDraft;
    expect(approval).toMatchObject({ automatic: true });
    expect(approval.decisionReason).toContain('tool_not_enabled');
  });

  it('asks a human for an unknown evaluated_permission and keeps the event as it came', () => {
    for (const id of ['sevt_0024', 'sevt_0025', 'sevt_0026']) {
      const [, foreign, approval] = draftsOf(byEvent, id);
      expect(approval).toMatchObject({ type: 'APPROVAL_REQUESTED', status: 'PENDING' });
      expect(foreign).toMatchObject({
        type: 'STUDIO_FOREIGN_EVENT',
        source: 'managed-agents',
        foreignType: 'agent.tool_use',
      });
    }
    expect((draftsOf(byEvent, 'sevt_0024')[2] as ApprovalDraft).reasons[0]).toBe(
      'Unknown permission "defer": a human decides',
    );
    expect((draftsOf(byEvent, 'sevt_0026')[2] as ApprovalDraft).reasons[0]).toBe(
      'Unknown permission missing: a human decides',
    );
    expect(
      JSON.parse((draftsOf(byEvent, 'sevt_0025')[1] as { payloadJson: string }).payloadJson),
    ).toMatchObject({
      evaluation: {
        type: 'auto',
        evaluated_permission: { type: 'escalate', reason_code: 'needs_owner' },
      },
    });
  });

  it('records a confirmation given outside the studio as that decision', () => {
    expect(draftsOf(byEvent, 'sevt_0011')[0]).toMatchObject({
      type: 'APPROVAL_GRANTED',
      approvalId: 'approval-sevt_0009',
      decisionReason: 'Allowed outside the studio',
    });
    const denied = draftsOf(byEvent, 'sevt_0019')[0] as ApprovalDraft;
    expect(denied).toMatchObject({ type: 'APPROVAL_DENIED', toolCallId: 'sevt_0018' });
    expect(denied.decisionReason).toBe('Denied outside the studio: Use the staging project.');
  });

  it('names MCP tools by server and masks secrets in their arguments', () => {
    const proposed = draftsOf(byEvent, 'sevt_0018')[0] as ToolDraft;
    expect(proposed.toolName).toBe('github.create_issue');
    expect(proposed.toolVersion).toBe('mcp');
    expect(proposed.argumentsJson).toContain('"api_key":"[redacted]"');
    expect(proposed.argumentsJson).not.toContain('ghp_fixtureSecretValue123');
    expect((draftsOf(byEvent, 'sevt_0018')[1] as ApprovalDraft).reasons).toEqual([
      'Policy: auto (ask: indeterminate)',
      'Reason code: indeterminate',
    ]);
  });

  it('follows runs: start on a message, success at end_turn, cancelled after an interrupt, failures', () => {
    expect(draftsOf(byEvent, 'sevt_0001')).toMatchObject([
      { type: 'USER_MESSAGE', runId: 'run-sevt_0001' },
      { type: 'RUN_STARTED', runId: 'run-sevt_0001' },
    ]);
    expect(draftsOf(byEvent, 'sevt_0052')).toMatchObject([
      { type: 'RUN_SUCCEEDED', runId: 'run-sevt_0001' },
    ]);
    expect(draftsOf(byEvent, 'sevt_0055')).toMatchObject([
      { type: 'RUN_CANCELLED', runId: 'run-sevt_0053' },
    ]);
    expect(draftsOf(byEvent, 'sevt_0058')[1]).toMatchObject({
      type: 'RUN_FAILED',
      runId: 'run-sevt_0056',
      code: 'billing_error',
    });
    expect(draftsOf(byEvent, 'sevt_0061')[0]).toMatchObject({
      type: 'RUN_FAILED',
      runId: 'run-sevt_0060',
      code: 'refusal',
    });
    expect((draftsOf(byEvent, 'sevt_0061')[0] as { reason: string }).reason).toContain('cyber');
    expect(draftsOf(byEvent, 'sevt_0063')[0]).toMatchObject({
      type: 'RUN_FAILED',
      runId: 'run-sevt_0062',
      code: 'budget_reached',
    });
    expect(draftsOf(byEvent, 'sevt_0067')).toMatchObject([{ type: 'SESSION_CLOSED' }]);
  });

  it('attributes subagent threads by name', () => {
    expect(draftsOf(byEvent, 'sevt_0035')[0]).toMatchObject({
      type: 'STUDIO_THREAD_CHANGED',
      threadId: 'sthr_01Reviewer',
      agentName: 'reviewer',
      status: 'created',
    });
    expect(draftsOf(byEvent, 'sevt_0039')[0]).toMatchObject({ status: 'idle' });
    expect(draftsOf(byEvent, 'sevt_0041')[0]).toMatchObject({ status: 'terminated' });
    expect(draftsOf(byEvent, 'sevt_0037')[0]).toMatchObject({
      type: 'STUDIO_LOG',
      message: 'To reviewer: Review src/csv.ts',
    });
  });

  it('turns session.usage into a budget snapshot', () => {
    const budget = draftsOf(byEvent, 'sevt_0033')[0];
    expect(budget).toMatchObject({ type: 'BUDGET_UPDATED' });
    const dims = Object.fromEntries(
      (
        budget as {
          budget: { dimensions: { name: string; consumed: string; limit: string; unit: string }[] };
        }
      ).budget.dimensions.map((d) => [d.name, [d.consumed, d.unit, d.limit]]),
    );
    expect(dims).toEqual({
      INPUT_TOKENS: ['12000', 'tokens', '0'],
      OUTPUT_TOKENS: ['3400', 'tokens', '0'],
      CACHE_READ_TOKENS: ['8000', 'tokens', '0'],
      CACHE_WRITE_TOKENS: ['1500', 'tokens', '0'],
      WALL_CLOCK_MS: ['42500', 'ms', '0'],
      // list_cost "1234" is $12.34 (minor units); budget.max_list_cost "2500" is $25.00.
      PROVIDER_COST: ['12340000', 'micro-USD', '25000000'],
    });
  });

  it('keeps unknown event types and stop reasons with a redacted, bounded payload', () => {
    const unknown = draftsOf(byEvent, 'sevt_0065')[0] as {
      foreignType: string;
      payloadJson: string;
      truncated: boolean;
    };
    expect(unknown).toMatchObject({
      type: 'STUDIO_FOREIGN_EVENT',
      foreignType: 'agent.reasoning_summary',
      truncated: false,
    });
    expect(unknown.payloadJson).not.toContain('tok_fixtureSecretValue456');
    expect(unknown.payloadJson).not.toContain('abc.def.ghi');
    expect(JSON.parse(unknown.payloadJson)).toMatchObject({
      summary: 'Chose a streaming parser.',
      token: '[redacted]',
    });
    expect(draftsOf(byEvent, 'sevt_0064')[0]).toMatchObject({
      type: 'STUDIO_FOREIGN_EVENT',
      foreignType: 'session.status_idle',
    });
  });

  it('keeps content blocks it cannot show as placeholders', () => {
    expect(draftsOf(byEvent, 'sevt_0051')[0]).toMatchObject({
      content: 'Done.\n[withheld by model policy]',
    });
    expect(draftsOf(byEvent, 'sevt_0053')[0]).toMatchObject({
      content: 'Now add a benchmark.\n[image]',
    });
  });
});

describe('ManagedAgentsMapper races and echoes', () => {
  const ask = (id: string, thread?: string): ManagedAgentsEvent => ({
    id,
    type: 'agent.tool_use',
    name: 'bash',
    input: { command: 'psql -f m.sql' },
    evaluated_permission: 'ask',
    evaluation: { type: 'always_ask' },
    ...(thread ? { session_thread_id: thread } : {}),
  });

  it('waits for the tool-use event an idle event listed before it arrived', () => {
    const mapper = new ManagedAgentsMapper({ now: () => NOW });
    mapper.map({
      id: 'e1',
      type: 'session.thread_created',
      session_thread_id: 'sthr_1',
      agent_name: 'reviewer',
    });
    const idle = mapper.map({
      id: 'e2',
      type: 'session.status_idle',
      stop_reason: { type: 'requires_action', event_ids: ['t9'] },
    });
    expect(idle.map((d) => d.type)).toEqual(['STUDIO_LOG']);
    expect(mapper.pendingListedIds()).toEqual(['t9']);
    const drafts = mapper.map(ask('t9', 'sthr_1'));
    expect(drafts.map((d) => d.type)).toEqual(['TOOL_PROPOSED', 'APPROVAL_REQUESTED']);
    expect(drafts[0]).toMatchObject({ askedBy: 'subagent reviewer' });
    expect((drafts[1] as ApprovalDraft).reasons).toContain('Asked by subagent reviewer');
    expect(mapper.pendingListedIds()).toEqual([]);
  });

  it('records a confirmation echoed on two threads once', () => {
    const mapper = new ManagedAgentsMapper({ now: () => NOW });
    mapper.map(ask('t1', 'sthr_1'));
    const first = mapper.map({
      id: 'c1',
      type: 'user.tool_confirmation',
      tool_use_id: 't1',
      result: 'allow',
      session_thread_id: 'sthr_1',
    });
    const second = mapper.map({
      id: 'c2',
      type: 'user.tool_confirmation',
      tool_use_id: 't1',
      result: 'allow',
      session_thread_id: 'sthr_1',
    });
    expect(first.map((d) => d.type)).toEqual(['APPROVAL_GRANTED', 'TOOL_DISPATCHED']);
    expect(second).toEqual([]);
  });

  it('records nothing for the echo of a confirmation the studio delivered', () => {
    const mapper = new ManagedAgentsMapper({
      now: () => NOW,
      decidedInStudio: (id) => id === 't1',
    });
    mapper.map(ask('t1'));
    expect(
      mapper.map({ id: 'c1', type: 'user.tool_confirmation', tool_use_id: 't1', result: 'deny' }),
    ).toEqual([]);
    expect(mapper.tool('t1')?.phase).toBe('denied');
  });

  it('requests an expired approval again while the runtime waits, and not after it was decided', () => {
    let now = NOW;
    const mapper = new ManagedAgentsMapper({ now: () => now });
    mapper.map(ask('t1'));
    now += APPROVAL_TTL_MAX_MS + 1;
    const again = mapper.reRequestApproval('t1', 'approval-t1');
    expect(again).toMatchObject([
      {
        type: 'APPROVAL_REQUESTED',
        approvalId: 'approval-t1-2',
        toolCallId: 't1',
        foreignId: 't1/approval/2',
        expiresAt: new Date(now + APPROVAL_TTL_MAX_MS).toISOString(),
      },
    ]);
    expect((again[0] as ApprovalDraft).argumentHash).toBe(
      foreignArgumentHash('bash', { command: 'psql -f m.sql' }),
    );
    // A stale expiry of generation 1 after generation 2 exists changes nothing.
    expect(mapper.reRequestApproval('t1', 'approval-t1')).toEqual([]);
    mapper.map({ id: 'c1', type: 'user.tool_confirmation', tool_use_id: 't1', result: 'allow' });
    expect(mapper.reRequestApproval('t1', 'approval-t1-2')).toEqual([]);
  });

  it('closes a pending approval when an interrupt settles the call with an error result', () => {
    const mapper = new ManagedAgentsMapper({ now: () => NOW });
    mapper.map(ask('t1'));
    const drafts = mapper.map({
      id: 'r1',
      type: 'agent.tool_result',
      tool_use_id: 't1',
      is_error: true,
      content: [
        { type: 'text', text: 'Tool execution was interrupted before completion. Please retry.' },
      ],
    });
    expect(drafts.map((d) => d.type)).toEqual(['APPROVAL_EXPIRED', 'TOOL_FAILED']);
    expect(drafts[0]).toMatchObject({ automatic: true, approvalId: 'approval-t1' });
  });
});
