/**
 * Several real studio servers (the compiled build/server.js, as `npm start` runs it) on one
 * PostgreSQL database and one shared data dir (checkpoint content and project folders), each its
 * own process on its own port: what a team runs behind a load balancer. Clients are the server
 * suite's real urql + graphql-ws clients pointed at one instance or another.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startStudio } from '../e2e/harness.ts';
import type { RunningStudio } from '../e2e/harness.ts';
import { makeClient } from '../server/harness.ts';
import type { Harness, StudioClient } from '../server/harness.ts';
import { freshDatabase } from '../support/postgresDatabase.ts';
import type { TestDatabase } from '../support/postgresDatabase.ts';

export interface Instance {
  name: string;
  studio: RunningStudio;
  /** What makeClient needs of a harness, for this instance. */
  target: Harness;
}

export interface Cluster {
  db: TestDatabase;
  dataDir: string;
  token: string;
  instances: Instance[];
  /** A client of one instance (disposed with the cluster). */
  client(instance: Instance): StudioClient;
  /** The instance whose process holds the lease of `sourceId` now (null: none holds it). */
  holderOf(sourceId: string): Promise<Instance | null>;
  /** Starts one more instance on the same database and data dir. */
  add(): Promise<Instance>;
  stop(): Promise<void>;
}

export async function startCluster(n: number): Promise<Cluster> {
  const db = await freshDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'studio-multi-'));
  const token = `multi-${Math.random().toString(36).slice(2)}`;
  const disposers: (() => void | Promise<void>)[] = [];
  const instances: Instance[] = [];
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();

  const add = async (): Promise<Instance> => {
    const studio = await startStudio({
      dataDir,
      token,
      env: { STUDIO_DATABASE_URL: db.url },
    });
    const url = new URL(studio.url);
    const target = {
      httpUrl: `${studio.url}/graphql`,
      wsUrl: `ws://${url.host}/graphql`,
      token,
      dataDir,
      track: (d: () => void | Promise<void>) => disposers.push(d),
    } as unknown as Harness;
    const instance = { name: `instance-${instances.length}`, studio, target };
    instances.push(instance);
    return instance;
  };
  // One after another: the first seeds the demo, as the first server of a deployment would.
  for (let k = 0; k < n; k++) await add();

  return {
    db,
    dataDir,
    token,
    instances,
    client: (instance) => makeClient(instance.target),
    holderOf: async (sourceId) => {
      const { rows } = await admin.query<{ holder: string }>(
        `SELECT holder FROM source_leases
         WHERE source_id = $1 AND expires_at_ms > (extract(epoch from clock_timestamp()) * 1000)::bigint`,
        [sourceId],
      );
      const pid = rows[0] ? Number(rows[0].holder.split(':').at(-2)) : null;
      return instances.find((i) => i.studio.process.pid === pid) ?? null;
    },
    add,
    stop: async () => {
      for (const d of disposers.splice(0).reverse()) await d();
      await Promise.all(
        instances
          .filter((i) => i.studio.process.exitCode === null && i.studio.process.signalCode === null)
          .map((i) => i.studio.stop()),
      );
      await admin.end();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Kills an instance's process with SIGKILL (no shutdown code runs) and waits for it to exit. */
export async function killHard(instance: Instance): Promise<void> {
  const child = instance.studio.process;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
