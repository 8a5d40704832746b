/**
 * graphql-ws `next` messages carry a result encoded once per result object
 * (server/schema/sharedPayloads.ts): raw graphql-transport-ws sockets on the real server see
 * text frames that are exactly the JSON graphql-ws would have sent, the same bytes for two
 * observers of one batch, and errors formatted as graphql-ws formats them.
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphQLError } from 'graphql';
import {
  BATCHES_SUBSCRIPTION,
  HISTORY,
  appendMany,
  createSession,
  makeClient,
  startHarness,
  waitUntil,
} from './harness.ts';
import type { Harness, StudioClient } from './harness.ts';
import {
  sharedPayload,
  sharedPayloadReplacer,
  spliceSharedPayloads,
  withJsonBytes,
} from '../../server/schema/sharedPayloads.ts';

let h: Harness;
let c: StudioClient;

beforeAll(async () => {
  h = await startHarness();
  c = makeClient(h);
});

afterAll(async () => {
  await h.dispose();
});

interface Frame {
  text: string;
  binary: boolean;
  message: { id?: string; type: string; payload?: Record<string, unknown> };
}

/** A graphql-transport-ws connection spoken by hand, keeping every frame as it arrived. */
async function rawSocket(): Promise<{ socket: WebSocket; frames: Frame[] }> {
  const socket = new WebSocket(h.wsUrl, 'graphql-transport-ws');
  const frames: Frame[] = [];
  socket.on('message', (data: Buffer, binary: boolean) => {
    const text = data.toString('utf8');
    frames.push({ text, binary, message: JSON.parse(text) as Frame['message'] });
  });
  h.track(() => socket.terminate());
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  socket.send(
    JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${h.token}` } }),
  );
  await waitUntil(() => frames.some((f) => f.message.type === 'connection_ack'), 'the ack');
  return { socket, frames };
}

const nexts = (frames: Frame[], id: string) =>
  frames.filter((f) => f.message.type === 'next' && f.message.id === id);

describe('graphql-ws results encoded once', () => {
  it.each([
    { events: 250, label: 'shared', maxBatch: 100, minMessages: 3, largest: 0 },
    // Over 64 KiB a payload goes out in three fragments, and non-ASCII text is encoded as UTF-8.
    {
      events: 900,
      label: 'größer — 大きい',
      maxBatch: 1000,
      minMessages: 1,
      largest: 64 * 1024 + 100,
    },
  ])(
    'sends two observers of one session the same bytes per batch, as text messages graphql-ws would send ($events events, maxBatch $maxBatch)',
    async ({ events, label, maxBatch, minMessages, largest }) => {
      const session = await createSession(c, 'ASK');
      await appendMany(h, session.sessionId, events, label);
      const last = BigInt(
        (await h.server.engine.reads.getSession(session.sessionId))!.lastEventSeq,
      );
      const a = await rawSocket();
      const b = await rawSocket();
      const variables = { sessionId: session.sessionId, afterSeq: '0', maxBatch };
      for (const [peer, id] of [
        [a, 'first'],
        [b, 'second'],
      ] as const)
        peer.socket.send(
          JSON.stringify({
            id,
            type: 'subscribe',
            payload: { query: BATCHES_SUBSCRIPTION, variables },
          }),
        );
      const caughtUp = (frames: Frame[], id: string) =>
        nexts(frames, id).some((f) => {
          const batch = (f.message.payload?.data as Record<string, { throughSeq: string }> | null)
            ?.studioAgentEventBatches;
          return batch !== undefined && BigInt(batch.throughSeq) >= last;
        });
      await waitUntil(
        () => caughtUp(a.frames, 'first') && caughtUp(b.frames, 'second'),
        'both observers caught up',
      );
      const first = nexts(a.frames, 'first');
      const second = nexts(b.frames, 'second');
      expect(first.length).toBeGreaterThanOrEqual(minMessages);
      expect(Math.max(...first.map((f) => Buffer.byteLength(f.text)))).toBeGreaterThan(largest);
      if (largest > 0) expect(first.some((f) => f.text.includes(label))).toBe(true);
      for (const frame of [...first, ...second]) {
        expect(frame.binary).toBe(false);
        // Exactly the JSON.stringify of the message graphql-ws builds: id, type, payload, nothing else.
        expect(frame.text).toBe(JSON.stringify(frame.message));
        expect(Object.keys(frame.message)).toEqual(['id', 'type', 'payload']);
        expect(frame.text).not.toContain('shared-payload');
      }
      // The same batches (same cursors) carry the same payload bytes.
      const payloadText = (f: Frame) => f.text.slice(f.text.indexOf('"payload":'));
      expect(second.map(payloadText)).toEqual(first.map(payloadText));
      const seqs = first.flatMap((f) =>
        (
          f.message.payload!.data as {
            studioAgentEventBatches: { events: { seq: string }[] };
          }
        ).studioAgentEventBatches.events.map((e) => e.seq),
      );
      expect(seqs).toEqual(Array.from({ length: Number(last) }, (_, i) => String(i + 1)));
    },
  );

  it('formats a result with errors as graphql-ws does: errors last, each as its toJSON()', async () => {
    const { socket, frames } = await rawSocket();
    socket.send(
      JSON.stringify({
        id: 'q',
        type: 'subscribe',
        payload: {
          query: 'query { crowdyStudioAgentSession(sessionId: "ses_none") { sessionId } }',
        },
      }),
    );
    await waitUntil(
      () => frames.some((f) => f.message.id === 'q' && f.message.type === 'complete'),
      'the answer',
    );
    const [next] = nexts(frames, 'q');
    expect(next!.text).toBe(JSON.stringify(next!.message));
    const payload = next!.message.payload!;
    expect(Object.keys(payload)).toEqual(['data', 'errors']);
    const errors = payload.errors as {
      message: string;
      path: string[];
      extensions: { code: string };
    }[];
    expect(errors).toHaveLength(1);
    expect(errors[0]!.path).toEqual(['crowdyStudioAgentSession']);
    expect(errors[0]!.extensions.code).toBe('AGENT_SESSION_NOT_FOUND');
  });

  it('encodes a result once however many messages carry it, and never splices a message that has no shared payload', () => {
    const error = new GraphQLError('boom', { path: ['x'], extensions: { code: 'BAD_USER_INPUT' } });
    const result = { errors: [error], data: { x: null } };
    const one = sharedPayload(result);
    expect(sharedPayload(result).bytes).toBe(one.bytes);
    expect(JSON.parse(one.bytes.toString('utf8'))).toEqual({
      data: { x: null },
      errors: [error.toJSON()],
    });
    const sent: unknown[] = [];
    const socket = { send: (data: unknown) => sent.push(data) };
    spliceSharedPayloads(socket as unknown as WebSocket);
    // A message stringified with the shared payload whose send never happened (socket closed) ...
    JSON.stringify({ id: '1', type: 'next', payload: one }, sharedPayloadReplacer);
    // ... leaves nothing behind for the next message on any socket.
    const plain = JSON.stringify(
      { id: '2', type: 'error', payload: [{ message: 'no' }] },
      sharedPayloadReplacer,
    );
    socket.send(plain);
    expect(sent).toEqual([plain]);
    const spliced = JSON.stringify({ id: '3', type: 'next', payload: one }, sharedPayloadReplacer);
    socket.send(spliced);
    expect(Buffer.isBuffer(sent[1])).toBe(true);
    expect(JSON.parse((sent[1] as Buffer).toString('utf8'))).toEqual({
      id: '3',
      type: 'next',
      payload: { data: { x: null }, errors: [error.toJSON()] },
    });
  });
});

describe('HTTP bodies as bytes', () => {
  const post = (body: unknown) =>
    fetch(h.httpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${h.token}` },
      body: JSON.stringify(body),
    });

  it.each([
    { events: 40, label: 'ascii only' },
    { events: 40, label: 'größer — 大きい 🎉' },
  ])(
    'sends a history page ($label) as the UTF-8 bytes of its JSON.stringify, Content-Length exact',
    async ({ events, label }) => {
      const session = await createSession(c, 'ASK');
      await appendMany(h, session.sessionId, events, label);
      const response = await post({
        query: HISTORY,
        variables: { sessionId: session.sessionId, afterSeq: '0', first: 200 },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/.*json; charset=utf-8$/);
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
      const text = bytes.toString('utf8');
      const parsed = JSON.parse(text) as {
        data: { crowdyStudioAgentHistory: { events: { seq: string }[] } };
      };
      // The compact JSON.stringify of the result, byte for byte, in UTF-8 (not Latin-1).
      expect(bytes.equals(Buffer.from(JSON.stringify(parsed), 'utf8'))).toBe(true);
      expect(text).toContain(label);
      expect(parsed.data.crowdyStudioAgentHistory.events.length).toBeGreaterThanOrEqual(events);
    },
  );

  it('sends a result with errors as Yoga formats it: the code kept, no internal extensions', async () => {
    const response = await post({
      query: 'query { crowdyStudioAgentSession(sessionId: "ses_none") { sessionId } }',
    });
    const text = await response.text();
    const payload = JSON.parse(text) as {
      data: unknown;
      errors: { path: string[]; extensions: Record<string, unknown> }[];
    };
    expect(text).toBe(JSON.stringify(payload));
    expect(payload.errors).toHaveLength(1);
    expect(payload.errors[0]!.path).toEqual(['crowdyStudioAgentSession']);
    expect(payload.errors[0]!.extensions.code).toBe('AGENT_SESSION_NOT_FOUND');
    expect(Object.keys(payload.errors[0]!.extensions)).not.toContain('http');
    expect(Object.keys(payload.errors[0]!.extensions)).not.toContain('unexpected');
  });

  it('marks a result without changing its own fields', () => {
    const result = { data: { greeting: 'grüß dich' } };
    const marked = withJsonBytes(result) as typeof result & { stringify(v: unknown): Buffer };
    expect(marked).toBe(result);
    expect(Object.keys(marked)).toEqual(['data']);
    expect(JSON.stringify(marked)).toBe('{"data":{"greeting":"grüß dich"}}');
    const body = marked.stringify(marked);
    expect(Buffer.isBuffer(body)).toBe(true);
    expect(body.equals(Buffer.from('{"data":{"greeting":"grüß dich"}}', 'utf8'))).toBe(true);
  });
});
