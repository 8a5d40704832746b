import { graphql } from '../../graphql/graphql.ts';

/**
 * Everything the tool-call card reads from one StudioToolCall entity (keyed by toolCallId).
 * The timeline's event queries spread it so the entity is complete in the cache and the card's
 * cache-first read never goes to the network.
 */
export const ToolCallRowFragment = graphql(`
  fragment ToolCallRow on StudioToolCall {
    toolCallId
    sessionId
    runId
    toolName
    toolVersion
    executor
    status
    safeSummary
    argumentHash
    argumentsJson
    resultJson
    error {
      code
      message
      retryable
      remediation
    }
    approval {
      approvalId
      toolCallId
      argumentHash
      status
      safeSummary
      clientEpoch
      expiresAt
      studioSessionId
      studioReasons
      studioDecidedAt
      studioDecisionReason
      studioAutomatic
    }
    askedBy
    proposedAt
    updatedAt
    steps {
      seq
      type
      status
      at
    }
  }
`);

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

/** Approve the exact argument hash shown on the card. */
export const ApproveToolMutation = graphql(`
  mutation ApproveTool($input: DecideAgentToolInput!) {
    crowdyStudioAgentApproveTool(input: $input) {
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
  }
`);

/** Deny the call, with an optional reason. */
export const RejectToolMutation = graphql(`
  mutation RejectTool($input: DecideAgentToolInput!) {
    crowdyStudioAgentRejectTool(input: $input) {
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
  }
`);
