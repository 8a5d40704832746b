/**
 * `npm start` / `npm run serve`: parses flags (or their environment variables), starts the studio
 * and prints one line once it accepts connections:
 *   Agent Studio listening on http://HOST:PORT/#token=TOKEN
 */
import { parseArgs } from 'node:util';
import { startStudioServer } from './app.ts';
import { makeSourcesFromFlags } from './sources/fromFlags.ts';

const HELP = `Agent Studio server

Usage: npm start -- [options]

  --port N                 port (STUDIO_PORT, default 4000; 0 picks a free port)
  --host H                 interface to listen on (default 127.0.0.1)
  --data-dir DIR           data directory (STUDIO_DATA_DIR, default ./.studio)
  --token T                bearer token (STUDIO_TOKEN; generated and kept in the data dir if absent)
  --no-demo                do not run the built-in offline agent or seed demo sessions
  --managed-agents IDS     follow Claude Managed Agents sessions (comma-separated; needs ANTHROPIC_API_KEY)
  --managed-agents-url U   Managed Agents API base URL (default https://api.anthropic.com)
  --leviath URL            follow a Leviath gateway (needs LEVIATH_TOKEN)
  --leviath-workspace DIR  the folder Leviath runs work in: checkpointed before approvals and after tool calls
  --claude-code DIRS       run Claude Code sessions in these folders (comma-separated; needs ANTHROPIC_API_KEY)
  --help                   this text
`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      token: { type: 'string' },
      'no-demo': { type: 'boolean' },
      'managed-agents': { type: 'string' },
      'managed-agents-url': { type: 'string' },
      leviath: { type: 'string' },
      'leviath-workspace': { type: 'string' },
      'claude-code': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const portText = values.port ?? process.env.STUDIO_PORT ?? '4000';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be 0 to 65535, got ${portText}`);
  const sources = makeSourcesFromFlags(values, process.env);
  const studio = await startStudioServer({
    port,
    host: values.host ?? process.env.STUDIO_HOST ?? '127.0.0.1',
    dataDir: values['data-dir'] ?? process.env.STUDIO_DATA_DIR ?? './.studio',
    ...((values.token ?? process.env.STUDIO_TOKEN)
      ? { token: values.token ?? process.env.STUDIO_TOKEN }
      : {}),
    demo: !values['no-demo'],
    sources,
  });
  process.stdout.write(`Agent Studio listening on ${studio.url}/#token=${studio.token}\n`);
  const shutdown = () => {
    void studio.close().then(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `[studio] error ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
