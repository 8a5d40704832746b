import { graphql } from '../../graphql/graphql.ts';

/** Every field of an approval rule the rules page and the editor read (one entity per ruleId). */
export const ApprovalRuleFields = graphql(`
  fragment ApprovalRuleFields on StudioApprovalRule @_unmask {
    ruleId
    name
    effect
    toolName
    match
    argumentsJson
    argumentName
    argumentPrefix
    scope
    sessionId
    projectId
    sourceId
    allowDestructive
    expiresAt
    status
    active
    createdAt
    createdBy
    updatedAt
    revokedAt
    revokedBy
    matchCount
    lastUsedAt
    lastToolCallId
  }
`);

export const ApprovalRulesQuery = graphql(
  `
    query ApprovalRules($appId: BigInt!) {
      studioApprovalRules(appId: $appId) {
        ...ApprovalRuleFields
      }
    }
  `,
  [ApprovalRuleFields],
);

export const CreateApprovalRuleMutation = graphql(
  `
    mutation CreateApprovalRule($input: StudioCreateApprovalRuleInput!) {
      studioCreateApprovalRule(input: $input) {
        ...ApprovalRuleFields
      }
    }
  `,
  [ApprovalRuleFields],
);

export const UpdateApprovalRuleMutation = graphql(
  `
    mutation UpdateApprovalRule($input: StudioUpdateApprovalRuleInput!) {
      studioUpdateApprovalRule(input: $input) {
        ...ApprovalRuleFields
      }
    }
  `,
  [ApprovalRuleFields],
);

export const RevokeApprovalRuleMutation = graphql(
  `
    mutation RevokeApprovalRule($input: StudioRevokeApprovalRuleInput!) {
      studioRevokeApprovalRule(input: $input) {
        ...ApprovalRuleFields
      }
    }
  `,
  [ApprovalRuleFields],
);

/** What the editor needs of the call's session to offer the project and source scopes. */
export const RuleSessionQuery = graphql(`
  query RuleSession($sessionId: String!) {
    crowdyStudioAgentSession(sessionId: $sessionId) {
      sessionId
      projectId
      studioSource
    }
  }
`);
