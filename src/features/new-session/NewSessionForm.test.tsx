import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { Operation } from '@urql/core';
import { Provider } from 'urql';
import { describe, expect, it } from 'vitest';
import { makeTestClient, type ScriptedAnswer } from '../../test/testClient.ts';
import { graphql } from '../../graphql/graphql.ts';
import { NewSessionForm } from './NewSessionForm.tsx';

/** The sessions list as the cache keeps it (the sidebar's own query selects more of each). */
const SessionsQuery = graphql(`
  query TestSessionIds($appId: BigInt!, $first: Int) {
    crowdyStudioAgentSessions(appId: $appId, first: $first) {
      hasNextPage
      endCursor
      nodes {
        sessionId
      }
    }
  }
`);

const projects = {
  studioProjects: [
    { __typename: 'StudioProject', projectId: 'demo-p', name: 'demo', studioStartSource: null },
    {
      __typename: 'StudioProject',
      projectId: 'cc-1',
      name: 'my-repo',
      studioStartSource: 'claude-code',
    },
  ],
};

function createdSession(input: Record<string, unknown>) {
  return {
    __typename: 'AgentSession',
    sessionId: 'ses-new',
    studioTitle: null,
    studioSource: 'claude-code',
    mode: input.mode,
    status: 'ACTIVE',
    model: null,
    requestedModel: input.requestedModel ?? 'default',
    projectId: input.projectId,
    lastEventSeq: '0',
    currentClientEpoch: '0',
    createdAt: '2026-12-01T09:00:00.000Z',
    updatedAt: '2026-12-01T09:00:00.000Z',
    closedAt: null,
    studioCheckpointsSupported: true,
    activeRun: null,
    currentRun: null,
    studioPendingApprovals: [],
  };
}

function field(operation: Operation): string {
  const definition = operation.query.definitions[0];
  return definition?.kind === 'OperationDefinition' &&
    definition.selectionSet.selections[0]?.kind === 'Field'
    ? definition.selectionSet.selections[0].name.value
    : '';
}

function script(overrides: Record<string, (op: Operation) => ScriptedAnswer> = {}) {
  return makeTestClient((operation) => {
    const name = field(operation);
    const override = overrides[name];
    if (override) return override(operation);
    const input =
      (operation.variables as { input?: Record<string, unknown> } | undefined)?.input ?? {};
    switch (name) {
      case 'studioProjects':
        return { data: projects };
      case 'crowdyStudioAgentSessions':
        return {
          data: {
            crowdyStudioAgentSessions: {
              __typename: 'AgentSessionConnection',
              hasNextPage: false,
              endCursor: null,
              nodes: [],
            },
          },
        };
      case 'crowdyStudioAgentCreateSession':
        return { data: { crowdyStudioAgentCreateSession: createdSession(input) } };
      case 'crowdyStudioAgentAttachClient':
        return {
          data: {
            crowdyStudioAgentAttachClient: {
              __typename: 'AgentClientAttachment',
              clientEpoch: '1',
              replayAfterSeq: '0',
              session: {
                __typename: 'AgentSession',
                sessionId: input.sessionId,
                currentClientEpoch: '1',
                clientEpoch: '1',
              },
            },
          },
        };
      case 'crowdyStudioAgentSendMessage':
        return {
          data: {
            crowdyStudioAgentSendMessage: {
              __typename: 'AgentRun',
              runId: 'run-1',
              status: 'RUNNING',
            },
          },
        };
      default:
        return { data: null };
    }
  });
}

const inputOf = (test: { operations: Operation[] }, name: string) =>
  test.operations
    .filter((op) => field(op) === name)
    .map((op) => (op.variables as { input: Record<string, unknown> }).input);

describe('NewSessionForm', () => {
  it('offers only projects a source can start, creates the session, sends the first message and links it into the cached list', async () => {
    const test = script();
    const created: string[] = [];
    // The sessions list is cached first, as the sidebar would have it.
    await test.client.query(SessionsQuery, { appId: '1', first: 50 }).toPromise();
    render(
      <Provider value={test.client}>
        <NewSessionForm onCreated={(id) => created.push(id)} />
      </Provider>,
    );
    const user = userEvent.setup();
    await user.click(await screen.findByText('New session'));
    const project = screen.getByLabelText('Project');
    expect([...(project as HTMLSelectElement).options].map((o) => o.textContent)).toEqual([
      'my-repo (claude-code)',
    ]);
    expect(
      (screen.getByRole('button', { name: 'Start session' }) as HTMLButtonElement).disabled,
    ).toBe(true);
    await user.type(
      screen.getByLabelText("Model (empty: the source's default)"),
      'claude-sonnet-4-5',
    );
    await user.type(screen.getByLabelText('First message'), 'Write hello.txt');
    await user.click(screen.getByRole('button', { name: 'Start session' }));
    await waitFor(() => expect(created).toEqual(['ses-new']));

    const [create] = inputOf(test, 'crowdyStudioAgentCreateSession');
    expect(create).toMatchObject({
      appId: '1',
      projectId: 'cc-1',
      mode: 'BUILD',
      requestedModel: 'claude-sonnet-4-5',
    });
    expect(String(create?.idempotencyKey)).toMatch(/^studio:create-session:/);
    expect(inputOf(test, 'crowdyStudioAgentSendMessage')).toEqual([
      expect.objectContaining({
        sessionId: 'ses-new',
        clientEpoch: '1',
        content: 'Write hello.txt',
      }),
    ]);
    // The Graphcache updater put the new session into the cached list: no refetch needed.
    const list = await test.client
      .query(SessionsQuery, { appId: '1', first: 50 }, { requestPolicy: 'cache-only' })
      .toPromise();
    expect(list.data?.crowdyStudioAgentSessions.nodes.map((s) => s.sessionId)).toContain('ses-new');
    expect((screen.getByLabelText('First message') as HTMLTextAreaElement).value).toBe('');
  });

  it('shows a refused creation as it is and sends nothing', async () => {
    const test = script({
      crowdyStudioAgentCreateSession: () => ({
        data: null,
        errors: [{ message: 'Unknown project', extensions: { code: 'AGENT_BAD_REQUEST' } }],
      }),
    });
    const created: string[] = [];
    render(
      <Provider value={test.client}>
        <NewSessionForm onCreated={(id) => created.push(id)} />
      </Provider>,
    );
    const user = userEvent.setup();
    await user.click(await screen.findByText('New session'));
    await user.type(screen.getByLabelText('First message'), 'hi');
    await user.click(screen.getByRole('button', { name: 'Start session' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Could not start the session (AGENT_BAD_REQUEST): Unknown project',
    );
    expect(created).toEqual([]);
    expect(inputOf(test, 'crowdyStudioAgentSendMessage')).toEqual([]);
    expect((screen.getByLabelText('First message') as HTMLTextAreaElement).value).toBe('hi');
  });

  it('renders nothing when no project can start a session', async () => {
    const test = script({
      studioProjects: () => ({ data: { studioProjects: [projects.studioProjects[0]] } }),
    });
    const { container } = render(
      <Provider value={test.client}>
        <NewSessionForm onCreated={() => undefined} />
      </Provider>,
    );
    await waitFor(() =>
      expect(test.operations.some((op) => field(op) === 'studioProjects')).toBe(true),
    );
    expect(container.innerHTML).toBe('');
  });
});
