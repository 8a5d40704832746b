/**
 * `studioToolCalls` on a history page and on a live batch, with the web app's own wire documents
 * (src/graphql/eventDocuments.ts, formatted as urql sends them): each tool call the events name
 * appears once, at its current state, in order of first mention; the events carry only the key,
 * and it resolves to the same call. Runs on both stores (the server and server-pg projects).
 */
import { formatDocument } from '@urql/core';
import { print, type DocumentNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventBatchesSubscription, EventHistoryQuery } from '../../src/graphql/eventDocuments.ts';
import {
  collectRaw,
  logDraft,
  makeClient,
  readToolDraft as toolDraft,
  startHarness,
  waitUntil,
} from './harness.ts';
import type { Harness, StudioClient } from './harness.ts';

const onTheWire = (document: unknown) =>
  print(formatDocument(document as Parameters<typeof formatDocument>[0]) as DocumentNode);
const HISTORY = onTheWire(EventHistoryQuery);
const BATCHES = onTheWire(EventBatchesSubscription);

/** Both views of a call in one execution: the event's own field (full) and the page's list. */
const BOTH_VIEWS = `query Both($sessionId: String!) {
  crowdyStudioAgentHistory(sessionId: $sessionId, first: 200) {
    events { ... on AgentToolEvent { seq studioToolCall { toolCallId status updatedAt resultJson } } }
    studioToolCalls { toolCallId status updatedAt resultJson }
  }
}`;

type Row = Record<string, unknown>;
interface Call {
  __typename: string;
  toolCallId: string;
  status: string;
  resultJson: string | null;
  argumentsJson: string | null;
  steps: { type: string }[];
  approval: unknown;
}
interface Page {
  events: Row[];
  studioToolCalls: Call[];
}

let h: Harness;
let c: StudioClient;
let sessionId: string;

beforeAll(async () => {
  h = await startHarness();
  c = makeClient(h);
  sessionId = (await h.server.engine.createSession({ appId: '1', mode: 'ASK' })).sessionId;
  await h.server.engine.append(sessionId, [
    toolDraft('TOOL_PROPOSED', 'call-a'),
    logDraft('between'),
    toolDraft('TOOL_PROPOSED', 'call-b'),
    toolDraft('TOOL_DISPATCHED', 'call-a'),
    toolDraft('TOOL_SUCCEEDED', 'call-a'),
    toolDraft('TOOL_PROPOSED', 'call-c'),
    toolDraft('TOOL_DISPATCHED', 'call-b'),
  ]);
});

afterAll(async () => {
  await h.dispose();
});

