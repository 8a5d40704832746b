import { describe, expect, it } from 'vitest';
import { graphql } from './graphql.ts';
import { EventBatchesSubscription, EventPageQuery, PAGE_SIZE } from './eventDocuments.ts';
import { makeTestClient, type TestClient } from '../test/testClient.ts';
import {
  approval,
  approvalEvent,
  checkpointEvent,
  eventPage,
  firstSeqOf,
  lifecycleEvent,
  logEvents,
  pageOfLogEvents,
  SESSION_ID,
  toolCall,
  toolEvent,
} from '../test/fixtures.ts';
import { ToolCallFields, type StudioEvent } from './eventFragments.ts';

const SessionQuery = graphql(`
  query TestSession($sessionId: String!) {
    crowdyStudioAgentSession(sessionId: $sessionId) {
      sessionId
      lastEventSeq
      currentClientEpoch
    }
  }
`);

/** A card's read of one call by key: every field, served from the entity the events wrote. */
const ToolCallQuery = graphql(
  `
    query TestToolCall($toolCallId: String!) {
      studioToolCall(toolCallId: $toolCallId) {
        ...ToolCallFields
      }
    }
  `,
  [ToolCallFields],
);

const SessionsQuery = graphql(`
  query TestSessions($appId: BigInt!) {
    crowdyStudioAgentSessions(appId: $appId, first: 50) {
      hasNextPage
      nodes {
        sessionId
        status
      }
    }
  }
`);

const CheckpointsQuery = graphql(`
  query TestCheckpoints($sessionId: String!) {
    studioCheckpoints(sessionId: $sessionId) {
      supported
      edges {
        node {
          checkpointId
          restoredAt
        }
      }
    }
  }
`);

const ApproveMutation = graphql(`
  mutation TestApprove($input: DecideAgentToolInput!) {
    crowdyStudioAgentApproveTool(input: $input) {
      approvalId
      status
      approved
      rejected
    }
  }
`);

const ApproveWithCallMutation = graphql(`
  mutation TestApproveWithCall($input: DecideAgentToolInput!) {
    crowdyStudioAgentApproveTool(input: $input) {
      approvalId
      status
      studioToolCall {
        toolCallId
        status
        updatedAt
      }
    }
  }
`);

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

function batch(events: StudioEvent[], sessionId = SESSION_ID) {
  return {
    studioAgentEventBatches: {
      __typename: 'StudioAgentEventBatch',
      sessionId,
      fromSeq: events[0]?.seq ?? '0',
      throughSeq: events[events.length - 1]?.seq ?? '0',
      events,
    },
  };
}

/** Loads the given pages into the cache through the real query path and opens the stream. */
async function setup(pages: Record<number, StudioEvent[]>): Promise<TestClient> {
  const test = makeTestClient((operation) => {
    if (
      operation.query.definitions.some(
        (d) => d.kind === 'OperationDefinition' && d.name?.value === 'StudioEventPage',
      )
    ) {
      const page = Number((operation.variables as { page: string }).page);
      return { data: { studioEventPage: eventPage(page, pages[page] ?? []) } };
    }
    return { data: null };
  });
  for (const page of Object.keys(pages)) {
    await test.client
      .query(EventPageQuery, { sessionId: SESSION_ID, page, size: PAGE_SIZE })
      .toPromise();
  }
  test.client
    .subscription(EventBatchesSubscription, { sessionId: SESSION_ID, afterSeq: '0' })
    .subscribe(() => undefined);
  return test;
}

function readPage(test: TestClient, page: number) {
  const result = test.client.readQuery(EventPageQuery, {
    sessionId: SESSION_ID,
    page: String(page),
    size: PAGE_SIZE,
  });
  return result?.data?.studioEventPage ?? null;
}

const seqs = (page: { events: readonly { seq?: string }[] } | null) =>
  page?.events.map((e) => e.seq) ?? null;

