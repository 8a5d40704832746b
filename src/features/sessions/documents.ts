import { SessionFields } from '../../graphql/eventFragments.ts';

import { graphql, type ResultOf } from '../../graphql/graphql.ts';

export type SessionSummary = ResultOf<typeof SessionFields>;

/** One page of the app's sessions, newest first; `after` is the previous page's endCursor. */
export const SessionsQuery = graphql(
  `
    query StudioSessions($appId: BigInt!, $first: Int, $after: String) {
      crowdyStudioAgentSessions(appId: $appId, first: $first, after: $after) {
        hasNextPage
        endCursor
        nodes {
          ...SessionFields
        }
      }
    }
  `,
  [SessionFields],
);

export const SessionUpdatesSubscription = graphql(
  `
    subscription StudioSessionUpdates($appId: BigInt!) {
      studioSessionUpdates(appId: $appId) {
        ...SessionFields
      }
    }
  `,
  [SessionFields],
);

export const SessionQuery = graphql(
  `
    query StudioSession($sessionId: String!) {
      crowdyStudioAgentSession(sessionId: $sessionId) {
        ...SessionFields
      }
    }
  `,
  [SessionFields],
);

export const SendMessageMutation = graphql(`
  mutation StudioSendMessage($input: SendAgentMessageInput!) {
    crowdyStudioAgentSendMessage(input: $input) {
      runId
      status
    }
  }
`);

export const PauseMutation = graphql(`
  mutation StudioPause($input: AgentSessionControlInput!) {
    crowdyStudioAgentPause(input: $input) {
      sessionId
      status
    }
  }
`);

export const ResumeMutation = graphql(`
  mutation StudioResume($input: AgentSessionControlInput!) {
    crowdyStudioAgentResume(input: $input) {
      sessionId
      status
    }
  }
`);

export const CancelRunMutation = graphql(`
  mutation StudioCancelRun($input: CancelAgentRunInput!) {
    crowdyStudioAgentCancelRun(input: $input) {
      runId
      status
      cancelled
    }
  }
`);

/** The home page's Recent restores: checkpoints restored most recently, with their session. */
export const RecentRestoresQuery = graphql(`
  query StudioRecentRestores($first: Int) {
    studioRecentRestores(first: $first) {
      restoredAt
      checkpoint {
        checkpointId
        reason
        projectRevision
        restoredAt
      }
      session {
        sessionId
        studioTitle
      }
    }
  }
`);
