/**
 * The GraphQL documents the server benchmark sends. The event selection is the web app's own
 * (src/graphql/eventFragments.ts `EventFields` and the documents in src/graphql/eventDocuments.ts,
 * copied here as plain text so the bench needs no gql.tada runtime): `__typename`, the
 * AgentEventBase fields, member fields aliased as in crowdy-contract.md section 4.4, the studio
 * members, and `studioToolCall` on tool and approval events.
 */

/** The union fragment and the fragments it spreads. */
export const EVENT_FIELDS = /* GraphQL */ `
  fragment AgentErrorFields on AgentError {
    code
    message
    retryable
    remediation
    field
    requiredScope
  }

  fragment ApprovalFields on AgentApproval {
    approvalId
    toolCallId
    argumentHash
    status
    safeSummary
    clientEpoch
    expiresAt
    approved
    rejected
    studioSessionId
    studioReasons
    studioDecidedAt
    studioDecisionReason
    studioAutomatic
  }

  fragment ToolCallFields on StudioToolCall {
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
      ...AgentErrorFields
    }
    approval {
      ...ApprovalFields
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

  fragment EventFields on CrowdyStudioAgentEvent {
    __typename
    ... on AgentEventBase {
      protocolVersion
      eventId
      sessionId
      seq
      type
      runId
      version
      createdAt
    }
    ... on AgentLifecycleEvent {
      lifecycleMode: mode
      lifecycleClientEpoch: clientEpoch
      lifecycleReplayAfterSeq: replayAfterSeq
      lifecycleReason: reason
      lifecycleContextVersion: contextVersion
    }
    ... on AgentMessageEvent {
      messageEventId: messageId
      messageRole: role
      messageContent: content
    }
    ... on AgentRunEvent {
      runStatus: status
      runCode: code
      runReason: reason
      runError: error {
        ...AgentErrorFields
      }
    }
    ... on AgentToolEvent {
      toolEventCallId: toolCallId
      toolEventName: toolName
      toolEventVersion: toolVersion
      toolStatus: status
      toolSafeSummary: safeSummary
      toolDescriptorDigest: descriptorDigest
      toolArgumentHash: argumentHash
      toolExecutor: executor
      toolContextVersion: contextVersion
      toolClientEpoch: clientEpoch
      toolArgumentsJson: argumentsJson
      toolLeaseId: leaseId
      toolApprovalGrant: approvalGrant
      toolIdempotencyKey: idempotencyKey
      toolResultJson: resultJson
      toolError: error {
        ...AgentErrorFields
      }
      toolDeadline: deadline
      studioToolCall {
        ...ToolCallFields
      }
    }
    ... on AgentApprovalEvent {
      approvalEventId: approvalId
      approvalToolCallId: toolCallId
      approvalArgumentHash: argumentHash
      approvalStatus: status
      approvalSafeSummary: safeSummary
      approvalReasons: reasons
      approvalExpiresAt: expiresAt
      studioToolCall {
        ...ToolCallFields
      }
    }
    ... on AgentLeaseEvent {
      leaseEventId: leaseId
      leaseKind: kind
      leaseStatus: status
      leaseClientEpoch: clientEpoch
      leaseScopes: scopes
      leaseHolder: holder
      leaseContextVersion: contextVersion
      leaseControlledEntityId: controlledEntityId
      leaseHostCapabilityRevision: hostCapabilityRevision
      leaseExpectedProjectRevision: expectedProjectRevision
      leaseGrantedAt: grantedAt
      leaseExpiresAt: expiresAt
      leaseReason: reason
    }
    ... on AgentCheckpointEvent {
      checkpointEventId: checkpointId
      checkpointProjectRevision: projectRevision
      checkpointContentHash: contentHash
      checkpointReason: reason
      checkpointFiles: files {
        target
        path
        contentHash
        byteLength
      }
      checkpointRestoredAt: restoredAt
    }
    ... on AgentBudgetEvent {
      budgetSnapshot: budget {
        dimensions {
          name
          scope
          limit
          reserved
          consumed
          remaining
          unit
        }
        resetAt
        platformFunded
        payer
      }
    }
    ... on StudioStageEvent {
      stageFrom: fromStage
      stageTo: toStage
      stageDetail: detail
    }
    ... on StudioLogEvent {
      logLevel: level
      logMessage: message
      logOrigin: origin
    }
    ... on StudioQuestionEvent {
      question {
        questionId
        sessionId
        kind
        prompt
        choices
        initialText
        status
        answerText
        answerChoiceIndex
        answerApproved
        askedBy
        askedAt
        answeredAt
      }
    }
    ... on StudioThreadEvent {
      threadId
      threadAgentName: agentName
      threadStatus: status
    }
    ... on StudioForeignEvent {
      foreignSource: source
      foreignType
      foreignPayloadJson: payloadJson
      foreignTruncated: truncated
    }
  }
`;

/** History after a cursor (the web app's StudioEventHistory). */
export const HISTORY_QUERY = /* GraphQL */ `
  query StudioEventHistory($sessionId: String!, $afterSeq: BigInt, $first: Int) {
    crowdyStudioAgentHistory(sessionId: $sessionId, afterSeq: $afterSeq, first: $first) {
      hasMore
      events {
        ...EventFields
      }
    }
  }
  ${EVENT_FIELDS}
`;

/** Replay after `afterSeq`, then live, in batches; no clientEpoch, so an observer (the web app's StudioEventBatches). */
export const BATCHES_SUBSCRIPTION = /* GraphQL */ `
  subscription StudioEventBatches($sessionId: String!, $afterSeq: BigInt!, $maxBatch: Int) {
    studioAgentEventBatches(sessionId: $sessionId, afterSeq: $afterSeq, maxBatch: $maxBatch) {
      sessionId
      fromSeq
      throughSeq
      events {
        ...EventFields
      }
    }
  }
  ${EVENT_FIELDS}
`;

/** The same history page with only `__typename` and the AgentEventBase fields (for the cost breakdown). */
export const HISTORY_QUERY_BASE_ONLY = /* GraphQL */ `
  query StudioEventHistoryBase($sessionId: String!, $afterSeq: BigInt, $first: Int) {
    crowdyStudioAgentHistory(sessionId: $sessionId, afterSeq: $afterSeq, first: $first) {
      hasMore
      events {
        __typename
        ... on AgentEventBase {
          protocolVersion
          eventId
          sessionId
          seq
          type
          runId
          version
          createdAt
        }
      }
    }
  }
`;
