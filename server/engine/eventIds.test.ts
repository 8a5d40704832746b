import { describe, expect, it } from 'vitest';
import { newEventId } from './eventIds.ts';

describe('newEventId', () => {
  it('gives distinct version-7 UUIDs whose order follows the clock across the random pool', async () => {
    const first = Array.from({ length: 600 }, () => newEventId());
    // More ids than one fill of the pool (256), so a refill is crossed.
    expect(new Set(first).size).toBe(600);
    for (const id of first)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const before = Date.now();
    while (Date.now() === before) await new Promise((resolve) => setImmediate(resolve));
    const later = newEventId();
    // The first 48 bits are the milliseconds: an id of a later ms sorts after every earlier one.
    for (const id of first) expect(later > id).toBe(true);
  });
});
