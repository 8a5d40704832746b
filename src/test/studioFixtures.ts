/** Contract-shaped objects for component tests (all non-null fields present). */

const HASH = `sha256:${'ab'.repeat(32)}`;

export function makeApproval(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    __typename: 'AgentApproval',
    approvalId: 'approval-1',
    toolCallId: 'call-1',
    argumentHash: HASH,
    status: 'PENDING',
    safeSummary: 'Write 2 files in the project',
    clientEpoch: '0',
    expiresAt: new Date(Date.now() + 90_000).toISOString(),
    approved: false,
    rejected: false,
    studioSessionId: 'session-1',
    studioReasons: ['Writes project files'],
    studioDecidedAt: null,
    studioDecisionReason: null,
    studioAutomatic: false,
    studioRuleId: null,
    studioRuleName: null,
    studioDecidedBy: null,
    studioRuleSuggestions: [],
    studioToolCall: null,
    ...overrides,
  };
}

export function makeToolCall(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    __typename: 'StudioToolCall',
    toolCallId: 'call-1',
    sessionId: 'session-1',
    runId: 'run-1',
    toolName: 'workspace.file.patch',
    toolVersion: '1.0.0',
    executor: 'SERVER',
    status: 'PROPOSED',
    safeSummary: 'Write 2 files in the project',
    argumentHash: HASH,
    argumentsJson: '{"files":[{"path":"src/a.ts","content":"x"}],"expectedRevision":"7"}',
    resultJson: null,
    error: null,
    approval: null,
    askedBy: null,
    studioCanAskAgain: false,
    studioDiff: null,
    proposedAt: '2026-11-30T09:50:00.000Z',
    updatedAt: '2026-11-30T09:50:01.000Z',
    steps: [
      { seq: '12', type: 'TOOL_PROPOSED', status: 'PROPOSED', at: '2026-11-30T09:50:00.000Z' },
    ],
    ...overrides,
  };
}

export function makeDescriptor(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemaVersion: 'crowdy.agent-tools/1',
    name: 'workspace.file.patch',
    wireName: 'workspace_file_patch',
    version: '1.0.0',
    summary: 'Patch project files',
    executor: 'SERVER',
    modes: ['BUILD'],
    risk: 'ROUTINE_WRITE',
    riskEffects: ['project_write'],
    riskReversible: true,
    scopes: ['agent.use'],
    scopeRequirementsJson: '{}',
    approvalRequired: true,
    approvalPolicy: 'CONDITIONAL',
    approvalReasons: [],
    approvalMaxTtlSeconds: 120,
    idempotencyClass: 'KEYED',
    idempotencyKeyScope: 'TOOL_CALL',
    timeoutMs: 15000,
    inputSchemaJson: '{}',
    outputSchemaJson: '{}',
    inputRedactionJson: '{}',
    outputRedactionJson: '{}',
    maxPersistedBytes: 131072,
    descriptorJson: '{}',
    descriptorDigest: HASH,
    ...overrides,
  };
}

export function makeSession(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    __typename: 'AgentSession',
    contractVersion: 'crowdy.studio-agent/1',
    sessionId: 'session-1',
    appId: '1',
    projectId: 'project-1',
    gridId: null,
    mode: 'BUILD',
    requestedModel: 'demo',
    model: 'demo',
    resolvedModel: 'demo',
    status: 'ACTIVE',
    providerDataConsent: false,
    registryDigest: HASH,
    providerPolicyVersion: '1',
    appPolicyVersion: '1',
    contextVersion: 'ctx-1',
    currentClientEpoch: '0',
    studioControlledBy: null,
    studioControlledSince: null,
    clientEpoch: null,
    lastEventSeq: '12',
    activeRun: null,
    currentRun: null,
    activeLeases: [],
    pendingApproval: null,
    createdAt: '2026-11-30T09:00:00.000Z',
    updatedAt: '2026-11-30T09:50:00.000Z',
    closedAt: null,
    studioTitle: 'Refactor the parser',
    studioSource: 'demo',
    studioPendingApprovals: [],
    studioCheckpointsSupported: true,
    ...overrides,
  };
}

/** Handlers for attaching and heartbeating: each attach allocates the next epoch. */
export function attachHandlers(): Record<string, (args: Record<string, unknown>) => unknown> {
  let epoch = 0;
  return {
    crowdyStudioAgentAttachClient: (args) => {
      epoch += 1;
      const input = args.input as { sessionId: string };
      return {
        clientEpoch: String(epoch),
        replayAfterSeq: '0',
        session: makeSession({
          sessionId: input.sessionId,
          currentClientEpoch: String(epoch),
          clientEpoch: String(epoch),
        }),
      };
    },
    crowdyStudioAgentHeartbeat: () => ({
      serverTime: new Date().toISOString(),
      playLeaseFreshUntil: null,
      workspaceLeaseExpiresAt: null,
    }),
    crowdyStudioAgentSession: (args) =>
      makeSession({ sessionId: args.sessionId as string, currentClientEpoch: String(epoch) }),
  };
}

export const ARGUMENT_HASH = HASH;
