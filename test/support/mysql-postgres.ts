import { egressPolicy } from '../../packages/connectors/src/egress';
import { mysqlConfigSchema } from '../../packages/connectors/src/mysql/index';
import { postgresConfigSchema } from '../../packages/connectors/src/postgres/index';
import { type ConnectorContext, defaultLimits } from '../../packages/connectors/src/types';
import { stepContext } from './step-context';

// The real MariaDB (SLUICE_TEST_MYSQL_HOST/PORT, 127.0.0.1:3306) and PostgreSQL
// (SLUICE_TEST_PG_URL) of the connector suites that move rows from one into the other: the data
// source settings the connectors take for a suite's own databases, and SQL steps.

export const MY_HOST = process.env.SLUICE_TEST_MYSQL_HOST ?? '127.0.0.1';
export const MY_PORT = Number(process.env.SLUICE_TEST_MYSQL_PORT ?? 3306);
export const PG_URL = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };

/** Connection settings for database `myDb` on the MariaDB and `pgDb` on the PostgreSQL. */
export function peerConnections(myDb: string, pgDb: string) {
  return {
    myConnection: () => ({
      config: mysqlConfigSchema.parse({
        host: MY_HOST,
        port: MY_PORT,
        database: myDb,
        user: 'root',
        allow_private_hosts: true,
      }),
      credentials: { password: '' },
    }),
    pgConnection: () => {
      const u = new URL(PG_URL);
      return {
        config: postgresConfigSchema.parse({
          host: u.hostname,
          port: Number(u.port || 5432),
          database: pgDb,
          user: 'postgres',
          allow_private_hosts: true,
        }),
        credentials: { password: 'unused' },
      };
    },
  };
}

/** A SQL source step. */
export const sqlSource = (sql: string, extra: Record<string, unknown> = {}) =>
  stepContext({ kind: 'source', data_source_ref: 'db', operation: { operation_type: 'sql', sql, ...extra } });

/** A SQL sink step writing `table` (insert unless `write` says otherwise). */
export const sqlSink = (table: string, write: Record<string, unknown> = {}) =>
  stepContext({
    kind: 'sink',
    data_source_ref: 'db',
    operation: { operation_type: 'sql', write: { table, ...write } },
  });
