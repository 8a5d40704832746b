import { SessionFields } from '../../graphql/eventFragments.ts';
import { graphql, type ResultOf } from '../../graphql/graphql.ts';

/** The projects a session can be started in (`studioStartSource` null: none can). */
export const StartableProjectsQuery = graphql(`
  query StudioStartableProjects {
    studioProjects {
      projectId
      name
      studioStartSource
    }
  }
`);

export type StartableProject = ResultOf<typeof StartableProjectsQuery>['studioProjects'][number];

/**
 * Creates the session; it selects what the sessions list shows of a session, so the cache
 * updater can link it into the cached list pages without a refetch.
 */
export const CreateSessionMutation = graphql(
  `
    mutation StudioCreateSession($input: CreateAgentSessionInput!) {
      crowdyStudioAgentCreateSession(input: $input) {
        ...SessionFields
      }
    }
  `,
  [SessionFields],
);

export const FirstMessageMutation = graphql(`
  mutation StudioFirstMessage($input: SendAgentMessageInput!) {
    crowdyStudioAgentSendMessage(input: $input) {
      runId
      status
    }
  }
`);
