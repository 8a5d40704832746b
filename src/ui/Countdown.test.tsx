import { act, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Countdown, formatRemaining } from './Countdown.tsx';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
  vi.setSystemTime(new Date('2026-11-30T10:00:00.000Z'));
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Countdown', () => {
  it('counts down every second and says expired at the deadline', () => {
    render(<Countdown to="2026-11-30T10:00:02.000Z" />);
    const timer = screen.getByRole('timer');
    expect(timer.textContent).toBe('0:02');
    expect(timer.getAttribute('aria-label')).toBe('expires in 2 s');
    act(() => {
      vi.advanceTimersByTime(1000);
    });
    expect(timer.textContent).toBe('0:01');
    act(() => {
      vi.advanceTimersByTime(1000);
    });
    expect(timer.textContent).toBe('expired');
  });

  it('says expired at once for a deadline in the past', () => {
    render(<Countdown to="2026-11-30T09:59:00.000Z" />);
    expect(screen.getByRole('timer').textContent).toBe('expired');
  });

  it('formats minutes and hours', () => {
    expect(formatRemaining(65_000)).toBe('1:05');
    expect(formatRemaining(3_723_000)).toBe('1:02:03');
    expect(formatRemaining(1)).toBe('0:01');
  });
});
