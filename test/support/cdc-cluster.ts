import { postgresConfigSchema } from '../../packages/connectors/src/postgres/config';
import type { PgConnection } from '../../packages/connectors/src/postgres/connect';
import { type PostgresCluster, startPostgresCluster } from '../peers/postgres-cluster';

// A throwaway PostgreSQL cluster that decodes its log (wal_level=logical) for the change-capture
// suites of the postgres connector, and a connection to it as a data source makes one.

/** The cluster's database as a postgres data source (trust auth: the password is not asked). */
export function clusterConnection(
  cluster: PostgresCluster,
  database = 'postgres',
  settings: Record<string, unknown> = {},
): PgConnection {
  return {
    config: postgresConfigSchema.parse({
      host: '127.0.0.1',
      port: cluster.port,
      database,
      user: 'postgres',
      allow_private_hosts: true,
      ...settings,
    }),
    credentials: { password: 'unused' },
  };
}

export async function startCdcCluster(maxSlots = 16): Promise<PostgresCluster> {
  return startPostgresCluster({ settings: { wal_level: 'logical', max_replication_slots: maxSlots } });
}
