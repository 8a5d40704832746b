/**
 * Scoped approval rules: "always allow" / "always deny" a tool call by its exact arguments, an
 * argument prefix (a path or a command prefix) or any call of the tool, within one session,
 * project, source or the whole studio, optionally until a time.
 *
 * Rules are applied by the engine when a call asks for approval (APPROVAL_REQUESTED), inside
 * the same commit: a matching rule decides it at once (APPROVAL_GRANTED / APPROVAL_DENIED with
 * the rule's id and name). Deny wins over allow. An ALLOW rule never matches a call whose tool
 * is DESTRUCTIVE, IRREVERSIBLE, ECONOMIC or TRUST_CONSENT unless it says `allowDestructive`.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from './kernel.ts';
import type {
  ApprovalRecord,
  ApprovalRuleRecord,
  SessionRecord,
  ToolCallRecord,
} from '../store/records.ts';
import { StudioError } from './StudioError.ts';
import { toolsForMode } from './toolRegistry.ts';
import { canonicalJson } from '../workspace/canonicalJson.ts';
import { ErrorCode, LOCAL_APP_ID } from '../../protocol/contract.ts';
import type { ToolRisk } from '../../protocol/events.ts';

export type RuleEffect = ApprovalRuleRecord['effect'];
export type RuleMatch = ApprovalRuleRecord['match'];
export type RuleScope = ApprovalRuleRecord['scope'];

/** Risk classes a rule may allow only when it says so (`allowDestructive`). */
export const GUARDED_RISKS: ReadonlySet<ToolRisk> = new Set([
  'DESTRUCTIVE',
  'IRREVERSIBLE',
  'ECONOMIC',
  'TRUST_CONSENT',
]);

const MAX_RULE_NAME = 120;
const MAX_PREFIX = 1024;
const MAX_EXACT_ARGUMENTS = 64 * 1024;

/** The registry risk of a tool the studio knows (null for a foreign runtime's own tool). */
export function riskOf(toolName: string): ToolRisk | null {
  const tool = toolsForMode('BUILD').find((t) => t.name === toolName);
  return tool ? tool.risk : null;
}

export interface CreateRuleInput {
  appId: string;
  name?: string | null;
  effect: RuleEffect;
  toolName: string;
  match: RuleMatch['kind'];
  argumentsJson?: string | null;
  argumentName?: string | null;
  argumentPrefix?: string | null;
  scope: RuleScope['kind'];
  sessionId?: string | null;
  projectId?: string | null;
  sourceId?: string | null;
  expiresAt?: string | null;
  allowDestructive?: boolean | null;
}

function bad(message: string, field: string): StudioError {
  return new StudioError(ErrorCode.BAD_REQUEST, message, { field });
}

function parseMatch(input: CreateRuleInput): RuleMatch {
  switch (input.match) {
    case 'ANY':
      return { kind: 'ANY' };
    case 'EXACT_ARGUMENTS': {
      const text = input.argumentsJson ?? '';
      if (!text || text.length > MAX_EXACT_ARGUMENTS)
        throw bad('EXACT_ARGUMENTS needs argumentsJson (up to 64 KiB).', 'argumentsJson');
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw bad('argumentsJson is not JSON.', 'argumentsJson');
      }
      return { kind: 'EXACT_ARGUMENTS', argumentsJson: canonicalJson(parsed) };
    }
    case 'ARGUMENT_PREFIX': {
      const name = input.argumentName ?? '';
      const prefix = input.argumentPrefix ?? '';
      if (!name || name.length > 120)
        throw bad('ARGUMENT_PREFIX needs argumentName (1 to 120 characters).', 'argumentName');
      if (!prefix || prefix.length > MAX_PREFIX)
        throw bad(
          `ARGUMENT_PREFIX needs argumentPrefix (1 to ${MAX_PREFIX} characters).`,
          'argumentPrefix',
        );
      return { kind: 'ARGUMENT_PREFIX', argumentName: name, argumentPrefix: prefix };
    }
    default:
      throw bad(`Unknown match ${String(input.match)}.`, 'match');
  }
}

async function parseScope(store: Db, input: CreateRuleInput): Promise<RuleScope> {
  switch (input.scope) {
    case 'STUDIO':
      return { kind: 'STUDIO' };
    case 'SESSION': {
      const session = input.sessionId ? await store.getSession(input.sessionId) : null;
      if (!session || session.appId !== input.appId)
        throw bad('A SESSION scope needs the sessionId of a session of this app.', 'sessionId');
      return { kind: 'SESSION', sessionId: session.sessionId };
    }
    case 'PROJECT': {
      if (!input.projectId || !(await store.getProject(input.projectId)))
        throw bad('A PROJECT scope needs the projectId of a known project.', 'projectId');
      return { kind: 'PROJECT', projectId: input.projectId };
    }
    case 'SOURCE': {
      if (!input.sourceId || input.sourceId.length > 64)
        throw bad('A SOURCE scope needs a sourceId (demo, managed-agents, leviath …).', 'sourceId');
      return { kind: 'SOURCE', sourceId: input.sourceId };
    }
    default:
      throw bad(`Unknown scope ${String(input.scope)}.`, 'scope');
  }
}

