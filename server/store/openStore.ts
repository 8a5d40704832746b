/**
 * Picks the studio's store: PostgreSQL when a database URL is given (`--database-url`,
 * `STUDIO_DATABASE_URL`), otherwise the embedded SQLite file in the data dir (the default, nothing
 * to install). Both are migrated before the engine sees them. The URL may carry a password: it
 * is registered with the logger as a secret and never appears in a message.
 */
import { join } from 'node:path';
import type { Logger } from '../logger.ts';
import { SqliteStore } from './SqliteStore.ts';
import type { Store } from './Store.ts';
import { PgStore, describeDatabaseUrl } from './postgres/PgStore.ts';

export interface OpenStoreOptions {
  dataDir: string;
  /** postgres://… or postgresql://…; null or absent: SQLite in the data dir. */
  databaseUrl?: string | null;
  logger: Logger;
}

/** Registers the URL and its password with the logger, so neither can reach a log line. */
export function hideDatabaseUrl(url: string, logger: Logger): void {
  logger.addSecret(url);
  try {
    const parsed = new URL(url);
    if (parsed.password) {
      logger.addSecret(parsed.password);
      logger.addSecret(decodeURIComponent(parsed.password));
    }
  } catch {
    // Not a URL: the whole string is already a secret.
  }
}

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const url = options.databaseUrl?.trim();
  if (!url) return new SqliteStore(join(options.dataDir, 'studio.db'));
  hideDatabaseUrl(url, options.logger);
  if (!/^postgres(ql)?:\/\//i.test(url))
    throw new Error('--database-url must be a postgres:// or postgresql:// URL');
  const store = new PgStore({
    url,
    onProblem: (message) => options.logger.error(message),
  });
  try {
    await store.migrate();
    await store.ready();
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
  options.logger.info(`store: PostgreSQL at ${describeDatabaseUrl(url)}`);
  return store;
}
