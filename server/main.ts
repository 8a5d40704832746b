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
  --database-url URL       keep the studio in PostgreSQL instead of the embedded SQLite file, e.g.
                           postgres://user:password@host:5432/studio; several servers may share it.
                           Prefer STUDIO_DATABASE_URL (a flag shows in the process list)
  --token T                bearer token; prefer STUDIO_TOKEN (a flag shows in the process list;
                           generated and kept in the data dir if absent)
  --allowed-host NAME      another Host name to answer, e.g. a proxy's (STUDIO_ALLOWED_HOSTS, comma-separated;
                           the listening host, localhost and 127.0.0.1 always are); repeatable
  --allowed-origin ORIGIN  another origin whose pages may call the API, e.g. https://studio.example.com
                           (STUDIO_ALLOWED_ORIGINS, comma-separated; same origin always may); repeatable
  --serve-source-maps      serve the web app's source maps (off by default)
  --tokens-file FILE       JSON of reviewer name -> token: each reviewer's own token (re-read when edited)
  --no-demo                do not run the built-in offline agent or seed demo sessions
  --managed-agents IDS     follow Claude Managed Agents sessions (comma-separated; needs ANTHROPIC_API_KEY)
  --managed-agents-url U   Managed Agents API base URL (default https://api.anthropic.com)
  --leviath URL            follow a Leviath gateway (needs LEVIATH_TOKEN)
  --leviath-workspace DIR  the folder Leviath runs work in: checkpointed before approvals and after tool calls
  --claude-code DIRS       run Claude Code sessions in these folders (comma-separated; needs ANTHROPIC_API_KEY)
  --idempotency-retention-hours H
                           keep idempotency records H hours, then prune them
                           (STUDIO_IDEMPOTENCY_RETENTION_HOURS, default 24)
  --help                   this text
`;

/** Repeated flags and comma-separated values, plus the environment variable's list. */
function listOf(flags: string[] | undefined, env: string | undefined): string[] {
  return [...(flags ?? []), ...(env ? [env] : [])]
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter(Boolean);
}

/** Kept so a startup error can be shown without it (the URL may carry a password). */
let databaseUrl: string | null = null;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'database-url': { type: 'string' },
      token: { type: 'string' },
      'allowed-host': { type: 'string', multiple: true },
      'allowed-origin': { type: 'string', multiple: true },
      'serve-source-maps': { type: 'boolean' },
      'tokens-file': { type: 'string' },
      'no-demo': { type: 'boolean' },
      'managed-agents': { type: 'string' },
      'managed-agents-url': { type: 'string' },
      leviath: { type: 'string' },
      'leviath-workspace': { type: 'string' },
      'claude-code': { type: 'string' },
      'idempotency-retention-hours': { type: 'string' },
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
  const retentionText =
    values['idempotency-retention-hours'] ?? process.env.STUDIO_IDEMPOTENCY_RETENTION_HOURS;
  const retentionHours = retentionText === undefined ? 24 : Number(retentionText);
  if (!Number.isFinite(retentionHours) || retentionHours <= 0 || retentionHours > 24 * 365)
    throw new Error(
      `--idempotency-retention-hours must be a number of hours over 0 (at most a year), got ${retentionText}`,
    );
  const {
    'allowed-host': allowedHostFlags,
    'allowed-origin': allowedOriginFlags,
    'idempotency-retention-hours': _retention,
    ...flags
  } = values;
  const { 'database-url': databaseUrlFlag, ...sourceFlags } = flags;
  databaseUrl = databaseUrlFlag ?? process.env.STUDIO_DATABASE_URL ?? null;
  const sources = makeSourcesFromFlags(sourceFlags, process.env);
  const studio = await startStudioServer({
    port,
    host: values.host ?? process.env.STUDIO_HOST ?? '127.0.0.1',
    dataDir: values['data-dir'] ?? process.env.STUDIO_DATA_DIR ?? './.studio',
    databaseUrl,
    ...((values.token ?? process.env.STUDIO_TOKEN)
      ? { token: values.token ?? process.env.STUDIO_TOKEN }
      : {}),
    tokensFile: values['tokens-file'] ?? null,
    demo: !values['no-demo'],
    allowedHosts: listOf(allowedHostFlags, process.env.STUDIO_ALLOWED_HOSTS),
    allowedOrigins: listOf(allowedOriginFlags, process.env.STUDIO_ALLOWED_ORIGINS),
    serveSourceMaps: values['serve-source-maps'] ?? false,
    idempotencyRetentionMs: retentionHours * 60 * 60 * 1000,
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
  let message = error instanceof Error ? error.message : String(error);
  if (databaseUrl) message = message.split(databaseUrl).join('[database URL]');
  process.stderr.write(`[studio] error ${message}\n`);
  process.exit(1);
});