function describeRule(effect: RuleEffect, toolName: string, match: RuleMatch): string {
  const verb = effect === 'ALLOW' ? 'Allow' : 'Deny';
  switch (match.kind) {
    case 'ANY':
      return `${verb} every ${toolName}`;
    case 'EXACT_ARGUMENTS':
      return `${verb} ${toolName} with these exact arguments`;
    case 'ARGUMENT_PREFIX':
      return `${verb} ${toolName} when ${match.argumentName} starts with ${JSON.stringify(match.argumentPrefix)}`;
  }
}

/** Validates and builds a new ACTIVE rule (the caller stores it). */
export async function buildRule(
  store: Db,
  input: CreateRuleInput,
  now: string,
  createdBy: string | null,
): Promise<ApprovalRuleRecord> {
  if (input.appId !== LOCAL_APP_ID)
    throw new StudioError(
      ErrorCode.PERMISSION_DENIED,
      `This studio serves app ${LOCAL_APP_ID}, not ${input.appId}.`,
      { field: 'appId' },
    );
  if (input.effect !== 'ALLOW' && input.effect !== 'DENY')
    throw bad('effect must be ALLOW or DENY.', 'effect');
  if (!input.toolName || input.toolName.length > 160)
    throw bad('toolName must be 1 to 160 characters.', 'toolName');
  const match = parseMatch(input);
  const scope = await parseScope(store, input);
  const allowDestructive = input.allowDestructive === true;
  const risk = riskOf(input.toolName);
  if (input.effect === 'ALLOW' && risk && GUARDED_RISKS.has(risk) && !allowDestructive)
    throw new StudioError(
      ErrorCode.BAD_REQUEST,
      `${input.toolName} is ${risk}: a rule allows it only with allowDestructive: true.`,
      {
        field: 'allowDestructive',
        remediation: 'Confirm in the rule editor that this rule may allow destructive calls.',
      },
    );
  if (input.expiresAt && Date.parse(input.expiresAt) <= Date.parse(now))
    throw bad('expiresAt is in the past.', 'expiresAt');
  const name = (input.name ?? '').trim() || describeRule(input.effect, input.toolName, match);
  return {
    ruleId: `rule_${randomUUID()}`,
    appId: input.appId,
    name: name.slice(0, MAX_RULE_NAME),
    effect: input.effect,
    toolName: input.toolName,
    match,
    scope,
    allowDestructive,
    expiresAt: input.expiresAt ?? null,
    status: 'ACTIVE',
    createdAt: now,
    createdBy,
    updatedAt: now,
    revokedAt: null,
    revokedBy: null,
    matchCount: 0,
    lastUsedAt: null,
    lastToolCallId: null,
  };
}

function argumentMatches(args: unknown, name: string, prefix: string): boolean {
  if (typeof args !== 'object' || args === null) return false;
  const value = (args as Record<string, unknown>)[name];
  const ok = (v: unknown) =>
    typeof v === 'string' &&
    v.startsWith(prefix) &&
    // A path prefix must not be escaped with `..` segments.
    !v
      .slice(prefix.length)
      .split(/[\\/]/)
      .some((part) => part === '..');
  if (Array.isArray(value)) return value.length > 0 && value.every(ok);
  return ok(value);
}

/** Whether `rule` applies to `call` in `session` at `nowMs` (status, expiry, scope, tool, match, guard). */
export function ruleMatches(
  rule: ApprovalRuleRecord,
  session: SessionRecord,
  call: ToolCallRecord,
  nowMs: number,
): boolean {
  if (rule.status !== 'ACTIVE') return false;
  if (rule.expiresAt && Date.parse(rule.expiresAt) <= nowMs) return false;
  if (rule.appId !== session.appId || rule.toolName !== call.toolName) return false;
  switch (rule.scope.kind) {
    case 'SESSION':
      if (rule.scope.sessionId !== session.sessionId) return false;
      break;
    case 'PROJECT':
      if (rule.scope.projectId !== session.projectId) return false;
      break;
    case 'SOURCE':
      if (rule.scope.sourceId !== session.source) return false;
      break;
    case 'STUDIO':
      break;
  }
  if (rule.effect === 'ALLOW' && !rule.allowDestructive) {
    const risk = riskOf(call.toolName);
    if (risk && GUARDED_RISKS.has(risk)) return false;
  }
  const args = call.argumentsJson ? (JSON.parse(call.argumentsJson) as unknown) : null;
  switch (rule.match.kind) {
    case 'ANY':
      return true;
    case 'EXACT_ARGUMENTS':
      return args !== null && canonicalJson(args) === rule.match.argumentsJson;
    case 'ARGUMENT_PREFIX':
      return argumentMatches(args, rule.match.argumentName, rule.match.argumentPrefix);
  }
}

