import { describe, expect, it } from 'vitest';
import { ruleMatches } from './approvalRules.ts';
import type { ApprovalRuleRecord, SessionRecord, ToolCallRecord } from '../store/records.ts';

const session = {
  sessionId: 'ses_1',
  appId: '1',
  source: 'demo',
  projectId: 'p1',
} as SessionRecord;

function call(toolName: string, args: unknown): ToolCallRecord {
  return {
    toolCallId: 'tc_1',
    sessionId: 'ses_1',
    toolName,
    argumentsJson: JSON.stringify(args),
  } as ToolCallRecord;
}

function rule(patch: Partial<ApprovalRuleRecord>): ApprovalRuleRecord {
  return {
    ruleId: 'r',
    appId: '1',
    name: 'r',
    effect: 'ALLOW',
    toolName: 'Bash',
    match: { kind: 'ARGUMENT_PREFIX', argumentName: 'command', argumentPrefix: 'npm test' },
    scope: { kind: 'STUDIO' },
    allowDestructive: false,
    expiresAt: null,
    status: 'ACTIVE',
    createdAt: '',
    createdBy: null,
    updatedAt: '',
    revokedAt: null,
    revokedBy: null,
    matchCount: 0,
    lastUsedAt: null,
    lastToolCallId: null,
    ...patch,
  };
}

describe('ruleMatches', () => {
  it('matches a command prefix and nothing else', () => {
    expect(ruleMatches(rule({}), session, call('Bash', { command: 'npm test -- x' }), 0)).toBe(
      true,
    );
    expect(ruleMatches(rule({}), session, call('Bash', { command: 'rm -rf /' }), 0)).toBe(false);
    expect(ruleMatches(rule({}), session, call('Other', { command: 'npm test' }), 0)).toBe(false);
  });

  it('does not let a path prefix be escaped with .. segments, and needs every listed path to match', () => {
    const paths = rule({
      toolName: 'Write',
      match: { kind: 'ARGUMENT_PREFIX', argumentName: 'paths', argumentPrefix: 'tmp/' },
    });
    expect(ruleMatches(paths, session, call('Write', { paths: ['tmp/a', 'tmp/b'] }), 0)).toBe(true);
    expect(ruleMatches(paths, session, call('Write', { paths: ['tmp/../etc/passwd'] }), 0)).toBe(
      false,
    );
    expect(ruleMatches(paths, session, call('Write', { paths: ['tmp/a', 'src/b'] }), 0)).toBe(
      false,
    );
    expect(ruleMatches(paths, session, call('Write', { paths: [] }), 0)).toBe(false);
  });

  it('never lets an ALLOW rule match a DESTRUCTIVE tool without allowDestructive', () => {
    const del = rule({ toolName: 'workspace.file.delete', match: { kind: 'ANY' } });
    expect(ruleMatches(del, session, call('workspace.file.delete', { paths: ['x'] }), 0)).toBe(
      false,
    );
    expect(
      ruleMatches(
        { ...del, allowDestructive: true },
        session,
        call('workspace.file.delete', {}),
        0,
      ),
    ).toBe(true);
    expect(
      ruleMatches({ ...del, effect: 'DENY' }, session, call('workspace.file.delete', {}), 0),
    ).toBe(true);
  });

  it('honours scope, status and expiry', () => {
    const any = rule({ match: { kind: 'ANY' } });
    const c = call('Bash', { command: 'ls' });
    expect(
      ruleMatches({ ...any, scope: { kind: 'SESSION', sessionId: 'other' } }, session, c, 0),
    ).toBe(false);
    expect(
      ruleMatches({ ...any, scope: { kind: 'PROJECT', projectId: 'p1' } }, session, c, 0),
    ).toBe(true);
    expect(
      ruleMatches({ ...any, scope: { kind: 'SOURCE', sourceId: 'leviath' } }, session, c, 0),
    ).toBe(false);
    expect(ruleMatches({ ...any, status: 'REVOKED' }, session, c, 0)).toBe(false);
    const at = Date.parse('2026-01-01T00:00:00Z');
    expect(ruleMatches({ ...any, expiresAt: '2026-01-01T00:00:00Z' }, session, c, at)).toBe(false);
    expect(ruleMatches({ ...any, expiresAt: '2026-01-01T00:00:00Z' }, session, c, at - 1)).toBe(
      true,
    );
  });
});
