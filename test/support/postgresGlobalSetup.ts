/**
 * Vitest globalSetup: one real PostgreSQL cluster for the whole run (see postgres.ts), stopped and
 * removed at the end. Test files get a fresh database each through `freshDatabase()`
 * (postgresDatabase.ts), so files running in parallel never see each other's rows.
 */
import type { TestProject } from 'vitest/node';
import { startPostgres } from './postgres.ts';
import type { PostgresCluster } from './postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The cluster's maintenance-database URL (carries the test password; never log it). */
    postgresAdminUrl: string;
  }
}

let cluster: PostgresCluster | null = null;

export async function setup(project: TestProject): Promise<void> {
  cluster = await startPostgres();
  project.provide('postgresAdminUrl', cluster.adminUrl);
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
  cluster = null;
}
