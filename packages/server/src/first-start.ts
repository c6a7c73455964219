// What `sluice serve` loads before the rest of the server: the configuration and the embedded
// store's cluster (db/pglite.ts), so a first start copies the new cluster while the server's
// modules load (docs/operations.md "Embedded store or PostgreSQL server").
import { prepareCluster } from './db/pglite';
import { loadConfig } from './env';

/**
 * On the embedded store, makes the data directory's cluster when there is none yet (a first
 * start); nothing on a PostgreSQL server. A bad configuration or a held data directory is left
 * to the store's opening to report.
 */
export async function prepareEmbeddedStore(overrides: Record<string, string | undefined> = {}) {
  const config = loadConfig(overrides);
  if (!config.databaseUrl) await prepareCluster(config.dataDir);
}
