/**
 * A real PostgreSQL for tests and benchmarks: Debian's `postgresql` server binaries started on a
 * fresh temp data directory and a free TCP port on 127.0.0.1, with its unix socket inside that temp
 * directory, stopped and removed afterwards. Nothing is shared with a system cluster.
 *
 * PostgreSQL refuses to run as root, so when the tests run as root (CI does) initdb and postgres run
 * as the `postgres` system user (setpriv, which execs: the child we hold IS the postmaster) and the
 * temp directory is handed to that user. Otherwise they run as the current user.
 *
 * Settings are for speed and are for tests only: fsync, synchronous_commit and full_page_writes are
 * off, so a crash of the machine (not of a studio process) could lose the test cluster's data.
 * Password authentication (scram-sha-256) is on for TCP, so the URL carries a password exactly as a
 * deployment's would.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface PostgresCluster {
  /** postgres://studio_test:PASSWORD@127.0.0.1:PORT/postgres (the maintenance database). */
  adminUrl: string;
  port: number;
  /** The temp directory holding the data directory, the socket and the log. */
  dir: string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** The server's log so far (for a failure message). */
  log(): string;
  /** Fast shutdown, then removes the temp directory. */
  stop(): Promise<void>;
}

const USER = 'studio_test';

/** The newest installed server version's bin directory, or a clear error naming the package. */
export function postgresBinDir(): string {
  const fromEnv = process.env.STUDIO_PG_BIN;
  if (fromEnv) {
    if (!existsSync(join(fromEnv, 'postgres')))
      throw new Error(`STUDIO_PG_BIN=${fromEnv} has no postgres binary`);
    return fromEnv;
  }
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    throw new Error(
      'PostgreSQL server binaries not found (looked in /usr/lib/postgresql/*/bin): install ' +
        "Debian's postgresql package (apt-get install postgresql; .ci/run does) or set STUDIO_PG_BIN " +
        'to the directory holding initdb and postgres.',
    );
  return join(root, versions[0]!, 'bin');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** uid/gid of the `postgres` system user when we are root; null when we can run postgres ourselves. */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const uid = id('-u');
  const gid = id('-g');
  if (uid.status !== 0 || gid.status !== 0)
    throw new Error(
      'running as root, and PostgreSQL refuses root: the `postgres` system user (created by ' +
        "Debian's postgresql package) is missing",
    );
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

function command(
  user: { uid: number; gid: number } | null,
  binary: string,
  args: string[],
): [string, string[]] {
  if (!user) return [binary, args];
  return [
    'setpriv',
    [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', binary, ...args],
  ];
}

/** Starts a fresh cluster. Each call is independent (its own directory, port and processes). */
export async function startPostgres(): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  const user = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'studio-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const password = randomBytes(12).toString('hex');
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (user) chownSync(pwfile, user.uid, user.gid);

  const [initCmd, initArgs] = command(user, join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    USER,
    `--pwfile=${pwfile}`,
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    '--encoding=UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  const init = spawnSync(initCmd, initArgs, { cwd: dir, encoding: 'utf8' });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status}):\n${init.stdout}\n${init.stderr}`);
  }
  rmSync(pwfile, { force: true });

  let lastError: unknown = null;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const logLines: string[] = [];
    const [cmd, args] = command(user, join(bin, 'postgres'), [
      '-D',
      data,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${dir}`,
      // Tests only: no durability against a machine crash, much faster commits.
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=300',
      '-c',
      'shared_buffers=64MB',
      '-c',
      'max_wal_size=1GB',
      '-c',
      'log_min_error_statement=panic',
    ]);
    const child = spawn(cmd, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (chunk: Buffer) => logLines.push(chunk.toString('utf8'));
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const adminUrl = `postgres://${USER}:${password}@127.0.0.1:${port}/postgres`;
    try {
      await waitReady(child, adminUrl, () => logLines.join(''));
    } catch (error) {
      lastError = error;
      await stopChild(child);
      continue;
    }
    const killOnExit = () => child.kill('SIGQUIT');
    process.once('exit', killOnExit);
    let stopped = false;
    return {
      adminUrl,
      port,
      dir,
      log: () => logLines.join(''),
      createDatabase: async (name) => {
        const db = name ?? `studio_${randomBytes(6).toString('hex')}`;
        if (!/^[a-z_][a-z0-9_]*$/.test(db)) throw new Error(`bad database name ${db}`);
        const client = new pg.Client({ connectionString: adminUrl });
        await client.connect();
        try {
          await client.query(`CREATE DATABASE ${db}`);
        } finally {
          await client.end();
        }
        return `postgres://${USER}:${password}@127.0.0.1:${port}/${db}`;
      },
      stop: async () => {
        if (stopped) return;
        stopped = true;
        process.removeListener('exit', killOnExit);
        await stopChild(child);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

/** Resolves when the postmaster logs that it accepts connections; rejects if it exits first. */
async function waitReady(child: ChildProcess, url: string, log: () => string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`postgres did not accept connections within 30 s:\n${log()}`)),
      30_000,
    );
    const onData = () => {
      if (!log().includes('ready to accept connections')) return;
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      resolve();
    };
    child.stderr?.on('data', onData);
    child.stdout?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`postgres exited with ${code}:\n${log()}`));
    });
  });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.end();
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  // SIGINT is PostgreSQL's fast shutdown: it ends sessions and exits; SIGQUIT if it hangs.
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGQUIT'), 10_000);
  await exited;
  clearTimeout(timer);
}
