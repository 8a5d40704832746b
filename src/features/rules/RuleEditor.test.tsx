import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Provider } from 'urql';
import { describe, expect, it } from 'vitest';
import { makeFakeStudio } from '../../test/fakeStudio.ts';
import { RuleActions, type RuleSeedInput } from './RuleEditor.tsx';

const bashSeed: RuleSeedInput = {
  sessionId: 'session-1',
  toolCallId: 'toolu_1',
  toolName: 'Bash',
  argumentsJson: JSON.stringify({ command: 'npm run lint -- --fix', description: 'lint' }),
  risk: null,
  suggestions: [
    {
      effect: 'ALLOW',
      toolName: 'Bash',
      match: 'ARGUMENT_PREFIX',
      argumentName: 'command',
      argumentPrefix: 'npm run ',
      scope: 'PROJECT',
      label: 'Allow Bash(npm run *) in local settings',
    },
  ],
};

function setup(seed: RuleSeedInput) {
  const studio = makeFakeStudio({
    crowdyStudioAgentSession: () => ({
      sessionId: 'session-1',
      projectId: 'project-1',
      studioSource: 'claude-code',
    }),
    studioCreateApprovalRule: (args) => {
      const input = args.input as Record<string, unknown>;
      return {
        ruleId: 'rule-1',
        name: 'Allow Bash',
        effect: input.effect,
        toolName: input.toolName,
        match: input.match,
        argumentsJson: null,
        argumentName: input.argumentName ?? null,
        argumentPrefix: input.argumentPrefix ?? null,
        scope: input.scope,
        sessionId: input.sessionId ?? null,
        projectId: input.projectId ?? null,
        sourceId: null,
        allowDestructive: false,
        expiresAt: null,
        status: 'ACTIVE',
        active: true,
        createdAt: '2026-12-01T13:00:00.000Z',
        createdBy: 'owner',
        updatedAt: '2026-12-01T13:00:00.000Z',
        revokedBy: null,
        matchCount: 0,
        lastUsedAt: null,
        lastToolCallId: null,
      };
    },
  });
  render(
    <Provider value={studio.client}>
      <RuleActions seed={seed} />
    </Provider>,
  );
  return studio;
}

const created = (studio: ReturnType<typeof setup>) =>
  studio.calls.find((c) => c.field === 'studioCreateApprovalRule')?.args.input as
    Record<string, unknown> | undefined;

describe('the rule editor and the source suggestions', () => {
  it("starts from Claude Code's suggestion: its prefix, its scope, and says so", async () => {
    const user = userEvent.setup();
    const studio = setup(bashSeed);
    await user.click(screen.getByRole('button', { name: 'Always allow…' }));
    const form = screen.getByRole('form', { name: /allow rule/i });
    expect(
      await within(form).findByText("Starts from Claude Code's suggestion:", { exact: false }),
    ).toBeTruthy();
    expect(within(form).getByText('Allow Bash(npm run *) in local settings')).toBeTruthy();
    expect((within(form).getByLabelText('Prefix') as HTMLInputElement).value).toBe('npm run ');
    expect(
      (within(form).getByRole('radio', { name: /an argument prefix/i }) as HTMLInputElement)
        .checked,
    ).toBe(true);
    const project = await within(form).findByRole('radio', { name: /project/i });
    expect((project as HTMLInputElement).checked).toBe(true);
    await user.click(within(form).getByRole('button', { name: 'Save rule' }));
    await screen.findByText(/Rule saved/);
    expect(created(studio)).toMatchObject({
      effect: 'ALLOW',
      toolName: 'Bash',
      match: 'ARGUMENT_PREFIX',
      argumentName: 'command',
      argumentPrefix: 'npm run ',
      scope: 'PROJECT',
      projectId: 'project-1',
    });
  });

  it('an allow suggestion does not prefill the deny editor, which starts from the call', async () => {
    const user = userEvent.setup();
    const studio = setup(bashSeed);
    await user.click(screen.getByRole('button', { name: 'Always deny…' }));
    const form = screen.getByRole('form', { name: /deny rule/i });
    expect(within(form).queryByText(/suggestion/)).toBeNull();
    expect((within(form).getByLabelText('Prefix') as HTMLInputElement).value).toBe('npm run');
    expect(
      (within(form).getByRole('radio', { name: /this session/i }) as HTMLInputElement).checked,
    ).toBe(true);
    await user.click(within(form).getByRole('button', { name: 'Save rule' }));
    await screen.findByText(/Rule saved/);
    expect(created(studio)).toMatchObject({
      effect: 'DENY',
      argumentPrefix: 'npm run',
      scope: 'SESSION',
      sessionId: 'session-1',
    });
  });

  it('acceptEdits becomes "any call of this tool in this session"', async () => {
    const user = userEvent.setup();
    const studio = setup({
      ...bashSeed,
      toolName: 'Write',
      argumentsJson: JSON.stringify({ file_path: '/repo/notes.md', content: 'x' }),
      suggestions: [
        {
          effect: 'ALLOW',
          toolName: 'Write',
          match: 'ANY',
          argumentName: null,
          argumentPrefix: null,
          scope: 'SESSION',
          label: "Accept edits for this session (Claude Code's acceptEdits mode)",
        },
      ],
    });
    await user.click(screen.getByRole('button', { name: 'Always allow…' }));
    const form = screen.getByRole('form', { name: /allow rule/i });
    await within(form).findByText(/acceptEdits/);
    await user.click(within(form).getByRole('button', { name: 'Save rule' }));
    await screen.findByText(/Rule saved/);
    expect(created(studio)).toMatchObject({ toolName: 'Write', match: 'ANY', scope: 'SESSION' });
  });
});
