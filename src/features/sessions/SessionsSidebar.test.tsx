import { act, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { Operation } from '@urql/core';
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
    studioControlledBy: null,
    studioControlledSince: null,
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

describe('SessionsSidebar paging', () => {
  // Six sessions, newest first, served two at a time by cursor like the server does.
  const created = (n: number) => `2026-11-30T09:0${n}:00.000Z`;
  const all = Array.from({ length: 6 }, (_, i) =>
    session({
      sessionId: `ses-${6 - i}`,
      studioTitle: `Session ${6 - i}`,
      createdAt: created(6 - i),
    }),
  );
  function answerPage(operation: Operation) {
    const variables = operation.variables as { after?: string | null };
    const start = variables.after ? all.findIndex((s) => s.sessionId === variables.after) + 1 : 0;
    const nodes = all.slice(start, start + 2);
    return {
      data: {
        crowdyStudioAgentSessions: {
          __typename: 'AgentSessionConnection',
          hasNextPage: start + 2 < all.length,
          endCursor: nodes.at(-1)?.sessionId ?? null,
          nodes,
        },
      },
    };
  }
  const pages = () => makeTestClient(answerPage);
  const titles = () =>
    within(screen.getByRole('navigation', { name: 'Sessions' }))
      .getAllByRole('link')
      .map((link) => link.textContent?.match(/Session \d|Brand new/)?.[0]);

  it('loads older pages by cursor and keeps every loaded session live', async () => {
    const user = userEvent.setup();
    const test = pages();
    render(
      <Provider value={test.client}>
        <SessionsSidebar activeSessionId={null} sessionHref={(id) => `/sessions/${id}`} />
      </Provider>,
    );
    await screen.findByRole('link', { name: /Session 6/ });
    expect(titles()).toEqual(['Session 6', 'Session 5']);
    // The first page says it is only the newest; the older ones come on demand.
    expect(screen.getByText(/most recent sessions/)).toBeTruthy();
    // An update to an older session that is not loaded yet does not jump it to the top.
    const paused = session({
      sessionId: 'ses-1',
      studioTitle: 'Session 1',
      createdAt: created(1),
      status: 'PAUSED',
    });
    // The server's list says the same from now on.
    all[5] = paused;
    act(() => test.push('studioSessionUpdates', { studioSessionUpdates: paused }));
    await act(async () => {
      await new Promise((resolve) => setTimeout(resolve, 0));
    });
    expect(titles()).toEqual(['Session 6', 'Session 5']);

    await user.click(screen.getByRole('button', { name: 'Load more sessions' }));
    await screen.findByRole('link', { name: /Session 4/ });
    expect(titles()).toEqual(['Session 6', 'Session 5', 'Session 4', 'Session 3']);
    // A keyboard user lands on the first session that was loaded.
    expect(document.activeElement).toBe(screen.getByRole('link', { name: /Session 4/ }));
    const afters = test.operations
      .filter((op) => op.kind === 'query')
      .map((op) => (op.variables as { after?: string }).after ?? null);
    expect([...new Set(afters)]).toEqual([null, 'ses-5']);

    await user.click(screen.getByRole('button', { name: 'Load more sessions' }));
    await screen.findByRole('link', { name: /Session 1/ });
    expect(titles()).toEqual([
      'Session 6',
      'Session 5',
      'Session 4',
      'Session 3',
      'Session 2',
      'Session 1',
    ]);
    expect(screen.queryByRole('button', { name: 'Load more sessions' })).toBeNull();

    // Live: a new session joins the top, and a session on an older page changes in place.
    expect(
      within(screen.getByRole('link', { name: /Session 1/ })).getByText('Paused'),
    ).toBeTruthy();
    act(() =>
      test.push('studioSessionUpdates', {
        studioSessionUpdates: session({
          sessionId: 'ses-7',
          studioTitle: 'Brand new',
          createdAt: created(7),
        }),
      }),
    );
    await screen.findByRole('link', { name: /Brand new/ });
    act(() =>
      test.push('studioSessionUpdates', {
        studioSessionUpdates: session({
          sessionId: 'ses-2',
          studioTitle: 'Session 2',
          createdAt: created(2),
          status: 'PAUSED',
        }),
      }),
    );
    const second = await screen.findByRole('link', { name: /Session 2/ });
    expect(await within(second).findByText('Paused')).toBeTruthy();
    expect(titles()).toEqual([
      'Brand new',
      'Session 6',
      'Session 5',
      'Session 4',
      'Session 3',
      'Session 2',
      'Session 1',
    ]);
  });

  it('says so when an older page fails and loads it on a retry', async () => {
    const user = userEvent.setup();
    let fail = true;
    const test = makeTestClient((operation) => {
      const after = (operation.variables as { after?: string }).after;
      if (after && fail) return { data: null, errors: [{ message: 'server busy' }] };
      return answerPage(operation);
    });
    render(
      <Provider value={test.client}>
        <SessionsSidebar activeSessionId={null} sessionHref={(id) => `/sessions/${id}`} />
      </Provider>,
    );
    await user.click(await screen.findByRole('button', { name: 'Load more sessions' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/Could not load more sessions: .*server busy/);
    fail = false;
    await user.click(within(alert).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('link', { name: /Session 4/ })).toBeTruthy();
  });

  it("shows each session's project, last activity and full title on hover, and filters them", async () => {
    const user = userEvent.setup();
    const test = makeTestClient(() => ({
      data: {
        crowdyStudioAgentSessions: {
          __typename: 'AgentSessionConnection',
          hasNextPage: false,
          endCursor: null,
          nodes: [
            session({
              projectId: 'cleanup-app',
              studioTitle: 'A very long title that the sidebar cuts',
            }),
            session({ sessionId: 'ses-2', studioTitle: 'Changelog note', projectId: 'notes-app' }),
          ],
        },
      },
    }));
    render(
      <Provider value={test.client}>
        <SessionsSidebar activeSessionId={null} sessionHref={(id) => `/sessions/${id}`} />
      </Provider>,
    );
    const long = await screen.findByRole('link', { name: /A very long title/ });
    expect(long.getAttribute('title')).toBe('A very long title that the sidebar cuts');
    expect(within(long).getByText('cleanup-app')).toBeTruthy();
    expect(long.querySelector('time')?.getAttribute('dateTime')).toBe('2026-11-30T09:00:00.000Z');

    await user.type(screen.getByRole('searchbox', { name: 'Filter sessions' }), 'NOTES');
    expect(screen.queryByRole('link', { name: /A very long title/ })).toBeNull();
    expect(screen.getByRole('link', { name: /Changelog note/ })).toBeTruthy();
  });
});
