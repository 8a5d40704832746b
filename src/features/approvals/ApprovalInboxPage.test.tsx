import { act, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import axe from 'axe-core';
import { Provider } from 'urql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeFakeStudio } from '../../test/fakeStudio.ts';
import { makeApproval, makeSession, makeToolCall } from '../../test/studioFixtures.ts';
import { ApprovalInboxPage } from './ApprovalInboxPage.tsx';
import { useInboxCount } from './useInboxCount.ts';
import { useApprovalCountInTitle } from './useCountInTitle.ts';

function pending(n: number, expiresInMs: number, summary = `Summary ${n}`) {
  const approval = makeApproval({
    approvalId: `approval-${n}`,
    toolCallId: `call-${n}`,
    studioSessionId: `session-${n}`,
    safeSummary: summary,
    expiresAt: new Date(Date.now() + expiresInMs).toISOString(),
  });
  return {
    session: makeSession({ sessionId: `session-${n}`, studioTitle: `Session ${n}` }),
    approval,
    toolCall: makeToolCall({
      toolCallId: `call-${n}`,
      sessionId: `session-${n}`,
      toolName: `tool.${n}`,
      status: 'WAITING_FOR_APPROVAL',
      approval,
    }),
  };
}

function Count() {
  useApprovalCountInTitle();
  return <output aria-label="inbox count">{useInboxCount()}</output>;
}

function setup(list: ReturnType<typeof pending>[]) {
  let current = list;
  const studio = makeFakeStudio({ studioPendingApprovals: () => current });
  const cards: string[] = [];
  render(
    <Provider value={studio.client}>
      <Count />
      <ApprovalInboxPage
        renderToolCall={({ toolCallId, sessionId }) => {
          cards.push(toolCallId);
          return (
            <p>
              card {toolCallId} of {sessionId}
            </p>
          );
        }}
      />
    </Provider>,
  );
  const setList = (next: ReturnType<typeof pending>[]) => {
    current = next;
  };
  return { studio, setList, cards };
}

async function flush() {
  await act(async () => {
    await new Promise((resolve) => setTimeout(resolve, 0));
  });
}

afterEach(() => {
  vi.unstubAllGlobals();
  Reflect.deleteProperty(document, 'hidden');
  document.title = '';
  localStorage.clear();
});

describe('ApprovalInboxPage', () => {
  it('lists pending approvals soonest to expire first, each with the injected card', async () => {
    setup([pending(1, 100_000), pending(2, 20_000), pending(3, 60_000)]);
    const list = await screen.findByRole('list', { name: 'Pending approvals' });
    await within(list).findByText('card call-2 of session-2');
    const order = within(list)
      .getAllByRole('listitem')
      .map((item) => within(item).getByRole('link').textContent);
    expect(order).toEqual(['Session 2', 'Session 3', 'Session 1']);
    expect(within(list).getAllByRole('timer')).toHaveLength(3);
  });

  it('puts the count in the title and follows session updates', async () => {
    const { studio, setList } = setup([pending(1, 100_000), pending(2, 20_000)]);
    await screen.findByText('card call-1 of session-1');
    // The title is written by an effect after the list renders: wait for it, do not race it.
    await vi.waitFor(() => expect(document.title).toBe('(2) Approval inbox · Agent Studio'));
    expect(screen.getByLabelText('inbox count').textContent).toBe('2');

    setList([pending(1, 100_000)]);
    await act(async () => {
      studio.publish(
        'studioSessionUpdates',
        makeSession({ sessionId: 'session-2', studioPendingApprovals: [] }),
      );
    });
    await vi.waitFor(() => expect(document.title).toBe('(1) Approval inbox · Agent Studio'));
    expect(screen.queryByText('card call-2 of session-2')).toBeNull();
    expect(screen.getByLabelText('inbox count').textContent).toBe('1');
  });

  it('says so when nothing waits', async () => {
    setup([]);
    expect(await screen.findByText(/No approvals are waiting/)).toBeTruthy();
    expect(document.title).toBe('Approval inbox · Agent Studio');
  });

  it('notifies, once opted in, about a new approval that arrives while the tab is hidden', async () => {
    const shown: { title: string; options?: NotificationOptions }[] = [];
    class FakeNotification {
      static permission: NotificationPermission = 'default';
      static requestPermission = vi.fn(async () => {
        FakeNotification.permission = 'granted';
        return 'granted' as const;
      });
      onclick: (() => void) | null = null;
      constructor(title: string, options?: NotificationOptions) {
        shown.push({ title, options });
      }
      close() {}
    }
    vi.stubGlobal('Notification', FakeNotification);
    const user = userEvent.setup();
    const { studio, setList } = setup([pending(1, 100_000)]);
    await screen.findByText('card call-1 of session-1');
    await user.click(screen.getByRole('button', { name: 'Notify me of new approvals' }));
    expect(FakeNotification.requestPermission).toHaveBeenCalledTimes(1);
    expect(await screen.findByRole('button', { name: 'Turn off notifications' })).toBeTruthy();
    expect(shown).toHaveLength(0);

    Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
    setList([pending(1, 100_000), pending(2, 50_000, 'Delete \u202Eexe.txt')]);
    await act(async () => {
      studio.publish(
        'studioSessionUpdates',
        makeSession({
          sessionId: 'session-2',
          studioPendingApprovals: [makeApproval({ approvalId: 'approval-2' })],
        }),
      );
    });
    await screen.findByText('card call-2 of session-2');
    await flush();
    expect(shown).toHaveLength(1);
    expect(shown[0]?.title).toBe('Approval needed: tool.2');
    expect(shown[0]?.options?.body).toBe('Session 2: Delete ⟨U+202E⟩exe.txt');
  });

  it('does not notify while the tab is visible', async () => {
    const shown: string[] = [];
    class FakeNotification {
      static permission: NotificationPermission = 'granted';
      static requestPermission = vi.fn(async () => 'granted' as const);
      onclick: (() => void) | null = null;
      constructor(title: string) {
        shown.push(title);
      }
      close() {}
    }
    vi.stubGlobal('Notification', FakeNotification);
    localStorage.setItem('agent-studio:approval-notifications', 'on');
    const { studio, setList } = setup([pending(1, 100_000)]);
    await screen.findByText('card call-1 of session-1');
    setList([pending(1, 100_000), pending(2, 50_000)]);
    await act(async () => {
      studio.publish(
        'studioSessionUpdates',
        makeSession({
          sessionId: 'session-2',
          studioPendingApprovals: [makeApproval({ approvalId: 'approval-2' })],
        }),
      );
    });
    await screen.findByText('card call-2 of session-2');
    await flush();
    expect(shown).toHaveLength(0);
  });

  it('has no serious accessibility violations', async () => {
    setup([pending(1, 100_000), pending(2, 20_000)]);
    await screen.findByText('card call-1 of session-1');
    const results = await axe.run(document.body, {
      rules: { 'color-contrast': { enabled: false } },
    });
    const serious = results.violations.filter(
      (v) => v.impact === 'serious' || v.impact === 'critical',
    );
    expect(serious.map((v) => v.id)).toEqual([]);
  });
});
