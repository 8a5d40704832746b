import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import tailwindcss from '@tailwindcss/vite';

const VENDOR =
  /node_modules\/(react|react-dom|scheduler|urql|@urql|wonka|graphql-ws|@0no-co|@tanstack\/(react-)?query-core|@tanstack\/react-query)\//;

// The dev server proxies the contract to a studio server on :4000 (`npm run serve`).
export default defineConfig({
  plugins: [react(), tailwindcss()],
  build: {
    outDir: 'dist',
    sourcemap: true,
    rolldownOptions: {
      output: {
        // One long-cached vendor chunk of what every route needs; a dependency only a lazy route
        // uses (the virtualizer, diffing) stays in that route's chunk (issue 13).
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
