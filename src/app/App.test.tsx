import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import axe from 'axe-core';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
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
import { makeFakeStudioHttp, makeTestQueryClient, TestProviders } from '../test/fakeStudioHttp.tsx';
import { stubLayout } from '../test/layout.ts';
import { makeTestClient, type Resolver } from '../test/testClient.ts';
import { App } from './App.tsx';
import { preloadRoutes } from './lazyRoutes.tsx';

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
    // The page query reads only what a row shows of a call; the card reads the whole call.
    case 'ToolCallCard':
      return { data: { studioToolCall: pending } };
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

function renderApp(resolve: Resolver = answer) {
  const test = makeTestClient(resolve);
  const connection = makeConnectionStore('live');
  render(
    <TestProviders
      client={test.client}
      http={makeFakeStudioHttp().http}
      queryClient={makeTestQueryClient()}
    >
      <App connection={connection} />
    </TestProviders>,
  );
  return { test, connection };
}

/** Every heading in document order, as `h2 Sessions`. */
const outline = () =>
  [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].map(
    (h) => `${h.tagName.toLowerCase()} ${h.textContent}`,
  );

async function headingOrderViolations() {
  const results = await axe.run(document.body, {
    runOnly: { type: 'rule', values: ['heading-order', 'page-has-heading-one'] },
  });
  return results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.html).join(' | ')}`);
}

describe('App', () => {
  // The routes are lazy chunks: load their modules once, so a render does not wait on a transform.
  beforeAll(preloadRoutes, 60_000);

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
    expect(screen.getByText(/Nobody controls this session now/)).toBeTruthy();
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

  it("keeps a typed draft with its session: it never follows into another session's composer", async () => {
    renderApp();
    const box = await screen.findByRole('textbox', { name: /Message to the agent/ });
    fireEvent.change(box, { target: { value: 'draft for the first session' } });
    fireEvent.click(await screen.findByRole('link', { name: /Second session/ }));
    expect(window.location.pathname).toBe('/sessions/ses-2');
    const other = await screen.findByRole('textbox', { name: /Message to the agent/ });
    expect((other as HTMLTextAreaElement).value).toBe('');
    act(() => window.history.back());
    await screen.findByRole('heading', { level: 1, name: 'Update the changelog' });
    await vi.waitFor(() =>
      expect(
        (screen.getByRole('textbox', { name: /Message to the agent/ }) as HTMLTextAreaElement)
          .value,
      ).toBe('draft for the first session'),
    );
    sessionStorage.clear();
  });

  it('opens on a home page that says what waits, each a link', async () => {
    window.history.replaceState(null, '', '/');
    renderApp((operation) => {
      if (nameOf(operation) === 'StudioRecentRestores')
        return {
          data: {
            studioRecentRestores: [
              {
                __typename: 'StudioRecentRestore',
                restoredAt: '2026-11-30T09:30:00.000Z',
                checkpoint: {
                  __typename: 'StudioCheckpoint',
                  checkpointId: 'cp_restored',
                  reason: 'AGENT_WRITE',
                  projectRevision: '3',
                  restoredAt: '2026-11-30T09:30:00.000Z',
                },
                session: {
                  __typename: 'AgentSession',
                  sessionId: 'ses-2',
                  studioTitle: 'Broken build',
                },
              },
            ],
          },
        };
      if (nameOf(operation) !== 'StudioSessions') return answer(operation);
      return {
        data: {
          crowdyStudioAgentSessions: {
            __typename: 'AgentSessionConnection',
            hasNextPage: false,
            endCursor: null,
            nodes: [
              sessionData({ studioPendingApprovals: [pending.approval] }),
              sessionData({
                sessionId: 'ses-2',
                studioTitle: 'Broken build',
                activeRun: null,
                currentRun: {
                  __typename: 'AgentRun',
                  runId: 'run-2',
                  status: 'FAILED',
                  errorCode: 'AGENT_APPROVAL_DENIED',
                  terminalReason: null,
                },
              }),
            ],
          },
        },
      };
    });
    const waiting = await screen.findByRole('region', { name: 'Waiting for your approval' });
    expect(
      within(waiting).getByRole('link', {
        name: (name) => name.includes(pending.approval!.safeSummary),
      }),
    ).toBeTruthy();
    const running = screen.getByRole('region', { name: 'Running now' });
    expect(
      within(running)
        .getByRole('link', { name: /Update the changelog/ })
        .getAttribute('href'),
    ).toBe(`/sessions/${SESSION_ID}`);
    const failed = screen.getByRole('region', { name: 'Last run failed' });
    expect(within(failed).getByRole('link', { name: /Broken build/ }).textContent).toContain(
      'AGENT_APPROVAL_DENIED',
    );
    const restores = screen.getByRole('region', { name: 'Recent restores' });
    const restored = await within(restores).findByRole('link', { name: /cp_restored/ });
    expect(restored.getAttribute('href')).toBe('/sessions/ses-2/checkpoints');
    expect(restored.textContent).toMatch(/revision 3\) restored.*Broken build/);
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

  it('has one h1 per page and no skipped heading levels on the timeline, checkpoints and inbox', async () => {
    renderApp();
    await screen.findByRole('article', { name: /Tool call workspace\.file\.patch/ });
    expect(outline().filter((h) => h.startsWith('h1'))).toEqual(['h1 Update the changelog']);
    expect(await headingOrderViolations()).toEqual([]);
    cleanup();

    window.history.replaceState(null, '', `/sessions/${SESSION_ID}/checkpoints`);
    renderApp((operation) =>
      nameOf(operation) === 'StudioCheckpoints'
        ? {
            data: {
              studioCheckpoints: {
                __typename: 'StudioCheckpointConnection',
                supported: true,
                unsupportedReason: null,
                pageInfo: { __typename: 'AgentPageInfo', hasNextPage: false, endCursor: null },
                edges: [],
              },
            },
          }
        : nameOf(operation) === 'StudioProject'
          ? { data: { studioProject: null } }
          : answer(operation),
    );
    await screen.findByRole('heading', { level: 1, name: 'Checkpoints' });
    // The session title stays visible above, but the page's one h1 is the browser's own.
    expect(screen.getByText('Update the changelog', { selector: 'main p bdi' })).toBeTruthy();
    expect(outline().filter((h) => h.startsWith('h1'))).toEqual(['h1 Checkpoints']);
    expect(await headingOrderViolations()).toEqual([]);
    cleanup();

    window.history.replaceState(null, '', '/inbox');
    renderApp((operation) =>
      nameOf(operation) === 'PendingApprovals'
        ? {
            data: {
              studioPendingApprovals: [
                {
                  __typename: 'StudioPendingApproval',
                  session: sessionData(),
                  approval: pending.approval,
                  toolCall: pending,
                },
              ],
            },
          }
        : answer(operation),
    );
    await screen.findByRole('heading', { level: 3, name: /workspace\.file\.patch/ });
    expect(outline().filter((h) => h.startsWith('h1'))).toEqual(['h1 Approval inbox']);
    expect(await headingOrderViolations()).toEqual([]);
  });

  it('shows the server version beside the connection state', async () => {
    renderApp();
    const server = await screen.findByText(/^Server/, { selector: 'summary' });
    await vi.waitFor(() => expect(server.textContent).toContain('0.1.0'));
    expect(screen.getByText('Live')).toBeTruthy();
  });
});
