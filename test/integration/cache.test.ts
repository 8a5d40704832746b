/**
 * The web data layer against the real server: the production urql Client (Graphcache with the
 * production config, graphql-ws over `ws`, the resumable event stream) talking to the studio
 * server started in-process on port 0 with a temp data dir.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStudioServer, type StudioServer } from '../../server/app.ts';
import type { EventDraft } from '../../server/engine/eventDrafts.ts';
import { makeStudioClient, type StudioClient } from '../../src/graphql/client.ts';
import {
  EventBatchesSubscription,
  EventPageQuery,
  PAGE_SIZE,
} from '../../src/graphql/eventDocuments.ts';
import { graphql } from '../../src/graphql/graphql.ts';
import { readToolDraft as toolDraft } from '../server/harness.ts';

const ToolCallByKey = graphql(`
  query IntegrationToolCall($toolCallId: String!) {
    studioToolCall(toolCallId: $toolCallId) {
      toolCallId
      status
      resultJson
    }
  }
`);

/** Drops the next event-batch message while `dropNext` is set: a message lost in transit. */
const loss = { dropNext: false, dropped: 0 };
/** Every message the client sent, parsed. */
const sent: { type?: string; payload?: { query?: string; variables?: Record<string, unknown> } }[] =
  [];
class LossyWebSocket extends WebSocket {
  constructor(...args: ConstructorParameters<typeof WebSocket>) {
    super(...args);
    // graphql-ws listens through `onmessage`; wrap whatever handler it sets.
    const accessor = Object.getOwnPropertyDescriptor(WebSocket.prototype, 'onmessage');
    Object.defineProperty(this, 'onmessage', {
      configurable: true,
      get: () => accessor?.get?.call(this),
      set: (handler: ((event: WebSocket.MessageEvent) => void) | null) =>
        accessor?.set?.call(
          this,
          handler
            ? (event: WebSocket.MessageEvent) => {
                if (loss.dropNext && String(event.data).includes('studioAgentEventBatches')) {
                  loss.dropNext = false;
                  loss.dropped += 1;
                  return;
                }
                handler(event);
              }
            : null,
        ),
    });
  }

  override send(data: unknown, ...rest: unknown[]): void {
    sent.push(JSON.parse(String(data)) as (typeof sent)[number]);
    (super.send as (...args: unknown[]) => void)(data, ...rest);
  }
}

