import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { BootProblemPage } from './BootProblemPage.tsx';

describe('BootProblemPage', () => {
  it('explains how to get the address with the token when this tab has none', () => {
    render(<BootProblemPage problem={{ kind: 'missingToken' }} onRetry={() => undefined} />);
    expect(screen.getByRole('heading', { name: 'This tab has no access token' })).toBeTruthy();
    expect(screen.getByText('npm start')).toBeTruthy();
    expect(
      screen.getByText(/Agent Studio listening on http:\/\/127\.0\.0\.1:4000\/#token=/),
    ).toBeTruthy();
  });

  it('says the token was not accepted, not that it is missing', () => {
    render(<BootProblemPage problem={{ kind: 'rejectedToken' }} onRetry={() => undefined} />);
    expect(
      screen.getByRole('heading', { name: "The server did not accept this tab's token" }),
    ).toBeTruthy();
  });

  it('offers to try again when the server does not answer', () => {
    const onRetry = vi.fn();
    render(
      <BootProblemPage
        problem={{ kind: 'unreachable', endpoint: 'http://x/graphql', detail: 'Failed to fetch' }}
        onRetry={onRetry}
      />,
    );
    expect(screen.getByText(/Failed to fetch/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(onRetry).toHaveBeenCalledTimes(1);
  });
});
