/**
 * A bridge burst must not starve the server: the real server follows a fake Leviath gateway that
 * sends 10,000 frames at once, and /healthz requests sent meanwhile are answered before the last
 * frame is stored (before slices with group commit, none was: frames applied in one long promise
 * chain). Speed is measured in `npm run bench:ingest`, not here.
 */
import { describe, expect, it } from 'vitest';
import { runLeviathBurst } from '../../bench/leviathBurst.ts';

describe('bridge ingest under a burst', () => {
  it('answers /healthz while a Leviath bridge ingests 10,000 frames, and stores every frame', async () => {
    const result = await runLeviathBurst({ frames: 10_000 });
    expect(result.events).toBeGreaterThanOrEqual(10_000);
    const midIngest = result.probes.filter((p) => p.eventsAtAnswer < result.events);
    expect(midIngest.length).toBeGreaterThan(0);
  }, 120_000);
});
