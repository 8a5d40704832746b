/**
 * Helpers for the approval suites (lifecycle, rules, batches, diffs, reviewers, kill switch): a
 * demo run on a real project folder that waits on its delete approval, and the documents they use.
 */
import { join } from 'node:path';
import {
  attach,
  createSession,
  key,
  keepAlive,
  ok,
  projectDir,
  sendMessage,
  waitForEvent,
  type Attachment,
  type Ev,
  type Harness,
  type StudioClient,
} from './harness.ts';

export const SCRATCH = 'tmp/agent-scratch.md';

export interface PendingDelete {
  a: Attachment;
  runId: string;
  requested: Ev;
  approval: { toolCallId: string; argumentHash: string };
  scratch: string;
  stop(): void;
}

/** A BUILD session on `projectId` whose run now waits on (or was decided at) its delete approval. */
export async function startDelete(
  h: Harness,
  c: StudioClient,
  options: { projectId?: string; waitFor?: 'APPROVAL_REQUESTED'; sessionId?: string } = {},
): Promise<PendingDelete> {
  const sessionId =
    options.sessionId ??
    (await createSession(c, 'BUILD', options.projectId ?? 'cleanup-app')).sessionId;
  const a = await attach(c, sessionId);
  const stop = keepAlive(c, a);
  h.track(stop);
  const { runId } = await sendMessage(c, a, 'Update the changelog, then clean up the scratch file');
  const { event: requested } = await waitForEvent(
    c,
    sessionId,
    (e) => e.type === 'APPROVAL_REQUESTED' && e.runId === runId,
    'the delete approval',
  );
  return {
    a,
    runId,
    requested,
    approval: { toolCallId: requested.approvalToolCallId!, argumentHash: requested.argumentHash! },
    scratch: join(projectDir(h, options.projectId ?? 'cleanup-app'), SCRATCH),
    stop,
  };
}

export const APPROVAL_STATE = `approvalId status studioDecidedBy studioRuleId studioRuleName studioDecisionReason studioAutomatic`;

export const TOOL_CALL = `query ToolCall($toolCallId: String!) {
  studioToolCall(toolCallId: $toolCallId) {
    toolCallId status argumentHash studioCanAskAgain
    error { code message }
    approval { ${APPROVAL_STATE} }
    studioDiff { truncated files { path beforeHash afterHash added removed hunks truncated binary } }
  }
}`;

export interface ToolCallState {
  toolCallId: string;
  status: string;
  argumentHash: string | null;
  studioCanAskAgain: boolean;
  error: { code: string; message: string } | null;
  approval: {
    approvalId: string;
    status: string;
    studioDecidedBy: string | null;
    studioRuleId: string | null;
    studioRuleName: string | null;
    studioDecisionReason: string | null;
    studioAutomatic: boolean;
  } | null;
  studioDiff: {
    truncated: boolean;
    files: {
      path: string;
      beforeHash: string | null;
      afterHash: string | null;
      added: number;
      removed: number;
      hunks: string;
      truncated: boolean;
      binary: boolean;
    }[];
  } | null;
}

export async function toolCall(c: StudioClient, toolCallId: string): Promise<ToolCallState> {
  const data = await ok<{ studioToolCall: ToolCallState | null }>(c, TOOL_CALL, { toolCallId });
  if (!data.studioToolCall) throw new Error(`no tool call ${toolCallId}`);
  return data.studioToolCall;
}

export const RULE_FIELDS = `ruleId name effect toolName match argumentsJson argumentName argumentPrefix scope sessionId
  projectId sourceId allowDestructive expiresAt status active createdBy revokedBy matchCount lastUsedAt lastToolCallId`;

export interface RuleData {
  ruleId: string;
  name: string;
  effect: string;
  toolName: string;
  match: string;
  scope: string;
  allowDestructive: boolean;
  expiresAt: string | null;
  status: string;
  active: boolean;
  createdBy: string | null;
  revokedBy: string | null;
  matchCount: number;
  lastUsedAt: string | null;
  lastToolCallId: string | null;
}

export const CREATE_RULE = `mutation CreateRule($input: StudioCreateApprovalRuleInput!) {
  studioCreateApprovalRule(input: $input) { ${RULE_FIELDS} }
}`;
export const REVOKE_RULE = `mutation RevokeRule($input: StudioRevokeApprovalRuleInput!) {
  studioRevokeApprovalRule(input: $input) { ${RULE_FIELDS} }
}`;
export const UPDATE_RULE = `mutation UpdateRule($input: StudioUpdateApprovalRuleInput!) {
  studioUpdateApprovalRule(input: $input) { ${RULE_FIELDS} }
}`;
export const RULES = `query Rules($appId: BigInt!) { studioApprovalRules(appId: $appId) { ${RULE_FIELDS} } }`;

export async function createRule(
  c: StudioClient,
  input: Record<string, unknown>,
): Promise<RuleData> {
  return (
    await ok<{ studioCreateApprovalRule: RuleData }>(c, CREATE_RULE, {
      input: { idempotencyKey: key('rule'), appId: '1', ...input },
    })
  ).studioCreateApprovalRule;
}

export async function revokeRule(c: StudioClient, ruleId: string): Promise<RuleData> {
  return (
    await ok<{ studioRevokeApprovalRule: RuleData }>(c, REVOKE_RULE, {
      input: { idempotencyKey: key('revoke'), ruleId },
    })
  ).studioRevokeApprovalRule;
}

export const DECIDE_TOOLS = `mutation DecideTools($input: StudioDecideToolsInput!) {
  studioDecideTools(input: $input) { ${APPROVAL_STATE} toolCallId }
}`;

export const ASK_AGAIN = `mutation AskAgain($input: StudioAskAgainInput!) {
  studioAskAgain(input: $input) { approvalId toolCallId argumentHash status }
}`;

export const CANCEL = `mutation Cancel($input: CancelAgentRunInput!) { crowdyStudioAgentCancelRun(input: $input) { runId status } }`;
export const CLOSE = `mutation Close($input: AgentSessionControlInput!) { crowdyStudioAgentCloseSession(input: $input) { sessionId status } }`;
export const PAUSE = `mutation Pause($input: AgentSessionControlInput!) { crowdyStudioAgentPause(input: $input) { sessionId status } }`;
export const RESUME = `mutation Resume($input: AgentSessionControlInput!) { crowdyStudioAgentResume(input: $input) { sessionId status } }`;

export function control(a: Attachment) {
  return {
    input: { idempotencyKey: key('ctl'), sessionId: a.sessionId, clientEpoch: a.clientEpoch },
  };
}

export const POLICY = `query Policy($appId: BigInt!) {
  crowdyStudioAgentPolicy(appId: $appId) { kind appId enabled killSwitch revision effectiveRevision disableReasonCode studioUpdatedBy }
}`;
export const SET_POLICY = `mutation SetPolicy($input: SetCrowdyStudioAgentAppPolicyInput!) {
  setCrowdyStudioAgentPolicy(input: $input) { kind appId enabled killSwitch revision effectiveRevision disableReasonCode studioUpdatedBy }
}`;

export interface PolicyData {
  kind: string;
  appId: string;
  enabled: boolean;
  killSwitch: boolean;
  revision: string;
  effectiveRevision: string;
  disableReasonCode: string | null;
  studioUpdatedBy: string | null;
}
