import { graphql } from '../../graphql/graphql.ts';

/** The history rail of a session (HistoryScrubber): its marks, folded on the server. */
export const SessionHistoryQuery = graphql(`
  query StudioSessionHistory($sessionId: String!) {
    studioSessionHistory(sessionId: $sessionId) {
      sessionId
      throughSeq
      marksThinned
      marks {
        seq
        kind
        type
        label
        runId
        toolCallId
        checkpointId
      }
    }
  }
`);

/** The session as of one seq (HistoryScrubber's "as of" panel). */
export const SessionAtQuery = graphql(`
  query StudioSessionAt($sessionId: String!, $seq: BigInt!) {
    studioSessionAt(sessionId: $sessionId, seq: $seq) {
      sessionId
      seq
      requestedSeq
      complete
      toolCallCount
      pendingApprovalCount
      runId
      runStatus
      toolCalls {
        toolCallId
        toolName
        status
        approvalStatus
        proposedSeq
      }
      budget {
        dimensions {
          name
          scope
          consumed
          limit
          unit
        }
      }
      checkpoint {
        checkpointId
        createdAt
        reason
        projectRevision
      }
    }
  }
`);
