/**
 * Claude Code's permission suggestions (canUseTool's `suggestions`, the SDK's `PermissionUpdate`s)
 * in the studio's rule terms, so the card's "Always allow…" / "Always deny…" editor starts from
 * what Claude Code itself would have saved. The studio never applies them to Claude Code's own
 * settings (no setting sources are loaded); a person saves a studio rule from them, or not.
 *
 * - `addRules` with behavior allow / deny, one suggestion per rule value: no `ruleContent` is any
 *   call of the tool; content with a trailing wildcard is a prefix rule (see `prefixRule`);
 *   content without one (one exact command) suggests nothing, as a prefix would widen it.
 * - `setMode` `acceptEdits` (what Claude Code offers for Write / Edit): any call of this tool in
 *   this session.
 * - Destination: `session` / `cliArg` → this session; `localSettings` / `projectSettings` → this
 *   project; `userSettings` → every Claude Code session (the source).
 * Anything else (`ask` rules, other modes, directories) suggests nothing.
 */
import { join } from 'node:path';
import type { PermissionUpdate } from '@anthropic-ai/claude-agent-sdk';
import type { RuleSuggestionValue } from '../../engine/eventDrafts.ts';
import { truncateText } from '../redact.ts';

const MAX_SUGGESTIONS = 8;

const SCOPE: Record<PermissionUpdate['destination'], RuleSuggestionValue['scope']> = {
  session: 'SESSION',
  cliArg: 'SESSION',
  localSettings: 'PROJECT',
  projectSettings: 'PROJECT',
  userSettings: 'SOURCE',
};

const WHERE: Record<PermissionUpdate['destination'], string> = {
  session: 'for this session',
  cliArg: 'for this session',
  localSettings: 'in local settings',
  projectSettings: 'in project settings',
  userSettings: 'in user settings',
};

const PATH_ARGUMENTS = ['file_path', 'path', 'notebook_path'];

/**
 * A rule content with a trailing wildcard as a prefix rule: `npm run *` → `command` starts with
 * `npm run `, `npm run:*` → `npm run`; a path pattern `src/**` → the tool's path argument starts
 * with `<root>/src/` (`//abs/**` is absolute). Content without a wildcard is one exact command or
 * path, which a prefix would widen: no suggestion.
 */
function prefixRule(
  toolName: string,
  content: string,
  input: Record<string, unknown>,
  root: string,
): Pick<RuleSuggestionValue, 'match' | 'argumentName' | 'argumentPrefix'> | null {
  const wildcard = /(?::\*|\*+)$/.exec(content);
  if (!wildcard) return null;
  const stem = content.slice(0, wildcard.index);
  if (!stem.trim()) return null;
  if (toolName === 'Bash' || typeof input.command === 'string')
    return { match: 'ARGUMENT_PREFIX', argumentName: 'command', argumentPrefix: stem };
  const argumentName = PATH_ARGUMENTS.find((name) => typeof input[name] === 'string');
  if (!argumentName) return null;
  const absolute = stem.startsWith('//') ? stem.slice(1) : join(root, stem.replace(/^\.?\//, ''));
  return { match: 'ARGUMENT_PREFIX', argumentName, argumentPrefix: absolute };
}

/** The suggestions of one ask, for a session whose folder is `root`. */
export function ruleSuggestionsOf(
  root: string,
  toolName: string,
  input: Record<string, unknown>,
  suggestions: readonly PermissionUpdate[] | undefined,
): RuleSuggestionValue[] {
  const out: RuleSuggestionValue[] = [];
  for (const update of suggestions ?? []) {
    const scope = SCOPE[update.destination];
    if (!scope) continue;
    if (update.type === 'addRules') {
      if (update.behavior !== 'allow' && update.behavior !== 'deny') continue;
      for (const rule of update.rules) {
        const content = rule.ruleContent?.trim() ?? '';
        const match = content
          ? prefixRule(rule.toolName, content, input, root)
          : { match: 'ANY' as const, argumentName: null, argumentPrefix: null };
        if (!match) continue;
        out.push({
          effect: update.behavior === 'allow' ? 'ALLOW' : 'DENY',
          toolName: rule.toolName,
          ...match,
          scope,
          label: truncateText(
            `${update.behavior === 'allow' ? 'Allow' : 'Deny'} ${rule.toolName}${content ? `(${content})` : ''} ${WHERE[update.destination]}`,
            200,
          ),
        });
      }
    } else if (update.type === 'setMode' && update.mode === 'acceptEdits') {
      out.push({
        effect: 'ALLOW',
        toolName,
        match: 'ANY',
        argumentName: null,
        argumentPrefix: null,
        scope,
        label: `Accept edits ${WHERE[update.destination]} (Claude Code's acceptEdits mode)`,
      });
    }
  }
  return out.slice(0, MAX_SUGGESTIONS);
}
