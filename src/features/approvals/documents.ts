import { ApprovalFields, ToolCallFields } from '../../graphql/eventFragments.ts';
import { graphql } from '../../graphql/graphql.ts';

/**
 * Every PENDING approval across the app's sessions, with the full tool-call state so each
 * card's cache-first read of its StudioToolCall entity is served from the cache.
 */
export const PendingApprovalsQuery = graphql(
  `
    query PendingApprovals($appId: BigInt!) {
      studioPendingApprovals(appId: $appId) {
        session {
          sessionId
          studioTitle
          mode
          status
        }
        approval {
          ...ApprovalFields
        }
        toolCall {
          ...ToolCallFields
        }
      }
    }
  `,
  [ApprovalFields, ToolCallFields],
);

/**
 * Session changes that can add or remove pending approvals. The cache's studioSessionUpdates
 * updater refetches the inbox when a session's pending set differs from the inbox's.
 */
export const InboxSessionUpdatesSubscription = graphql(`
  subscription InboxSessionUpdates($appId: BigInt!) {
    studioSessionUpdates(appId: $appId) {
      sessionId
      status
      lastEventSeq
      studioPendingApprovals {
        approvalId
      }
    }
  }
`);

/** Risk class per tool name of one session's registry (the compact list shows each row's risk). */
export const InboxDescriptorsQuery = graphql(`
  query InboxDescriptors($sessionId: String!) {
    crowdyStudioAgentToolDescriptors(sessionId: $sessionId) {
      registryDigest
      tools {
        name
        version
        risk
      }
    }
  }
`);

/** Decide many calls at once, all or nothing (the server names each failing item). */
export const DecideToolsMutation = graphql(
  `
    mutation DecideTools($input: StudioDecideToolsInput!) {
      studioDecideTools(input: $input) {
        ...ApprovalFields
        studioToolCall {
          toolCallId
          status
          updatedAt
        }
      }
    }
  `,
  [ApprovalFields],
);

/** Recently decided, expired and revoked approvals with their outcome and who decided. */
export const DecidedApprovalsQuery = graphql(
  `
    query DecidedApprovals($appId: BigInt!, $first: Int) {
      studioDecidedApprovals(appId: $appId, first: $first) {
        session {
          sessionId
          studioTitle
        }
        approval {
          ...ApprovalFields
        }
        toolCall {
          toolCallId
          toolName
          status
        }
      }
    }
  `,
  [ApprovalFields],
);
