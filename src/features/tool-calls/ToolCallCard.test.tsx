import {
  act,
  cleanup as cleanupDom,
  render,
  screen,
  waitFor,
  within,
} from '@testing-library/react';
import axe from 'axe-core';
import userEvent from '@testing-library/user-event';
import { Provider } from 'urql';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventBatchesSubscription } from '../../graphql/eventDocuments.ts';
import { makeFakeStudio, studioError, type FakeStudio } from '../../test/fakeStudio.ts';
import {
  ARGUMENT_HASH,
  attachHandlers,
  makeApproval,
  makeDescriptor,
  makeToolCall,
} from '../../test/studioFixtures.ts';
import { ToolCallCard } from './ToolCallCard.tsx';

function setup(toolCall: Record<string, unknown>, extra: FakeStudio['handlers'] = {}) {
  const studio = makeFakeStudio({
    ...attachHandlers(),
    studioToolCall: () => toolCall,
    crowdyStudioAgentToolDescriptors: () => ({
      registryDigest: ARGUMENT_HASH,
      tools: [makeDescriptor()],
    }),
    ...extra,
  });
  render(
    <Provider value={studio.client}>
      <ToolCallCard toolCallId="call-1" sessionId="session-1" />
    </Provider>,
  );
  return studio;
}

const waiting = (approval: Record<string, unknown> = {}) =>
  makeToolCall({ status: 'WAITING_FOR_APPROVAL', approval: makeApproval(approval) });

afterEach(() => {
  vi.useRealTimers();
  localStorage.clear();
});

