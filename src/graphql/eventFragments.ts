import { graphql, type ResultOf } from './graphql.ts';

/** Every field of AgentError, embedded wherever an error travels. */
export const AgentErrorFields = graphql(`
  fragment AgentErrorFields on AgentError @_unmask {
    code
    message
    retryable
    remediation
    field
    requiredScope
  }
`);

/** An approval as every screen reads it: one entity per approvalId. */
export const ApprovalFields = graphql(`
  fragment ApprovalFields on AgentApproval @_unmask {
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
    studioRuleId
    studioRuleName
    studioDecidedBy
    studioRuleSuggestions {
      effect
      toolName
      match
      argumentName
      argumentPrefix
      scope
      label
    }
  }
`);

/**
 * The current state of one tool call (one entity per toolCallId). A history page and a live batch
 * carry it once per call they name (`studioToolCalls`), so each page refreshes the one card that
 * renders it; the card, the inbox and the restore request spread this same selection, so every
 * write leaves the entity complete.
 */
export const ToolCallFields = graphql(
  `
    fragment ToolCallFields on StudioToolCall @_unmask {
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
      studioCanAskAgain
      studioDiff {
        truncated
        files {
          path
          beforeHash
          afterHash
          added
          removed
          hunks
          truncated
          binary
        }
      }
      proposedAt
      updatedAt
      steps {
        seq
        type
        status
        at
      }
    }
  `,
  [AgentErrorFields, ApprovalFields],
);

/**
 * A question as every screen reads it (one entity per questionId): the question card reads it
 * by key, and QUESTION_* events embed it so the card's cache-first read is served.
 */
export const QuestionFields = graphql(`
  fragment QuestionFields on StudioQuestion @_unmask {
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
`);

/** One file of a checkpoint or project manifest, as every file list and comparison reads it. */
export const CheckpointFileFields = graphql(`
  fragment CheckpointFileFields on AgentCheckpointFile @_unmask {
    target
    path
    contentHash
    byteLength
  }
`);

/**
 * One event of the union: the member fields the app shows (and Graphcache's key, `eventId`),
 * not every field the contract has. Each one is paid for per event on every path: the server
 * builds and encodes it, the socket carries it, Graphcache writes it, and a watched page's
 * re-read after every write rebuilds the page's whole result field by field. The fields no
 * screen reads (the envelope's `protocolVersion` and `version`; a tool event's digest, hashes,
 * epoch, lease, grant, idempotency key, arguments and result, which the call itself carries in
 * `studioToolCalls`; an approval event's hash and expiry, which its approval carries; a lease
 * event's id, context, entity, capability and grant time) are left to clients that read them.
 * Member fields whose names clash across members are aliased exactly as the Crowdy SDK's
 * `CrowdyAgentEventFields` does (crowdy-contract.md section 4.4), so a field added back takes
 * the SDK's name. Key fields (`eventId`, `toolCallId` inside `studioToolCall`) are never
 * aliased: Graphcache keys read them by name. The embedded `studioToolCall` is apart, because
 * EventFields and EventRowFields select it differently.
 */
export const EventBaseFields = graphql(
  `
    fragment EventBaseFields on CrowdyStudioAgentEvent @_unmask {
      __typename
      ... on AgentEventBase {
        eventId
        sessionId
        seq
        type
        runId
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
        toolStatus: status
        toolSafeSummary: safeSummary
        toolError: error {
          ...AgentErrorFields
        }
      }
      ... on AgentApprovalEvent {
        approvalEventId: approvalId
        approvalToolCallId: toolCallId
        approvalStatus: status
        approvalSafeSummary: safeSummary
        approvalReasons: reasons
      }
      ... on AgentLeaseEvent {
        leaseKind: kind
        leaseStatus: status
        leaseClientEpoch: clientEpoch
        leaseScopes: scopes
        leaseHolder: holder
        leaseExpectedProjectRevision: expectedProjectRevision
        leaseExpiresAt: expiresAt
        leaseReason: reason
      }
      ... on AgentCheckpointEvent {
        checkpointEventId: checkpointId
        checkpointProjectRevision: projectRevision
        checkpointContentHash: contentHash
        checkpointReason: reason
        checkpointFiles: files {
          ...CheckpointFileFields
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
          ...QuestionFields
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
  `,
  [AgentErrorFields, QuestionFields, CheckpointFileFields],
);

