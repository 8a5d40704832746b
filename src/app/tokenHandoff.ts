/**
 * Hands the access token from an open studio tab to a new one (Ctrl+click, a pasted deep link)
 * over a same-origin BroadcastChannel, so a second tab opens without asking again. Only a tab
 * whose token the server accepted answers, and only when asked; the token travels inside the
 * browser (same origin, same profile) and never through a URL, a server or a log.
 * The threat model is in docs/ARCHITECTURE.md ("Token across tabs").
 */

export const TOKEN_CHANNEL = 'agent-studio:token';

/** How long a new tab waits for an open one to answer before it shows the paste field. */
export const HANDOFF_WAIT_MS = 400;

type HandoffMessage = { kind: 'ask'; id: string } | { kind: 'token'; id: string; token: string };

function isMessage(data: unknown): data is HandoffMessage {
  if (typeof data !== 'object' || data === null) return false;
  const message = data as Record<string, unknown>;
  if (typeof message.id !== 'string') return false;
  if (message.kind === 'ask') return true;
  return message.kind === 'token' && typeof message.token === 'string' && message.token !== '';
}

function openChannel(): BroadcastChannel | null {
  return typeof BroadcastChannel === 'function' ? new BroadcastChannel(TOKEN_CHANNEL) : null;
}

/**
 * Asks the other tabs of this origin for their token; resolves with the first answer, or null
 * after `waitMs` (or at once where BroadcastChannel does not exist).
 */
export function askOpenTabsForToken(waitMs = HANDOFF_WAIT_MS): Promise<string | null> {
  const channel = openChannel();
  if (!channel) return Promise.resolve(null);
  const id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return new Promise((resolve) => {
    const done = (token: string | null) => {
      clearTimeout(timer);
      channel.close();
      resolve(token);
    };
    const timer = setTimeout(() => done(null), waitMs);
    channel.onmessage = (event: MessageEvent<unknown>) => {
      const message = event.data;
      if (isMessage(message) && message.kind === 'token' && message.id === id) done(message.token);
    };
    channel.postMessage({ kind: 'ask', id } satisfies HandoffMessage);
  });
}

/**
 * Answers other tabs' requests with `token` until the returned function is called. Call it
 * only once the server accepted the token (a rejected one is never passed on).
 */
export function shareTokenWithNewTabs(token: string): () => void {
  const channel = openChannel();
  if (!channel) return () => undefined;
  channel.onmessage = (event: MessageEvent<unknown>) => {
    const message = event.data;
    if (isMessage(message) && message.kind === 'ask')
      channel.postMessage({ kind: 'token', id: message.id, token } satisfies HandoffMessage);
  };
  return () => channel.close();
}

/**
 * The token in what a person pasted: the printed address (`…/#token=…`) or the bare token.
 * Null for an empty paste or an address without a token.
 */
export function tokenFromPaste(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  const hash = trimmed.indexOf('#');
  if (hash >= 0 || /^https?:\/\//i.test(trimmed)) {
    const token = new URLSearchParams(hash >= 0 ? trimmed.slice(hash + 1) : '').get('token');
    return token?.trim() ? token.trim() : null;
  }
  return /\s/.test(trimmed) ? null : trimmed;
}
