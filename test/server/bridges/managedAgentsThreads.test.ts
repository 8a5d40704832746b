import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ManagedAgentsSource,
  managedAgentsStudioSessionId,
} from '../../../server/sources/managed-agents/ManagedAgentsSource.ts';
import { FakeManagedAgentsPeer, type FakeEvent } from '../../fakes/FakeManagedAgentsPeer.ts';
import { MemorySourceHost } from '../../fakes/MemorySourceHost.ts';

const API_KEY = 'sk-ant-api03-test-0123456789abcdef';
const TESTER = 'sthr_01Tester';

interface Scenario {
  session: Record<string, unknown>;
  history: FakeEvent[];
  threadHistories: Record<string, FakeEvent[]>;
  [section: string]: unknown;
}

const s = JSON.parse(
  readFileSync(
    new URL('../../fixtures/managed-agents/subagent-threads.json', import.meta.url),
    'utf8',
  ),
) as Scenario;
const section = (key: string) => s[key] as FakeEvent[];
const foreignId = String(s.session.id);
const sessionId = managedAgentsStudioSessionId(foreignId);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup() {
  const peer = await FakeManagedAgentsPeer.start({
    apiKey: API_KEY,
    sessions: {
      [foreignId]: { session: s.session, history: s.history, threadHistories: s.threadHistories },
    },
    pageSize: 2,
  });
  cleanups.push(() => peer.close());
  const host = new MemorySourceHost();
  const source = new ManagedAgentsSource({
    sessionIds: [foreignId],
    apiKey: API_KEY,
    baseUrl: peer.url,
    logger: host.logger,
    backoff: { initialMs: 20, maxMs: 80 },
  });
  cleanups.push(() => source.stop());
  await source.start(host);
  return { peer, host, source };
}

function stored(host: MemorySourceHost, foreignIdPrefix: string) {
  return host
    .events(sessionId)
    .filter(
      (e) => e.foreignId === foreignIdPrefix || e.foreignId?.startsWith(`${foreignIdPrefix}/`),
    );
}

