import { act, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeConnectionStore, type ConnectionStore } from '../../graphql/connectionStore.ts';
import {
  makeFakeStudioHttp,
  makeTestQueryClient,
  TEST_TOKEN,
  TestProviders,
  type FakeStudioHttp,
} from '../../test/fakeStudioHttp.tsx';
import { makeTestClient } from '../../test/testClient.ts';
import { ConnectionBadge } from './ConnectionBadge.tsx';
import { HEALTH_REFETCH_MS } from './useServerHealth.ts';

function renderBadge(store: ConnectionStore, http: FakeStudioHttp = makeFakeStudioHttp()) {
  render(
    <TestProviders
      client={makeTestClient().client}
      http={http.http}
      queryClient={makeTestQueryClient()}
    >
      <ConnectionBadge store={store} />
    </TestProviders>,
  );
  return http;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('ConnectionBadge', () => {
  it('shows the live state and what still works when the link drops', () => {
    const store = makeConnectionStore();
    renderBadge(store);
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

  it('shows the server version and each source’s state from /healthz', async () => {
    const user = userEvent.setup();
    const http = makeFakeStudioHttp();
    http.health.current = {
      ok: true,
      contract: 'crowdy.studio-agent/1',
      version: '0.1.0',
      sources: [
        { sourceId: 'demo', kind: 'demo', status: 'LIVE', detail: null },
        { sourceId: 'leviath', kind: 'leviath', status: 'FAILED', detail: 'connect ECONNREFUSED' },
      ],
    };
    renderBadge(makeConnectionStore('live'), http);
    const toggle = await screen.findByText(/^Server/, { selector: 'summary' });
    await vi.waitFor(() => expect(toggle.textContent).toContain('0.1.0'));
    expect(toggle.getAttribute('title')).toBe(
      'Server 0.1.0, contract crowdy.studio-agent/1. Sources: demo LIVE; leviath FAILED (connect ECONNREFUSED)',
    );
    expect(toggle.textContent).toContain('1 of 2 sources not live');
    await user.click(toggle);
    const sources = screen.getByRole('list', { name: 'Agent sources' });
    const rows = within(sources).getAllByRole('listitem');
    expect(rows.map((row) => row.textContent)).toEqual([
      'demoLIVE',
      'leviathFAILEDconnect ECONNREFUSED',
    ]);
    expect(screen.getByText('Server version').nextElementSibling?.textContent).toBe('0.1.0');
    // The token goes in the header, never in the URL, and to the endpoint's origin.
    expect(http.requests[0]).toEqual({
      url: 'http://studio.test/healthz',
      authorization: `Bearer ${TEST_TOKEN}`,
    });
    // The connection state keeps its own live region and texts.
    expect(screen.getByRole('status').textContent).toMatch(/^Live/);
    await user.keyboard('{Escape}');
    expect(toggle.closest('details')?.open).toBe(false);
  });

  it('reads /healthz again every 15 seconds and shows the new source states', async () => {
    vi.useFakeTimers();
    const http = makeFakeStudioHttp();
    renderBadge(makeConnectionStore('live'), http);
    await act(() => vi.advanceTimersByTimeAsync(50));
    expect(http.requests).toHaveLength(1);
    expect(screen.getByRole('listitem').textContent).toBe('demoLIVE');

    http.health.current = {
      ...http.health.current,
      sources: [{ sourceId: 'demo', kind: 'demo', status: 'RECONNECTING', detail: 'restarting' }],
    };
    await act(() => vi.advanceTimersByTimeAsync(HEALTH_REFETCH_MS - 100));
    expect(http.requests).toHaveLength(1);
    await act(() => vi.advanceTimersByTimeAsync(200));
    expect(http.requests).toHaveLength(2);
    expect(screen.getByRole('listitem').textContent).toBe('demoRECONNECTINGrestarting');
  });

  it('says when the health report cannot be read, without touching the connection texts', async () => {
    const http = makeFakeStudioHttp();
    http.forceStatus.current = 401;
    renderBadge(makeConnectionStore('live'), http);
    expect(
      await screen.findByText('The server did not accept this tab’s token for its health report.'),
    ).toBeTruthy();
    expect(screen.getByText(/^Server/, { selector: 'summary' }).getAttribute('title')).toBe(
      'The server’s health report could not be read',
    );
    expect(screen.getByText('Live')).toBeTruthy();
  });
});
