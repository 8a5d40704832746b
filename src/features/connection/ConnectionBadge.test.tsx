import { act, render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { makeConnectionStore } from '../../graphql/connectionStore.ts';
import { ConnectionBadge } from './ConnectionBadge.tsx';

describe('ConnectionBadge', () => {
  it('shows the live state and what still works when the link drops', () => {
    const store = makeConnectionStore();
    render(<ConnectionBadge store={store} />);
    expect(screen.getByRole('status').textContent).toContain('Connecting');
    act(() => store.set({ status: 'live' }));
    expect(screen.getByRole('status').textContent).toContain('Live');
    act(() => store.set({ status: 'reconnecting', detail: 'Socket closed (1006)' }));
    expect(screen.getByRole('status').textContent).toMatch(
      /Reconnecting.*read everything already loaded/,
    );
    act(() => store.set({ status: 'offline' }));
    expect(screen.getByRole('status').textContent).toMatch(/Offline.*never queued/);
  });
});
