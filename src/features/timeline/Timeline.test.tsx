import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { Provider } from 'urql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PAGE_SIZE } from '../../graphql/eventDocuments.ts';
import type { StudioEvent } from '../../graphql/eventFragments.ts';
import {
  approval,
  approvalEvent,
  budgetEvent,
  checkpointEvent,
  eventPage,
  firstSeqOf,
  foreignEvent,
  leaseEvent,
  lifecycleEvent,
  logEvent,
  logEvents,
  messageEvent,
  pageOfLogEvents,
  questionEvent,
  runEvent,
  SESSION_ID,
  stageEvent,
  threadEvent,
  toolCall,
  toolEvent,
} from '../../test/fixtures.ts';
import { stubLayout } from '../../test/layout.ts';
import { makeTestClient, type TestClient } from '../../test/testClient.ts';
import { Timeline, type TimelineProps } from './Timeline.tsx';

let restoreLayout: () => void = () => undefined;
beforeEach(() => {
  restoreLayout = stubLayout();
});
afterEach(() => restoreLayout());

function renderTimeline(
  pages: Record<number, StudioEvent[]>,
  props: Partial<TimelineProps> = {},
): TestClient {
  const test = makeTestClient((operation) => {
    const page = Number((operation.variables as { page?: string }).page ?? 0);
    return { data: { studioEventPage: eventPage(page, pages[page] ?? []) } };
  });
  const all = Object.values(pages).flat();
  const last = all.reduce((max, event) => (BigInt(event.seq) > BigInt(max) ? event.seq : max), '0');
  render(
    <Provider value={test.client}>
      <Timeline
        sessionId={SESSION_ID}
        lastEventSeq={last}
        eventHref={(seq) => `/sessions/${SESSION_ID}/events/${seq}`}
        checkpointsHref={`/sessions/${SESSION_ID}/checkpoints`}
        {...props}
      />
    </Provider>,
  );
  return test;
}

function pushBatch(test: TestClient, events: StudioEvent[]) {
  act(() => {
    test.push('studioAgentEventBatches', {
      studioAgentEventBatches: {
        __typename: 'StudioAgentEventBatch',
        sessionId: SESSION_ID,
        fromSeq: events[0]?.seq,
        throughSeq: events[events.length - 1]?.seq,
        events,
      },
    });
  });
}

const rows = () => screen.getAllByRole('article');

const pendingCall = toolCall({ status: 'WAITING_FOR_APPROVAL', approval: approval() });

/** One event of every union member, in a plausible order. */
function everyKind(): StudioEvent[] {
  return [
    lifecycleEvent(1, 'SESSION_CREATED'),
    messageEvent(2, 'USER_MESSAGE', 'Please update the changelog'),
    runEvent(3, 'RUN_FAILED', 'FAILED', {
      runCode: 'AGENT_TOOL_FAILED',
      runError: {
        __typename: 'AgentError',
        code: 'AGENT_TOOL_FAILED',
        message: 'disk is full',
        retryable: false,
        remediation: 'Free some space',
        field: null,
        requiredScope: null,
      } as never,
    }),
    toolEvent(4, 'TOOL_PROPOSED', pendingCall),
    approvalEvent(5, 'APPROVAL_REQUESTED', pendingCall, approval()),
    leaseEvent(6, 'LEASE_GRANTED'),
    checkpointEvent(7),
    budgetEvent(8),
    stageEvent(9),
    logEvent(10),
    questionEvent(11),
    threadEvent(12),
    foreignEvent(13),
  ];
}

