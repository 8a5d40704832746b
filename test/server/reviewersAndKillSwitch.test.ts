/**
 * Reviewer tokens (--tokens-file, re-read while the server runs) and who decided; the kill switch
 * through the contract's policy roots. Real server, real sockets, a real tokens file.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVE,
  REJECT,
  attach,
  createSession,
  decideInput,
  failCode,
  getSession,
  history,
  key,
  makeClient,
  makeTempDir,
  ok,
  run,
  sendMessage,
  startHarness,
  waitForRunEnd,
  waitUntil,
  codeOf,
  SEND,
} from './harness.ts';
import type { Harness, StudioClient } from './harness.ts';
import {
  POLICY,
  SET_POLICY,
  createRule,
  revokeRule,
  startDelete,
  toolCall,
  type PolicyData,
} from './approvalKit.ts';

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef0';

describe('reviewer tokens', () => {
  let h: Harness;
  let tokensFile: string;

  beforeAll(async () => {
    tokensFile = join(makeTempDir('studio-tokens-'), 'tokens.json');
    writeFileSync(tokensFile, JSON.stringify({ alice: ALICE }));
    h = await startHarness({ tokensFile });
  });
  afterAll(async () => {
    await h.dispose();
  });

  it('records the reviewer of every decision, rule, message and attachment', async () => {
    const alice = makeClient(h, { token: ALICE });
    const owner = makeClient(h);
    const r = await startDelete(h, alice);
    const session = await getSession(owner, r.a.sessionId);
    expect(session.sessionId).toBe(r.a.sessionId);
    const controlled = await ok<{
      crowdyStudioAgentSession: {
        studioControlledBy: string | null;
        studioControlledSince: string | null;
      };
    }>(
      owner,
      `query($id: String!) { crowdyStudioAgentSession(sessionId: $id) { studioControlledBy studioControlledSince } }`,
      { id: r.a.sessionId },
    );
    expect(controlled.crowdyStudioAgentSession.studioControlledBy).toBe('alice');
    expect(Date.parse(controlled.crowdyStudioAgentSession.studioControlledSince!)).not.toBeNaN();
    await ok(alice, REJECT, decideInput(r.a, r.approval, { reason: 'not now' }));
    const state = await toolCall(owner, r.approval.toolCallId);
    expect(state.approval?.studioDecidedBy).toBe('alice');
    expect(state.error?.message).toBe('Denied by alice: not now');
    await waitForRunEnd(owner, r.a.sessionId, r.runId);
    const events = await history(owner, r.a.sessionId);
    const message = await ok<{
      crowdyStudioAgentHistory: { events: { type: string; studioAuthor?: string | null }[] };
    }>(
      owner,
      `query($id: String!) { crowdyStudioAgentHistory(sessionId: $id, first: 200) { events { ... on AgentMessageEvent { type studioAuthor } } } }`,
      { id: r.a.sessionId },
    );
    expect(
      message.crowdyStudioAgentHistory.events.find((e) => e.type === 'USER_MESSAGE')?.studioAuthor,
    ).toBe('alice');
    expect(events.some((e) => e.type === 'RUN_FAILED')).toBe(true);
    const rule = await createRule(alice, {
      effect: 'DENY',
      toolName: 'x.tool',
      match: 'ANY',
      scope: 'STUDIO',
    });
    expect(rule.createdBy).toBe('alice');
    expect((await revokeRule(owner, rule.ruleId)).revokedBy).toBe('owner');
    // The tokens never reach the log.
    expect(h.logs.join('\n')).not.toContain(ALICE);
  });

  it('re-reads the tokens file when it is edited, and keeps the last good set on a broken edit', async () => {
    const bob = makeClient(h, { token: BOB });
    const query = `query { studioSources { sourceId } }`;
    expect((await run(bob, query)).error).toBeTruthy();
    writeFileSync(tokensFile, JSON.stringify({ alice: ALICE, bob: BOB }));
    await waitUntil(async () => !(await run(bob, query)).error, 'bob to be let in', 5000);
    writeFileSync(tokensFile, '{ not json');
    await waitUntil(
      () => h.logs.some((l) => l.includes('not reloaded')),
      'the broken file to be reported',
      5000,
    );
    expect((await run(bob, query)).error).toBeUndefined();
    writeFileSync(tokensFile, JSON.stringify({ bob: BOB }));
    const alice = makeClient(h, { token: ALICE });
    await waitUntil(
      async () => Boolean((await run(alice, query)).error),
      'alice to be refused',
      5000,
    );
    expect(h.logs.join('\n')).not.toContain(BOB);
  });
});

describe('kill switch', () => {
  let h: Harness;
  let c: StudioClient;

  beforeAll(async () => {
    h = await startHarness();
    c = makeClient(h);
  });
  afterAll(async () => {
    await h.dispose();
  });

  const policy = async () =>
    (await ok<{ crowdyStudioAgentPolicy: PolicyData }>(c, POLICY, { appId: '1' }))
      .crowdyStudioAgentPolicy;
  const setKill = (on: boolean, expectedRevision: string) =>
    run<{ setCrowdyStudioAgentPolicy: PolicyData }>(c, SET_POLICY, {
      input: { idempotencyKey: key('policy'), appId: '1', expectedRevision, killSwitch: on },
    });

  it('stops every agent at once, refuses new runs with AGENT_DISABLED, and lets them run again when turned off', async () => {
    const start = await policy();
    expect(start).toMatchObject({
      kind: 'APP',
      appId: '1',
      enabled: true,
      killSwitch: false,
      revision: '0',
    });
    const waiting = await startDelete(h, c);
    const other = await startDelete(h, c, { projectId: 'sample-app' });
    expect(codeOf((await setKill(true, '5')).error)).toBe('AGENT_POLICY_REVISION_CONFLICT');
    const on = await setKill(true, start.revision);
    expect(on.data?.setCrowdyStudioAgentPolicy).toMatchObject({
      killSwitch: true,
      revision: '1',
      disableReasonCode: 'KILL_SWITCH',
      studioUpdatedBy: 'owner',
    });
    for (const r of [waiting, other]) {
      const events = await waitForRunEnd(c, r.a.sessionId, r.runId);
      expect(events.some((e) => e.type === 'RUN_CANCELLED' && e.runId === r.runId)).toBe(true);
      expect((await toolCall(c, r.approval.toolCallId)).approval?.status).toBe('REVOKED');
      expect(await failCode(c, APPROVE, decideInput(r.a, r.approval))).toBe(
        'AGENT_APPROVAL_REVOKED',
      );
    }
    const s = await createSession(c, 'BUILD', 'cleanup-app');
    const a = await attach(c, s.sessionId);
    expect(
      await failCode(c, SEND, {
        input: {
          idempotencyKey: key('send'),
          sessionId: a.sessionId,
          clientEpoch: a.clientEpoch,
          content: 'hi',
        },
      }),
    ).toBe('AGENT_DISABLED');
    // A run a runtime starts on its own while the switch is on is cancelled at once.
    await h.server.engine.append(s.sessionId, [{ type: 'RUN_STARTED', runId: 'run_foreign_1' }]);
    const foreign = await waitForRunEnd(c, s.sessionId, 'run_foreign_1');
    expect(
      foreign.find((e) => e.runId === 'run_foreign_1' && e.type === 'RUN_CANCELLED'),
    ).toBeTruthy();
    const off = await setKill(false, '1');
    expect(off.data?.setCrowdyStudioAgentPolicy).toMatchObject({
      killSwitch: false,
      revision: '2',
      disableReasonCode: null,
    });
    const { runId } = await sendMessage(c, a, 'Update the changelog');
    const done = await waitForRunEnd(c, s.sessionId, runId);
    expect(done.some((e) => e.type === 'RUN_SUCCEEDED' && e.runId === runId)).toBe(true);
  });

  it('rules do not outrank the kill switch: a call proposed while it is on is revoked at once', async () => {
    const p = await policy();
    const rule = await createRule(c, {
      effect: 'ALLOW',
      toolName: 'workspace.file.delete',
      match: 'ANY',
      scope: 'STUDIO',
      allowDestructive: true,
    });
    const s = await createSession(c, 'BUILD', 'sample-app');
    await ok(c, SET_POLICY, {
      input: {
        idempotencyKey: key('policy'),
        appId: '1',
        expectedRevision: p.revision,
        killSwitch: true,
      },
    });
    const approval = await h.server.engine.proposeWithApproval({
      sessionId: s.sessionId,
      runId: null,
      toolName: 'workspace.file.delete',
      arguments: { paths: ['x'] },
      safeSummary: 'Delete x',
      reasons: [],
    });
    expect(approval.status).toBe('REVOKED');
    await ok(c, SET_POLICY, {
      input: {
        idempotencyKey: key('policy'),
        appId: '1',
        expectedRevision: String(BigInt(p.revision) + 1n),
        killSwitch: false,
      },
    });
    await revokeRule(c, rule.ruleId);
  });
});
