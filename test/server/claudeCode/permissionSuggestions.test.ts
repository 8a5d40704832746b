/** Claude Code's permission suggestions in the studio's rule terms (the SDK's PermissionUpdate shapes). */
import { describe, expect, it } from 'vitest';
import { ruleSuggestionsOf } from '../../../server/sources/claude-code/permissionSuggestions.ts';

describe('ruleSuggestionsOf', () => {
  it('path patterns become a prefix of the path argument under the folder; // is absolute', () => {
    const input = { file_path: '/repo/src/a.ts', old_string: 'a', new_string: 'b' };
    expect(
      ruleSuggestionsOf('/repo', 'Edit', input, [
        {
          type: 'addRules',
          rules: [
            { toolName: 'Edit', ruleContent: 'src/**' },
            { toolName: 'Edit', ruleContent: '//tmp/**' },
          ],
          behavior: 'deny',
          destination: 'userSettings',
        },
      ]),
    ).toMatchObject([
      { effect: 'DENY', argumentName: 'file_path', argumentPrefix: '/repo/src/', scope: 'SOURCE' },
      { effect: 'DENY', argumentName: 'file_path', argumentPrefix: '/tmp/', scope: 'SOURCE' },
    ]);
  });

  it('the older `:*` form, a tool-wide rule, and nothing for ask rules, exact commands or directories', () => {
    const input = { command: 'git status' };
    expect(
      ruleSuggestionsOf('/repo', 'Bash', input, [
        {
          type: 'addRules',
          rules: [
            { toolName: 'Bash', ruleContent: 'git status:*' },
            { toolName: 'Bash', ruleContent: 'git status' },
            { toolName: 'Bash' },
          ],
          behavior: 'allow',
          destination: 'session',
        },
        {
          type: 'addRules',
          rules: [{ toolName: 'Bash' }],
          behavior: 'ask',
          destination: 'session',
        },
        { type: 'addDirectories', directories: ['/tmp'], destination: 'session' },
        { type: 'setMode', mode: 'plan', destination: 'session' },
      ]),
    ).toEqual([
      {
        effect: 'ALLOW',
        toolName: 'Bash',
        match: 'ARGUMENT_PREFIX',
        argumentName: 'command',
        argumentPrefix: 'git status',
        scope: 'SESSION',
        label: 'Allow Bash(git status:*) for this session',
      },
      {
        effect: 'ALLOW',
        toolName: 'Bash',
        match: 'ANY',
        argumentName: null,
        argumentPrefix: null,
        scope: 'SESSION',
        label: 'Allow Bash for this session',
      },
    ]);
    expect(ruleSuggestionsOf('/repo', 'Bash', input, undefined)).toEqual([]);
  });
});
