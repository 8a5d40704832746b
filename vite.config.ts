import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import tailwindcss from '@tailwindcss/vite';
import { precompress } from './scripts/precompress.ts';
import { earlyOpenScript } from './src/app/earlyOpen.ts';

const VENDOR = /node_modules\/(react|react-dom|scheduler|urql|@urql|wonka|graphql-ws|@0no-co)\//;

/**
 * What a session's address needs before the app's own code has run (issue 13), as a small
 * inline script at the top of the built index.html:
 *  - the deploy config is asked for at once (`window.__studioConfig`, taken once by the first
 *    boot, `src/app/startStudio.ts`): it carries no token, and the token goes nowhere before it
 *    answered;
 *  - on a `/sessions/…` address, `<link rel="modulepreload">` for the session screen's chunk
 *    and the chunks it imports, so they load beside the first chunk instead of after it ran;
 *  - on a session's (or event's) address, once the config named the endpoint, the session
 *    query and then the newest page's query, which the app's Client takes over
 *    (`src/app/earlyOpen.ts`).
 * The other routes load their chunks on demand as before.
 */
function earlyRoute(): Plugin {
  return {
    name: 'studio-early-route',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        const bundle = ctx.bundle;
        if (!bundle) return html;
        const chunks = Object.values(bundle).flatMap((file) =>
          file.type === 'chunk' ? [file] : [],
        );
        const byName = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
        const initial = new Set<string>();
        const walk = (fileName: string, into: Set<string>) => {
          if (into.has(fileName)) return;
          into.add(fileName);
          for (const imported of byName.get(fileName)?.imports ?? []) walk(imported, into);
        };
        for (const chunk of chunks) if (chunk.isEntry) walk(chunk.fileName, initial);
        const screen = chunks.find((chunk) =>
          chunk.facadeModuleId?.replace(/\\/g, '/').endsWith('/src/app/SessionScreen.tsx'),
        );
        if (!screen) throw new Error('studio-early-route: no chunk for src/app/SessionScreen.tsx');
        const route = new Set<string>();
        walk(screen.fileName, route);
        const hrefs = [...route].filter((name) => !initial.has(name)).map((name) => `/${name}`);
        const script = earlyOpenScript(hrefs);
        // Before the stylesheet, which a classic script would otherwise wait for.
        const charset = '<meta charset="UTF-8" />';
        if (!html.includes(charset)) throw new Error('studio-early-route: no charset meta');
        return html.replace(charset, `${charset}\n    <script>\n${script}\n    </script>`);
      },
    },
  };
}

// The dev server proxies the contract to a studio server on :4000 (`npm run serve`).
export default defineConfig({
  plugins: [react(), tailwindcss(), earlyRoute(), precompress()],
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
