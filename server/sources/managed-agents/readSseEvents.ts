/**
 * A minimal Server-Sent Events reader (the WHATWG event-stream format): `event:`, `data:` (joined
 * with newlines), `id:`, comments and blank-line dispatch, CRLF / LF / CR line endings.
 */
export interface SseMessage {
  event: string;
  data: string;
  id: string | null;
}

export async function* readSseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | null = null;
  let sawCr = false;

  function* lines(chunk: string): Generator<string> {
    let start = 0;
    for (let i = 0; i < chunk.length; i += 1) {
      const ch = chunk[i];
      if (ch === '\n' && sawCr) {
        // The LF of a CRLF pair: the line already ended at the CR.
        sawCr = false;
        start = i + 1;
        continue;
      }
      sawCr = false;
      if (ch === '\n' || ch === '\r') {
        yield buffer + chunk.slice(start, i);
        buffer = '';
        start = i + 1;
        sawCr = ch === '\r';
      }
    }
    buffer += chunk.slice(start);
  }

  const dispatch = (): SseMessage | null => {
    if (data.length === 0) {
      event = '';
      return null;
    }
    const message = { event: event || 'message', data: data.join('\n'), id };
    event = '';
    data = [];
    return message;
  };

  const handle = (line: string): SseMessage | null => {
    if (line === '') return dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) id = value;
    return null;
  };

  for await (const chunk of body) {
    for (const line of lines(decoder.decode(chunk, { stream: true }))) {
      const message = handle(line);
      if (message) yield message;
    }
  }
  for (const line of lines(decoder.decode())) {
    const message = handle(line);
    if (message) yield message;
  }
  // A message not followed by a blank line when the stream ends is dropped, as the format says.
}