/** The raw HTTP answer (text and parsed), so the test can count what went over the wire. */
async function post(query: string, variables: Row): Promise<{ text: string; data: Row }> {
  const response = await fetch(h.httpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${h.token}` },
    body: JSON.stringify({ query, variables }),
  });
  const text = await response.text();
  const body = JSON.parse(text) as { data?: Row; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return { text, data: body.data! };
}

const toolEvents = (page: Page) =>
  page.events.filter(
    (e) => e.__typename === 'AgentToolEvent' || e.__typename === 'AgentApprovalEvent',
  );
const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('studioToolCalls', () => {
  it('lists each call a history page names once, current, in order of first mention; events carry its key', async () => {
    const { text, data } = await post(HISTORY, { sessionId, afterSeq: '0', first: 200 });
    const page = data.crowdyStudioAgentHistory as Page;
    const calls = page.studioToolCalls;
    expect(calls.map((call) => [call.toolCallId, call.status])).toEqual([
      ['call-a', 'SUCCEEDED'],
      ['call-b', 'DISPATCHED'],
      ['call-c', 'PROPOSED'],
    ]);
    expect(calls[0]).toMatchObject({
      __typename: 'StudioToolCall',
      resultJson: '{"bytes":120,"call":"call-a"}',
      argumentsJson: '{"path":"README.md","call":"call-a"}',
    });
    expect(calls[0]!.steps.map((step) => step.type)).toEqual([
      'TOOL_PROPOSED',
      'TOOL_DISPATCHED',
      'TOOL_SUCCEEDED',
    ]);
    // Six tool events name three calls: each call's arguments travel once, not per event.
    const tools = toolEvents(page);
    expect(tools).toHaveLength(6);
    expect(count(text, '"argumentsJson"')).toBe(3);
    for (const event of tools) {
      expect(event.studioToolCall).toEqual({
        __typename: 'StudioToolCall',
        toolCallId: event.toolEventCallId,
      });
    }
  });

  it('lists only the calls the page itself names, from the first one it mentions', async () => {
    // After seq of the call-b proposal: call-a (dispatched, succeeded) comes first, then call-c, call-b.
    const all = (await post(HISTORY, { sessionId, afterSeq: '0', first: 200 })).data
      .crowdyStudioAgentHistory as Page;
    const proposedB = all.events.find(
      (e) => e.type === 'TOOL_PROPOSED' && e.toolEventCallId === 'call-b',
    )!.seq as string;
    const page = (await post(HISTORY, { sessionId, afterSeq: proposedB, first: 3 })).data
      .crowdyStudioAgentHistory as Page;
    expect(toolEvents(page).map((e) => e.toolEventCallId)).toEqual(['call-a', 'call-a', 'call-c']);
    expect(page.studioToolCalls.map((call) => call.toolCallId)).toEqual(['call-a', 'call-c']);
    const quiet = (await post(HISTORY, { sessionId, afterSeq: '0', first: 1 })).data
      .crowdyStudioAgentHistory as Page;
    expect(toolEvents(quiet)).toHaveLength(0);
    expect(quiet.studioToolCalls).toEqual([]);
  });

  it('gives the same snapshot of a call as the events’ own studioToolCall', async () => {
    const page = (await post(BOTH_VIEWS, { sessionId })).data.crowdyStudioAgentHistory as {
      events: { seq?: string; studioToolCall?: Row }[];
      studioToolCalls: Row[];
    };
    const listed = new Map(page.studioToolCalls.map((call) => [call.toolCallId, call]));
    const embedded = page.events.flatMap((e) => (e.studioToolCall ? [e.studioToolCall] : []));
    expect(embedded).toHaveLength(6);
    for (const call of embedded) expect(call).toEqual(listed.get(call.toolCallId as string));
  });

  it('lists each call a live batch names once, at its current state, replay and live', async () => {
    const stream = collectRaw<Page & { fromSeq: string; throughSeq: string }>(
      c.ws,
      BATCHES,
      { sessionId, afterSeq: '0', maxBatch: 3 },
      'studioAgentEventBatches',
    );
    try {
      await waitUntil(
        () => stream.items.some((b) => toolEvents(b).some((e) => e.toolEventCallId === 'call-c')),
        'the replay',
      );
      for (const batch of stream.items) {
        const named = [...new Set(toolEvents(batch).map((e) => e.toolEventCallId as string))];
        expect(batch.studioToolCalls.map((call) => call.toolCallId)).toEqual(named);
        for (const event of toolEvents(batch))
          expect(Object.keys(event.studioToolCall as Row).sort()).toEqual([
            '__typename',
            'toolCallId',
          ]);
      }
      const replayed = stream.items.flatMap((b) => b.studioToolCalls);
      expect(replayed.find((call) => call.toolCallId === 'call-a')?.status).toBe('SUCCEEDED');
      // Live: call-c moves on; the batch that carries its event carries its new state once.
      await h.server.engine.append(sessionId, [
        toolDraft('TOOL_DISPATCHED', 'call-c'),
        toolDraft('TOOL_SUCCEEDED', 'call-c'),
      ]);
      await waitUntil(
        () =>
          stream.items.some((b) =>
            b.studioToolCalls.some(
              (call) => call.toolCallId === 'call-c' && call.status === 'SUCCEEDED',
            ),
          ),
        'call-c succeeded on the stream',
      );
      const live = stream.items.find((b) =>
        b.studioToolCalls.some(
          (call) => call.toolCallId === 'call-c' && call.status === 'SUCCEEDED',
        ),
      )!;
      expect(live.studioToolCalls).toHaveLength(1);
      expect(live.studioToolCalls[0]).toMatchObject({
        resultJson: '{"bytes":120,"call":"call-c"}',
      });
      expect(stream.errors).toEqual([]);
    } finally {
      stream.unsubscribe();
    }
  });
});
