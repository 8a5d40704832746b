/** The GraphQL shape of an approval rule (StudioApprovalRule): the record, flattened. */
import type { ApprovalRuleRecord } from '../store/records.ts';

export function ruleView(r: ApprovalRuleRecord, nowMs: number) {
  return {
    __typename: 'StudioApprovalRule' as const,
    ruleId: r.ruleId,
    name: r.name,
    effect: r.effect,
    toolName: r.toolName,
    match: r.match.kind,
    argumentsJson: r.match.kind === 'EXACT_ARGUMENTS' ? r.match.argumentsJson : null,
    argumentName: r.match.kind === 'ARGUMENT_PREFIX' ? r.match.argumentName : null,
    argumentPrefix: r.match.kind === 'ARGUMENT_PREFIX' ? r.match.argumentPrefix : null,
    scope: r.scope.kind,
    sessionId: r.scope.kind === 'SESSION' ? r.scope.sessionId : null,
    projectId: r.scope.kind === 'PROJECT' ? r.scope.projectId : null,
    sourceId: r.scope.kind === 'SOURCE' ? r.scope.sourceId : null,
    allowDestructive: r.allowDestructive,
    expiresAt: r.expiresAt,
    status: r.status,
    active: r.status === 'ACTIVE' && (!r.expiresAt || Date.parse(r.expiresAt) > nowMs),
    createdAt: r.createdAt,
    createdBy: r.createdBy,
    updatedAt: r.updatedAt,
    revokedAt: r.revokedAt,
    revokedBy: r.revokedBy,
    matchCount: r.matchCount,
    lastUsedAt: r.lastUsedAt,
    lastToolCallId: r.lastToolCallId,
  };
}
