import { describe, expect, it, vi } from 'vitest';
import type { Operation } from '@urql/core';
import { EventPageQuery, PAGE_SIZE } from '../graphql/eventDocuments.ts';
import { EventPageStore } from '../features/timeline/eventPageStore.ts';
import { eventPage, logEvents, SESSION_ID } from '../test/fixtures.ts';
import { makeSession } from '../test/studioFixtures.ts';
import { makeTestClient } from '../test/testClient.ts';
import { openRouteEarly } from './openRouteEarly.ts';

const LAST = 3 * PAGE_SIZE + 2;

function nameOf(operation: Operation): string | undefined {
  for (const definition of operation.query.definitions)
    if (definition.kind === 'OperationDefinition') return definition.name?.value;
  return undefined;
}

function setup(sessionFound = true) {
  return makeTestClient((operation) => {
    if (nameOf(operation) === 'StudioSession')
      return {
        data: {
          crowdyStudioAgentSession: sessionFound
            ? makeSession({ sessionId: SESSION_ID, lastEventSeq: String(LAST) })
            : null,
        },
      };
    const page = Number((operation.variables as { page: string }).page);
    const from = page * PAGE_SIZE + 1;
    return {
      data: {
        studioEventPage: eventPage(page, logEvents(from, Math.min(LAST, from + PAGE_SIZE - 1))),
      },
    };
  });
}

const asked = (test: ReturnType<typeof setup>) =>
  test.operations
    .filter((op) => op.kind === 'query')
    .map((op) =>
      nameOf(op) === 'StudioEventPage'
        ? `page ${(op.variables as { page: string }).page}`
        : nameOf(op),
    );

describe('openRouteEarly', () => {
  it("asks for a session's newest page as soon as its lastEventSeq is in, and the timeline's own query reads it", async () => {
    const test = setup();
    const early = openRouteEarly(test.client, { name: 'session', sessionId: SESSION_ID });
    await early.sent;
    expect(asked(test)).toEqual(['StudioSession', 'page 3']);
    // Answered means written: the newest page reads from Graphcache without a request.
    await early.answered;
    expect(
      test.client
        .readQuery(EventPageQuery, { sessionId: SESSION_ID, page: '3', size: PAGE_SIZE })
        ?.data?.studioEventPage?.events.map((event) => event.seq),
    ).toEqual([String(LAST - 1), String(LAST)]);

    const store = new EventPageStore(test.client, SESSION_ID, (flush) => {
      queueMicrotask(flush);
      return () => undefined;
    });
    store.activate();
    store.want('3');
    await vi.waitFor(() =>
      expect(
        store
          .getSnapshot()
          .pages.get('3')
          ?.events?.map((e) => e.seq),
      ).toEqual([String(LAST - 1), String(LAST)]),
    );
    // One request per page: the store joined the early one.
    expect(asked(test)).toEqual(['StudioSession', 'page 3']);
    store.deactivate();
    early.close();
  });

  it("also asks for a linked event's page", async () => {
    const test = setup();
    const early = openRouteEarly(test.client, { name: 'event', sessionId: SESSION_ID, seq: '5' });
    await early.sent;
    expect(asked(test)).toEqual(['StudioSession', 'page 3', 'page 0']);
    early.close();
  });

  it('asks for no page of a session that does not exist, and still settles', async () => {
    const test = setup(false);
    const early = openRouteEarly(test.client, { name: 'session', sessionId: SESSION_ID });
    await early.sent;
    await early.answered;
    expect(asked(test)).toEqual(['StudioSession']);
    early.close();
  });

  it('asks for nothing on other addresses', async () => {
    const test = setup();
    const early = openRouteEarly(test.client, { name: 'inbox' });
    await early.sent;
    expect(test.operations).toEqual([]);
  });
});
