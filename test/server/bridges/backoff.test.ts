/** The bridges' reconnect backoff: full jitter over a doubling cap, bounded both ways. */
import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF } from '../../../server/sources/bridgeSupport.ts';

/** A seeded random source (mulberry32), so a test's draws are the same every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('backoffDelay', () => {
  const options = { initialMs: 500, maxMs: 10_000 };

  it('draws from [initialMs / 4, cap]: the lowest and highest draws give the bounds', () => {
    expect(backoffDelay(0, options, () => 0)).toBe(125);
    expect(backoffDelay(0, options, () => 1)).toBe(500);
    expect(backoffDelay(3, options, () => 0)).toBe(125);
    expect(backoffDelay(3, options, () => 1)).toBe(4_000);
    expect(backoffDelay(3, options, () => 0.5)).toBe(Math.round(125 + 0.5 * (4_000 - 125)));
  });

  it('never waits longer than maxMs, however many attempts failed', () => {
    for (const attempt of [5, 6, 10, 40, 1_000])
      expect(backoffDelay(attempt, options, () => 1)).toBe(10_000);
  });

  it('keeps a random source outside [0, 1) inside the bounds', () => {
    expect(backoffDelay(2, options, () => -3)).toBe(125);
    expect(backoffDelay(2, options, () => 7)).toBe(2_000);
    expect(backoffDelay(2, options, () => Number.NaN)).toBe(125);
  });

  it('honours minMs, and a cap below it', () => {
    expect(backoffDelay(0, { initialMs: 100, maxMs: 1_000, minMs: 50 }, () => 0)).toBe(50);
    expect(backoffDelay(0, { initialMs: 100, maxMs: 30, minMs: 50 }, () => 0)).toBe(30);
  });

  it('spreads many reconnects over the window instead of lockstep', () => {
    const random = seeded(42);
    const delays = Array.from({ length: 1_000 }, () => backoffDelay(4, DEFAULT_BACKOFF, random));
    // Attempt 4: cap 8,000 ms. Every delay inside the bounds, and spread across them.
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(125);
    expect(Math.max(...delays)).toBeLessThanOrEqual(8_000);
    expect(new Set(delays).size).toBeGreaterThan(900);
    const mean = delays.reduce((a, b) => a + b, 0) / delays.length;
    expect(mean).toBeGreaterThan(3_500);
    expect(mean).toBeLessThan(4_600);
  });
});
