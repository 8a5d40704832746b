import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { Provider } from 'urql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Operation } from '@urql/core';
import { eventPage, logEvents, SESSION_ID } from '../../test/fixtures.ts';
import { stubLayout } from '../../test/layout.ts';
import { makeTestClient, type TestClient } from '../../test/testClient.ts';
import { railFraction, seqAtFraction } from './HistoryScrubber.tsx';
import { Timeline } from './Timeline.tsx';

let restoreLayout: () => void = () => undefined;
beforeEach(() => {
  restoreLayout = stubLayout();
});
afterEach(() => restoreLayout());

const LAST = 600;

function mark(seq: number, kind: string, type: string, label: string, extra = {}) {
  return {
    __typename: 'StudioHistoryMark',
    seq: String(seq),
    kind,
    type,
    label,
    runId: 'run-1',
    toolCallId: null,
    checkpointId: null,
    ...extra,
  };
}

const MARKS = [
  mark(10, 'RUN', 'RUN_STARTED', 'Run started'),
  mark(20, 'CHECKPOINT', 'CHECKPOINT_CREATED', 'Checkpoint (AGENT_WRITE)', {
    checkpointId: 'cp-20',
  }),
  mark(30, 'APPROVAL', 'APPROVAL_REQUESTED', 'Approval asked: delete scratch', {
    toolCallId: 'call-1',
  }),
];

function at(seq: string) {
  const n = Number(seq);
  return {
    __typename: 'StudioSessionAt',
    sessionId: SESSION_ID,
    seq,
    requestedSeq: seq,
    complete: true,
    toolCallCount: n >= 30 ? 1 : 0,
    pendingApprovalCount: n >= 30 ? 1 : 0,
    runId: n >= 10 ? 'run-1' : null,
    runStatus: n >= 10 ? 'RUNNING' : null,
    toolCalls:
      n >= 30
        ? [
            {
              __typename: 'StudioToolCallAt',
              toolCallId: 'call-1',
              toolName: 'workspace.delete',
              status: 'WAITING_FOR_APPROVAL',
              approvalStatus: 'PENDING',
              proposedSeq: '29',
            },
          ]
        : [],
    budget: null,
    checkpoint:
      n >= 20
        ? {
            __typename: 'StudioCheckpoint',
            checkpointId: 'cp-20',
            createdAt: '2026-12-01T10:00:00.000Z',
            reason: 'AGENT_WRITE',
            projectRevision: '3',
          }
        : null,
  };
}

function renderScrubbed(): TestClient {
  const test = makeTestClient((operation: Operation) => {
    const vars = operation.variables as { page?: string; seq?: string };
    const def = operation.query.definitions[0];
    const name = def && 'name' in def ? def.name?.value : '';
    if (name === 'StudioSessionHistory')
      return {
        data: {
          studioSessionHistory: {
            __typename: 'StudioSessionHistory',
            sessionId: SESSION_ID,
            throughSeq: String(LAST),
            marksThinned: false,
            marks: MARKS,
          },
        },
      };
    if (name === 'StudioSessionAt') return { data: { studioSessionAt: at(vars.seq ?? '0') } };
    const page = Number(vars.page ?? 0);
    const from = page * 256 + 1;
    const through = Math.min(LAST, from + 255);
    return { data: { studioEventPage: eventPage(page, logEvents(from, through)) } };
  });
  render(
    <Provider value={test.client}>
      <Timeline
        sessionId={SESSION_ID}
        lastEventSeq={String(LAST)}
        eventHref={(seq) => `/sessions/${SESSION_ID}/events/${seq}`}
        checkpointsHref={`/sessions/${SESSION_ID}/checkpoints`}
        restoreHref={(id) => `/sessions/${SESSION_ID}/checkpoints/${id}/restore`}
      />
    </Provider>,
  );
  return test;
}

const pagesAsked = (test: TestClient) =>
  test.operations
    .filter((op) => op.kind === 'query' && 'page' in (op.variables as object))
    .map((op) => (op.variables as { page: string }).page);