describe('ManagedAgentsSource subagent threads', () => {
  it('pages a subagent thread at connect and attributes its calls to the subagent', async () => {
    const { peer, host } = await setup();
    const paths = peer.requests.map((r) => r.pathname);
    expect(paths).toContain(`/v1/sessions/${foreignId}/threads`);
    expect(paths).toContain(`/v1/sessions/${foreignId}/threads/${TESTER}/stream`);
    expect(paths).toContain(`/v1/sessions/${foreignId}/threads/${TESTER}/events`);
    expect(peer.threadRequests(foreignId, TESTER, '/events')[0]?.headers).toMatchObject({
      authorization: `Bearer ${API_KEY}`,
      'anthropic-beta': 'managed-agents-2026-04-01',
    });
    // The SDK sends `accept: application/json` on streams too; the API serves SSE regardless.
    expect(peer.threadRequests(foreignId, TESTER, '/stream')[0]?.headers['anthropic-version']).toBe(
      '2026-10-21',
    );
    // The tool use that needed no permission is only on the thread (pages of 2: cursor followed).
    expect(stored(host, 'sevt_T102').map((e) => e.type)).toEqual([
      'TOOL_PROPOSED',
      'TOOL_DISPATCHED',
      'TOOL_SUCCEEDED',
    ]);
    expect(stored(host, 'sevt_T102')[0]).toMatchObject({ askedBy: 'subagent tester' });
    // The coordinator's delegation, seen on the thread as a user.message, starts no studio turn.
    expect(host.types(sessionId).filter((t) => t === 'USER_MESSAGE')).toHaveLength(1);
    expect(host.types(sessionId).filter((t) => t === 'RUN_STARTED')).toHaveLength(1);
  });

  it('records an auto denial that only the subagent thread carries', async () => {
    const { peer, host } = await setup();
    await peer.waitForThreadStreams(foreignId, TESTER, 1);
    peer.emitThread(foreignId, TESTER, section('threadOnlyDenial'));
    await host.waitFor(() => stored(host, 'sevt_T104').length === 3, 'the thread-only denial');
    expect(peer.history(foreignId).some((e) => e.id === 'sevt_T104')).toBe(false);
    const [proposed, denied, toolDenied] = stored(host, 'sevt_T104');
    expect(proposed).toMatchObject({ type: 'TOOL_PROPOSED', askedBy: 'subagent tester' });
    expect(denied).toMatchObject({
      type: 'APPROVAL_DENIED',
      automatic: true,
      toolCallId: 'sevt_T104',
    });
    expect(toolDenied).toMatchObject({
      type: 'TOOL_DENIED',
      askedBy: 'subagent tester',
      toolCallId: 'sevt_T104',
    });
  });

  it('stores a tool use that is both cross-posted and on its thread once', async () => {
    const { peer, host } = await setup();
    await peer.waitForThreadStreams(foreignId, TESTER, 1);
    peer.emitThread(foreignId, TESTER, section('crossPostedAsk'), { crossPost: true });
    // Each stream is ordered: once both sentinels are stored, both copies were read.
    peer.emitThread(foreignId, TESTER, section('threadSentinel'));
    peer.emit(foreignId, section('sessionSentinel'));
    await host.waitFor(
      () => stored(host, 'sevt_T110').length === 1 && stored(host, 'sevt_T011').length === 1,
      'both sentinels',
    );
    expect(stored(host, 'sevt_T105').map((e) => e.type)).toEqual([
      'TOOL_PROPOSED',
      'APPROVAL_REQUESTED',
    ]);
    expect(stored(host, 'sevt_T105')[0]).toMatchObject({ askedBy: 'subagent tester' });
  });

  it('follows a thread created mid-stream and leaves a terminated one after reading its last events', async () => {
    const { peer, host } = await setup();
    peer.emit(foreignId, section('docsThreadCreated'));
    await peer.waitForThreadStreams(foreignId, 'sthr_01Docs', 1);
    peer.emitThread(foreignId, 'sthr_01Docs', section('docsThreadEvents'));
    await host.waitFor(() => stored(host, 'sevt_T201').length === 2, 'the new thread write');
    expect(stored(host, 'sevt_T201')[0]).toMatchObject({
      type: 'TOOL_PROPOSED',
      askedBy: 'subagent docs-writer',
    });

    // Written right before the end, missed by the stream: the final page after termination finds it.
    peer.appendToThreadHistory(foreignId, TESTER, section('testerLastWords'));
    const streamsBefore = peer.threadRequests(foreignId, TESTER, '/stream').length;
    peer.emit(foreignId, section('testerTerminated'));
    await host.waitFor(() => stored(host, 'sevt_T109').length === 3, 'the last denial');
    await host.waitFor(() => peer.openThreadStreams(foreignId, TESTER) === 0, 'the closed stream');
    expect(peer.threadRequests(foreignId, TESTER, '/stream')).toHaveLength(streamsBefore);
    expect(stored(host, 'sevt_T109')[1]).toMatchObject({
      type: 'APPROVAL_DENIED',
      automatic: true,
    });
  });

  it('reconnects a dropped thread stream, re-pages the thread and stores nothing twice', async () => {
    const { peer, host } = await setup();
    await peer.waitForThreadStreams(foreignId, TESTER, 1);
    const before = host.events(sessionId).map((e) => e.foreignId);
    const listsBefore = peer.threadRequests(foreignId, TESTER, '/events').length;

    peer.dropThreadStreams(foreignId, TESTER);
    peer.appendToThreadHistory(foreignId, TESTER, section('duringThreadDrop'));
    await host.waitFor(
      () => host.events(sessionId).some((e) => e.foreignId === 'sevt_T106/result'),
      'the thread events missed during the drop',
    );
    await peer.waitForThreadStreams(foreignId, TESTER, 1);
    expect(peer.threadRequests(foreignId, TESTER, '/events').length).toBeGreaterThan(listsBefore);
    peer.emitThread(foreignId, TESTER, section('afterThreadReconnect'));
    await host.waitFor(() => stored(host, 'sevt_T108').length === 1, 'the live thread message');

    const after = host.events(sessionId).map((e) => e.foreignId);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toEqual([
      'sevt_T106',
      'sevt_T106/dispatched',
      'sevt_T106/result',
      'sevt_T108',
    ]);
    expect(stored(host, 'sevt_T108')[0]).toMatchObject({
      type: 'STUDIO_LOG',
      message: expect.stringContaining('Subagent tester: Suite found') as unknown,
    });
    expect(host.statuses.at(-1)?.status).toBe('LIVE');
  });
});
