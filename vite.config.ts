import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import tailwindcss from '@tailwindcss/vite';
import { precompress } from './scripts/precompress.ts';

const VENDOR = /node_modules\/(react|react-dom|scheduler|urql|@urql|wonka|graphql-ws|@0no-co)\//;

// The dev server proxies the contract to a studio server on :4000 (`npm run serve`).
export default defineConfig({
  plugins: [react(), tailwindcss(), precompress()],
  build: {
    outDir: 'dist',
    sourcemap: true,
    rolldownOptions: {
      output: {
        // One long-cached vendor chunk of what every route needs; a dependency only lazy chunks
        // use (the virtualizer, diffing, TanStack Query for /healthz and blobs) stays with them
        // (issue 13).
        codeSplitting: {
          groups: [{ name: 'vendor', test: VENDOR }],
        },
      },
    },
  },
  server: {
    proxy: {
      '/graphql': { target: 'http://127.0.0.1:4000', ws: true },
      '/healthz': { target: 'http://127.0.0.1:4000' },
    },
  },
});
