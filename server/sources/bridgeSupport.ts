/**
 * Small pieces both bridges (Managed Agents, Leviath) share: a forgiving append, reconnect
 * backoff, abortable sleeps, the approval horizon and ids, and the drafts and readers of
 * foreign JSON that both mappers build the same way.
 */
import { createHash } from 'node:crypto';
import { APPROVAL_TTL_MAX_MS, MAX_ID_LENGTH } from '../../protocol/contract.ts';
import type { BudgetDimensionValue, EventDraft, StoredEvent } from '../engine/eventDrafts.ts';
import {
  REDACTED,
  maskSecretText,
  redactForeignPayload,
  truncateText,
  truncateUtf8,
} from './redact.ts';
import type { Logger } from '../logger.ts';
import type { SourceHost } from './Source.ts';

/**
 * Appends a foreign event's drafts. If the engine refuses the batch, each draft is tried on its
 * own and a refused draft is replaced by a warning row (keeping its foreignId, so a re-page does
 * not retry it forever): a bridge must keep following its runtime whatever one event looked like.
 */
export async function appendSafely(
  host: SourceHost,
  sessionId: string,
  input: EventDraft[],
  secrets: readonly string[] = [],
): Promise<StoredEvent[]> {
  if (input.length === 0) return [];
  const drafts = scrubSecrets(input, secrets).map((d) =>
    d.foreignId === undefined ? d : { ...d, foreignId: boundedId(d.foreignId) },
  );
  try {
    return await host.append(sessionId, drafts);
  } catch (error) {
    host.logger.warn('bridge: the engine refused a batch; appending one by one', {
      sessionId,
      types: drafts.map((d) => d.type),
      error: errorMessage(error),
    });
  }
  const stored: StoredEvent[] = [];
  for (const draft of drafts) {
    try {
      stored.push(...(await host.append(sessionId, [draft])));
    } catch (error) {
      const message = errorMessage(error);
      host.logger.warn('bridge: the engine refused a draft', {
        sessionId,
        type: draft.type,
        error: message,
      });
      try {
        stored.push(
          ...(await host.append(sessionId, [
            {
              type: 'STUDIO_LOG',
              level: 'warn',
              origin: 'studio',
              message: `The studio could not record ${draft.type}: ${message}`,
              runId: draft.runId ?? null,
              ...(draft.foreignId !== undefined ? { foreignId: draft.foreignId } : {}),
            },
          ])),
        );
      } catch {
        // Nothing more can be done for this draft; the warning above is in the log.
      }
    }
  }
  return stored;
}

/**
 * An id within the contract's 128 characters: itself when short enough, else a stable digest of
 * it (so dedupe on it still works).
 */
export function boundedId(id: string, max = MAX_ID_LENGTH): string {
  if (id.length <= max) return id;
  return `h-${createHash('sha256').update(id).digest('hex')}`.slice(0, max);
}

/**
 * Replaces every occurrence of a known secret (the API key, the gateway token) in any string of
 * the drafts: whatever a runtime echoes, the secret never reaches the store or the browser.
 */
export function scrubSecrets<T>(value: T, secrets: readonly string[]): T {
  const live = secrets.filter((s) => s.length >= 4);
  if (live.length === 0 || !mentionsSecret(value, live)) return value;
  const scrub = (v: unknown): unknown => {
    if (typeof v === 'string')
      return live.reduce((text, secret) => text.split(secret).join(REDACTED), v);
    if (Array.isArray(v)) return v.map(scrub);
    if (typeof v === 'object' && v !== null)
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrub(x)]));
    return v;
  };
  return scrub(value) as T;
}

/**
 * Whether any string under `value` contains one of `secrets`. A walk, not a search of the
 * value's JSON: it runs on every draft a bridge appends (serializing each one showed in the
 * bench:ingest profile), and it sees a secret JSON would have escaped.
 */
function mentionsSecret(value: unknown, secrets: readonly string[]): boolean {
  if (typeof value === 'string') {
    for (const secret of secrets) if (value.includes(secret)) return true;
    return false;
  }
  if (Array.isArray(value)) {
    for (const item of value) if (mentionsSecret(item, secrets)) return true;
    return false;
  }
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    for (const key in record) if (mentionsSecret(record[key], secrets)) return true;
  }
  return false;
}

/** Until start() hands the bridge the engine's logger. */
export const SILENT_LOGGER: Logger = {
  info: () => {},
  warn: () => {},
  error: () => {},
  addSecret: () => {},
};

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** An error's message fit for logs and StudioErrors: secrets masked, at most 500 characters. */
export function safeErrorMessage(error: unknown, secrets: readonly string[]): string {
  return maskSecretText(errorMessage(error), secrets).slice(0, 500);
}

