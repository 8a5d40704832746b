/**
 * The client side of the server benchmark. It runs in a worker thread, so decoding responses
 * does not compete with the server for its event loop (as a browser on another machine would
 * not). The main thread sends one command at a time and gets one result back; the live phase
 * also reports `ready` once every observer has received the warm-up event.
 *
 * Times are `performance.timeOrigin + performance.now()`, comparable across the two threads.
 */
import { parentPort } from 'node:worker_threads';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import type { Client } from 'graphql-ws';
import { BATCHES_SUBSCRIPTION, HISTORY_QUERY } from './serverBenchDocuments.ts';

export type ClientCommand =
  | {
      cmd: 'history';
      url: string;
      token: string;
      sessionId: string;
      first: number;
      afterSeq: string;
      throughSeq: string;
    }
  | {
      cmd: 'batches';
      url: string;
      token: string;
      sessionId: string;
      maxBatch: number;
      afterSeq: string;
      throughSeq: string;
      timeoutMs: number;
    }
  | {
      cmd: 'observe';
      url: string;
      token: string;
      sessionId: string;
      observers: number;
      afterSeq: string;
      warmSeq: string;
      timeoutMs: number;
    }
  | { cmd: 'finish'; throughSeq: string; timeoutMs: number };

export interface ReplayResult {
  events: number;
  ms: number;
  messages: number;
  bytes: number;
  /** Events whose seq was not the previous seq + 1 (gaps, duplicates or disorder). */
  orderErrors: number;
  error: string | null;
}

export interface ObserveResult {
  /** Per observer: receive time of each seq in (warmSeq, throughSeq], NaN when never received. */
  received: Float64Array[];
  duplicates: number;
  outOfOrder: number;
  errors: string[];
}

export type ClientReply =
  | { kind: 'replay'; result: ReplayResult }
  | { kind: 'ready'; ms: number }
  | { kind: 'observed'; result: ObserveResult }
  | { kind: 'failed'; error: string };

const clock = () => performance.timeOrigin + performance.now();

type EventBatch = { fromSeq: string; throughSeq: string; events: { seq: string }[] };

function wsUrl(url: string): string {
  return `${url.replace(/^http/, 'ws')}/graphql`;
}

/** Bytes received over all graphql-ws sockets (the frames' payloads). */
let socketBytes = 0;

class CountingWebSocket extends WebSocket {
  constructor(address: string, protocols?: string | string[]) {
    super(address, protocols);
    this.on('message', (data: Buffer) => {
      socketBytes += data.length;
    });
  }
}

function connect(url: string, token: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client = createClient({
      url: wsUrl(url),
      webSocketImpl: CountingWebSocket,
      connectionParams: { Authorization: `Bearer ${token}` },
      lazy: false,
      retryAttempts: 0,
      on: {
        connected: () => resolve(client),
        error: (error) => reject(error instanceof Error ? error : new Error(String(error))),
        closed: (event) =>
          reject(
            new Error(`socket closed before ack: ${String((event as { code?: number }).code)}`),
          ),
      },
    });
  });
}

/** Pages through crowdyStudioAgentHistory over HTTP until `throughSeq` has arrived. */
async function history(c: Extract<ClientCommand, { cmd: 'history' }>): Promise<ReplayResult> {
  const result: ReplayResult = {
    events: 0,
    ms: 0,
    messages: 0,
    bytes: 0,
    orderErrors: 0,
    error: null,
  };
  const through = BigInt(c.throughSeq);
  let cursor = BigInt(c.afterSeq);
  const started = clock();
  while (cursor < through) {
    const response = await fetch(`${c.url}/graphql`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        Authorization: `Bearer ${c.token}`,
      },
      body: JSON.stringify({
        query: HISTORY_QUERY,
        operationName: 'StudioEventHistory',
        variables: { sessionId: c.sessionId, afterSeq: cursor.toString(), first: c.first },
      }),
    });
    const text = await response.text();
    result.bytes += text.length;
    result.messages += 1;
    const body = JSON.parse(text) as {
      data?: { crowdyStudioAgentHistory: { hasMore: boolean; events: { seq: string }[] } };
      errors?: { message: string }[];
    };
    const page = body.data?.crowdyStudioAgentHistory;
    if (!page) {
      result.error = body.errors?.map((e) => e.message).join('; ') ?? `HTTP ${response.status}`;
      break;
    }
    for (const event of page.events) {
      const seq = BigInt(event.seq);
      if (seq !== cursor + 1n) result.orderErrors += 1;
      cursor = seq;
      result.events += 1;
    }
    if (!page.hasMore || page.events.length === 0) break;
  }
  result.ms = clock() - started;
  return result;
}

