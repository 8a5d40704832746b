/**
 * The app's agent policy: the contract's Management roots `crowdyStudioAgentPolicy(appId)` and
 * `setCrowdyStudioAgentPolicy(input)`. The studio keeps the part it enforces, the kill switch
 * (and `enabled`): while either says stop, every run is cancelled, every pending approval is
 * revoked, a new run is refused with AGENT_DISABLED and a run a foreign runtime starts anyway is
 * cancelled at once. Writes are fenced by `expectedRevision` (AGENT_POLICY_REVISION_CONFLICT).
 *
 * Stored as one JSON value in the store's meta table (through the Store interface).
 */
import type { Db } from './kernel.ts';
import { StudioError } from './StudioError.ts';
import { ErrorCode } from '../../protocol/contract.ts';
import { isDecimalString } from '../../protocol/seq.ts';

export interface AgentPolicyRecord {
  appId: string;
  enabled: boolean;
  killSwitch: boolean;
  disableReasonCode: string | null;
  disableReason: string | null;
  revision: string;
  createdAt: string;
  updatedAt: string;
  updatedBy: string | null;
}

const key = (appId: string) => `agentPolicy:${appId}`;

export async function readPolicy(
  store: Db,
  appId: string,
  now: string,
): Promise<AgentPolicyRecord> {
  const stored = await store.getMeta(key(appId));
  if (stored) return JSON.parse(stored) as AgentPolicyRecord;
  return {
    appId,
    enabled: true,
    killSwitch: false,
    disableReasonCode: null,
    disableReason: null,
    revision: '0',
    createdAt: now,
    updatedAt: now,
    updatedBy: null,
  };
}

/** True when the app's agents must not run (kill switch on, or disabled). */
export function agentsStopped(policy: AgentPolicyRecord): boolean {
  return policy.killSwitch || !policy.enabled;
}

export interface SetPolicyInput {
  appId: string;
  expectedRevision: string;
  enabled?: boolean | null;
  killSwitch?: boolean | null;
  disableReasonCode?: string | null;
  disableReason?: string | null;
}

/** Writes the next revision; refuses a stale `expectedRevision`. The caller acts on the change. */
export async function writePolicy(
  store: Db,
  input: SetPolicyInput,
  now: string,
  updatedBy: string | null,
): Promise<{ before: AgentPolicyRecord; after: AgentPolicyRecord }> {
  if (!isDecimalString(input.expectedRevision))
    throw new StudioError(ErrorCode.POLICY_INVALID, 'expectedRevision must be a decimal string.', {
      field: 'expectedRevision',
    });
  for (const [field, value, max] of [
    ['disableReasonCode', input.disableReasonCode, 64],
    ['disableReason', input.disableReason, 512],
  ] as const)
    if (value && value.length > max)
      throw new StudioError(ErrorCode.POLICY_INVALID, `${field} is over ${max} characters.`, {
        field,
      });
  const before = await readPolicy(store, input.appId, now);
  if (before.revision !== input.expectedRevision)
    throw new StudioError(
      ErrorCode.POLICY_REVISION_CONFLICT,
      `The policy is at revision ${before.revision}, not ${input.expectedRevision}; nothing was changed.`,
      {
        field: 'expectedRevision',
        remediation: 'Read the policy again and decide on its current state.',
      },
    );
  const after: AgentPolicyRecord = {
    ...before,
    enabled: input.enabled ?? before.enabled,
    killSwitch: input.killSwitch ?? before.killSwitch,
    disableReasonCode:
      input.disableReasonCode !== undefined ? input.disableReasonCode : before.disableReasonCode,
    disableReason: input.disableReason !== undefined ? input.disableReason : before.disableReason,
    revision: (BigInt(before.revision) + 1n).toString(),
    updatedAt: now,
    updatedBy,
  };
  if (!agentsStopped(after)) {
    after.disableReasonCode = null;
    after.disableReason = null;
  } else if (!after.disableReasonCode) {
    after.disableReasonCode = after.killSwitch ? 'KILL_SWITCH' : 'DISABLED';
  }
  await store.putMeta(key(input.appId), JSON.stringify(after));
  return { before, after };
}

/** The contract's CrowdyStudioAgentPolicy shape (the fields this studio serves). */
export function policyView(p: AgentPolicyRecord, kind: 'APP' | 'EFFECTIVE' = 'APP') {
  return {
    __typename: 'CrowdyStudioAgentPolicy' as const,
    kind,
    appId: p.appId,
    enabled: p.enabled,
    killSwitch: p.killSwitch,
    operatorKillSwitch: false,
    disableReasonCode: p.disableReasonCode,
    disableReason: p.disableReason,
    allowedModelIds: [],
    allowedToolNames: [],
    allowedModes: ['ASK', 'BUILD'],
    allowedRiskClasses: [],
    revision: p.revision,
    platformRevision: '0',
    appRevision: p.revision,
    effectiveRevision: `p0:a${p.revision}`,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    studioUpdatedBy: p.updatedBy,
  };
}
