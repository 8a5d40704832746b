// Compiles the server (server/main.ts and what it imports, protocol/ included) into one ES module,
// build/server.js, run by `npm start` with plain node. Packages stay external: they load from
// node_modules as they are (better-sqlite3 is native), so `npm ci --omit=dev` is all a built
// tree needs. The bundle sits one folder below the package root, like server/*.ts, so its
// `new URL('../schema.graphql', import.meta.url)` and '../dist' resolve the same.
import { writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const result = await build({
  entryPoints: [new URL('../server/main.ts', import.meta.url).pathname],
  outfile: new URL('../build/server.js', import.meta.url).pathname,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  packages: 'external',
  sourcemap: 'linked',
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
});
// What the bundle imports (test/e2e/compiledServer.test.ts checks they are runtime dependencies).
writeFileSync(
  new URL('../build/meta.json', import.meta.url),
  JSON.stringify(result.metafile, null, 1),
);
