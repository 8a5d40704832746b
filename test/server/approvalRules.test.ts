/**
 * Approval rules over real sockets: the DESTRUCTIVE guard, a rule that allows the next call,
 * deny over allow, scopes, expiry, argument prefixes, revoke, edit, and the counts.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVE,
  createSession,
  getProject,
  decideInput,
  failCode,
  history,
  key,
  makeClient,
  ok,
  run,
  startHarness,
  codeOf,
  waitForRunEnd,
  waitUntil,
} from './harness.ts';
import type { Harness, StudioClient } from './harness.ts';
import {
  CREATE_RULE,
  RULES,
  UPDATE_RULE,
  createRule,
  revokeRule,
  startDelete,
  toolCall,
  type RuleData,
} from './approvalKit.ts';

const DELETE = 'workspace.file.delete';

describe('approval rules', () => {
  let h: Harness;
  let c: StudioClient;

  beforeAll(async () => {
    h = await startHarness();
    c = makeClient(h);
  });
  afterAll(async () => {
    await h.dispose();
  });

  const rulesNow = async () =>
    (await ok<{ studioApprovalRules: RuleData[] }>(c, RULES, { appId: '1' })).studioApprovalRules;

  it('refuses an ALLOW rule for a DESTRUCTIVE tool unless it says allowDestructive', async () => {
    const result = await run(c, CREATE_RULE, {
      input: {
        idempotencyKey: key('rule'),
        appId: '1',
        effect: 'ALLOW',
        toolName: DELETE,
        match: 'ANY',
        scope: 'STUDIO',
      },
    });
    expect(codeOf(result.error)).toBe('BAD_USER_INPUT');
    expect(result.error?.graphQLErrors[0]?.extensions?.field).toBe('allowDestructive');
    // A DENY rule needs no such permission, and a SESSION scope needs a real session.
    expect(
      await failCode(c, CREATE_RULE, {
        input: {
          idempotencyKey: key('rule'),
          appId: '1',
          effect: 'DENY',
          toolName: DELETE,
          match: 'ANY',
          scope: 'SESSION',
          sessionId: 'ses_nope',
        },
      }),
    ).toBe('BAD_USER_INPUT');
  });

  it('a session-scoped ALLOW rule decides the next call at once, recorded as the rule, and counts it', async () => {
    const session = await createSession(c, 'BUILD', 'cleanup-app');
    const rule = await createRule(c, {
      name: 'Scratch clean-up is fine here',
      effect: 'ALLOW',
      toolName: DELETE,
      match: 'ARGUMENT_PREFIX',
      argumentName: 'paths',
      argumentPrefix: 'tmp/',
      scope: 'SESSION',
      sessionId: session.sessionId,
      allowDestructive: true,
    });
    expect(rule.createdBy).toBe('owner');
    const r = await startDelete(h, c, { sessionId: session.sessionId });
    const events = await waitForRunEnd(c, r.a.sessionId, r.runId);
    const granted = events.find(
      (e) => e.type === 'APPROVAL_GRANTED' && e.approvalId === r.requested.approvalId,
    );
    expect(granted).toBeTruthy();
    expect(BigInt(granted!.seq)).toBe(BigInt(r.requested.seq) + 1n);
    expect(events.some((e) => e.type === 'RUN_SUCCEEDED' && e.runId === r.runId)).toBe(true);
    expect(existsSync(r.scratch)).toBe(false);
    const state = await toolCall(c, r.approval.toolCallId);
    expect(state.approval?.studioRuleId).toBe(rule.ruleId);
    expect(state.approval?.studioRuleName).toBe('Scratch clean-up is fine here');
    expect(state.approval?.studioDecidedBy).toBeNull();
    const after = (await rulesNow()).find((x) => x.ruleId === rule.ruleId)!;
    expect(after.matchCount).toBe(1);
    expect(after.lastToolCallId).toBe(r.approval.toolCallId);
    expect(after.lastUsedAt).not.toBeNull();
    // The rule is scoped: another session's delete still waits for a person.
    const other = await startDelete(h, c);
    expect((await toolCall(c, other.approval.toolCallId)).approval?.status).toBe('PENDING');
    await ok(c, APPROVE, decideInput(other.a, other.approval));
    await waitForRunEnd(c, other.a.sessionId, other.runId);
    await revokeRule(c, rule.ruleId);
  });

  it('deny wins over allow, and the run says which rule denied', async () => {
    const allow = await createRule(c, {
      effect: 'ALLOW',
      toolName: DELETE,
      match: 'ANY',
      scope: 'STUDIO',
      allowDestructive: true,
    });
    const deny = await createRule(c, {
      name: 'Never delete in cleanup-app',
      effect: 'DENY',
      toolName: DELETE,
      match: 'ANY',
      scope: 'PROJECT',
      projectId: 'cleanup-app',
    });
    const r = await startDelete(h, c);
    const events = await waitForRunEnd(c, r.a.sessionId, r.runId);
    const failed = events.find((e) => e.type === 'RUN_FAILED' && e.runId === r.runId);
    expect(failed?.code).toBe('AGENT_APPROVAL_DENIED');
    const state = await toolCall(c, r.approval.toolCallId);
    expect(state.approval?.status).toBe('DENIED');
    expect(state.approval?.studioRuleId).toBe(deny.ruleId);
    expect(state.status).toBe('DENIED');
    expect(existsSync(r.scratch)).toBe(true);
    const counts = await rulesNow();
    expect(counts.find((x) => x.ruleId === allow.ruleId)?.matchCount).toBe(0);
    expect(counts.find((x) => x.ruleId === deny.ruleId)?.matchCount).toBe(1);
    // Revoked rules decide nothing: the next call waits for a person again.
    expect((await revokeRule(c, deny.ruleId)).status).toBe('REVOKED');
    expect((await revokeRule(c, allow.ruleId)).revokedBy).toBe('owner');
    const next = await startDelete(h, c);
    expect((await toolCall(c, next.approval.toolCallId)).approval?.status).toBe('PENDING');
    await ok(c, APPROVE, decideInput(next.a, next.approval));
    await waitForRunEnd(c, next.a.sessionId, next.runId);
  });

  it('a prefix that does not match leaves the call to a person; exact arguments match only themselves', async () => {
    const wrong = await createRule(c, {
      effect: 'DENY',
      toolName: DELETE,
      match: 'ARGUMENT_PREFIX',
      argumentName: 'paths',
      argumentPrefix: 'src/',
      scope: 'STUDIO',
    });
    const r = await startDelete(h, c);
    expect((await toolCall(c, r.approval.toolCallId)).approval?.status).toBe('PENDING');
    await ok(c, APPROVE, decideInput(r.a, r.approval));
    await waitForRunEnd(c, r.a.sessionId, r.runId);
    await revokeRule(c, wrong.ruleId);
    // An exact-arguments rule matches only those arguments (the revision is part of them).
    const exact = await createRule(c, {
      effect: 'DENY',
      toolName: DELETE,
      match: 'EXACT_ARGUMENTS',
      argumentsJson: JSON.stringify({ expectedRevision: '1', paths: ['tmp/agent-scratch.md'] }),
      scope: 'STUDIO',
    });
    const r2 = await startDelete(h, c);
    expect((await toolCall(c, r2.approval.toolCallId)).approval?.status).toBe('PENDING');
    await ok(c, APPROVAL_DENY, decideInput(r2.a, r2.approval));
    await waitForRunEnd(c, r2.a.sessionId, r2.runId);
    await revokeRule(c, exact.ruleId);
    // The same rule with the arguments the next call will carry (its patch moves the revision by one) denies it.
    const session = await createSession(c, 'BUILD', 'cleanup-app');
    const revision = BigInt((await getProject(c, session.sessionId)).revision) + 1n;
    const matching = await createRule(c, {
      effect: 'DENY',
      toolName: DELETE,
      match: 'EXACT_ARGUMENTS',
      argumentsJson: JSON.stringify({
        paths: ['tmp/agent-scratch.md'],
        expectedRevision: String(revision),
      }),
      scope: 'STUDIO',
    });
    const r3 = await startDelete(h, c, { sessionId: session.sessionId });
    await waitForRunEnd(c, r3.a.sessionId, r3.runId);
    expect((await toolCall(c, r3.approval.toolCallId)).approval?.studioRuleId).toBe(
      matching.ruleId,
    );
    await revokeRule(c, matching.ruleId);
  });

  it('an expired rule decides nothing; an edit moves its expiry', async () => {
    const soon = new Date(Date.now() + 1500).toISOString();
    const rule = await createRule(c, {
      effect: 'DENY',
      toolName: DELETE,
      match: 'ANY',
      scope: 'SOURCE',
      sourceId: 'demo',
      expiresAt: soon,
    });
    expect(rule.active).toBe(true);
    await waitUntil(() => Date.now() > Date.parse(soon) + 50, 'the rule to expire', 5000);
    expect((await rulesNow()).find((x) => x.ruleId === rule.ruleId)?.active).toBe(false);
    const r = await startDelete(h, c);
    expect((await toolCall(c, r.approval.toolCallId)).approval?.status).toBe('PENDING');
    await ok(c, APPROVE, decideInput(r.a, r.approval));
    await waitForRunEnd(c, r.a.sessionId, r.runId);
    const edited = (
      await ok<{ studioUpdateApprovalRule: RuleData }>(c, UPDATE_RULE, {
        input: {
          idempotencyKey: key('edit'),
          ruleId: rule.ruleId,
          name: 'Renamed',
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
        },
      })
    ).studioUpdateApprovalRule;
    expect(edited).toMatchObject({ name: 'Renamed', active: true });
    const r2 = await startDelete(h, c);
    const events = await waitForRunEnd(c, r2.a.sessionId, r2.runId);
    expect(
      events.some((e) => e.type === 'APPROVAL_DENIED' && e.approvalId === r2.requested.approvalId),
    ).toBe(true);
    await revokeRule(c, rule.ruleId);
    expect((await history(c, r2.a.sessionId)).length).toBeGreaterThan(0);
  });
});

const APPROVAL_DENY = `mutation Reject($input: DecideAgentToolInput!) { crowdyStudioAgentRejectTool(input: $input) { status } }`;
