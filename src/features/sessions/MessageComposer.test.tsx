import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Provider } from 'urql';
import { afterEach, describe, expect, it } from 'vitest';
import { makeFakeStudio, studioError } from '../../test/fakeStudio.ts';
import { attachHandlers } from '../../test/studioFixtures.ts';
import { MessageComposer } from './SessionHeader.tsx';
import { SessionControlBanner } from './SessionControlBanner.tsx';

afterEach(() => sessionStorage.clear());

describe('MessageComposer', () => {
  it('explains in words a message sent while the run is on, and drops that line once control changes', async () => {
    const user = userEvent.setup();
    const studio = makeFakeStudio({
      ...attachHandlers(),
      crowdyStudioAgentSendMessage: () => {
        throw studioError('AGENT_RUN_ALREADY_ACTIVE', 'run run-1 is active');
      },
    });
    render(
      <Provider value={studio.client}>
        <SessionControlBanner sessionId="session-busy" />
        <MessageComposer sessionId="session-busy" runStatus="WAITING_FOR_APPROVAL" />
      </Provider>,
    );
    expect(screen.getByText(/The agent is on a run \(Waiting for approval\)/)).toBeTruthy();
    await user.type(screen.getByRole('textbox', { name: /Message to the agent/ }), 'next step');
    await user.click(screen.getByRole('button', { name: 'Send' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/Not sent: the agent is still on its current run/);
    expect(alert.textContent).not.toContain('AGENT_RUN_ALREADY_ACTIVE');
    // The typed text is kept for a second try.
    expect((screen.getByRole('textbox') as HTMLTextAreaElement).value).toBe('next step');

    await user.click(screen.getByRole('button', { name: 'Release control' }));
    await screen.findByRole('button', { name: 'Take control' });
    expect(screen.queryByText(/Not sent: the agent is still on its current run/)).toBeNull();
  });
});
