import { graphql } from '../../graphql/graphql.ts';

/**
 * Every PENDING approval across the app's sessions, with the full tool-call state so each
 * card's cache-first read of its StudioToolCall entity is served from the cache.
 */
export const PendingApprovalsQuery = graphql(`
  query PendingApprovals($appId: BigInt!) {
    studioPendingApprovals(appId: $appId) {
      session {
        sessionId
        studioTitle
        mode
        status
      }
      approval {
        approvalId
        toolCallId
        argumentHash
        status
        safeSummary
        expiresAt
        studioSessionId
      }
      toolCall {
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
    }
  }
`);

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
