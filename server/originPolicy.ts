/**
 * Which Host names and which Origins the studio answers (HTTP and WebSocket alike).
 *
 * - Host: the name the server listens on, `localhost`, `127.0.0.1`, `[::1]`, plus `--allowed-host`
 *   names (a reverse proxy's public name). Anything else is refused, which stops DNS rebinding:
 *   a foreign page whose name resolves to 127.0.0.1 still sends its own name as Host.
 * - Origin: absent (curl, the bridges, same-origin GETs), the page's own origin (the Origin's
 *   host equals the request's Host), or one listed with `--allowed-origin`. `null` and every other
 *   Origin are refused before any work, so a foreign page can neither read nor make the server
 *   buffer anything.
 * - CORS: only a listed origin gets `Access-Control-Allow-Origin` (its own value, with
 *   `Vary: Origin`); `Access-Control-Allow-Credentials` is never sent: the API takes a bearer
 *   header, not cookies.
 */
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';

export interface OriginPolicyOptions {
  /** The interface the server listens on (`--host`). */
  listenHost: string;
  /** Extra Host names (`--allowed-host`), without port. */
  allowedHosts?: string[];
  /** Extra origins (`--allowed-origin`), e.g. `https://studio.example.com`. */
  allowedOrigins?: string[];
}

export type Verdict = { ok: true } | { ok: false; status: number; message: string };

const ALLOW_HEADERS = 'authorization, content-type, accept';
const ALLOW_METHODS = 'GET, POST, OPTIONS';

/** `host[:port]` → lower-case host without port; IPv6 keeps its brackets. */
export function hostnameOf(hostHeader: string): string | null {
  const value = hostHeader.trim().toLowerCase();
  if (!value || /[\s/\\@?#]/.test(value)) return null;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return null;
    const rest = value.slice(end + 1);
    if (rest && !/^:\d{1,5}$/.test(rest)) return null;
    return value.slice(0, end + 1);
  }
  const colon = value.indexOf(':');
  if (colon >= 0 && !/^\d{1,5}$/.test(value.slice(colon + 1))) return null;
  return colon >= 0 ? value.slice(0, colon) : value;
}

/** A serialized origin (`scheme://host[:port]`) in lower case, or null when it is not one. */
export function normalizeOrigin(origin: string): string | null {
  const match = /^(https?):\/\/([^/?#\s]+)$/i.exec(origin.trim());
  if (!match) return null;
  const host = hostnameOf(match[2]!);
  if (!host) return null;
  return `${match[1]!.toLowerCase()}://${match[2]!.toLowerCase()}`;
}

export class OriginPolicy {
  private readonly hosts: Set<string>;
  private readonly origins: Set<string>;

  constructor(options: OriginPolicyOptions) {
    const listen = options.listenHost.toLowerCase();
    const shown = listen.includes(':') && !listen.startsWith('[') ? `[${listen}]` : listen;
    this.hosts = new Set(['localhost', '127.0.0.1', '[::1]']);
    // 0.0.0.0 / :: are not names a browser sends; a LAN name must be listed with --allowed-host.
    if (shown !== '0.0.0.0' && shown !== '[::]') this.hosts.add(shown);
    for (const host of options.allowedHosts ?? []) {
      const name = hostnameOf(host);
      if (!name) throw new Error(`--allowed-host ${JSON.stringify(host)} is not a host name`);
      this.hosts.add(name);
    }
    this.origins = new Set();
    for (const origin of options.allowedOrigins ?? []) {
      const normal = normalizeOrigin(origin);
      if (!normal) throw new Error(`--allowed-origin ${JSON.stringify(origin)} is not an origin`);
      this.origins.add(normal);
    }
  }

  /** Host and Origin of one request (an HTTP request or a WebSocket upgrade). */
  check(req: Pick<IncomingMessage, 'headers'>): Verdict {
    const hostHeader = req.headers.host;
    const host = typeof hostHeader === 'string' ? hostnameOf(hostHeader) : null;
    if (!host || !this.hosts.has(host))
      return {
        ok: false,
        status: 403,
        message: `Host ${JSON.stringify(String(hostHeader ?? '')).slice(0, 100)} is not allowed (start the studio with --allowed-host NAME to serve it).`,
      };
    const origin = req.headers.origin;
    if (origin === undefined) return { ok: true };
    if (this.sameOrigin(origin, hostHeader!) || this.listed(origin)) return { ok: true };
    return {
      ok: false,
      status: 403,
      message: `Origin ${JSON.stringify(origin).slice(0, 100)} is not allowed (start the studio with --allowed-origin ORIGIN to serve it).`,
    };
  }

  /** CORS headers for an allowed request: only a listed foreign origin gets any. */
  corsHeaders(req: Pick<IncomingMessage, 'headers'>): OutgoingHttpHeaders {
    const origin = req.headers.origin;
    if (typeof origin !== 'string' || !this.listed(origin)) return {};
    if (this.sameOrigin(origin, req.headers.host ?? '')) return {};
    return {
      'Access-Control-Allow-Origin': normalizeOrigin(origin)!,
      'Access-Control-Allow-Headers': ALLOW_HEADERS,
      'Access-Control-Allow-Methods': ALLOW_METHODS,
      'Access-Control-Max-Age': '600',
      Vary: 'Origin',
    };
  }

  private listed(origin: string): boolean {
    const normal = normalizeOrigin(origin);
    return normal !== null && this.origins.has(normal);
  }

  private sameOrigin(origin: string, hostHeader: string): boolean {
    const normal = normalizeOrigin(origin);
    if (!normal) return false;
    // Behind a TLS proxy the page is https while this server speaks http: the host decides.
    return normal.slice(normal.indexOf('://') + 3) === hostHeader.trim().toLowerCase();
  }
}
