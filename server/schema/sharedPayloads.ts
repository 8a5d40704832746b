/**
 * One serialisation per execution result on graphql-ws. graphql-ws stringifies every `next`
 * message itself, so 50 observers of one batch paid 50 stringifies of the same result (705 of
 * 3,477 ms in the live profile), and a long replay paid, per message, the stringify plus ws's
 * byteLength and UTF-8 encoding of a string built from many parts.
 *
 * Here the result is encoded once (`sharedPayload`, cached per result object: the shared
 * executions of execution.ts hand every observer the same one) into a UTF-8 Buffer.
 * graphql-ws still builds and validates each message: its `onNext` hook returns the
 * SharedPayload, the `jsonMessageReplacer` writes a placeholder in its place (so the stringify
 * never walks the result), and each socket's `send` (wrapped by `spliceSharedPayloads`) puts
 * the bytes where the placeholder is and sends one text message (a large one in three
 * fragments, so the payload is not copied per observer). The bytes are exactly those
 * graphql-ws would have sent: the same JSON.stringify of `{ ...result, errors }` with each
 * error's toJSON(), errors last.
 */
import type { ExecutionResult } from 'graphql';
import type { WebSocket } from 'ws';

export class SharedPayload {
  constructor(readonly bytes: Buffer) {}
}

const encoded = new WeakMap<object, Buffer>();

/** The result's `next` payload as graphql-ws formats it, encoded once per result object. */
export function sharedPayload(result: ExecutionResult): SharedPayload {
  let bytes = encoded.get(result);
  if (!bytes) {
    const { errors, ...rest } = result;
    // graphql-ws's own formatting (server.ts, emit.next): errors omitted when absent, last, as toJSON().
    const formatted = errors ? { ...rest, errors: errors.map((e) => e.toJSON()) } : rest;
    bytes = utf8(JSON.stringify(formatted));
    encoded.set(result, bytes);
  }
  return new SharedPayload(bytes);
}

/**
 * The UTF-8 bytes of `text`. `Buffer.from` of a large string allocates and encodes on a slow
 * path (about 880 µs per 885 KB of ASCII JSON on this machine); sized first, an all-ASCII text
 * (byte length equals its length, the usual replay) is copied as Latin-1, byte for byte the same
 * (about 190 µs with the sizing), and any other is encoded into an exact buffer (about 400 µs).
 */
function utf8(text: string): Buffer {
  const length = Buffer.byteLength(text, 'utf8');
  const bytes = Buffer.allocUnsafe(length);
  bytes.write(text, 0, length === text.length ? 'latin1' : 'utf8');
  return bytes;
}

/** JSON.stringify of `result` as UTF-8 bytes (see `withJsonBytes`). */
function jsonBytes(result: unknown): Buffer {
  return utf8(JSON.stringify(result));
}

/**
 * Marks an HTTP result to be sent as bytes made here. Yoga's regular result processor sends
 * `result.stringify(sanitized)` as the response body when a result has one, and a Buffer body
 * goes to the socket as it is. With the string Yoga makes by default, bench:server's history
 * profile put about a quarter of the server's time in `Buffer.byteLength` of a string made from
 * many parts (Content-Length, which flattens it), then its UTF-8 encoding in the socket write.
 * The bytes are those of the same `JSON.stringify` of the result Yoga passes (errors already
 * stripped of internals). Not enumerable, so the result's own fields, and anything that copies
 * or compares them, are unchanged; a plugin that replaces the result drops it, and Yoga falls
 * back to its own string.
 */
export function withJsonBytes<T extends object>(result: T): T {
  Object.defineProperty(result, 'stringify', {
    value: jsonBytes,
    enumerable: false,
    configurable: true,
  });
  return result;
}

/** Above this many payload bytes a message goes out in three frames instead of one copy. */
const FRAGMENT_BYTES = 64 * 1024;

/** Never in a real payload: a NUL cannot reach a message but through this module. */
const PLACEHOLDER = '\u0000shared-payload';
/** How a stringified `next` message with the placeholder ends (payload is its last key). */
const TAIL = `"payload":${JSON.stringify(PLACEHOLDER)}}`;
const CLOSE = Buffer.from('}');

/** The bytes the message being stringified refers to, until its socket's send takes them. */
let pending: Buffer | null = null;

/** graphql-ws's `jsonMessageReplacer`: a SharedPayload becomes the placeholder. */
export function sharedPayloadReplacer(this: unknown, key: string, value: unknown): unknown {
  // Each message starts here; what an earlier message left (a socket closed before its send) goes.
  if (key === '' && this !== null && typeof this === 'object' && '' in this) pending = null;
  if (key === 'payload' && value instanceof SharedPayload) {
    pending = value.bytes;
    return PLACEHOLDER;
  }
  return value;
}

/**
 * Wraps `socket.send` so a message that ends with the placeholder goes out with the shared
 * bytes in its place, as one text frame. Any other message is sent unchanged.
 */
export function spliceSharedPayloads(socket: WebSocket): void {
  const send = socket.send.bind(socket) as (
    data: unknown,
    options?: unknown,
    cb?: (error?: Error) => void,
  ) => void;
  socket.send = ((data: unknown, options?: unknown, cb?: (error?: Error) => void) => {
    const bytes = pending;
    pending = null;
    if (bytes && typeof data === 'string' && data.endsWith(TAIL)) {
      const done = typeof options === 'function' ? (options as typeof cb) : cb;
      const head = Buffer.from(data.slice(0, data.length - TAIL.length) + '"payload":');
      if (bytes.length < FRAGMENT_BYTES)
        return send(Buffer.concat([head, bytes, CLOSE]), { binary: false }, done);
      // A large payload is not copied again: one text message in three fragments (head, the
      // shared bytes, the closing brace), which every WebSocket client reassembles.
      send(head, { binary: false, fin: false });
      send(bytes, { binary: false, fin: false });
      return send(CLOSE, { binary: false, fin: true }, done);
    }
    return send(data, options, cb);
  }) as WebSocket['send'];
}
