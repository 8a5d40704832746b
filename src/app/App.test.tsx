import { act, fireEvent, render, screen, within } from '@testing-library/react';
import axe from 'axe-core';
import { Provider } from 'urql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Operation } from '@urql/core';
import { makeConnectionStore } from '../graphql/connectionStore.ts';
import {
  approval,
  approvalEvent,
  budgetEvent,
  eventPage,
  lifecycleEvent,
  messageEvent,
  SESSION_ID,
  toolCall,
  toolEvent,
} from '../test/fixtures.ts';
import { stubLayout } from '../test/layout.ts';
import { makeTestClient } from '../test/testClient.ts';
import { App } from './App.tsx';

const pending = toolCall({
  status: 'WAITING_FOR_APPROVAL',
  approval: approval({ expiresAt: new Date(Date.now() + 60_000).toISOString() }),
});

function sessionData(over: Record<string, unknown> = {}) {
  return {
    __typename: 'AgentSession',
    sessionId: SESSION_ID,
    studioTitle: 'Update the changelog',
    studioSource: 'demo',
    mode: 'BUILD',
    status: 'ACTIVE',
    model: 'studio-offline-agent',
    requestedModel: 'studio-offline-agent',
    projectId: 'p-1',
    lastEventSeq: '5',
    currentClientEpoch: '0',
    createdAt: '2026-11-30T09:00:00.000Z',
    updatedAt: '2026-11-30T09:00:00.000Z',
    closedAt: null,
    studioCheckpointsSupported: true,
    activeRun: { __typename: 'AgentRun', runId: 'run-1', status: 'WAITING_FOR_APPROVAL' },
    currentRun: {
      __typename: 'AgentRun',
      runId: 'run-1',
      status: 'WAITING_FOR_APPROVAL',
      errorCode: null,
      terminalReason: null,
    },
    studioPendingApprovals: [],
    ...over,
  };
}

function nameOf(operation: Operation): string | undefined {
  for (const definition of operation.query.definitions) {
    if (definition.kind === 'OperationDefinition') return definition.name?.value;
  }
  return undefined;
}

function answer(operation: Operation) {
  switch (nameOf(operation)) {
    case 'StudioSessions':
      return {
        data: {
          crowdyStudioAgentSessions: {
            __typename: 'AgentSessionConnection',
            hasNextPage: false,
            endCursor: null,
            nodes: [
              sessionData(),
              sessionData({ sessionId: 'ses-2', studioTitle: 'Second session', activeRun: null }),
            ],
          },
        },
      };
    case 'StudioSession':
      return { data: { crowdyStudioAgentSession: sessionData() } };
    case 'StudioEventPage':
      return {
        data: {
          studioEventPage: eventPage(0, [
            lifecycleEvent(1),
            messageEvent(2, 'USER_MESSAGE', 'Update the changelog'),
            toolEvent(3, 'TOOL_PROPOSED', pending),
            approvalEvent(4, 'APPROVAL_REQUESTED', pending, pending.approval ?? approval()),
            budgetEvent(5),
          ]),
        },
      };
    case 'PendingApprovals':
      return { data: { studioPendingApprovals: [] } };
    case 'ToolDescriptors':
      return {
        data: {
          crowdyStudioAgentToolDescriptors: {
            __typename: 'AgentToolDescriptorSet',
            registryDigest: 'd',
            tools: [],
          },
        },
      };
    default:
      return { data: null, errors: [{ message: `unscripted ${nameOf(operation)}` }] };
  }
}

let restoreLayout: () => void = () => undefined;
beforeEach(() => {
  restoreLayout = stubLayout();
  window.history.replaceState(null, '', `/sessions/${SESSION_ID}`);
});
afterEach(() => {
  restoreLayout();
  window.history.replaceState(null, '', '/');
  document.documentElement.classList.remove('dark');
  localStorage.clear();
});

function renderApp() {
  const test = makeTestClient(answer);
  const connection = makeConnectionStore('live');
  render(
    <Provider value={test.client}>
      <App connection={connection} />
    </Provider>,
  );
  return { test, connection };
}

describe('App', () => {
  it('composes the shell, the session header, the timeline and the tool-call card', async () => {
    renderApp();
    expect(
      await screen.findByRole('heading', { level: 1, name: 'Update the changelog' }),
    ).toBeTruthy();
    const sessions = screen.getByRole('navigation', { name: 'Sessions' });
    expect(
      within(sessions)
        .getByRole('link', { name: /Update the changelog/ })
        .getAttribute('aria-current'),
    ).toBe('page');
    expect(screen.getByRole('main')).toBeTruthy();
    expect(screen.getByText('Live')).toBeTruthy();
    const card = await screen.findByRole('article', { name: /Tool call workspace\.file\.patch/ });
    // The card is the tool-calls feature's own, rendered through the app's render prop.
    expect(await within(card).findByRole('button', { name: /Approve/ })).toBeTruthy();
    expect(screen.getByText(/Watching\. Your first action/)).toBeTruthy();
  });

  it('has no serious or critical axe violations', async () => {
    renderApp();
    await screen.findByRole('article', { name: /Tool call workspace\.file\.patch/ });
    await screen.findByRole('heading', { level: 1, name: 'Update the changelog' });
    const results = await axe.run(document.body, {
      rules: { 'color-contrast': { enabled: false } },
    });
    const serious = results.violations.filter(
      (v) => v.impact === 'serious' || v.impact === 'critical',
    );
    expect(
      serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    ).toEqual([]);
  });

  it('navigates in-app by history and toggles and remembers the dark theme', async () => {
    renderApp();
    const second = await screen.findByRole('link', { name: /Second session/ });
    fireEvent.click(second);
    expect(window.location.pathname).toBe('/sessions/ses-2');
    act(() => window.history.back());
    fireEvent.click(screen.getByRole('switch', { name: 'Dark theme' }));
    expect(document.documentElement.classList.contains('dark')).toBe(true);
    expect(localStorage.getItem('agent-studio:theme')).toBe('dark');
  });
});