describe('makeCacheConfig: studioAgentEventBatches', () => {
  it('appends a batch to the cached page it belongs to, in seq order', async () => {
    const test = await setup({ 0: logEvents(1, 3) });
    test.push('studioAgentEventBatches', batch(logEvents(4, 6)));
    await flush();
    expect(seqs(readPage(test, 0))).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('reads a written batch back without its events or calls, which pages and entities hold', async () => {
    const test = makeTestClient((operation) =>
      operation.kind === 'query'
        ? { data: { studioEventPage: eventPage(0, logEvents(1, 3)) } }
        : { data: null },
    );
    await test.client
      .query(EventPageQuery, { sessionId: SESSION_ID, page: '0', size: PAGE_SIZE })
      .toPromise();
    const results: unknown[] = [];
    test.client
      .subscription(EventBatchesSubscription, { sessionId: SESSION_ID, afterSeq: '0' })
      .subscribe((result) => results.push(result.data));
    test.push('studioAgentEventBatches', batch(logEvents(4, 6)));
    await flush();
    expect(results).toEqual([
      {
        studioAgentEventBatches: {
          sessionId: SESSION_ID,
          fromSeq: '4',
          throughSeq: '6',
          events: [],
          studioToolCalls: [],
        },
      },
    ]);
    expect(seqs(readPage(test, 0))).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('does not link a duplicate event twice', async () => {
    const test = await setup({ 0: logEvents(1, 3) });
    test.push('studioAgentEventBatches', batch(logEvents(3, 5)));
    test.push('studioAgentEventBatches', batch(logEvents(4, 6)));
    await flush();
    expect(seqs(readPage(test, 0))).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('writes only pages the timeline has loaded, never older uncached ones', async () => {
    const p1 = firstSeqOf(1);
    const test = await setup({ 1: logEvents(p1, p1 + 3) });
    test.push(
      'studioAgentEventBatches',
      batch([...logEvents(10, 11), ...logEvents(p1 + 4, p1 + 5)]),
    );
    await flush();
    expect(seqs(readPage(test, 1))).toEqual(
      [0, 1, 2, 3, 4, 5].map((offset) => String(p1 + offset)),
    );
    expect(readPage(test, 0)).toBeNull();
  });

  it('opens the next page when a live event starts it right after a full cached page', async () => {
    const test = await setup({ 0: pageOfLogEvents(0) });
    const p1 = firstSeqOf(1);
    test.push('studioAgentEventBatches', batch(logEvents(p1 - 2, p1 + 1)));
    await flush();
    const first = readPage(test, 0);
    expect(first?.events).toHaveLength(PAGE_SIZE);
    expect(first?.complete).toBe(true);
    const next = readPage(test, 1);
    expect(seqs(next)).toEqual([String(p1), String(p1 + 1)]);
    expect(next?.complete).toBe(false);
    expect(next?.fromSeq).toBe(String(p1));
  });

  it('opens the next page empty when the stream fills a page, so moving on asks nobody', async () => {
    const test = await setup({ 0: logEvents(1, PAGE_SIZE - 3) });
    test.push('studioAgentEventBatches', batch(logEvents(PAGE_SIZE - 2, PAGE_SIZE)));
    await flush();
    expect(readPage(test, 0)?.complete).toBe(true);
    const next = readPage(test, 1);
    expect(next?.events).toEqual([]);
    expect([next?.fromSeq, next?.complete]).toEqual([String(firstSeqOf(1)), false]);
    const requested = test.operations.length;
    const answer = await test.client
      .query(EventPageQuery, { sessionId: SESSION_ID, page: '1', size: PAGE_SIZE })
      .toPromise();
    expect(answer.data?.studioEventPage.events).toEqual([]);
    expect(test.operations).toHaveLength(requested);
    const p1 = firstSeqOf(1);
    test.push('studioAgentEventBatches', batch(logEvents(p1, p1 + 1)));
    await flush();
    expect(seqs(readPage(test, 1))).toEqual([String(p1), String(p1 + 1)]);
  });

  it('updates the one StudioToolCall entity that every event for the call shares', async () => {
    const proposed = toolCall({ status: 'WAITING_FOR_APPROVAL', approval: approval() });
    const test = await setup({ 0: [lifecycleEvent(1), toolEvent(2, 'TOOL_PROPOSED', proposed)] });
    const granted = approval({ status: 'GRANTED', approved: true });
    const done = toolCall({ status: 'SUCCEEDED', approval: granted, resultJson: '{"ok":true}' });
    test.push(
      'studioAgentEventBatches',
      batch([
        approvalEvent(3, 'APPROVAL_GRANTED', done, granted),
        toolEvent(4, 'TOOL_SUCCEEDED', done),
      ]),
    );
    await flush();
    const page = readPage(test, 0);
    const first = page?.events[1];
    expect(first?.__typename).toBe('AgentToolEvent');
    if (first?.__typename !== 'AgentToolEvent') return;
    // The TOOL_PROPOSED event still reads as proposed, its call entity is now SUCCEEDED.
    expect(first.toolStatus).toBe('WAITING_FOR_APPROVAL');
    expect(first.studioToolCall?.status).toBe('SUCCEEDED');
    expect(first.studioToolCall?.approval?.status).toBe('GRANTED');
    expect(seqs(page)).toEqual(['1', '2', '3', '4']);
  });

  it('keeps the whole call in its entity while the page reads only what a row shows of it', async () => {
    const test = await setup({ 0: [lifecycleEvent(1)] });
    const done = toolCall({ status: 'SUCCEEDED', approval: null, resultJson: '{"ok":true}' });
    test.push('studioAgentEventBatches', batch([toolEvent(2, 'TOOL_SUCCEEDED', done)]));
    await flush();
    const event = readPage(test, 0)?.events[1];
    expect(event?.__typename).toBe('AgentToolEvent');
    if (event?.__typename !== 'AgentToolEvent') return;
    expect(event.studioToolCall?.status).toBe('SUCCEEDED');
    expect(event.studioToolCall).not.toHaveProperty('resultJson');
    const card = test.client.readQuery(ToolCallQuery, { toolCallId: done.toolCallId });
    expect(card?.data?.studioToolCall?.resultJson).toBe('{"ok":true}');
    expect(card?.data?.studioToolCall?.steps).toEqual(done.steps);
  });

  it('completes a call whose events carry only its key from the batch that lists it once', async () => {
    const test = await setup({ 0: [lifecycleEvent(1)] });
    const granted = approval({ status: 'GRANTED', approved: true });
    const done = toolCall({
      status: 'SUCCEEDED',
      approval: granted,
      resultJson: '{"ok":true}',
      steps: [
        {
          __typename: 'StudioToolCallStep',
          seq: '2',
          type: 'TOOL_PROPOSED',
          status: 'PROPOSED',
          at: '2026-11-30T09:00:02.000Z',
        },
      ],
    } as never);
    const link = { __typename: 'StudioToolCall', toolCallId: done.toolCallId };
    // Exactly the wire shape: three events name the call by key, the batch carries it once.
    test.push('studioAgentEventBatches', {
      studioAgentEventBatches: {
        __typename: 'StudioAgentEventBatch',
        sessionId: SESSION_ID,
        fromSeq: '2',
        throughSeq: '4',
        events: [
          { ...toolEvent(2, 'TOOL_PROPOSED', done), studioToolCall: link },
          { ...approvalEvent(3, 'APPROVAL_GRANTED', done, granted), studioToolCall: link },
          { ...toolEvent(4, 'TOOL_SUCCEEDED', done), studioToolCall: link },
        ],
        studioToolCalls: [done],
      },
    });
    await flush();
    const page = readPage(test, 0);
    expect(seqs(page)).toEqual(['1', '2', '3', '4']);
    for (const event of page?.events.slice(1) ?? []) {
      if (event.__typename !== 'AgentToolEvent' && event.__typename !== 'AgentApprovalEvent')
        throw new Error(`unexpected ${event.__typename}`);
      expect(event.studioToolCall).toMatchObject({
        toolCallId: done.toolCallId,
        toolName: done.toolName,
        status: 'SUCCEEDED',
        safeSummary: done.safeSummary,
        approval: { approvalId: granted.approvalId, status: 'GRANTED' },
      });
    }
    const card = test.client.readQuery(ToolCallQuery, { toolCallId: done.toolCallId });
    // The card's cache-first read is served whole (a partial entity would be no data).
    const withoutTypenames = (value: unknown) =>
      JSON.parse(JSON.stringify(value, (k, v: unknown) => (k === '__typename' ? undefined : v)));
    expect(card?.data?.studioToolCall).toEqual(withoutTypenames(done));
  });

  it('moves the cached session currentClientEpoch forward, and leaves lastEventSeq to studioSessionUpdates', async () => {
    const resolveSession = () => ({
      data: {
        crowdyStudioAgentSession: {
          __typename: 'AgentSession',
          sessionId: SESSION_ID,
          lastEventSeq: '2',
          currentClientEpoch: '1',
        },
      },
    });
    const sessionTest = makeTestClient(resolveSession);
    await sessionTest.client.query(SessionQuery, { sessionId: SESSION_ID }).toPromise();
    sessionTest.client
      .subscription(EventBatchesSubscription, { sessionId: SESSION_ID, afterSeq: '2' })
      .subscribe(() => undefined);
    sessionTest.push(
      'studioAgentEventBatches',
      batch([lifecycleEvent(3, 'CLIENT_ATTACHED', { lifecycleClientEpoch: '4' })]),
    );
    await flush();
    const session = sessionTest.client.readQuery(SessionQuery, { sessionId: SESSION_ID })?.data
      ?.crowdyStudioAgentSession;
    // A live batch does not rewrite the session (that would re-read every query holding it).
    expect(session?.lastEventSeq).toBe('2');
    expect(session?.currentClientEpoch).toBe('4');
  });

  it('refetches the checkpoint list of the session when a checkpoint event arrives', async () => {
    let checkpointFetches = 0;
    const test = makeTestClient((operation) => {
      if (
        operation.query.definitions.some(
          (d) => d.kind === 'OperationDefinition' && d.name?.value === 'TestCheckpoints',
        )
      ) {
        checkpointFetches += 1;
        return {
          data: {
            studioCheckpoints: {
              __typename: 'StudioCheckpointConnection',
              supported: true,
              edges: [],
            },
          },
        };
      }
      return { data: { studioEventPage: eventPage(0, logEvents(1, 1)) } };
    });
    test.client.query(CheckpointsQuery, { sessionId: SESSION_ID }).subscribe(() => undefined);
    await test.client
      .query(EventPageQuery, { sessionId: SESSION_ID, page: '0', size: PAGE_SIZE })
      .toPromise();
    test.client
      .subscription(EventBatchesSubscription, { sessionId: SESSION_ID, afterSeq: '1' })
      .subscribe(() => undefined);
    await flush();
    expect(checkpointFetches).toBe(1);
    test.push('studioAgentEventBatches', batch([checkpointEvent(2)]));
    await flush();
    await flush();
    expect(checkpointFetches).toBe(2);
  });
});

describe('makeCacheConfig: studioSessionUpdates', () => {
  it('links a session that is not yet in the cached list, once', async () => {
    const test = makeTestClient(() => ({
      data: {
        crowdyStudioAgentSessions: {
          __typename: 'AgentSessionConnection',
          hasNextPage: false,
          nodes: [{ __typename: 'AgentSession', sessionId: 'old', status: 'ACTIVE' }],
        },
      },
    }));
    await test.client.query(SessionsQuery, { appId: '1' }).toPromise();
    test.client
      .subscription(
        graphql(`
          subscription TestSessionUpdates($appId: BigInt!) {
            studioSessionUpdates(appId: $appId) {
              sessionId
              status
            }
          }
        `),
        { appId: '1' },
      )
      .subscribe(() => undefined);
    const update = {
      studioSessionUpdates: { __typename: 'AgentSession', sessionId: 'new', status: 'ACTIVE' },
    };
    test.push('studioSessionUpdates', update);
    test.push('studioSessionUpdates', update);
    await flush();
    const list = test.client.readQuery(SessionsQuery, { appId: '1' })?.data
      ?.crowdyStudioAgentSessions.nodes;
    expect(list?.map((s) => s.sessionId)).toEqual(['new', 'old']);
  });
});

describe('makeCacheConfig: mutations', () => {
  it('flips an approval at once on approve and reverts when the server refuses', async () => {
    let answer: (value: {
      errors: { message: string; extensions: Record<string, unknown> }[];
    }) => void = () => undefined;
    const pending = toolCall({ status: 'WAITING_FOR_APPROVAL', approval: approval() });
    const test = makeTestClient((operation) => {
      if (operation.kind === 'mutation') return new Promise((resolve) => (answer = resolve));
      return { data: { studioEventPage: eventPage(0, [toolEvent(1, 'TOOL_PROPOSED', pending)]) } };
    });
    await test.client
      .query(EventPageQuery, { sessionId: SESSION_ID, page: '0', size: PAGE_SIZE })
      .toPromise();
    const approvalStatus = () => {
      const event = readPage(test, 0)?.events[0];
      return event?.__typename === 'AgentToolEvent'
        ? event.studioToolCall?.approval?.status
        : undefined;
    };
    expect(approvalStatus()).toBe('PENDING');
    const done = test.client
      .mutation(ApproveMutation, {
        input: {
          idempotencyKey: 'k',
          sessionId: SESSION_ID,
          clientEpoch: '1',
          toolCallId: 'call-1',
          argumentHash: pending.argumentHash ?? '',
        },
      })
      .toPromise();
    await flush();
    expect(approvalStatus()).toBe('GRANTED');
    answer({ errors: [{ message: 'expired', extensions: { code: 'AGENT_APPROVAL_EXPIRED' } }] });
    const result = await done;
    expect(result.error?.graphQLErrors[0]?.extensions.code).toBe('AGENT_APPROVAL_EXPIRED');
    expect(approvalStatus()).toBe('PENDING');
  });
});

describe('makeCacheConfig: answers that arrive after newer events', () => {
  it('does not let an approve answer roll back a tool call the stream already moved on', async () => {
    let answer: (value: { data: Record<string, unknown> }) => void = () => undefined;
    const waiting = toolCall({
      status: 'WAITING_FOR_APPROVAL',
      approval: approval(),
      updatedAt: '2026-11-30T09:00:02.000Z',
    });
    const test = makeTestClient((operation) => {
      if (operation.kind === 'mutation') return new Promise((resolve) => (answer = resolve));
      return { data: { studioEventPage: eventPage(0, [toolEvent(1, 'TOOL_PROPOSED', waiting)]) } };
    });
    await test.client
      .query(EventPageQuery, { sessionId: SESSION_ID, page: '0', size: PAGE_SIZE })
      .toPromise();
    test.client
      .subscription(EventBatchesSubscription, { sessionId: SESSION_ID, afterSeq: '1' })
      .subscribe(() => undefined);
    const done = test.client
      .mutation(ApproveWithCallMutation, {
        input: {
          idempotencyKey: 'k',
          sessionId: SESSION_ID,
          clientEpoch: '1',
          toolCallId: 'call-1',
          argumentHash: waiting.argumentHash ?? '',
        },
      })
      .toPromise();
    await flush();
    const succeeded = toolCall({
      status: 'SUCCEEDED',
      approval: approval({ status: 'CONSUMED' }),
      updatedAt: '2026-11-30T09:00:05.000Z',
    });
    test.push('studioAgentEventBatches', batch([toolEvent(2, 'TOOL_SUCCEEDED', succeeded)]));
    await flush();
    // The server answered when the call was still waiting; the answer lands last.
    answer({
      data: {
        crowdyStudioAgentApproveTool: {
          __typename: 'AgentApproval',
          approvalId: 'approval-1',
          status: 'GRANTED',
          studioToolCall: {
            __typename: 'StudioToolCall',
            toolCallId: 'call-1',
            status: 'WAITING_FOR_APPROVAL',
            updatedAt: '2026-11-30T09:00:03.000Z',
          },
        },
      },
    });
    await done;
    const event = readPage(test, 0)?.events[0];
    expect(event?.__typename === 'AgentToolEvent' && event.studioToolCall?.status).toBe(
      'SUCCEEDED',
    );
    expect(event?.__typename === 'AgentToolEvent' && event.studioToolCall?.approval?.status).toBe(
      'CONSUMED',
    );
  });
});