async function until<T>(
  read: () => T | null | undefined | false,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = read();
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function logDraft(message: string): EventDraft {
  return { type: 'STUDIO_LOG', level: 'INFO', message, origin: 'integration' } as EventDraft;
}

describe('web data layer against the real server', () => {
  let server: StudioServer;
  let studio: StudioClient;
  let dataDir: string;
  let sessionId: string;
  const statuses: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'studio-web-cache-'));
    server = await startStudioServer({
      port: 0,
      dataDir,
      demo: true,
      demoStepMs: 0,
      quiet: true,
      staticDir: null,
      logWrite: () => undefined,
    });
    studio = makeStudioClient({
      endpoint: `${server.url}/graphql`,
      token: server.token,
      webSocketImpl: LossyWebSocket,
      onConnection: (status) => statuses.push(status),
    });
    sessionId = (await server.engine.createSession({ appId: '1', mode: 'ASK' })).sessionId;
  });

  afterAll(async () => {
    await studio?.dispose();
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const readPage = () =>
    studio.client.readQuery(EventPageQuery, { sessionId, page: '0', size: PAGE_SIZE })?.data
      ?.studioEventPage ?? null;
  const seqs = () => readPage()?.events.map((event) => event.seq) ?? [];

  it('streams events into the newest page, one StudioToolCall entity per call, no duplicates, gaps filled', async () => {
    await server.engine.append(sessionId, [toolDraft('TOOL_PROPOSED', 'call-1')]);
    const first = await studio.client
      .query(EventPageQuery, { sessionId, page: '0', size: PAGE_SIZE })
      .toPromise();
    expect(first.error).toBeUndefined();
    const loaded = first.data?.studioEventPage.events ?? [];
    const lastLoaded = loaded[loaded.length - 1]?.seq ?? '0';

    const listening = server.engine.notifier.listenerCount(sessionId);
    const live = studio.client
      .subscription(EventBatchesSubscription, { sessionId, afterSeq: lastLoaded })
      .subscribe(() => undefined);
    // Nothing to replay yet: wait until the server holds the subscription, then append.
    await until(
      () => server.engine.notifier.listenerCount(sessionId) > listening,
      'the server to hold the live stream',
    );

    // 1. Every event for call-1 updates the one entity the first event links to.
    await server.engine.append(sessionId, [toolDraft('TOOL_DISPATCHED', 'call-1')]);
    await server.engine.append(sessionId, [toolDraft('TOOL_SUCCEEDED', 'call-1')]);
    await until(() => seqs().length === loaded.length + 2, 'the two tool events in the page');
    const proposed = readPage()?.events.find((event) => event.type === 'TOOL_PROPOSED');
    expect(proposed?.__typename).toBe('AgentToolEvent');
    if (proposed?.__typename === 'AgentToolEvent') {
      expect(proposed.toolStatus).toBe('PROPOSED');
      expect(proposed.studioToolCall?.status).toBe('SUCCEEDED');
    }
    const byKey = studio.client.readQuery(ToolCallByKey, { toolCallId: 'call-1' })?.data
      ?.studioToolCall;
    expect(byKey).toMatchObject({
      toolCallId: 'call-1',
      status: 'SUCCEEDED',
      resultJson: '{"bytes":120,"call":"call-1"}',
    });

    // 2. A second stream replaying everything from the start delivers duplicates: none is linked twice.
    let replayedThrough = 0n;
    const replay = studio.client
      .subscription(EventBatchesSubscription, { sessionId, afterSeq: '0', maxBatch: 2 })
      .subscribe((result) => {
        const through = result.data?.studioAgentEventBatches.throughSeq;
        if (through) replayedThrough = BigInt(through);
      });
    const [logged] = await server.engine.append(sessionId, [logDraft('after the replay started')]);
    await until(
      () =>
        readPage()?.events.some(
          (e) => e.__typename === 'StudioLogEvent' && e.logMessage === 'after the replay started',
        ),
      'the log line',
    );
    // The replaying stream has written everything up to the log line (its duplicates included).
    await until(() => replayedThrough >= BigInt(logged!.seq), 'the replay to catch up');
    replay.unsubscribe();
    const afterReplay = seqs();
    expect(new Set(afterReplay).size).toBe(afterReplay.length);
    expect(afterReplay.map(Number)).toEqual([...afterReplay.map(Number)].sort((a, b) => a - b));

    // 3. A batch lost in transit leaves a gap; the stream fills it from History before the next one.
    loss.dropNext = true;
    await server.engine.append(sessionId, [logDraft('lost in transit')]);
    await until(() => loss.dropped === 1, 'the dropped batch');
    expect(
      readPage()?.events.some(
        (e) => e.__typename === 'StudioLogEvent' && e.logMessage === 'lost in transit',
      ),
    ).toBe(false);
    await server.engine.append(sessionId, [logDraft('after the gap')]);
    await until(
      () =>
        readPage()?.events.some(
          (e) => e.__typename === 'StudioLogEvent' && e.logMessage === 'after the gap',
        ),
      'the event after the gap',
    );
    const messages = (readPage()?.events ?? []).flatMap((e) =>
      e.__typename === 'StudioLogEvent' ? [e.logMessage] : [],
    );
    expect(messages.slice(-2)).toEqual(['lost in transit', 'after the gap']);

    // 3b. A lost batch that moved a call on: the gap fill's History page carries the call's
    // state (its studioToolCalls), so the card's entity is current without any later event for it.
    await server.engine.append(sessionId, [toolDraft('TOOL_PROPOSED', 'call-2')]);
    await until(
      () => studio.client.readQuery(ToolCallByKey, { toolCallId: 'call-2' })?.data?.studioToolCall,
      'call-2 proposed',
    );
    loss.dropNext = true;
    await server.engine.append(sessionId, [toolDraft('TOOL_SUCCEEDED', 'call-2')]);
    await until(() => loss.dropped === 2, 'the dropped tool batch');
    await server.engine.append(sessionId, [logDraft('after the tool gap')]);
    await until(
      () =>
        readPage()?.events.some(
          (e) => e.__typename === 'StudioLogEvent' && e.logMessage === 'after the tool gap',
        ),
      'the event after the tool gap',
    );
    expect(
      studio.client.readQuery(ToolCallByKey, { toolCallId: 'call-2' })?.data?.studioToolCall,
    ).toMatchObject({
      toolCallId: 'call-2',
      status: 'SUCCEEDED',
      resultJson: '{"bytes":120,"call":"call-2"}',
    });
    const filled = readPage()?.events.find(
      (e) =>
        e.__typename === 'AgentToolEvent' &&
        e.type === 'TOOL_SUCCEEDED' &&
        e.toolEventCallId === 'call-2',
    );
    expect(filled?.__typename === 'AgentToolEvent' && filled.studioToolCall?.status).toBe(
      'SUCCEEDED',
    );

    const final = seqs();
    expect(final.map(Number)).toEqual(final.map((_, i) => i + 1));

    // 4. A dropped socket resumes from the last applied seq: nothing is repeated or lost.
    const liveSubscribes = () =>
      sent.filter(
        (m) =>
          m.type === 'subscribe' &&
          m.payload?.query?.includes('studioAgentEventBatches') &&
          m.payload.variables?.maxBatch !== 2,
      );
    const before = liveSubscribes().length;
    studio.wsClient.terminate();
    await server.engine.append(sessionId, [logDraft('after the reconnect')]);
    await until(
      () =>
        readPage()?.events.some(
          (e) => e.__typename === 'StudioLogEvent' && e.logMessage === 'after the reconnect',
        ),
      'the event after the reconnect',
      15_000,
    );
    const resumed = seqs();
    expect(resumed.map(Number)).toEqual(resumed.map((_, i) => i + 1));
    const resent = liveSubscribes().slice(before);
    expect(resent.length).toBeGreaterThanOrEqual(1);
    expect(resent[0]?.payload?.variables?.afterSeq).toBe(final[final.length - 1]);
    // The connection badge heard the drop and the return.
    expect(statuses[0]).toBe('connecting');
    expect(statuses.slice(statuses.indexOf('live'))).toEqual(
      expect.arrayContaining(['live', 'reconnecting']),
    );
    expect(statuses[statuses.length - 1]).toBe('live');
    live.unsubscribe();
  });
});
