import { act, render, screen, within } from '@testing-library/react';
import { Provider } from 'urql';
import { describe, expect, it } from 'vitest';
import { approval } from '../../test/fixtures.ts';
import { makeTestClient } from '../../test/testClient.ts';
import { SessionsSidebar } from './SessionsSidebar.tsx';

function session(over: Record<string, unknown>) {
  return {
    __typename: 'AgentSession',
    sessionId: 'ses-1',
    studioTitle: 'Fix the flaky test',
    studioSource: 'demo',
    mode: 'BUILD',
    status: 'ACTIVE',
    model: null,
    requestedModel: 'm',
    projectId: null,
    lastEventSeq: '10',
    currentClientEpoch: '0',
    createdAt: '2026-11-30T09:00:00.000Z',
    updatedAt: '2026-11-30T09:00:00.000Z',
    closedAt: null,
    studioCheckpointsSupported: true,
    activeRun: null,
    currentRun: null,
    studioPendingApprovals: [],
    ...over,
  };
}

describe('SessionsSidebar', () => {
  it('lists sessions with title or id, mode, status, running state, pending approvals and source, live', async () => {
    const test = makeTestClient(() => ({
      data: {
        crowdyStudioAgentSessions: {
          __typename: 'AgentSessionConnection',
          hasNextPage: false,
          endCursor: null,
          nodes: [
            session({
              activeRun: { __typename: 'AgentRun', runId: 'run-1', status: 'WAITING_FOR_APPROVAL' },
              studioPendingApprovals: [approval({ studioSessionId: 'ses-1' })],
            }),
            session({
              sessionId: 'ses-2',
              studioTitle: null,
              mode: 'ASK',
              status: 'CLOSED',
              studioSource: 'managed-agents',
            }),
          ],
        },
      },
    }));
    render(
      <Provider value={test.client}>
        <SessionsSidebar activeSessionId="ses-2" sessionHref={(id) => `/sessions/${id}`} />
      </Provider>,
    );
    const first = await screen.findByRole('link', { name: /Fix the flaky test/ });
    expect(first.getAttribute('href')).toBe('/sessions/ses-1');
    expect(within(first).getByText('Build')).toBeTruthy();
    expect(within(first).getByText('Active')).toBeTruthy();
    expect(within(first).getByText('Waiting for approval')).toBeTruthy();
    expect(within(first).getByText(/1 waiting/)).toBeTruthy();
    expect(within(first).getByText('demo')).toBeTruthy();
    const second = screen.getByRole('link', { name: /ses-2/ });
    expect(second.getAttribute('aria-current')).toBe('page');
    expect(within(second).getByText('Closed')).toBeTruthy();
    expect(within(second).getByText('managed-agents')).toBeTruthy();

    act(() =>
      test.push('studioSessionUpdates', {
        studioSessionUpdates: session({ sessionId: 'ses-3', studioTitle: 'Brand new' }),
      }),
    );
    expect(await screen.findByRole('link', { name: /Brand new/ })).toBeTruthy();
    act(() =>
      test.push('studioSessionUpdates', {
        studioSessionUpdates: session({ sessionId: 'ses-1', status: 'PAUSED', activeRun: null }),
      }),
    );
    const paused = await screen.findByRole('link', { name: /Fix the flaky test/ });
    expect(await within(paused).findByText('Paused')).toBeTruthy();
    expect(screen.getAllByRole('link')).toHaveLength(3);
  });
});
