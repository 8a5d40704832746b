/**
 * The scripted Messages API fake is only worth the Claude Code tests if it streams what the real
 * API streams: the official SDK's `messages.stream` must parse it into the scripted message.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeMessagesApi } from '../../fakes/FakeMessagesApi.ts';

const KEY = 'sk-ant-api03-messages-fake-0123456789';
const fakes: FakeMessagesApi[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

describe('FakeMessagesApi against the official SDK', () => {
  it('streams text and tool_use blocks that messages.stream assembles into the scripted message', async () => {
    const api = await FakeMessagesApi.start(KEY, [
      {
        content: [
          { type: 'text', text: 'I will write the file.' },
          {
            type: 'tool_use',
            id: 'toolu_01Write',
            name: 'Write',
            input: { file_path: '/tmp/x/notes.md', content: 'hello\n' },
          },
        ],
      },
    ]);
    fakes.push(api);
    const client = new Anthropic({ apiKey: KEY, baseURL: api.url, maxRetries: 0 });
    const texts: string[] = [];
    const stream = client.messages.stream({
      model: 'claude-sonnet-4-6',
      max_tokens: 1024,
      tools: [{ name: 'Write', input_schema: { type: 'object', properties: {} } }],
      messages: [{ role: 'user', content: 'write notes' }],
    });
    stream.on('text', (delta) => texts.push(delta));
    const message = await stream.finalMessage();
    expect(texts.join('')).toBe('I will write the file.');
    expect(texts.length).toBe(2);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'text', text: 'I will write the file.' },
      {
        type: 'tool_use',
        id: 'toolu_01Write',
        name: 'Write',
        input: { file_path: '/tmp/x/notes.md', content: 'hello\n' },
      },
    ]);
    expect(message.usage.output_tokens).toBe(30);
    const [request] = api.loopRequests();
    expect(request?.messages).toEqual([{ role: 'user', content: 'write notes' }]);
  });
});
