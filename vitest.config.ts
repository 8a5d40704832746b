import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

export default defineConfig({
  test: {
    projects: [
      {
        // Node loads graphql-yoga's `graphql` as CommonJS (index.js); without this alias Vite would
        // resolve the server's own `graphql` import to index.mjs, a second copy whose GraphQLError
        // Yoga does not recognise, so every extensions.code would be masked as INTERNAL_SERVER_ERROR.
        resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
        test: {
          name: 'server',
          environment: 'node',
          include: [
            'server/**/*.test.ts',
            'protocol/**/*.test.ts',
            'test/server/**/*.test.ts',
            'test/integration/**/*.test.ts',
          ],
          // One real PostgreSQL cluster for the run; each test file takes a fresh database.
          globalSetup: ['test/support/postgresGlobalSetup.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        // The protocol suites and crash tests again, on PostgreSQL: the same harness, with
        // STUDIO_TEST_STORE=postgres giving each server a fresh database (test/support/harnessStore.ts).
        // The crash suite included: a restart takes over a killed worker's job during its start
        // (JobWorker.takeOver looks again while PostgreSQL ends the dead connection); and the
        // bridge-integration and Claude Code suites: a dispatch commits before the runtime's result
        // (Decisions.deliverInOrder holds the session while the source is told).
        resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
        test: {
          name: 'server-pg',
          environment: 'node',
          include: ['test/server/**/*.test.ts', 'test/integration/**/*.test.ts'],
          exclude: [
            // The store suites run each store explicitly (sqlite.test.ts, pg.test.ts).
            'test/server/store/**',
            // No store under them (units and sources on MemorySourceHost): the server project
            // runs them; twice would only cost time.
            'test/server/checkpointSizes.test.ts',
            'test/server/proposedFileChanges.test.ts',
            'test/server/bridges/backoff.test.ts',
            'test/server/bridges/leviathMapping.test.ts',
            'test/server/bridges/leviathSource.test.ts',
            'test/server/bridges/managedAgentsMapping.test.ts',
            'test/server/bridges/managedAgentsSdkFake.test.ts',
            'test/server/bridges/managedAgentsSource.test.ts',
            'test/server/bridges/managedAgentsThreads.test.ts',
            'test/server/bridges/noSecretLeak.test.ts',
            'test/server/bridges/redact.test.ts',
          ],
          env: { STUDIO_TEST_STORE: 'postgres' },
          globalSetup: ['test/support/postgresGlobalSetup.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        // Several real server processes (build/server.js) on one PostgreSQL database.
        test: {
          name: 'multi',
          environment: 'node',
          include: ['test/multi/**/*.test.ts'],
          globalSetup: ['test/support/postgresGlobalSetup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        plugins: [react()],
        test: {
          name: 'web',
          environment: 'jsdom',
          include: ['src/**/*.test.{ts,tsx}'],
          setupFiles: ['src/test/setup.ts'],
          testTimeout: 15_000,
        },
      },
      {
        // The same alias as the server project: a journey may seed a data dir in-process first.
        resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
        test: {
          name: 'e2e',
          environment: 'node',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
