import { act, render, screen } from '@testing-library/react';
import { Suspense } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AfterFirstContent, firstContentShown, waitForFirstContent } from './firstContent.ts';
import { preloadable } from './lazyRoutes.tsx';

afterEach(() => {
  firstContentShown();
  vi.useRealTimers();
});

function Shell() {
  return (
    <div>
      <p>timeline</p>
      <AfterFirstContent>
        <p>sidebar</p>
      </AfterFirstContent>
    </div>
  );
}

describe('AfterFirstContent', () => {
  it('renders at once when nothing waits (every address but a session)', () => {
    render(<Shell />);
    expect(screen.getByText('sidebar')).toBeTruthy();
  });

  it("holds the shell's other parts until the route's content is shown", () => {
    waitForFirstContent();
    render(<Shell />);
    expect(screen.getByText('timeline')).toBeTruthy();
    expect(screen.queryByText('sidebar')).toBeNull();
    act(() => firstContentShown());
    expect(screen.getByText('sidebar')).toBeTruthy();
  });

  it('waits no longer than its limit', () => {
    vi.useFakeTimers();
    waitForFirstContent(500);
    render(<Shell />);
    act(() => vi.advanceTimersByTime(499));
    expect(screen.queryByText('sidebar')).toBeNull();
    act(() => vi.advanceTimersByTime(1));
    expect(screen.getByText('sidebar')).toBeTruthy();
  });
});

describe('preloadable', () => {
  const Screen = ({ name }: { name: string }) => <p>screen {name}</p>;

  it('renders a preloaded screen without suspending', async () => {
    const Lazy = preloadable(async () => Screen);
    await Lazy.preload();
    render(
      <Suspense fallback={<p>loading</p>}>
        <Lazy name="a" />
      </Suspense>,
    );
    // Synchronously there: no fallback, so no Suspense reveal to throttle.
    expect(screen.getByText('screen a')).toBeTruthy();
    expect(screen.queryByText('loading')).toBeNull();
  });

  it('suspends until a screen not loaded yet is in, and loads it once', async () => {
    const load = vi.fn(async () => Screen);
    const Lazy = preloadable(load);
    render(
      <Suspense fallback={<p>loading</p>}>
        <Lazy name="b" />
      </Suspense>,
    );
    expect(screen.getByText('loading')).toBeTruthy();
    expect(await screen.findByText('screen b')).toBeTruthy();
    await Lazy.preload();
    expect(load).toHaveBeenCalledTimes(1);
  });
});
