import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Provider } from 'urql';
import { describe, expect, it } from 'vitest';
import { makeFakeStudio } from '../../test/fakeStudio.ts';
import { SessionSearch } from './SessionSearch.tsx';

function page(after: unknown) {
  if (after === null || after === undefined)
    return {
      sessionId: 's-1',
      query: 'deploy',
      endCursor: '40',
      hasNextPage: true,
      hits: [
        {
          seq: '812',
          type: 'STUDIO_LOG',
          snippet: [
            { text: 'warn\nThe ', match: false },
            { text: 'deploy', match: true },
            { text: ' failed <b>now</b>', match: false },
          ],
        },
      ],
    };
  return {
    sessionId: 's-1',
    query: 'deploy',
    endCursor: '3',
    hasNextPage: false,
    hits: [{ seq: '7', type: 'MESSAGE', snippet: [{ text: 'deploy', match: true }] }],
  };
}

describe('SessionSearch', () => {
  it('asks the server, marks the matches as text, links each to its event and pages on', async () => {
    const user = userEvent.setup();
    const studio = makeFakeStudio({ studioSearchEvents: (args) => page(args.after) });
    render(
      <Provider value={studio.client}>
        <SessionSearch sessionId="s-1" eventHref={(seq) => `/sessions/s-1/events/${seq}`} />
      </Provider>,
    );
    await user.type(screen.getByRole('searchbox', { name: 'Search the whole session' }), 'deploy');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    const results = await screen.findByRole('region', { name: 'Matches for deploy' });
    const link = await within(results).findByRole('link', { name: /#812/ });
    expect(link.getAttribute('href')).toBe('/sessions/s-1/events/812');
    expect(link.querySelector('mark')?.textContent).toBe('deploy');
    // Server text is text: the tag shows as characters, no element is made of it.
    expect(link.textContent).toContain('failed <b>now</b>');
    expect(link.querySelector('b')).toBeNull();
    expect(studio.calls.find((c) => c.field === 'studioSearchEvents')?.args).toEqual({
      sessionId: 's-1',
      query: 'deploy',
      first: 20,
      after: null,
    });

    await user.click(within(results).getByRole('button', { name: 'Older matches' }));
    expect(await within(results).findByRole('link', { name: /#7/ })).toBeTruthy();
    expect(within(results).queryByRole('button', { name: 'Older matches' })).toBeNull();

    await user.keyboard('{Escape}');
    expect(screen.queryByRole('region', { name: 'Matches for deploy' })).toBeNull();
    expect(document.activeElement).toBe(
      screen.getByRole('searchbox', { name: 'Search the whole session' }),
    );
  });
});