/**
 * One event as the wire carries it (the batch subscription, history): tool and approval events
 * link their StudioToolCall by key only. The page or batch around them carries each call's whole
 * current state once (`studioToolCalls { ...ToolCallFields }`, eventDocuments.ts), which
 * Graphcache normalizes into the same entity the link points at, so the one card that renders
 * it is complete and current. Embedded in every event, the call was 44% of a history page's
 * bytes, mostly repeats (docs/ARCHITECTURE.md, "Why this shape").
 */
export const EventFields = graphql(
  `
    fragment EventFields on CrowdyStudioAgentEvent @_unmask {
      ...EventBaseFields
      ... on AgentToolEvent {
        studioToolCall {
          __typename
          toolCallId
        }
      }
      ... on AgentApprovalEvent {
        studioToolCall {
          __typename
          toolCallId
        }
      }
    }
  `,
  [EventBaseFields],
);

/**
 * What a timeline row shows of a tool call (the compact line and whether it needs the full
 * card). The card reads the whole entity by key itself.
 */
export const ToolCallRowStateFields = graphql(`
  fragment ToolCallRowStateFields on StudioToolCall @_unmask {
    toolCallId
    toolName
    status
    safeSummary
    updatedAt
    approval {
      approvalId
      status
    }
  }
`);

/**
 * One event as the timeline's page query reads it from Graphcache: the same fields, but the
 * embedded call only as far as a row shows it. Graphcache rebuilds a watched page's whole result
 * on every write to it, and the full call was most of a tool event's re-read (ARCHITECTURE.md,
 * "Why this shape").
 */
export const EventRowFields = graphql(
  `
    fragment EventRowFields on CrowdyStudioAgentEvent @_unmask {
      ...EventBaseFields
      ... on AgentToolEvent {
        studioToolCall {
          ...ToolCallRowStateFields
        }
      }
      ... on AgentApprovalEvent {
        studioToolCall {
          ...ToolCallRowStateFields
        }
      }
    }
  `,
  [EventBaseFields, ToolCallRowStateFields],
);

/** One event as the timeline reads it (a discriminated union on `__typename`). */
export type StudioEvent = ResultOf<typeof EventRowFields>;
/** One event as the wire carries it (its tool call by key only). */
export type WireEvent = ResultOf<typeof EventFields>;
/** A tool call's current state. */
export type ToolCallState = ResultOf<typeof ToolCallFields>;
/** A tool call as a timeline row reads it. */
export type ToolCallRowState = ResultOf<typeof ToolCallRowStateFields>;
/** An approval's current state. */
export type ApprovalState = ResultOf<typeof ApprovalFields>;
/** Narrows the event union to one member. */
export type EventOf<T extends StudioEvent['__typename']> = Extract<StudioEvent, { __typename: T }>;

/**
 * What the sidebar, the session header and a newly created session show of a session: one
 * selection, so a session created in the studio links into the cached lists with every field.
 */
export const SessionFields = graphql(
  `
    fragment SessionFields on AgentSession @_unmask {
      sessionId
      studioTitle
      studioSource
      mode
      status
      model
      requestedModel
      projectId
      lastEventSeq
      currentClientEpoch
      studioControlledBy
      studioControlledSince
      createdAt
      updatedAt
      closedAt
      studioCheckpointsSupported
      activeRun {
        runId
        status
      }
      currentRun {
        runId
        status
        errorCode
        terminalReason
      }
      studioPendingApprovals {
        ...ApprovalFields
      }
    }
  `,
  [ApprovalFields],
);
