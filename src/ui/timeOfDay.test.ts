import { describe, expect, it } from 'vitest';
import { timeOfDay } from './timeOfDay.ts';

describe('timeOfDay', () => {
  it('formats midnight with a 00 hour, never 24', () => {
    const midnight = new Date(2026, 10, 30, 0, 5, 9).toISOString();
    expect(timeOfDay(midnight)).toMatch(/^00\D05\D09$/);
  });

  it('returns text that is not a time as it is', () => {
    expect(timeOfDay('not a time')).toBe('not a time');
  });
});