describe('Timeline', () => {
  it('renders a readable row for every kind of event, approvals folded into their tool call', async () => {
    renderTimeline({ 0: everyKind() });
    await screen.findByText('Please update the changelog');
    expect(screen.getByText('Session created')).toBeTruthy();
    expect(screen.getByText('disk is full')).toBeTruthy();
    expect(screen.getByText('Free some space')).toBeTruthy();
    expect(
      screen.getByRole('article', {
        name: /Tool call workspace\.file\.patch, WAITING_FOR_APPROVAL/,
      }),
    ).toBeTruthy();
    expect(screen.getByText('2 events')).toBeTruthy();
    expect(screen.getByText(/Held by/)).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Open in checkpoints' }).getAttribute('href')).toBe(
      `/sessions/${SESSION_ID}/checkpoints`,
    );
    expect(
      screen
        .getByRole('meter', { name: 'INPUT_TOKENS (SESSION) used' })
        .getAttribute('aria-valuetext'),
    ).toBe('50,000 of 200,000 tokens');
    expect(
      screen.getByRole('meter', { name: 'TOOL_CALLS (TURN) used' }).getAttribute('aria-valuenow'),
    ).toBe('95');
    expect(screen.getByText('implement')).toBeTruthy();
    expect(screen.getByText('compiling 12 files')).toBeTruthy();
    expect(screen.getByText('Which database should I use?')).toBeTruthy();
    expect(screen.getByText('reviewer')).toBeTruthy();
    expect(screen.getByText('memory.compacted')).toBeTruthy();
    expect(screen.getByText('{"kept":12}')).toBeTruthy();
    // 13 events, the approval folded into the tool call: 12 rows.
    expect(rows()).toHaveLength(12);
  });

  it('hands tool calls and questions to the renderers the app provides', async () => {
    renderTimeline(
      { 0: everyKind() },
      {
        renderToolCall: ({ toolCallId, toolCall: call }) => (
          <p>{`card for ${toolCallId} (${call?.status})`}</p>
        ),
        renderQuestion: ({ questionId }) => <p>{`question card ${questionId}`}</p>,
      },
    );
    expect(await screen.findByText('card for call-1 (WAITING_FOR_APPROVAL)')).toBeTruthy();
    expect(screen.getByText('question card q-1')).toBeTruthy();
  });

  it('shows a call that needs no decision as one compact line that opens the full card', async () => {
    const done = toolCall({ status: 'SUCCEEDED', safeSummary: 'read notes.md', approval: null });
    renderTimeline(
      { 0: [toolEvent(1, 'TOOL_PROPOSED', done), toolEvent(2, 'TOOL_SUCCEEDED', done)] },
      { renderToolCall: ({ toolCallId }) => <p>{`card for ${toolCallId}`}</p> },
    );
    const row = await screen.findByRole('article', { name: /Tool call .*, SUCCEEDED/ });
    const open = within(row).getByRole('button', { expanded: false });
    expect(open.textContent).toContain('succeeded');
    expect(open.textContent).toContain('read notes.md');
    expect(within(row).queryByText(`card for ${done.toolCallId}`)).toBeNull();
    fireEvent.click(open);
    expect(within(row).getByText(`card for ${done.toolCallId}`)).toBeTruthy();
    fireEvent.click(within(row).getByRole('button', { name: 'Hide details', expanded: true }));
    expect(within(row).queryByText(`card for ${done.toolCallId}`)).toBeNull();
    expect(within(row).getByRole('button', { expanded: false })).toBeTruthy();
  });

  it('never shows a call waiting for a decision as a compact line, and keeps its card once decided', async () => {
    const proposed = toolCall({ status: 'PROPOSED', approval: null });
    const test = renderTimeline(
      { 0: [toolEvent(1, 'TOOL_PROPOSED', proposed)] },
      {
        renderToolCall: ({ toolCallId, toolCall: call }) => (
          <p>{`card for ${toolCallId} (${call?.status})`}</p>
        ),
      },
    );
    const row = await screen.findByRole('article', { name: /Tool call .*, PROPOSED/ });
    expect(within(row).getByRole('button', { expanded: false })).toBeTruthy();
    // The approval request arrives live: the row turns into the full card, no click needed.
    pushBatch(test, [approvalEvent(2, 'APPROVAL_REQUESTED', pendingCall, approval())]);
    expect(
      await within(row).findByText(`card for ${pendingCall.toolCallId} (WAITING_FOR_APPROVAL)`),
    ).toBeTruthy();
    expect(within(row).queryByRole('button', { expanded: false })).toBeNull();
    // Decided and run: the card stays (the reader sees what happened next), with nothing to hide.
    const ran = toolCall({ status: 'SUCCEEDED', approval: approval({ status: 'CONSUMED' }) });
    pushBatch(test, [toolEvent(3, 'TOOL_SUCCEEDED', ran)]);
    expect(await within(row).findByText(`card for ${ran.toolCallId} (SUCCEEDED)`)).toBeTruthy();
    expect(within(row).queryByRole('button', { expanded: false })).toBeNull();
  });

  it('mounts a row header copy-link button only while the row is hovered or holds focus', async () => {
    renderTimeline({ 0: [logEvent(1, 'first line'), logEvent(2, 'second line')] });
    await screen.findByText('second line');
    const copy = (seq: number) =>
      screen.queryByRole('button', { name: `Copy link to event ${seq}` });
    expect(copy(1)).toBeNull();
    expect(copy(2)).toBeNull();
    const [first, second] = rows();
    fireEvent.pointerEnter(first!);
    expect(copy(1)).toBeTruthy();
    expect(copy(2)).toBeNull();
    fireEvent.pointerLeave(first!);
    expect(copy(1)).toBeNull();
    // Keyboard: tabbing to the row's link brings the button, next in tab order.
    act(() => within(second!).getByRole('link', { name: 'Event 2' }).focus());
    expect(copy(2)).toBeTruthy();
    act(() => (document.activeElement as HTMLElement).blur());
    expect(copy(2)).toBeNull();
  });

  it('shows server strings as text, never as markup', async () => {
    const { container } = { container: document.body };
    renderTimeline({
      0: [messageEvent(1, 'USER_MESSAGE', '<img src=x onerror="alert(1)"><b>bold</b>')],
    });
    expect(await screen.findByText('<img src=x onerror="alert(1)"><b>bold</b>')).toBeTruthy();
    expect(container.querySelector('img')).toBeNull();
    expect(container.querySelector('b')).toBeNull();
  });

  it('streams assistant chunks into one message that becomes final', async () => {
    const test = renderTimeline({
      0: [
        messageEvent(1, 'USER_MESSAGE', 'Hi'),
        messageEvent(2, 'ASSISTANT_CHUNK', 'Hello', 'm-a'),
        messageEvent(3, 'ASSISTANT_CHUNK', ' wor', 'm-a'),
      ],
    });
    expect(await screen.findByText('Hello wor')).toBeTruthy();
    await waitFor(() => expect(test.subscriptions()).toHaveLength(1));
    pushBatch(test, [messageEvent(4, 'ASSISTANT_CHUNK', 'ld', 'm-a')]);
    // Live batches reach the rows at the next frame, not synchronously.
    expect(await screen.findByText('Hello world')).toBeTruthy();
    const bubble = screen.getByRole('article', { name: /Assistant message, streaming/ });
    expect(within(bubble).getByText('Hello world')).toBeTruthy();
    pushBatch(test, [messageEvent(5, 'ASSISTANT_MESSAGE', 'Hello world!', 'm-a')]);
    const final = await screen.findByRole('article', { name: 'Assistant message, event 2' });
    expect(within(final).getByText('Hello world!')).toBeTruthy();
    expect(within(final).queryByText('streaming')).toBeNull();
    expect(rows()).toHaveLength(2);
  });

  it('starts the live stream after the newest loaded event, as an observer', async () => {
    const test = renderTimeline({ 0: logEvents(1, 5) });
    await waitFor(() => expect(test.subscriptions()).toHaveLength(1));
    const variables = test.subscriptions()[0]?.variables as Record<string, unknown>;
    expect(variables.afterSeq).toBe('5');
    expect(variables.sessionId).toBe(SESSION_ID);
    expect('clientEpoch' in variables).toBe(false);
    pushBatch(test, logEvents(6, 7));
    expect(await screen.findByText('line 7')).toBeTruthy();
  });

  it('asks for the history rail only once the newest page is in', async () => {
    let answerPage: (() => void) | null = null;
    const test = makeTestClient((operation) => {
      if ((operation.variables as { page?: string }).page === undefined)
        return { data: null, errors: [{ message: 'not in this test' }] };
      return new Promise((resolve) => {
        answerPage = () => resolve({ data: { studioEventPage: eventPage(0, logEvents(1, 5)) } });
      });
    });
    render(
      <Provider value={test.client}>
        <Timeline
          sessionId={SESSION_ID}
          lastEventSeq="5"
          eventHref={(seq) => `/sessions/${SESSION_ID}/events/${seq}`}
          checkpointsHref={`/sessions/${SESSION_ID}/checkpoints`}
          restoreHref={(id) => `/sessions/${SESSION_ID}/checkpoints/${id}`}
        />
      </Provider>,
    );
    const asked = (name: string) =>
      test.operations.filter((o) =>
        o.query.definitions.some((d) => d.kind === 'OperationDefinition' && d.name?.value === name),
      ).length;
    await waitFor(() => expect(asked('StudioEventPage')).toBe(1));
    expect(asked('StudioSessionHistory')).toBe(0);
    act(() => answerPage?.());
    expect(await screen.findByText('line 5')).toBeTruthy();
    await waitFor(() => expect(asked('StudioSessionHistory')).toBeGreaterThan(0));
  });

  it('filters by kind, tool and status, and searches the loaded text', async () => {
    const other = toolCall({
      toolCallId: 'call-2',
      toolName: 'shell.run',
      status: 'SUCCEEDED',
      safeSummary: 'npm test',
    });
    renderTimeline({
      0: [...everyKind(), toolEvent(14, 'TOOL_SUCCEEDED', other), logEvent(15, 'tests passed')],
    });
    await screen.findByText('compiling 12 files');
    fireEvent.change(screen.getByLabelText('Kind'), { target: { value: 'log' } });
    expect(rows().map((row) => row.getAttribute('aria-label'))).toEqual([
      'Log, event 10',
      'Log, event 15',
    ]);
    fireEvent.change(screen.getByLabelText('Kind'), { target: { value: '' } });
    fireEvent.change(screen.getByLabelText('Tool'), { target: { value: 'shell.run' } });
    expect(rows()).toHaveLength(1);
    expect(rows()[0]?.getAttribute('aria-label')).toMatch(/Tool call shell\.run, SUCCEEDED/);
    fireEvent.change(screen.getByLabelText('Tool'), { target: { value: '' } });
    fireEvent.change(screen.getByLabelText('Status'), {
      target: { value: 'WAITING_FOR_APPROVAL' },
    });
    expect(rows()).toHaveLength(1);
    fireEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    fireEvent.change(screen.getByLabelText('Filter loaded events'), {
      target: { value: 'CHANGELOG' },
    });
    expect(rows().map((row) => row.getAttribute('aria-label'))).toEqual(['User message, event 2']);
    expect(screen.getByText('1 of 14 loaded rows match.')).toBeTruthy();
  });

  it('moves focus between events with j and k, but not while typing', async () => {
    renderTimeline({ 0: logEvents(1, 4) });
    await screen.findByText('line 4');
    fireEvent.keyDown(document.body, { key: 'j' });
    await waitFor(() =>
      expect(document.activeElement?.getAttribute('aria-label')).toBe('Log, event 1'),
    );
    fireEvent.keyDown(document.activeElement as Element, { key: 'j' });
    await waitFor(() =>
      expect(document.activeElement?.getAttribute('aria-label')).toBe('Log, event 2'),
    );
    fireEvent.keyDown(document.activeElement as Element, { key: 'k' });
    await waitFor(() =>
      expect(document.activeElement?.getAttribute('aria-label')).toBe('Log, event 1'),
    );
    const search = screen.getByLabelText('Filter loaded events');
    search.focus();
    fireEvent.keyDown(search, { key: 'j' });
    expect(document.activeElement).toBe(search);
  });

  it('scrolls to and highlights a linked event, even one folded into a tool call', async () => {
    renderTimeline({ 0: everyKind() }, { focusSeq: '5' });
    const row = await screen.findByRole('article', { name: /Tool call workspace\.file\.patch/ });
    await waitFor(() => expect(row.getAttribute('aria-current')).toBe('true'));
    expect(screen.getAllByRole('link', { name: 'Event 4' })[0]?.getAttribute('href')).toBe(
      `/sessions/${SESSION_ID}/events/4`,
    );
  });

  it('says so when a linked event does not exist', async () => {
    renderTimeline({ 0: logEvents(1, 3) }, { focusSeq: '99' });
    expect(
      await screen.findByText('Event #99 is not in this session (yet). The newest event is #3.'),
    ).toBeTruthy();
  });

  it('shows an unloaded older page as one row and loads it once it is in view', async () => {
    const p1 = firstSeqOf(1);
    const test = renderTimeline({ 0: pageOfLogEvents(0), 1: logEvents(p1, p1 + 3) });
    expect(
      await screen.findByRole('article', { name: `Events 1 to ${PAGE_SIZE}, not loaded` }),
    ).toBeTruthy();
    // The gap row is within a screen of the followed end, so page 0 loads after page 1, and its
    // newest rows render just above page 1's (while following, rows fill the view from the end).
    await screen.findByText(`line ${PAGE_SIZE}`);
    const pages = test.operations
      .filter((op) => op.kind === 'query')
      .map((op) => (op.variables as { page: string }).page);
    expect(pages).toEqual(['1', '0']);
    expect(screen.queryByRole('article', { name: /not loaded/ })).toBeNull();
  });
});

