/** Words for the rule vocabulary (Record<…>: a new enum value is a compile error here). */
export type RuleMatch = 'EXACT_ARGUMENTS' | 'ARGUMENT_PREFIX' | 'ANY';
export type RuleScope = 'SESSION' | 'PROJECT' | 'SOURCE' | 'STUDIO';
export type RuleEffect = 'ALLOW' | 'DENY';

export const MATCH_LABEL: Record<RuleMatch, string> = {
  EXACT_ARGUMENTS: 'these exact arguments',
  ARGUMENT_PREFIX: 'an argument prefix',
  ANY: 'any call of this tool',
};

export const SCOPE_LABEL: Record<RuleScope, string> = {
  SESSION: 'this session',
  PROJECT: 'this project',
  SOURCE: 'this source',
  STUDIO: 'the whole studio',
};

export const EFFECT_LABEL: Record<RuleEffect, string> = {
  ALLOW: 'Always allow',
  DENY: 'Always deny',
};

/** Risk classes a rule may allow only when the editor's warning was accepted. */
export const GUARDED_RISKS: ReadonlySet<string> = new Set([
  'DESTRUCTIVE',
  'IRREVERSIBLE',
  'ECONOMIC',
  'TRUST_CONSENT',
]);

/** The argument a prefix rule would look at, and a suggested prefix, from a call's arguments. */
export function suggestPrefix(
  argumentsJson: string | null,
): { name: string; prefix: string } | null {
  if (!argumentsJson) return null;
  let args: Record<string, unknown>;
  try {
    args = JSON.parse(argumentsJson) as Record<string, unknown>;
  } catch {
    return null;
  }
  for (const name of ['path', 'paths', 'file_path', 'command', 'cmd', 'url', 'pattern']) {
    const value = args[name];
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first !== 'string' || !first) continue;
    if (name === 'command' || name === 'cmd') {
      const word = first.trim().split(/\s+/).slice(0, 2).join(' ');
      return { name, prefix: word };
    }
    const slash = first.lastIndexOf('/');
    return { name, prefix: slash > 0 ? first.slice(0, slash + 1) : first };
  }
  return null;
}
