/**
 * Caps and ranges for every argument a root field takes, applied before a resolver runs, so an
 * oversized or out-of-range value is bad input (BAD_USER_INPUT with the field named), never a
 * stored megabyte or an INTERNAL_SERVER_ERROR. The contract's bounds (§8.9: ids ≤ 128 chars,
 * seq/epoch strings ≤ 40, digests 71, human input ≤ 16 KiB) come from protocol/contract.ts; the
 * per-request budgets come from server/limits.ts. docs/EVENTS.md, "Request limits", lists them.
 */
import type { Engine } from '../engine/Engine.ts';
import { StudioError } from '../engine/StudioError.ts';
import {
  DIGEST_PATTERN,
  ErrorCode,
  EVENT_BATCH_MAX,
  MAX_DECISION_REASON,
  MAX_ID_LENGTH,
  MAX_IDEMPOTENCY_KEY,
  MAX_MESSAGE_CONTENT_BYTES,
  MAX_USER_MESSAGE_BYTES,
} from '../../protocol/contract.ts';
import { REQUEST_LIMITS } from '../limits.ts';

const MAX_SEQ_STRING = 40;
const INT64_MAX = REQUEST_LIMITS.int64Max;

type StringRule = { maxChars?: number; maxBytes?: number; pattern?: RegExp; what: string };

const ID: StringRule = { maxChars: MAX_ID_LENGTH, what: 'an id' };
const DECIMAL: StringRule = { maxChars: MAX_SEQ_STRING, what: 'a decimal string' };
const DIGEST: StringRule = { pattern: DIGEST_PATTERN, what: 'sha256:<64 hex>' };

/** Rules by argument (or input field) name; a string not named here gets DEFAULT_STRING. */
const STRINGS: Record<string, StringRule> = {
  sessionId: ID,
  toolCallId: ID,
  checkpointId: ID,
  questionId: ID,
  leaseId: ID,
  runId: ID,
  approvalId: ID,
  clientInstanceId: ID,
  projectId: ID,
  controlledEntityId: ID,
  requestedModel: { maxChars: MAX_ID_LENGTH, what: 'a model name' },
  idempotencyKey: { maxChars: MAX_IDEMPOTENCY_KEY, what: 'an idempotency key' },
  after: { maxChars: MAX_SEQ_STRING, what: 'a cursor' },
  afterSeq: DECIMAL,
  throughSeq: DECIMAL,
  clientEpoch: DECIMAL,
  expectedRevision: DECIMAL,
  page: DECIMAL,
  appId: DECIMAL,
  gridId: DECIMAL,
  argumentHash: DIGEST,
  checkpointContentHash: DIGEST,
  content: { maxBytes: MAX_USER_MESSAGE_BYTES, what: 'a message' },
  text: { maxBytes: MAX_USER_MESSAGE_BYTES, what: 'an answer' },
  reason: { maxChars: MAX_DECISION_REASON, what: 'a reason' },
};
const DEFAULT_STRING: StringRule = { maxBytes: MAX_MESSAGE_CONTENT_BYTES, what: 'a string' };

/** Integer arguments: inclusive ranges (page sizes are clamped to their maximum by the resolvers). */
const INTS: Record<string, [number, number]> = {
  maxBatch: [1, EVENT_BATCH_MAX],
  choiceIndex: [0, 1_000],
  durationSeconds: [1, 600],
};

/** BigInt arguments that name a position or an id: they must fit in int64. */
const BIGINTS = new Set([
  'afterSeq',
  'throughSeq',
  'clientEpoch',
  'expectedRevision',
  'page',
  'appId',
  'gridId',
]);

function bad(field: string, message: string): StudioError {
  return new StudioError(ErrorCode.BAD_REQUEST, message, { field });
}

function checkString(path: string, name: string, value: string): void {
  const rule = STRINGS[name] ?? DEFAULT_STRING;
  if (rule.pattern && !rule.pattern.test(value)) throw bad(path, `${path} must be ${rule.what}.`);
  if (rule.maxChars !== undefined && value.length > rule.maxChars)
    throw bad(
      path,
      `${path} is ${value.length} characters; ${rule.what} has at most ${rule.maxChars}.`,
    );
  if (rule.maxBytes !== undefined && value.length > rule.maxBytes / 4) {
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > rule.maxBytes)
      throw bad(path, `${path} is ${bytes} bytes; ${rule.what} has at most ${rule.maxBytes}.`);
  }
  if (BIGINTS.has(name) && /^\d+$/.test(value) && BigInt(value) > INT64_MAX)
    throw bad(path, `${path} is past the largest 64-bit integer.`);
}

function walk(path: string, name: string, value: unknown): void {
  if (value === null || value === undefined) return;
  if (typeof value === 'string') return checkString(path, name, value);
  if (typeof value === 'number') {
    const range = INTS[name];
    if (range && (!Number.isInteger(value) || value < range[0] || value > range[1]))
      throw bad(path, `${path} must be an integer from ${range[0]} to ${range[1]}, got ${value}.`);
    return;
  }
  if (Array.isArray(value)) {
    if (value.length > 1_000) throw bad(path, `${path} has more than 1000 items.`);
    value.forEach((item, i) => walk(`${path}[${i}]`, name, item));
    return;
  }
  if (typeof value === 'object')
    for (const [key, inner] of Object.entries(value)) walk(`${path}.${key}`, key, inner);
}

/** Checks every argument of one root field; throws a BAD_USER_INPUT StudioError naming the first bad one. */
export function checkArguments(fieldName: string, args: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(args)) walk(`${fieldName}.${name}`, name, value);
}

/** A studioEventPage whose last seq would pass int64 is bad input, not a store error. */
export function checkEventPage(page: bigint, size: number): void {
  if ((page + 1n) * BigInt(size) > INT64_MAX)
    throw bad('page', `page ${page} of size ${size} is past the largest 64-bit seq.`);
}

const rowBudgets = new WeakMap<object, number>();

/**
 * Charges `rows` against the request's budget (REQUEST_LIMITS.rowsPerRequest): many list fields
 * in one document (aliases of one page field, say) are refused as a whole instead of being read
 * and serialised.
 */
export function chargeRows(context: object, rows: number, field: string): void {
  const used = (rowBudgets.get(context) ?? 0) + rows;
  if (used > REQUEST_LIMITS.rowsPerRequest)
    throw bad(
      field,
      `This request reads more than ${REQUEST_LIMITS.rowsPerRequest} rows (events, sessions, checkpoints and their files, approvals); ask for fewer or smaller pages at once.`,
    );
  rowBudgets.set(context, used);
}

/** crowdyStudioAgentSetMode: a projectId must be the session's own project (projects never move). */
export async function checkSetModeProject(
  engine: Engine,
  sessionId: string,
  projectId: string | null,
): Promise<void> {
  if (projectId === null) return;
  if (!(await engine.reads.getProject(projectId)))
    throw bad('projectId', `No project ${JSON.stringify(projectId)}.`);
  const own = (await engine.requireSession(sessionId)).projectId;
  if (own !== projectId)
    throw bad(
      'projectId',
      `Session ${sessionId} works on ${own === null ? 'no project' : `project ${own}`}; a session's project cannot change.`,
    );
}
