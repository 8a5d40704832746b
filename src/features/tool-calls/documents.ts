import { ToolCallFields } from '../../graphql/eventFragments.ts';
import { graphql } from '../../graphql/graphql.ts';

/**
 * Everything the tool-call card reads from one StudioToolCall entity (keyed by toolCallId): the
 * shared ToolCallFields selection that every TOOL_* and APPROVAL_* event embeds, so the entity is
 * complete in the cache and the card's cache-first read never goes to the network.
 */
export const ToolCallRowFragment = graphql(
  `
    fragment ToolCallRow on StudioToolCall {
      toolCallId
      ...ToolCallFields
    }
  `,
  [ToolCallFields],
);

/** The card's read of its entity by key (Graphcache resolves `studioToolCall` to the cached entity). */
export const ToolCallCardQuery = graphql(
  `
    query ToolCallCard($toolCallId: String!) {
      studioToolCall(toolCallId: $toolCallId) {
        toolCallId
        ...ToolCallRow
      }
    }
  `,
  [ToolCallRowFragment],
);

/** The session's tool registry: executor, risk class and approval policy per tool name. */
export const ToolDescriptorsQuery = graphql(`
  query ToolDescriptors($sessionId: String!) {
    crowdyStudioAgentToolDescriptors(sessionId: $sessionId) {
      registryDigest
      tools {
        name
        version
        summary
        executor
        risk
        riskReversible
        approvalRequired
        approvalPolicy
        approvalMaxTtlSeconds
      }
    }
  }
`);

/** What a decision changes: the approval and its call's status (both keyed, so the cache merges them). */
const ApprovalDecisionFields = graphql(`
  fragment ApprovalDecisionFields on AgentApproval @_unmask {
    approvalId
    toolCallId
    status
    approved
    rejected
    studioDecidedAt
    studioDecisionReason
    studioToolCall {
      toolCallId
      status
      updatedAt
    }
  }
`);

/** Approve the exact argument hash shown on the card. */
export const ApproveToolMutation = graphql(
  `
    mutation ApproveTool($input: DecideAgentToolInput!) {
      crowdyStudioAgentApproveTool(input: $input) {
        ...ApprovalDecisionFields
      }
    }
  `,
  [ApprovalDecisionFields],
);

/** Deny the call, with an optional reason. */
export const RejectToolMutation = graphql(
  `
    mutation RejectTool($input: DecideAgentToolInput!) {
      crowdyStudioAgentRejectTool(input: $input) {
        ...ApprovalDecisionFields
      }
    }
  `,
  [ApprovalDecisionFields],
);
