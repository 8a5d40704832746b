import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { BootProblemPage } from './BootProblemPage.tsx';

describe('BootProblemPage', () => {
  it('explains how to get the address with the token when this tab has none', () => {
    render(
      <BootProblemPage
        problem={{ kind: 'missingToken' }}
        onRetry={() => undefined}
        onToken={() => undefined}
      />,
    );
    expect(screen.getByRole('heading', { name: 'This tab has no access token' })).toBeTruthy();
    expect(screen.getByText('npm start')).toBeTruthy();
    expect(
      screen.getByText(/Agent Studio listening on http:\/\/127\.0\.0\.1:4000\/#token=/),
    ).toBeTruthy();
  });

  it('says the token was not accepted, not that it is missing', () => {
    render(
      <BootProblemPage
        problem={{ kind: 'rejectedToken' }}
        onRetry={() => undefined}
        onToken={() => undefined}
      />,
    );
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
        onToken={() => undefined}
      />,
    );
    expect(screen.getByText(/Failed to fetch/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
    expect(onRetry).toHaveBeenCalledTimes(1);
  });

  it('takes a pasted address or token, and explains a paste that holds neither', () => {
    const onToken = vi.fn();
    render(
      <BootProblemPage
        problem={{ kind: 'missingToken' }}
        onRetry={() => undefined}
        onToken={onToken}
      />,
    );
    const field = screen.getByLabelText('The printed address or the access token');
    fireEvent.change(field, { target: { value: 'http://127.0.0.1:4000/' } });
    fireEvent.click(screen.getByRole('button', { name: 'Open the studio' }));
    expect(screen.getByRole('alert').textContent).toMatch(/neither the printed address/);
    expect(onToken).not.toHaveBeenCalled();

    fireEvent.change(field, { target: { value: 'http://127.0.0.1:4000/#token=tok-1' } });
    fireEvent.click(screen.getByRole('button', { name: 'Open the studio' }));
    expect(onToken).toHaveBeenCalledWith('tok-1');
    expect(screen.queryByRole('alert')).toBeNull();
  });
});
