import { fileURLToPath } from 'node:url';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { Store } from './client';
import { ensurePartitions, eventsHistory, runLogsHistory } from './partitions';

const MIGRATION_LOCK = 0x51_1ce_01;
export const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url));

/**
 * Applies pending migrations, then makes the history partitions of the current period and the
 * ones ahead (the hourly retention step keeps them so, jobs/events-retention.ts): a store that was
 * stopped for a while, or an embedded store copied from the template `npm install` migrated
 * (db/pglite.ts), starts with the partitions a new migration would have made. Safe to run from
 * several processes at once.
 */
export async function migrate(store: Store): Promise<void> {
  await store.withAdvisoryLock(MIGRATION_LOCK, async () => {
    if (store.kind === 'pglite') await migratePglite(store.db as any, { migrationsFolder });
    else await migratePg(store.db as any, { migrationsFolder });
    const now = new Date();
    await ensurePartitions(store.db, eventsHistory, now);
    await ensurePartitions(store.db, runLogsHistory, now);
  });
}
