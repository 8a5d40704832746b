import {
  ApprovalFields,
  CheckpointFileFields,
  ToolCallFields,
} from '../../graphql/eventFragments.ts';
import { graphql } from '../../graphql/graphql.ts';

/** One checkpoint as the browser shows it, with its file manifest (AgentCheckpointFile is embedded). */
export const CheckpointFields = graphql(
  `
    fragment CheckpointFields on StudioCheckpoint @_unmask {
      checkpointId
      sessionId
      projectId
      projectRevision
      contentHash
      reason
      fileCount
      totalBytes
      createdAt
      restoredAt
      exactPreImage
      files {
        ...CheckpointFileFields
      }
    }
  `,
  [CheckpointFileFields],
);

/** One page of a session's checkpoints, newest first. */
export const CheckpointsQuery = graphql(
  `
    query StudioCheckpoints($sessionId: String!, $after: String, $first: Int) {
      studioCheckpoints(sessionId: $sessionId, after: $after, first: $first) {
        supported
        unsupportedReason
        pageInfo {
          hasNextPage
          endCursor
        }
        edges {
          cursor
          node {
            ...CheckpointFields
          }
        }
      }
    }
  `,
  [CheckpointFields],
);

/** One checkpoint by id (Graphcache serves it from the cached entity when present). */
export const CheckpointQuery = graphql(
  `
    query StudioCheckpoint($checkpointId: String!) {
      studioCheckpoint(checkpointId: $checkpointId) {
        ...CheckpointFields
      }
    }
  `,
  [CheckpointFields],
);

/** The session's project now: revision, content hash (computed as a checkpoint's) and files. */
export const ProjectQuery = graphql(
  `
    query StudioProject($sessionId: String!) {
      studioProject(sessionId: $sessionId) {
        projectId
        name
        revision
        contentHash
        updatedAt
        files {
          ...CheckpointFileFields
        }
      }
    }
  `,
  [CheckpointFileFields],
);

/** The proposed restore call's progress (the same StudioToolCall entity events update). */
export const RestoreToolCallQuery = graphql(`
  query RestoreToolCall($toolCallId: String!) {
    studioToolCall(toolCallId: $toolCallId) {
      toolCallId
      status
      resultJson
      updatedAt
      error {
        code
        message
        remediation
      }
      approval {
        approvalId
        status
      }
    }
  }
`);

/**
 * Proposes project.checkpoint.restore; the answer is its PENDING approval. The whole tool-call
 * state is selected so the approval card renders from the cache at once.
 */
export const RequestCheckpointRestoreMutation = graphql(
  `
    mutation RequestCheckpointRestore($input: StudioCheckpointRestoreInput!) {
      studioRequestCheckpointRestore(input: $input) {
        ...ApprovalFields
        studioToolCall {
          ...ToolCallFields
        }
      }
    }
  `,
  [ApprovalFields, ToolCallFields],
);