/** The rule that decides `approval` now, if any: the oldest matching DENY, else the oldest ALLOW. */
export async function decidingRule(
  store: Db,
  session: SessionRecord,
  approval: ApprovalRecord,
  nowMs: number,
): Promise<ApprovalRuleRecord | null> {
  const call = await store.getToolCall(approval.toolCallId);
  if (!call) return null;
  const matching = (await store.listApprovalRules(session.appId)).filter((rule) =>
    ruleMatches(rule, session, call, nowMs),
  );
  return matching.find((r) => r.effect === 'DENY') ?? matching[0] ?? null;
}

/** Counts a use of `rule` (same transaction as the decision it made). */
export async function noteRuleUse(
  store: Db,
  rule: ApprovalRuleRecord,
  toolCallId: string,
  at: string,
): Promise<void> {
  await store.putApprovalRule({
    ...rule,
    matchCount: rule.matchCount + 1,
    lastUsedAt: at,
    lastToolCallId: toolCallId,
  });
}

export async function requireRule(store: Db, ruleId: string): Promise<ApprovalRuleRecord> {
  const rule = await store.getApprovalRule(ruleId);
  if (!rule)
    throw new StudioError(ErrorCode.BAD_REQUEST, `No approval rule ${ruleId}.`, {
      field: 'ruleId',
    });
  return rule;
}

/** Revokes a rule (idempotent: a revoked rule stays as it was). */
export async function revokeRule(
  store: Db,
  ruleId: string,
  at: string,
  revokedBy: string | null,
): Promise<ApprovalRuleRecord> {
  const rule = await requireRule(store, ruleId);
  if (rule.status === 'REVOKED') return rule;
  const next: ApprovalRuleRecord = {
    ...rule,
    status: 'REVOKED',
    revokedAt: at,
    revokedBy,
    updatedAt: at,
  };
  await store.putApprovalRule(next);
  return next;
}

export interface UpdateRuleInput {
  ruleId: string;
  name?: string | null;
  expiresAt?: string | null;
  argumentPrefix?: string | null;
  allowDestructive?: boolean | null;
}

/** Edits an ACTIVE rule's name, expiry, prefix or destructive permission. */
export async function updateRule(
  store: Db,
  input: UpdateRuleInput,
  at: string,
): Promise<ApprovalRuleRecord> {
  const rule = await requireRule(store, input.ruleId);
  if (rule.status !== 'ACTIVE') throw bad('A revoked rule cannot be edited.', 'ruleId');
  const next: ApprovalRuleRecord = { ...rule, updatedAt: at };
  if (input.name !== undefined && input.name !== null) {
    const name = input.name.trim();
    if (!name || name.length > MAX_RULE_NAME)
      throw bad(`name must be 1 to ${MAX_RULE_NAME} characters.`, 'name');
    next.name = name;
  }
  if (input.expiresAt !== undefined) {
    if (input.expiresAt && Date.parse(input.expiresAt) <= Date.parse(at))
      throw bad('expiresAt is in the past.', 'expiresAt');
    next.expiresAt = input.expiresAt ?? null;
  }
  if (input.argumentPrefix !== undefined && input.argumentPrefix !== null) {
    if (next.match.kind !== 'ARGUMENT_PREFIX')
      throw bad('Only an ARGUMENT_PREFIX rule has a prefix.', 'argumentPrefix');
    if (!input.argumentPrefix || input.argumentPrefix.length > MAX_PREFIX)
      throw bad(`argumentPrefix must be 1 to ${MAX_PREFIX} characters.`, 'argumentPrefix');
    next.match = { ...next.match, argumentPrefix: input.argumentPrefix };
  }
  if (input.allowDestructive !== undefined && input.allowDestructive !== null) {
    const risk = riskOf(rule.toolName);
    if (rule.effect === 'ALLOW' && risk && GUARDED_RISKS.has(risk) && !input.allowDestructive)
      throw bad(
        `${rule.toolName} is ${risk}: turning allowDestructive off would make this rule match nothing; revoke it instead.`,
        'allowDestructive',
      );
    next.allowDestructive = input.allowDestructive;
  }
  await store.putApprovalRule(next);
  return next;
}
