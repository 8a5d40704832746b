import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../../../server/store/SqliteStore.ts';
import type { Store } from '../../../server/store/Store.ts';
import { makeTempDir } from '../harness.ts';
import { storeConformance } from './conformance.ts';

storeConformance('SqliteStore', async () => {
  const dir = makeTempDir('studio-store-');
  const file = join(dir, 'studio.db');
  let current: Store = new SqliteStore(file);
  return {
    get store() {
      return current;
    },
    async reopen() {
      await current.close();
      current = new SqliteStore(file);
      return current;
    },
    async dispose() {
      await current.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
