import { ApprovalFields, ToolCallFields } from '../../graphql/eventFragments.ts';
import { graphql } from '../../graphql/graphql.ts';

/** One checkpoint as the browser shows it; its files are paged (CheckpointFilesPageQuery). */
export const CheckpointFields = graphql(`
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
    studioMadeBy {
      seq
      runId
      toolCallId
      toolName
      restoredCheckpointId
      summary
    }
  }
`);

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

/** The session's project now: revision, content hash (computed as a checkpoint's), counts, availability. */
export const ProjectQuery = graphql(`
  query StudioProject($sessionId: String!) {
    studioProject(sessionId: $sessionId) {
      projectId
      name
      revision
      contentHash
      fileCount
      totalBytes
      available
      unavailableReason
      updatedAt
    }
  }
`);

/** One manifest entry of a paged file list (StudioCheckpointFile is embedded). */
export const StudioFileFields = graphql(`
  fragment StudioFileFields on StudioCheckpointFile @_unmask {
    target
    path
    contentHash
    byteLength
    kind
    executable
    notCaptured
  }
`);

const FilePageFields = graphql(
  `
    fragment FilePageFields on StudioCheckpointFileConnection @_unmask {
      totalCount
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        cursor
        node {
          ...StudioFileFields
        }
      }
    }
  `,
  [StudioFileFields],
);

/** One page of a checkpoint's files, by path (cursor = the last path of the previous page). */
export const CheckpointFilesPageQuery = graphql(
  `
    query CheckpointFilesPage(
      $checkpointId: String!
      $first: Int!
      $after: String
      $pathPrefix: String
    ) {
      studioCheckpoint(checkpointId: $checkpointId) {
        checkpointId
        files(first: $first, after: $after, pathPrefix: $pathPrefix) {
          ...FilePageFields
        }
      }
    }
  `,
  [FilePageFields],
);

/** One page of the project's files now. */
export const ProjectFilesPageQuery = graphql(
  `
    query ProjectFilesPage($sessionId: String!, $first: Int!, $after: String, $pathPrefix: String) {
      studioProject(sessionId: $sessionId) {
        projectId
        files(first: $first, after: $after, pathPrefix: $pathPrefix) {
          ...FilePageFields
        }
      }
    }
  `,
  [FilePageFields],
);

/**
 * One page of what restoring a checkpoint over `against` (a checkpoint; null: the project now)
 * changes, with the counts of all pages. Against the project it is the restore preview.
 */
export const CheckpointChangesQuery = graphql(
  `
    query CheckpointChanges(
      $checkpointId: String!
      $against: String
      $first: Int!
      $after: String
    ) {
      studioCheckpoint(checkpointId: $checkpointId) {
        checkpointId
        fileCount
        changes(against: $against, first: $first, after: $after) {
          totalCount
          added
          changed
          removed
          modeChanged
          notRestorable
          changedOutsideAgent
          pageInfo {
            hasNextPage
            endCursor
          }
          edges {
            cursor
            node {
              path
              change
              changedOutsideAgent
              notRestorableReason
              from {
                ...StudioFileFields
              }
              to {
                ...StudioFileFields
              }
            }
          }
        }
      }
    }
  `,
  [StudioFileFields],
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

/**
 * What restoring a checkpoint (or only `paths`, files or folders) changes now: the server's own
 * plan, the counts the restore's approval card states (StudioRestorePreview is embedded).
 */
export const RestorePreviewQuery = graphql(`
  query StudioRestorePreview($checkpointId: String!, $paths: [String!]) {
    studioCheckpoint(checkpointId: $checkpointId) {
      checkpointId
      studioRestorePreview(paths: $paths) {
        checkpointId
        paths
        projectRevision
        projectContentHash
        changed
        added
        removed
        modeChanged
        notRestorable
        changedOutsideAgent
      }
    }
  }
`);