describe('HistoryScrubber', () => {
  it('marks the whole session and steps mark by mark, loading the older page of the seq', async () => {
    const test = renderScrubbed();
    const slider = await screen.findByRole('slider', { name: 'History' });
    await waitFor(() =>
      expect(slider.querySelectorAll('[data-mark-kind]')).toHaveLength(MARKS.length),
    );
    expect(slider.getAttribute('aria-valuetext')).toBe(`Live: the newest event, #${LAST}`);
    expect(pagesAsked(test)).not.toContain('0');

    slider.focus();
    fireEvent.keyDown(slider, { key: 'PageUp' });
    expect(slider.getAttribute('aria-valuetext')).toBe(
      'Event #30 of 600: Approval asked: delete scratch',
    );
    // Page 0 (seqs 1-256) was never loaded: the scrubber's seq asks for it.
    await waitFor(() => expect(pagesAsked(test)).toContain('0'));
    const panel = await screen.findByRole('region', { name: 'The session as of event 30' });
    expect(within(panel).getByText(/1 approval waiting/)).toBeTruthy();
    expect(
      within(panel)
        .getByText(/workspace\.delete/)
        .closest('li')?.textContent,
    ).toContain('waiting_for_approval (approval pending)');
    expect(
      within(panel)
        .getByRole('link', { name: 'Restore the project to here' })
        ?.getAttribute('href'),
    ).toBe(`/sessions/${SESSION_ID}/checkpoints/cp-20/restore`);
    // Keyboard focus stays on the rail, so the next key steps on (the Chromium journey checks
    // that the row of the seq is scrolled to and highlighted).
    expect(document.activeElement).toBe(slider);

    fireEvent.keyDown(slider, { key: 'PageUp' });
    expect(slider.getAttribute('aria-valuetext')).toBe(
      'Event #20 of 600: Checkpoint (AGENT_WRITE)',
    );
    fireEvent.keyDown(slider, { key: 'ArrowLeft' });
    expect(slider.getAttribute('aria-valuenow')).toBe('19');
    const before = await screen.findByRole('region', { name: 'The session as of event 19' });
    expect(within(before).getByText('No checkpoint at or before #19.')).toBeTruthy();

    fireEvent.keyDown(slider, { key: 'PageDown' });
    expect(slider.getAttribute('aria-valuenow')).toBe('20');
    fireEvent.keyDown(slider, { key: 'End' });
    expect(slider.getAttribute('aria-valuetext')).toBe(`Live: the newest event, #${LAST}`);
    expect(screen.queryByRole('region', { name: /The session as of/ })).toBeNull();
  });

  it('follows a drag by pointer (touch included) and snaps to a mark near the finger', async () => {
    renderScrubbed();
    const slider = await screen.findByRole('slider', { name: 'History' });
    await waitFor(() => expect(slider.querySelectorAll('[data-mark-kind]')).toHaveLength(3));
    slider.getBoundingClientRect = () =>
      ({ left: 0, top: 0, width: 800, height: 44, right: 800, bottom: 44 }) as DOMRect;
    const x = (seq: number) => railFraction(String(seq), String(LAST)) * 800;
    act(() => {
      fireEvent.pointerDown(slider, {
        button: 0,
        pointerId: 1,
        clientX: 400,
        pointerType: 'touch',
      });
    });
    expect(slider.getAttribute('aria-valuenow')).toBe(seqAtFraction(0.5, String(LAST)));
    act(() => {
      fireEvent.pointerMove(slider, { pointerId: 1, clientX: x(30) + 5, pointerType: 'touch' });
    });
    expect(slider.getAttribute('aria-valuenow')).toBe('30');
    // Nothing is asked until the finger lifts.
    expect(screen.queryByRole('region', { name: /The session as of/ })).toBeNull();
    act(() => {
      fireEvent.pointerUp(slider, { pointerId: 1, clientX: x(30) + 5, pointerType: 'touch' });
    });
    expect(await screen.findByRole('region', { name: 'The session as of event 30' })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: /back to live/ }));
    expect(slider.getAttribute('aria-valuetext')).toBe(`Live: the newest event, #${LAST}`);
  });

  it('places seqs on the rail in BigInt, past 2^53 too', () => {
    expect(railFraction('1', '1001')).toBe(0);
    expect(railFraction('1001', '1001')).toBe(1);
    expect(railFraction('501', '1001')).toBe(0.5);
    const huge = '90071992547409930001';
    expect(seqAtFraction(1, huge)).toBe(huge);
    expect(seqAtFraction(0, huge)).toBe('1');
  });
});