/** Replays studioAgentEventBatches after `afterSeq` until `throughSeq` has arrived. */
async function batches(c: Extract<ClientCommand, { cmd: 'batches' }>): Promise<ReplayResult> {
  const result: ReplayResult = {
    events: 0,
    ms: 0,
    messages: 0,
    bytes: 0,
    orderErrors: 0,
    error: null,
  };
  const client = await connect(c.url, c.token);
  const through = BigInt(c.throughSeq);
  let cursor = BigInt(c.afterSeq);
  const bytesBefore = socketBytes;
  const started = clock();
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out after ${c.timeoutMs} ms at seq ${cursor}`)),
        c.timeoutMs,
      );
      const dispose = client.subscribe<{ studioAgentEventBatches: EventBatch }>(
        {
          query: BATCHES_SUBSCRIPTION,
          operationName: 'StudioEventBatches',
          variables: { sessionId: c.sessionId, afterSeq: c.afterSeq, maxBatch: c.maxBatch },
        },
        {
          next: (value) => {
            const batch = value.data?.studioAgentEventBatches;
            if (!batch) return;
            result.messages += 1;
            for (const event of batch.events) {
              const seq = BigInt(event.seq);
              if (seq !== cursor + 1n) result.orderErrors += 1;
              cursor = seq;
              result.events += 1;
            }
            if (cursor >= through) {
              clearTimeout(timer);
              dispose();
              resolve();
            }
          },
          error: (error) => {
            clearTimeout(timer);
            reject(error instanceof Error ? error : new Error(JSON.stringify(error)));
          },
          complete: () => {
            clearTimeout(timer);
            if (cursor < through) reject(new Error(`completed early at seq ${cursor}`));
          },
        },
      );
    });
  } catch (error) {
    result.error = String(error);
  }
  result.ms = clock() - started;
  result.bytes = socketBytes - bytesBefore;
  await client.dispose();
  return result;
}

interface Observer {
  client: Client;
  dispose: () => void;
  lastSeq: bigint;
  times: Map<string, number>;
  duplicates: number;
  outOfOrder: number;
  error: string | null;
}

let observers: Observer[] = [];
let observeBase = 0n;

/** Connects N observers, subscribes each from `afterSeq` and reports `ready` when all saw `warmSeq`. */
async function observe(c: Extract<ClientCommand, { cmd: 'observe' }>): Promise<void> {
  observeBase = BigInt(c.warmSeq);
  const clients = await Promise.all(
    Array.from({ length: c.observers }, () => connect(c.url, c.token)),
  );
  const started = clock();
  let ready = 0;
  let readySent = false;
  const readyTimer = setTimeout(() => {
    if (!readySent)
      post({
        kind: 'failed',
        error: `only ${ready} of ${c.observers} observers saw the warm-up event`,
      });
  }, c.timeoutMs);
  observers = clients.map((client) => {
    const o: Observer = {
      client,
      dispose: () => {},
      lastSeq: BigInt(c.afterSeq),
      times: new Map(),
      duplicates: 0,
      outOfOrder: 0,
      error: null,
    };
    o.dispose = client.subscribe<{ studioAgentEventBatches: EventBatch }>(
      {
        query: BATCHES_SUBSCRIPTION,
        operationName: 'StudioEventBatches',
        variables: { sessionId: c.sessionId, afterSeq: c.afterSeq, maxBatch: 200 },
      },
      {
        next: (value) => {
          const at = clock();
          const batch = value.data?.studioAgentEventBatches;
          if (!batch) {
            o.error ??= JSON.stringify(value.errors ?? value);
            return;
          }
          for (const event of batch.events) {
            const seq = BigInt(event.seq);
            if (o.times.has(event.seq)) o.duplicates += 1;
            else {
              if (seq < o.lastSeq) o.outOfOrder += 1;
              o.times.set(event.seq, at);
            }
            if (seq > o.lastSeq) o.lastSeq = seq;
            if (seq === observeBase && !readySent) {
              ready += 1;
              if (ready === c.observers) {
                readySent = true;
                clearTimeout(readyTimer);
                post({ kind: 'ready', ms: clock() - started });
              }
            }
          }
        },
        error: (error) => {
          o.error ??= error instanceof Error ? error.message : JSON.stringify(error);
        },
        complete: () => {},
      },
    );
    return o;
  });
}

/** Waits until every observer has `throughSeq` (or the timeout), then reports and disconnects. */
async function finish(c: Extract<ClientCommand, { cmd: 'finish' }>): Promise<ObserveResult> {
  const through = BigInt(c.throughSeq);
  const deadline = clock() + c.timeoutMs;
  while (clock() < deadline && observers.some((o) => o.lastSeq < through && !o.error))
    await new Promise((resolve) => setTimeout(resolve, 20));
  const span = Number(through - observeBase);
  const received = observers.map((o) => {
    const times = new Float64Array(span).fill(Number.NaN);
    for (let i = 0; i < span; i += 1) {
      const at = o.times.get((observeBase + BigInt(i + 1)).toString());
      if (at !== undefined) times[i] = at;
    }
    return times;
  });
  const result: ObserveResult = {
    received,
    duplicates: observers.reduce((n, o) => n + o.duplicates, 0),
    outOfOrder: observers.reduce((n, o) => n + o.outOfOrder, 0),
    errors: observers.flatMap((o) => (o.error ? [o.error] : [])),
  };
  for (const o of observers) o.dispose();
  await Promise.all(observers.map((o) => o.client.dispose()));
  observers = [];
  return result;
}

function post(reply: ClientReply): void {
  if (reply.kind === 'observed')
    parentPort?.postMessage(
      reply,
      reply.result.received.map((a) => a.buffer as ArrayBuffer),
    );
  else parentPort?.postMessage(reply);
}

parentPort?.on('message', (command: ClientCommand) => {
  const run = async (): Promise<ClientReply | null> => {
    switch (command.cmd) {
      case 'history':
        return { kind: 'replay', result: await history(command) };
      case 'batches':
        return { kind: 'replay', result: await batches(command) };
      case 'observe':
        await observe(command);
        return null;
      case 'finish':
        return { kind: 'observed', result: await finish(command) };
    }
  };
  run().then(
    (reply) => {
      if (reply) post(reply);
    },
    (error: unknown) => post({ kind: 'failed', error: String(error) }),
  );
});