/**
 * Reconnect delays: "full jitter" over an exponential cap. The cap starts at `initialMs` and
 * doubles per attempt up to `maxMs` (the Managed Agents SDK uses 500 ms to 10 s); the delay is
 * drawn uniformly from [minMs, cap], so many studios (or many followed sessions) that lost the
 * same runtime at once do not reconnect in lockstep. Bounded both ways: never above `maxMs`,
 * never below `minMs` (default a quarter of `initialMs`, so a failing peer is never retried in a
 * tight loop).
 */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** The shortest delay (default initialMs / 4). */
  minMs?: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 10_000 };

/** A random source in [0, 1) (Math.random; tests inject their own). */
export type RandomSource = () => number;

export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  random: RandomSource = Math.random,
): number {
  const cap = Math.min(options.maxMs, options.initialMs * 2 ** Math.max(0, attempt));
  const floor = Math.min(cap, options.minMs ?? options.initialMs / 4);
  const value = random();
  const draw = Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
  return Math.round(floor + draw * (cap - floor));
}

/** Resolves after `ms`, or at once when the signal aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * The expiresAt of an approval a bridge requests. Both runtimes wait for a human indefinitely,
 * but the contract caps an approval's TTL at 120 s; the bridge therefore requests with the full
 * 120 s and, when the engine expires it while the runtime still waits, requests again (a new
 * approvalId for the same toolCallId and argumentHash). See docs/BRIDGES-MAPPING.md.
 */
export function approvalExpiresAt(nowMs: number, ttlMs: number = APPROVAL_TTL_MAX_MS): string {
  return new Date(nowMs + Math.min(Math.max(1, ttlMs), APPROVAL_TTL_MAX_MS)).toISOString();
}

export function isoAt(nowMs: number): string {
  return new Date(nowMs).toISOString();
}

/** The approvalId of generation `generation` of a foreign call's approval (generation 1 has no suffix). */
export function approvalIdFor(foreignKey: string, generation: number): string {
  return boundedId(
    generation <= 1 ? `approval-${foreignKey}` : `approval-${foreignKey}-${generation}`,
  );
}

/** The generation encoded in an approvalId made by approvalIdFor (0 when it is not one). */
export function approvalGenerationOf(foreignKey: string, approvalId: string): number {
  if (approvalId === `approval-${foreignKey}`) return 1;
  const prefix = `approval-${foreignKey}-`;
  if (!approvalId.startsWith(prefix)) return 0;
  const n = Number(approvalId.slice(prefix.length));
  return Number.isSafeInteger(n) && n > 1 ? n : 0;
}

/**
 * One session-scoped budget dimension from a runtime's counters (rounded, never negative). A
 * dimension without a limit reports limit and remaining as 0.
 */
export function budgetDimension(
  name: string,
  consumed: number,
  limit: number | null,
  unit: string,
): BudgetDimensionValue {
  const used = BigInt(Math.max(0, Math.round(consumed)));
  const max = limit === null ? 0n : BigInt(Math.max(0, Math.round(limit)));
  const remaining = limit === null ? 0n : max > used ? max - used : 0n;
  return {
    name,
    scope: 'SESSION',
    limit: max.toString(),
    reserved: '0',
    consumed: used.toString(),
    remaining: remaining.toString(),
    unit,
  };
}

/** A STUDIO_LOG draft of a runtime's line: secrets masked, bounded to 4 KiB. */
export function logDraft(
  line: { runId: string | null; level: string; origin: string; message: string },
  secrets: readonly string[] | undefined,
  foreignId?: string,
): EventDraft {
  return {
    type: 'STUDIO_LOG',
    runId: line.runId,
    level: line.level,
    origin: line.origin,
    message: truncateUtf8(maskSecretText(line.message, secrets), 4096),
    ...(foreignId ? { foreignId } : {}),
  };
}

/** A STUDIO_FOREIGN_EVENT draft keeping a runtime's event the studio does not map (redacted, bounded). */
export function foreignEventDraft(
  event: { source: string; runId: string | null; foreignType: string; payload: unknown },
  secrets: readonly string[] | undefined,
  foreignId?: string,
): EventDraft {
  const { payloadJson, truncated } = redactForeignPayload(event.payload, { secrets });
  return {
    type: 'STUDIO_FOREIGN_EVENT',
    runId: event.runId,
    source: event.source,
    foreignType: truncateText(event.foreignType, 128),
    payloadJson,
    truncated,
    ...(foreignId ? { foreignId } : {}),
  };
}

/** A JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `record[key]` when it is a string. */
export function str(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' ? value : undefined;
}

/** `record[key]` when it is a finite number. */
export function num(record: Record<string, unknown>, key: string): number | undefined {
  const value = record[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
