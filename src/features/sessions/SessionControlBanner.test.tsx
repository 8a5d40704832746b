import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Provider } from 'urql';
import { describe, expect, it } from 'vitest';
import { makeFakeStudio } from '../../test/fakeStudio.ts';
import { attachHandlers } from '../../test/studioFixtures.ts';
import { SessionControlBanner } from './SessionControlBanner.tsx';

describe('SessionControlBanner', () => {
  it('lets a watching tab take control on purpose, and then says it is in control', async () => {
    const user = userEvent.setup();
    const studio = makeFakeStudio(attachHandlers());
    render(
      <Provider value={studio.client}>
        <SessionControlBanner sessionId="session-banner" />
      </Provider>,
    );
    expect(screen.getByText(/Nobody controls this session now/)).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Take control' }));
    expect(await screen.findByText(/This tab controls the session/)).toBeTruthy();
    expect(studio.calls.filter((c) => c.field === 'crowdyStudioAgentAttachClient')).toHaveLength(1);
  });
});
