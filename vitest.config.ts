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