describe('ToolCallCard', () => {
  it('shows a proposed call with its descriptor facts and no decision buttons', async () => {
    setup(makeToolCall());
    const card = await screen.findByRole('article', { name: /workspace\.file\.patch/ });
    expect(within(card).getByText('Proposed')).toBeTruthy();
    expect(within(card).getByText(/executor SERVER/)).toBeTruthy();
    expect(await within(card).findByText(/risk ROUTINE_WRITE/)).toBeTruthy();
    expect(within(card).getByText(/approval policy CONDITIONAL/)).toBeTruthy();
    expect(within(card).getByText(ARGUMENT_HASH)).toBeTruthy();
    expect(within(card).queryByRole('button', { name: 'Approve' })).toBeNull();
  });

  it('while waiting shows reasons, the exact hash, a live countdown and the actions', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    vi.setSystemTime(new Date('2026-11-30T10:00:00.000Z'));
    setup(
      waiting({ expiresAt: '2026-11-30T10:01:30.000Z', studioReasons: ['Writes project files'] }),
    );
    const prompt = await screen.findByRole('region', { name: 'Approval needed' });
    expect(within(prompt).getByText('Writes project files')).toBeTruthy();
    expect(within(prompt).getByLabelText('Argument hash being approved').textContent).toBe(
      ARGUMENT_HASH,
    );
    expect(within(prompt).getByRole('timer').textContent).toBe('1:30');
    act(() => {
      vi.advanceTimersByTime(5_000);
    });
    // The card may mount outside act (after the query resolves), so its ticking effect can start
    // after the advance; either way it reads the faked clock, and the countdown must say 1:25.
    await waitFor(() => expect(within(prompt).getByRole('timer').textContent).toBe('1:25'));
    expect(within(prompt).getByRole('button', { name: 'Approve' })).toBeTruthy();
    expect(within(prompt).getByRole('button', { name: 'Deny…' })).toBeTruthy();
    expect(within(prompt).getByText(/Shortcuts on this card or its selected row/)).toBeTruthy();
  });

  it('removes the buttons at expiry and says expired, not denied', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    vi.setSystemTime(new Date('2026-11-30T10:00:00.000Z'));
    setup(waiting({ expiresAt: '2026-11-30T10:00:03.000Z' }));
    expect(await screen.findByRole('button', { name: 'Approve' })).toBeTruthy();
    act(() => {
      vi.advanceTimersByTime(4_000);
    });
    // On a busy machine the card's deadline tick may start after the first advance: keep the
    // clock moving (yielding real time between steps) until the card sees the deadline pass.
    for (let i = 0; i < 20 && screen.queryByRole('button', { name: 'Approve' }); i += 1) {
      await act(async () => {
        vi.advanceTimersByTime(1_000);
        await new Promise((resolve) => setTimeout(resolve, 20));
      });
    }
    expect(screen.queryByRole('button', { name: 'Approve' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Deny…' })).toBeNull();
    expect(screen.getByText('Approval expired')).toBeTruthy();
    expect(screen.getByText(/This is not a denial/)).toBeTruthy();
    expect(screen.queryByText(/^Denied/)).toBeNull();
  });

  it('shows an approval the server expired as expired even when the call ended denied', async () => {
    setup(makeToolCall({ status: 'DENIED', approval: makeApproval({ status: 'EXPIRED' }) }));
    expect(await screen.findByText('Approval expired')).toBeTruthy();
    expect(screen.getByText(/This is not a denial/)).toBeTruthy();
  });

  it('shows a granted, running call', async () => {
    setup(
      makeToolCall({
        status: 'RUNNING',
        approval: makeApproval({ status: 'GRANTED', studioDecidedAt: '2026-11-30T09:50:05.000Z' }),
      }),
    );
    expect(await screen.findByText('Running')).toBeTruthy();
    expect(screen.getByText('Approved')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Approve' })).toBeNull();
  });

  it('shows a succeeded call with its result', async () => {
    setup(makeToolCall({ status: 'SUCCEEDED', resultJson: '{"revision":"8","written":2}' }));
    expect(await screen.findByText('Succeeded')).toBeTruthy();
    expect(screen.getByText('Result')).toBeTruthy();
  });

  it('shows a failed call with code, message and remediation', async () => {
    setup(
      makeToolCall({
        status: 'FAILED',
        error: {
          code: 'CROWDY_STUDIO_REVISION_CONFLICT',
          message: 'The project moved on',
          retryable: false,
          remediation: 'Read the project again',
        },
      }),
    );
    const error = await screen.findByRole('group', { name: 'Error' });
    expect(within(error).getByText('CROWDY_STUDIO_REVISION_CONFLICT')).toBeTruthy();
    expect(within(error).getByText('The project moved on')).toBeTruthy();
    expect(within(error).getByText('Read the project again')).toBeTruthy();
    expect(screen.getByText('Failed')).toBeTruthy();
  });

  it('shows a human denial with its reason', async () => {
    setup(
      makeToolCall({
        status: 'DENIED',
        approval: makeApproval({ status: 'DENIED', studioDecisionReason: 'Wrong file' }),
      }),
    );
    expect(await screen.findByText('Wrong file')).toBeTruthy();
    expect(screen.getAllByText('Denied').length).toBeGreaterThan(0);
  });

  it('says revoked, not denied, for a call whose run was cancelled, and offers Ask again', async () => {
    const user = userEvent.setup();
    const studio = setup(
      makeToolCall({
        status: 'CANCELLED',
        studioCanAskAgain: true,
        approval: makeApproval({
          status: 'REVOKED',
          studioAutomatic: true,
          studioDecisionReason: 'Revoked: the run was cancelled.',
        }),
      }),
      {
        studioAskAgain: () =>
          makeApproval({ approvalId: 'approval-2', toolCallId: 'call-2', status: 'PENDING' }),
      },
    );
    const card = await screen.findByRole('article', { name: /workspace\.file\.patch/ });
    expect(within(card).getAllByText('Revoked').length).toBeGreaterThan(0);
    expect(within(card).getByText(/Nobody denied it/)).toBeTruthy();
    expect(within(card).queryByText(/^Denied/)).toBeNull();
    expect(within(card).queryByRole('button', { name: 'Approve' })).toBeNull();
    await user.click(within(card).getByRole('button', { name: 'Ask again' }));
    await vi.waitFor(() =>
      expect(studio.calls.find((c) => c.field === 'studioAskAgain')?.args.input).toMatchObject({
        sessionId: 'session-1',
        toolCallId: 'call-1',
        clientEpoch: '1',
      }),
    );
  });

  it('names the rule or the reviewer that decided', async () => {
    setup(
      makeToolCall({
        status: 'SUCCEEDED',
        approval: makeApproval({
          status: 'CONSUMED',
          studioRuleId: 'r1',
          studioRuleName: 'Scratch is fine',
        }),
      }),
    );
    expect(await screen.findByText('Allowed by rule “Scratch is fine”')).toBeTruthy();
  });

  it('shows the server diff as safe text and a command with its hidden characters visible', async () => {
    setup(waiting({}));
    await screen.findByRole('button', { name: 'Approve' });
    cleanupDom();
    setup(
      makeToolCall({
        status: 'WAITING_FOR_APPROVAL',
        argumentsJson: JSON.stringify({ command: 'rm -rf build\u202e/' }),
        studioDiff: {
          truncated: false,
          files: [
            {
              path: 'notes.md',
              beforeHash: ARGUMENT_HASH,
              afterHash: null,
              added: 0,
              removed: 1,
              hunks: '@@ -1,1 +0,0 @@\n-<b>old</b>',
              truncated: false,
              binary: false,
            },
          ],
        },
        approval: makeApproval({}),
      }),
    );
    const diff = await screen.findByRole('region', { name: 'Diff of notes.md' });
    expect(within(diff).getByText('-<b>old</b>')).toBeTruthy();
    expect(within(diff).getByText('deleted')).toBeTruthy();
    expect(screen.getAllByText('⟨U+202E⟩').length).toBeGreaterThan(0);
  });

  it('needs A twice to approve a DESTRUCTIVE call from the keyboard', async () => {
    const user = userEvent.setup();
    const studio = setup(waiting(), {
      crowdyStudioAgentToolDescriptors: () => ({
        registryDigest: ARGUMENT_HASH,
        tools: [makeDescriptor({ risk: 'DESTRUCTIVE' })],
      }),
      crowdyStudioAgentApproveTool: () => makeApproval({ status: 'GRANTED', approved: true }),
    });
    const card = await screen.findByRole('article', { name: /workspace\.file\.patch/ });
    await within(card).findByText(/risk DESTRUCTIVE/);
    card.focus();
    await user.keyboard('a');
    expect(await screen.findByText(/press/, { selector: '[role="alert"]' })).toBeTruthy();
    expect(studio.calls.some((c) => c.field === 'crowdyStudioAgentApproveTool')).toBe(false);
    await user.keyboard('a');
    await vi.waitFor(() =>
      expect(studio.calls.filter((c) => c.field === 'crowdyStudioAgentApproveTool')).toHaveLength(
        1,
      ),
    );
  });

  it('shows an automatic denial with its reason and no approve button', async () => {
    setup(
      makeToolCall({
        status: 'DENIED',
        approval: makeApproval({
          status: 'DENIED',
          studioAutomatic: true,
          studioDecisionReason: 'Policy forbids network access',
        }),
      }),
    );
    expect(await screen.findByText('Denied automatically by the source')).toBeTruthy();
    expect(screen.getByText('Policy forbids network access')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Approve' })).toBeNull();
  });

  it('prefixes a numeric tool version with v', async () => {
    setup(makeToolCall({ toolVersion: '1.0.0' }));
    const card = await screen.findByRole('article', { name: /workspace\.file\.patch/ });
    expect(within(card).getByRole('heading').textContent).toContain('v1.0.0');
  });

  it('does not prefix a version word such as a bridge toolset name', async () => {
    setup(makeToolCall({ toolVersion: 'agent_toolset_20260401' }));
    const card = await screen.findByRole('article', { name: /workspace\.file\.patch/ });
    expect(within(card).getByRole('heading').textContent).toContain('agent_toolset_20260401');
    expect(within(card).getByRole('heading').textContent).not.toContain('vagent');
  });

  it('names the subagent that asked', async () => {
    setup(makeToolCall({ askedBy: 'subagent reviewer' }));
    expect(await screen.findByText('subagent reviewer')).toBeTruthy();
  });

  it('makes a bidi override in the summary visible instead of obeying it', async () => {
    setup(makeToolCall({ safeSummary: 'Delete \u202Egnp.tab\u202C files' }));
    const marker = await screen.findAllByText('⟨U+202E⟩');
    expect(marker.length).toBeGreaterThan(0);
    expect(screen.getByText(/invisible or control characters/)).toBeTruthy();
  });

  it('approves at once, attaching first, and says once that this tab now controls the session', async () => {
    const user = userEvent.setup();
    const studio = setup(waiting(), {
      crowdyStudioAgentApproveTool: () =>
        makeApproval({
          status: 'GRANTED',
          approved: true,
          studioToolCall: makeToolCall({ status: 'DISPATCHED' }),
        }),
    });
    await user.click(await screen.findByRole('button', { name: 'Approve' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(await screen.findByText('Approved')).toBeTruthy();
    expect(studio.calls.filter((c) => c.field === 'crowdyStudioAgentAttachClient')).toHaveLength(1);
    expect(screen.getByText(/This tab now controls the session/)).toBeTruthy();
    expect(screen.getByText('Dispatched')).toBeTruthy();
    const approve = studio.calls.find((c) => c.field === 'crowdyStudioAgentApproveTool');
    expect(approve?.args.input).toMatchObject({
      sessionId: 'session-1',
      toolCallId: 'call-1',
      argumentHash: ARGUMENT_HASH,
      clientEpoch: '1',
    });
  });

  it('shows a refused decision by its code and does not retry it', async () => {
    const user = userEvent.setup();
    const studio = setup(waiting(), {
      crowdyStudioAgentApproveTool: () => {
        throw studioError('AGENT_APPROVAL_MISMATCH', 'argument hash mismatch');
      },
    });
    await user.click(await screen.findByRole('button', { name: 'Approve' }));
    const alert = await screen.findByText('AGENT_APPROVAL_MISMATCH');
    expect(alert.closest('[role="alert"]')?.textContent).toMatch(/no longer matches what you saw/);
    expect(studio.calls.filter((c) => c.field === 'crowdyStudioAgentApproveTool')).toHaveLength(1);
  });

  it('offers to take control back after a stale-epoch refusal', async () => {
    const user = userEvent.setup();
    const studio = setup(waiting(), {
      crowdyStudioAgentApproveTool: () => {
        throw studioError('AGENT_CLIENT_EPOCH_STALE', 'epoch is stale');
      },
    });
    await user.click(await screen.findByRole('button', { name: 'Approve' }));
    expect(await screen.findByText('AGENT_CLIENT_EPOCH_STALE')).toBeTruthy();
    expect(screen.getByText(/another tab or client has taken control/i)).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Take control back' }));
    await vi.waitFor(() =>
      expect(studio.calls.filter((c) => c.field === 'crowdyStudioAgentAttachClient')).toHaveLength(
        2,
      ),
    );
    expect(studio.calls.filter((c) => c.field === 'crowdyStudioAgentApproveTool')).toHaveLength(1);
  });

  it('shows a failed attach only on the card that can still be decided', async () => {
    const user = userEvent.setup();
    const calls: Record<string, Record<string, unknown>> = {
      'call-1': waiting(),
      'call-2': makeToolCall({ toolCallId: 'call-2', status: 'SUCCEEDED' }),
    };
    const studio = makeFakeStudio({
      ...attachHandlers(),
      crowdyStudioAgentAttachClient: () => {
        throw studioError('AGENT_SESSION_CLOSED', 'the session is closed');
      },
      studioToolCall: (args: Record<string, unknown>) => calls[args.toolCallId as string],
      crowdyStudioAgentToolDescriptors: () => ({
        registryDigest: ARGUMENT_HASH,
        tools: [makeDescriptor()],
      }),
    });
    render(
      <Provider value={studio.client}>
        <ToolCallCard toolCallId="call-1" sessionId="session-1" />
        <ToolCallCard toolCallId="call-2" sessionId="session-1" />
      </Provider>,
    );
    await user.click(await screen.findByRole('button', { name: 'Approve' }));
    const cards = await screen.findAllByRole('article');
    await vi.waitFor(() =>
      expect(within(cards[0]!).queryAllByRole('alert').length).toBeGreaterThan(0),
    );
    expect(within(cards[1]!).queryAllByRole('alert')).toHaveLength(0);
  });

  it('shows an expired refusal as expired', async () => {
    const user = userEvent.setup();
    setup(waiting(), {
      crowdyStudioAgentApproveTool: () => {
        throw studioError('AGENT_APPROVAL_EXPIRED', 'approval expired');
      },
    });
    await user.click(await screen.findByRole('button', { name: 'Approve' }));
    expect(await screen.findByText('AGENT_APPROVAL_EXPIRED')).toBeTruthy();
    expect(screen.getByText(/expired before your decision arrived/)).toBeTruthy();
  });

  it('denies with a reason from the keyboard', async () => {
    const user = userEvent.setup();
    const studio = setup(waiting(), {
      crowdyStudioAgentRejectTool: () =>
        makeApproval({ status: 'DENIED', rejected: true, studioDecisionReason: 'Not this file' }),
    });
    const card = await screen.findByRole('article', { name: /workspace\.file\.patch/ });
    await screen.findByRole('button', { name: 'Approve' });
    card.focus();
    await user.keyboard('d');
    const reason = screen.getByLabelText(/Reason for denying/);
    expect(document.activeElement).toBe(reason);
    await user.type(reason, 'Not this file');
    await user.click(screen.getByRole('button', { name: 'Deny call' }));
    expect(await screen.findByText('Not this file')).toBeTruthy();
    const reject = studio.calls.find((c) => c.field === 'crowdyStudioAgentRejectTool');
    expect(reject?.args.input).toMatchObject({
      reason: 'Not this file',
      argumentHash: ARGUMENT_HASH,
    });
  });

  it('closes the deny form on Escape, keeps the typed reason and returns focus to Deny…', async () => {
    const user = userEvent.setup();
    const studio = setup(waiting());
    await user.click(await screen.findByRole('button', { name: 'Deny…' }));
    await user.type(screen.getByRole('textbox', { name: /Reason for denying/ }), 'Wrong file');
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('textbox', { name: /Reason for denying/ })).toBeNull();
    const deny = screen.getByRole('button', { name: 'Deny…' });
    expect(document.activeElement).toBe(deny);

    await user.click(deny);
    const reason = screen.getByRole('textbox', { name: /Reason for denying/ });
    expect((reason as HTMLTextAreaElement).value).toBe('Wrong file');
    expect(document.activeElement).toBe(reason);
    // Escape from the form's buttons closes it too; Cancel returns focus the same way.
    screen.getByRole('button', { name: 'Deny call' }).focus();
    await user.keyboard('{Escape}');
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Deny…' }));
    await user.keyboard('{Enter}');
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Deny…' }));
    expect(studio.calls.some((c) => c.field === 'crowdyStudioAgentRejectTool')).toBe(false);
  });

  it('approves with A, and a second A sends again after a refusal', async () => {
    const user = userEvent.setup();
    const studio = setup(waiting(), {
      crowdyStudioAgentApproveTool: () => {
        throw studioError('AGENT_APPROVAL_MISMATCH');
      },
    });
    const card = await screen.findByRole('article', { name: /workspace\.file\.patch/ });
    await screen.findByRole('button', { name: 'Approve' });
    card.focus();
    await user.keyboard('a');
    await screen.findByText('AGENT_APPROVAL_MISMATCH');
    card.focus();
    await user.keyboard('a');
    expect(screen.queryByRole('alertdialog')).toBeNull();
    await vi.waitFor(() =>
      expect(studio.calls.filter((c) => c.field === 'crowdyStudioAgentApproveTool')).toHaveLength(
        2,
      ),
    );
  });

  it('re-renders when an event updates the tool-call entity', async () => {
    const studio = setup(waiting());
    await screen.findByRole('button', { name: 'Approve' });
    const sub = studio.client
      .subscription(EventBatchesSubscription, { sessionId: 'session-1', afterSeq: '0' })
      .subscribe(() => undefined);
    await act(async () => {
      await Promise.resolve();
    });
    await act(async () => {
      studio.publish('studioAgentEventBatches', {
        __typename: 'StudioAgentEventBatch',
        sessionId: 'session-1',
        fromSeq: '13',
        throughSeq: '13',
        events: [
          {
            __typename: 'AgentToolEvent',
            protocolVersion: 'crowdy.agent-event/1',
            eventId: 'event-13',
            sessionId: 'session-1',
            seq: '13',
            type: 'TOOL_SUCCEEDED',
            runId: 'run-1',
            version: '1',
            createdAt: '2026-11-30T09:51:00.000Z',
            toolCallId: 'call-1',
            toolName: 'workspace.file.patch',
            toolVersion: '1.0.0',
            status: 'SUCCEEDED',
            studioToolCall: makeToolCall({
              status: 'SUCCEEDED',
              approval: makeApproval({ status: 'CONSUMED' }),
              resultJson: '{"ok":true}',
            }),
          },
        ],
      });
      await new Promise((resolve) => setTimeout(resolve, 0));
    });
    expect(await screen.findByText('Succeeded')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Approve' })).toBeNull();
    sub.unsubscribe();
  });

  it('has no serious accessibility violations while waiting for approval', async () => {
    setup(waiting());
    const card = await screen.findByRole('article', { name: /workspace\.file\.patch/ });
    await screen.findByRole('button', { name: 'Approve' });
    const results = await axe.run(card, { rules: { 'color-contrast': { enabled: false } } });
    const serious = results.violations.filter(
      (v) => v.impact === 'serious' || v.impact === 'critical',
    );
    expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.html).join(' | ')}`)).toEqual([]);
  });
});
