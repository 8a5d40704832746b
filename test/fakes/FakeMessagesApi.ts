/**
 * A local, scripted stand-in for the Anthropic Messages API (`POST /v1/messages`), streaming
 * Server-Sent Events exactly as the API does: `message_start`, `ping`, then per content block
 * `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`) /
 * `content_block_stop`, then `message_delta` (stop_reason, usage) and `message_stop`. A request
 * without `stream: true` gets the whole message as JSON. Checked against the official SDK's
 * `messages.stream` in test/server/claudeCode/fakeMessagesApi.test.ts.
 *
 * Turns are scripted: each request that carries tools (the agent loop's own requests) takes the
 * next scripted reply; a request without tools (side requests such as a title) gets a short text
 * reply. Every request is recorded, so a test can read what the model received (a tool_result
 * with the human's deny reason, say).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody, record, type RecordedRequest } from './recordedRequest.ts';

export type ScriptedBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface ScriptedReply {
  content: ScriptedBlock[];
  /** Default: 'tool_use' when a tool_use block is present, else 'end_turn'. */
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens';
  /**
   * Serve this reply only to a request whose body this accepts (e.g. a subagent's requests,
   * which run beside the main loop's in no fixed order); without it, to the next request.
   */
  when?: (body: { messages?: { role: string; content: unknown }[] }) => boolean;
  /**
   * Pace the stream as a model does: wait this long before each text_delta after the first
   * (default 0: the whole reply is written at once).
   */
  deltaGapMs?: number;
  /** Text deltas per text block (default 2). */
  textDeltas?: number;
}

export class FakeMessagesApi {
  readonly requests: RecordedRequest[] = [];
  private readonly server: Server;
  private readonly script: ScriptedReply[];
  private counter = 0;
  private readonly apiKey: string;

  private constructor(apiKey: string, script: ScriptedReply[]) {
    this.apiKey = apiKey;
    this.script = [...script];
    this.server = createServer((request, response) => {
      void readBody(request).then((body) => {
        const recorded = record(request, body);
        this.requests.push(recorded);
        void this.handle(recorded, response);
      });
    });
  }

  static async start(apiKey: string, script: ScriptedReply[]): Promise<FakeMessagesApi> {
    const api = new FakeMessagesApi(apiKey, script);
    await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', resolve));
    return api;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Scripts more replies (a later turn). */
  push(...replies: ScriptedReply[]): void {
    this.script.push(...replies);
  }

  /** The bodies of the agent loop's requests (those with tools), parsed. */
  loopRequests(): { messages: { role: string; content: unknown }[] }[] {
    return this.requests
      .filter((r) => r.pathname === '/v1/messages' && hasTools(r.json))
      .map((r) => r.json as { messages: { role: string; content: unknown }[] });
  }

  /** The first scripted reply this request may take (its `when` accepts the body, or none). */
  private next(body: object): ScriptedReply | undefined {
    const index = this.script.findIndex((reply) => !reply.when || reply.when(body));
    return index === -1 ? undefined : this.script.splice(index, 1)[0];
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: RecordedRequest, response: ServerResponse): Promise<void> {
    const bearer = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    const key = request.headers['x-api-key'] ?? bearer;
    if (key !== this.apiKey)
      return sendError(response, 401, 'authentication_error', 'invalid x-api-key');
    if (request.method !== 'POST' || !request.pathname.startsWith('/v1/messages'))
      return sendError(
        response,
        404,
        'not_found_error',
        `no route ${request.method} ${request.pathname}`,
      );
    if (request.pathname === '/v1/messages/count_tokens')
      return sendJson(response, 200, { input_tokens: 100 });
    if (request.pathname !== '/v1/messages')
      return sendError(response, 404, 'not_found_error', 'no such endpoint');
    const body = request.json as { model?: unknown; stream?: unknown } | undefined;
    if (!body || typeof body.model !== 'string')
      return sendError(response, 400, 'invalid_request_error', 'model: Field required');
    const reply = hasTools(body)
      ? (this.next(body) ?? { content: [{ type: 'text', text: 'Done.' }] })
      : { content: [{ type: 'text', text: 'Studio session' } as ScriptedBlock] };
    this.counter += 1;
    const message = {
      id: `msg_fake_${String(this.counter).padStart(4, '0')}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: reply.content,
      stop_reason:
        reply.stopReason ??
        (reply.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
      stop_sequence: null,
      usage: {
        input_tokens: 120,
        output_tokens: 30,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    };
    if (body.stream !== true) return sendJson(response, 200, message);
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': `req_fake_${this.counter}`,
    });
    const sse = (event: string, data: unknown) => {
      // A paced stream may outlive its client (an interrupted turn): write nothing then.
      if (!response.destroyed && !response.writableEnded)
        response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    sse('message_start', {
      type: 'message_start',
      message: {
        ...message,
        content: [],
        stop_reason: null,
        usage: { ...message.usage, output_tokens: 1 },
      },
    });
    sse('ping', { type: 'ping' });
    const gap = reply.deltaGapMs ?? 0;
    const pause = () => new Promise((resolve) => setTimeout(resolve, gap));
    for (const [index, block] of reply.content.entries()) {
      if (block.type === 'text') {
        sse('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'text', text: '' },
        });
        // Several deltas (two by default), so a client that shows partial text sees it grow.
        const count = Math.max(1, reply.textDeltas ?? 2);
        const size = Math.ceil(block.text.length / count);
        const parts: string[] = [];
        for (let at = 0; at < block.text.length; at += size)
          parts.push(block.text.slice(at, at + size));
        for (const [n, part] of parts.entries()) {
          if (n > 0 && gap > 0) await pause();
          sse('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'text_delta', text: part },
          });
        }
      } else {
        sse('content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        });
        const json = JSON.stringify(block.input);
        const half = Math.ceil(json.length / 2);
        for (const part of [json.slice(0, half), json.slice(half)].filter(Boolean))
          sse('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: part },
          });
      }
      sse('content_block_stop', { type: 'content_block_stop', index });
    }
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    });
    sse('message_stop', { type: 'message_stop' });
    response.end();
  }
}

function hasTools(body: unknown): boolean {
  const tools = (body as { tools?: unknown } | undefined)?.tools;
  return Array.isArray(tools) && tools.length > 0;
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function sendError(response: ServerResponse, status: number, type: string, message: string): void {
  sendJson(response, status, { type: 'error', error: { type, message } });
}
