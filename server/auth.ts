/**
 * The studio's one credential: a bearer token. It comes from --token / STUDIO_TOKEN or is
 * generated at first start and kept (mode 0600) in the data dir. It is checked on every HTTP
 * request to the API and in graphql-ws connection_init; it never appears in a URL or a log.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function loadOrCreateToken(dataDir: string, given: string | undefined): string {
  if (given) return given;
  const file = join(dataDir, 'token');
  if (existsSync(file)) {
    const stored = readFileSync(file, 'utf8').trim();
    if (stored) return stored;
  }
  const token = randomBytes(24).toString('base64url');
  writeFileSync(file, token + '\n', { mode: 0o600 });
  return token;
}

/** True when `header` is exactly `Bearer <token>` (compared in constant time). */
export function isAuthorized(header: unknown, token: string): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(`Bearer ${token}`);
  const actual = Buffer.from(header.trim());
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
