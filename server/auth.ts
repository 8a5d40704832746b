/**
 * The studio's credentials: the owner's bearer token and, with `--tokens-file FILE`, one token
 * per reviewer. The owner token comes from --token / STUDIO_TOKEN or is generated at first start
 * and kept (mode 0600) in the data dir. Tokens are checked on every HTTP request to the API and in
 * graphql-ws connection_init; they never appear in a URL or a log.
 *
 * The tokens file is JSON `{ "<reviewer name>": "<token>", ... }`. It is re-read when its
 * modification time or size changes (checked at most every 250 ms), so reviewers can be added or
 * removed while the server runs; a file that does not parse keeps the last good set and is
 * reported once per change.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
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

/** The reviewer name the owner token decides as. */
export const OWNER_REVIEWER = 'owner';

const MAX_REVIEWER_NAME = 64;
const MIN_TOKEN_LENGTH = 16;

function sameSecret(header: string, token: string): boolean {
  const expected = Buffer.from(`Bearer ${token}`);
  const actual = Buffer.from(header.trim());
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Parses a tokens file's text into name → token, or throws with a message naming the problem. */
export function parseTokensFile(text: string): Map<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`the tokens file is not JSON (${(error as Error).message})`, { cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('the tokens file must be a JSON object of reviewer name -> token');
  const out = new Map<string, string>();
  const seen = new Set<string>();
  for (const [name, token] of Object.entries(parsed as Record<string, unknown>)) {
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > MAX_REVIEWER_NAME || trimmed === OWNER_REVIEWER)
      throw new Error(
        `reviewer names must be 1 to ${MAX_REVIEWER_NAME} characters and not "${OWNER_REVIEWER}"`,
      );
    if (typeof token !== 'string' || token.length < MIN_TOKEN_LENGTH || /\s/.test(token))
      throw new Error(
        `the token of "${trimmed}" must be a string of at least ${MIN_TOKEN_LENGTH} characters without spaces`,
      );
    if (seen.has(token)) throw new Error('two reviewers share one token');
    seen.add(token);
    out.set(trimmed, token);
  }
  return out;
}

export interface CredentialsOptions {
  ownerToken: string;
  tokensFile?: string | null;
  /** Told about a tokens file that could not be read (the last good set stays). */
  onProblem?: (message: string) => void;
  /** Told about each token read from the file (so the logger can mask it). */
  onToken?: (token: string) => void;
  now?: () => number;
}

/** Who a bearer header belongs to: the owner, a reviewer from the tokens file, or nobody. */
export class Credentials {
  private reviewers = new Map<string, string>();
  private stamp = '';
  private checkedAt = -Infinity;
  private readonly now: () => number;

  constructor(private readonly options: CredentialsOptions) {
    this.now = options.now ?? Date.now;
    if (options.tokensFile) {
      // The first read must succeed: a server started with a broken file says so and stops.
      this.reviewers = parseTokensFile(readFileSync(options.tokensFile, 'utf8'));
      this.stamp = this.statStamp();
      this.checkedAt = this.now();
      for (const token of this.reviewers.values()) options.onToken?.(token);
    }
  }

  private statStamp(): string {
    if (!this.options.tokensFile) return '';
    try {
      const st = statSync(this.options.tokensFile);
      return `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      return 'missing';
    }
  }

  private refresh(): void {
    const file = this.options.tokensFile;
    if (!file || this.now() - this.checkedAt < 250) return;
    this.checkedAt = this.now();
    const stamp = this.statStamp();
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    try {
      const next = parseTokensFile(readFileSync(file, 'utf8'));
      for (const token of next.values()) this.options.onToken?.(token);
      this.reviewers = next;
    } catch (error) {
      this.options.onProblem?.(
        `tokens file ${file} not reloaded, keeping ${this.reviewers.size} reviewer(s): ${(error as Error).message}`,
      );
    }
  }

  /** Re-reads the tokens file now if it changed (tests call this instead of waiting). */
  reload(): void {
    this.checkedAt = -Infinity;
    this.refresh();
  }

  /** The reviewer name of `header` ("owner" for the owner token), or null if it is no valid token. */
  reviewerOf(header: unknown): string | null {
    if (typeof header !== 'string') return null;
    if (sameSecret(header, this.options.ownerToken)) return OWNER_REVIEWER;
    this.refresh();
    for (const [name, token] of this.reviewers) if (sameSecret(header, token)) return name;
    return null;
  }

  reviewerNames(): string[] {
    this.refresh();
    return [...this.reviewers.keys()];
  }
}

/** True when `header` is exactly `Bearer <token>` for the owner token or a reviewer's token. */
export function isAuthorized(header: unknown, credentials: string | Credentials): boolean {
  if (typeof credentials === 'string')
    return typeof header === 'string' && sameSecret(header, credentials);
  return credentials.reviewerOf(header) !== null;
}
