import { fileURLToPath } from 'node:url';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { Store } from './client';

const MIGRATION_LOCK = 0x51_1ce_01;
export const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url));

/** Applies pending migrations; safe to run from several processes at once. */
export async function migrate(store: Store): Promise<void> {
  await store.withAdvisoryLock(MIGRATION_LOCK, async () => {
    if (store.kind === 'pglite') await migratePglite(store.db as any, { migrationsFolder });
    else await migratePg(store.db as any, { migrationsFolder });
  });
}
