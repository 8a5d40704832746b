/**
 * Source leases on a real PostgreSQL: three instances compete for one source; exactly one runs
 * it; when its heartbeat stops (as a killed process's does) another takes it after the TTL; a
 * graceful stop hands it over at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PgStore } from '../../../server/store/postgres/PgStore.ts';
import { SourceLeases } from '../../../server/store/postgres/SourceLeases.ts';
import { freshDatabase } from '../../support/postgresDatabase.ts';
import type { TestDatabase } from '../../support/postgresDatabase.ts';

interface Instance {
  name: string;
  store: PgStore;
  leases: SourceLeases;
  running: Set<string>;
}

describe('SourceLeases', () => {
  let db: TestDatabase | null = null;
  const instances: Instance[] = [];
  let onChange: (() => void)[] = [];
  const changed = () => {
    for (const f of onChange.splice(0)) f();
  };
  /** Resolves when `check` holds after some instance acquired or lost a source. */
  const until = (check: () => boolean) =>
    new Promise<void>((resolve) => {
      const test = () => (check() ? resolve() : onChange.push(test));
      test();
    });

  afterEach(async () => {
    for (const i of instances.splice(0)) {
      await i.leases.stop();
      await i.store.close();
    }
    onChange = [];
    await db?.drop();
    db = null;
  });

  const start = async (n: number) => {
    db = await freshDatabase();
    for (let k = 0; k < n; k++) {
      const store = new PgStore({ url: db.url });
      await store.migrate();
      const running = new Set<string>();
      const name = `instance-${k}`;
      const leases = new SourceLeases(store, {
        holder: name,
        ttlMs: 800,
        renewMs: 200,
        onAcquired: (id) => {
          running.add(id);
          changed();
        },
        onLost: (id) => {
          running.delete(id);
          changed();
        },
      });
      instances.push({ name, store, leases, running });
    }
    await Promise.all(instances.map((i) => i.leases.want('demo')));
    return instances;
  };
  const runners = () => instances.filter((i) => i.running.has('demo'));

  it('runs a source on exactly one of three instances, and moves it when its holder stops beating', async () => {
    await start(3);
    expect(runners()).toHaveLength(1);
    const first = runners()[0]!;
    expect(await first.leases.holderOf('demo')).toBe(first.name);
    // Heartbeats go on for a while: still exactly one runner.
    for (let k = 0; k < 5; k++) await Promise.all(instances.map((i) => i.leases.heartbeat()));
    expect(runners()).toEqual([first]);

    first.leases.freeze();
    const frozeAt = Date.now();
    await until(() => runners().some((i) => i !== first));
    const moved = Date.now() - frozeAt;
    const others = runners().filter((i) => i !== first);
    expect(others).toHaveLength(1);
    expect(await others[0]!.leases.holderOf('demo')).toBe(others[0]!.name);
    expect(moved).toBeLessThan(800 + 200 * 3);
  });

  it('keeps renewing while a source starts for longer than the TTL, so the holder keeps its lease', async () => {
    db = await freshDatabase();
    const store = new PgStore({ url: db.url });
    await store.migrate();
    const log: string[] = [];
    let release: () => void = () => undefined;
    const startedSlowly = new Promise<void>((resolve) => (release = resolve));
    const leases = new SourceLeases(store, {
      holder: 'slow',
      ttlMs: 400,
      renewMs: 100,
      onAcquired: async (id, generation) => {
        log.push(`acquired:${id}:${generation}`);
        await startedSlowly;
        log.push(`started:${id}`);
      },
      onLost: (id) => {
        log.push(`lost:${id}`);
      },
    });
    instances.push({ name: 'slow', store, leases, running: new Set() });
    let wanted = false;
    const want = leases.want('demo').then(() => (wanted = true));
    // Four TTLs pass while the source is still starting: the row stays this instance's, renewed
    // (a heartbeat that waited for the start would have let it expire and taken it back anew).
    for (let k = 0; k < 4; k++) {
      await leases.heartbeat();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await leases.holderOf('demo')).toBe('slow');
    }
    expect(wanted).toBe(false);
    release();
    await want;
    expect(leases.holds('demo')).toBe(true);
    expect(log).toEqual(['acquired:demo:1', 'started:demo']);
  });

  it('hands a source over at once when its holder stops gracefully', async () => {
    await start(2);
    const first = runners()[0]!;
    const other = instances.find((i) => i !== first)!;
    await first.leases.stop();
    expect(first.running.has('demo')).toBe(false);
    expect(await first.leases.holderOf('demo')).toBeNull();
    await other.leases.heartbeat();
    expect(other.running.has('demo')).toBe(true);
  });
});