describe('Timeline following the end', () => {
  let restoreScrollHeight: () => void = () => undefined;
  beforeEach(() => {
    // The scroller's content is its feed, as tall as the virtualizer's total size.
    const proto = HTMLElement.prototype;
    const saved = Object.getOwnPropertyDescriptor(proto, 'scrollHeight');
    Object.defineProperty(proto, 'scrollHeight', {
      configurable: true,
      get(this: HTMLElement) {
        const feed = this.querySelector<HTMLElement>(':scope > [role="feed"]');
        return Math.max(feed ? parseFloat(feed.style.height) || 0 : 0, this.clientHeight);
      },
    });
    restoreScrollHeight = () => {
      if (saved) Object.defineProperty(proto, 'scrollHeight', saved);
      else delete (proto as unknown as Record<string, unknown>).scrollHeight;
    };
  });
  afterEach(() => restoreScrollHeight());

  const region = () => screen.getByRole('region', { name: 'Events, oldest first' });
  const atEnd = () => {
    const element = region();
    return element.scrollTop >= element.scrollHeight - element.clientHeight - 1;
  };
  /** Scroll commands land over a few frames; the timeline leaves them alone until then. */
  const landed = () => act(() => new Promise((resolve) => setTimeout(resolve, 450)));

  function renderLive(events: StudioEvent[]) {
    const test = makeTestClient((operation) => {
      const page = Number((operation.variables as { page?: string }).page ?? 0);
      const byPage = events.filter(
        (event) => Math.floor((Number(event.seq) - 1) / PAGE_SIZE) === page,
      );
      return { data: { studioEventPage: eventPage(page, byPage) } };
    });
    const element = (lastEventSeq: string) => (
      <Provider value={test.client}>
        <Timeline
          sessionId={SESSION_ID}
          lastEventSeq={lastEventSeq}
          eventHref={(seq) => `/sessions/${SESSION_ID}/events/${seq}`}
          checkpointsHref={`/sessions/${SESSION_ID}/checkpoints`}
        />
      </Provider>
    );
    const view = render(element(events[events.length - 1]?.seq ?? '0'));
    return { test, rerender: (lastEventSeq: string) => view.rerender(element(lastEventSeq)) };
  }

  it('keeps following when something other than the reader moves the view', async () => {
    const { test } = renderLive(logEvents(1, 40));
    await screen.findByText('line 40');
    await waitFor(() => expect(atEnd()).toBe(true));
    await waitFor(() => expect(test.subscriptions()).toHaveLength(1));
    await landed();
    // A layout shift (no wheel, key, drag or touch) leaves the view far above the end.
    act(() => {
      region().scrollTop = 100;
      fireEvent.scroll(region());
    });
    pushBatch(test, logEvents(41, 80));
    expect(await screen.findByText('line 80')).toBeTruthy();
    await waitFor(() => expect(atEnd()).toBe(true));
    expect(screen.queryByRole('button', { name: /new events?/ })).toBeNull();
  });

  it("reads back none of the scrolls it makes while following, yet stops at the reader's first", async () => {
    const { test } = renderLive(logEvents(1, 40));
    await screen.findByText('line 40');
    await waitFor(() => expect(test.subscriptions()).toHaveLength(1));
    await landed();
    const element = region();
    let reads = 0;
    let proto: object | null = element;
    let native: PropertyDescriptor | undefined;
    while (proto && !native) {
      native = Object.getOwnPropertyDescriptor(proto, 'scrollTop');
      proto = Object.getPrototypeOf(proto) as object | null;
    }
    if (!native?.get || !native.set) throw new Error('no scrollTop accessor');
    const { get, set } = native;
    Object.defineProperty(element, 'scrollTop', {
      configurable: true,
      get(this: HTMLElement) {
        reads += 1;
        return get.call(this) as number;
      },
      set(this: HTMLElement, value: number) {
        set.call(this, value);
      },
    });
    // New rows, the pin's write and the scroll events it (or anchoring) causes: none is read.
    pushBatch(test, logEvents(41, 80));
    expect(await screen.findByText('line 80')).toBeTruthy();
    act(() => {
      fireEvent.scroll(element);
      fireEvent.scroll(element);
    });
    pushBatch(test, logEvents(81, 90));
    expect(await screen.findByText('line 90')).toBeTruthy();
    expect(reads).toBe(0);

    // The reader's wheel ends following before its scroll event, which is heard as theirs.
    const readerTop = get.call(element) as number;
    act(() => {
      fireEvent.wheel(element, { deltaY: -300 });
      element.scrollTop = readerTop - 300;
      fireEvent.scroll(element);
    });
    pushBatch(test, logEvents(91, 93));
    expect(await screen.findByRole('button', { name: '3 new events ↓' })).toBeTruthy();
    expect(get.call(element)).toBe(readerTop - 300);
    delete (element as unknown as Record<string, unknown>).scrollTop;
  });

  it('stops following when the reader scrolls up, counts new events, and jumps back', async () => {
    const { test } = renderLive(logEvents(1, 40));
    await screen.findByText('line 40');
    await waitFor(() => expect(test.subscriptions()).toHaveLength(1));
    await landed();
    const readerTop = region().scrollTop - 300;
    act(() => {
      fireEvent.wheel(region(), { deltaY: -300 });
      region().scrollTop = readerTop;
      fireEvent.scroll(region());
    });
    pushBatch(test, logEvents(41, 45));
    const jump = await screen.findByRole('button', { name: '5 new events ↓' });
    expect(region().scrollTop).toBe(readerTop);
    expect(atEnd()).toBe(false);

    fireEvent.click(jump);
    expect(await screen.findByText('line 45')).toBeTruthy();
    await waitFor(() => expect(atEnd()).toBe(true));
    expect(screen.queryByRole('button', { name: /new events?/ })).toBeNull();
    await landed();
    pushBatch(test, logEvents(46, 90));
    expect(await screen.findByText('line 90')).toBeTruthy();
    await waitFor(() => expect(atEnd()).toBe(true));
  });

  it('lays the new-events pill out below the scroller, never over the focused row', async () => {
    const { test } = renderLive(logEvents(1, 40));
    await screen.findByText('line 40');
    await waitFor(() => expect(test.subscriptions()).toHaveLength(1));
    await landed();
    act(() => {
      fireEvent.wheel(region(), { deltaY: -300 });
      region().scrollTop -= 300;
      fireEvent.scroll(region());
    });
    const focused = within(region()).getAllByRole('article').at(-1);
    if (!focused) throw new Error('no row rendered');
    act(() => focused.focus());
    pushBatch(test, logEvents(41, 43));
    const pill = await screen.findByRole('button', { name: '3 new events ↓' });
    expect(document.activeElement).toBe(focused);
    // Not inside the scroll region, so it cannot be painted over its rows...
    expect(region().contains(pill)).toBe(false);
    expect(region().contains(focused)).toBe(true);
    // ...but its next sibling in a column, taking its own space after the scroller...
    expect(region().nextElementSibling).toBe(pill);
    expect(pill.parentElement?.className).toMatch(/\bflex-col\b/);
    // ...and not lifted out of the flow on top of it.
    for (let node: HTMLElement | null = pill; node && node !== region().parentElement;) {
      expect(node.className).not.toMatch(/(^|\s)(absolute|fixed|sticky)(\s|$)/);
      expect(node.style.position).toBe('');
      node = node.parentElement;
    }
  });

  it('never shows the page the stream just opened as a gap below the newest events', async () => {
    const { test, rerender } = renderLive(pageOfLogEvents(0));
    await screen.findByText(`line ${PAGE_SIZE}`);
    await waitFor(() => expect(test.subscriptions()).toHaveLength(1));
    const gaps: string[] = [];
    const observer = new MutationObserver(() => {
      for (const row of document.querySelectorAll('article[aria-label$="not loaded"]'))
        gaps.push(row.getAttribute('aria-label') ?? '');
    });
    observer.observe(document.body, { childList: true, subtree: true });
    const p1 = firstSeqOf(1);
    pushBatch(test, logEvents(p1, p1 + 3));
    rerender(String(p1 + 3));
    expect(await screen.findByText(`line ${p1 + 3}`)).toBeTruthy();
    observer.disconnect();
    expect(gaps).toEqual([]);
    await waitFor(() => expect(atEnd()).toBe(true));
  });

  it('moves on to the next page when the stream fills the newest one, without a new lastEventSeq', async () => {
    const { test } = renderLive(logEvents(1, PAGE_SIZE - 2));
    await screen.findByText(`line ${PAGE_SIZE - 2}`);
    await waitFor(() => expect(test.subscriptions()).toHaveLength(1));
    // The batch completes page 0 and opens page 1; the session's lastEventSeq stays where it was.
    const p1 = firstSeqOf(1);
    pushBatch(test, logEvents(PAGE_SIZE - 1, p1 + 2));
    expect(await screen.findByText(`line ${p1 + 2}`)).toBeTruthy();
    await waitFor(() => expect(atEnd()).toBe(true));
  });

  it('crosses a page the stream filled without asking the server for the next one', async () => {
    const { test, rerender } = renderLive(logEvents(1, PAGE_SIZE - 2));
    await screen.findByText(`line ${PAGE_SIZE - 2}`);
    await waitFor(() => expect(test.subscriptions()).toHaveLength(1));
    // The session's lastEventSeq runs ahead of the stream (into the next page), then a batch
    // ends exactly on the page's last seq.
    const p1 = firstSeqOf(1);
    rerender(String(p1 + 5));
    pushBatch(test, logEvents(PAGE_SIZE - 1, PAGE_SIZE));
    expect(await screen.findByText(`line ${PAGE_SIZE}`)).toBeTruthy();
    pushBatch(test, logEvents(p1, p1 + 2));
    expect(await screen.findByText(`line ${p1 + 2}`)).toBeTruthy();
    const pagesAsked = test.operations
      .filter((op) => op.kind === 'query')
      .map((op) => (op.variables as { page?: string }).page);
    expect(pagesAsked).toEqual(['0']);
  });

  it('marks each row with its first and last seq', async () => {
    renderTimeline({
      0: [
        toolEvent(1, 'TOOL_PROPOSED', pendingCall),
        logEvent(2),
        approvalEvent(3, 'APPROVAL_REQUESTED', pendingCall, approval()),
      ],
    });
    const card = await screen.findByRole('article', { name: /Tool call/ });
    expect([card.dataset.seq, card.dataset.lastSeq]).toEqual(['1', '3']);
    const log = screen.getByRole('article', { name: 'Log, event 2' });
    expect([log.dataset.seq, log.dataset.lastSeq]).toEqual(['2', '2']);
  });
});
