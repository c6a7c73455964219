import { loadedBy } from '../capabilities';
import type { SqlStatement } from '../relational/config';
import type { ConnectorDefinition } from '../types';
import { mysqlChanges } from './changes';
import { mysqlConfigSchema, mysqlCredentialsSchema, mysqlStatementSchema } from './config';
import type { MysqlConnection } from './connect';

// MySQL and MariaDB (docs/connectors/mysql.md). Every call opens one session to the address
// the egress guard checked and closes it before returning.

export { mysqlLag } from './changes';
export * from './config';

// The pipeline code loads on first use; `load` loads the same (capabilities.ts).
const sourceCode = () => import('./source');
const sinkCode = () => import('./sink');

export const mysql = {
  type: 'mysql',
  label: 'MySQL',
  configSchema: mysqlConfigSchema,
  credentialsSchema: mysqlCredentialsSchema,
  credentialDestination: ['host', 'port'],
  credentialsRequired: false,
  defaultReadOnly: false,
  // The driver loads on first use, so a process that never talks to this kind never holds it.
  test: async (conn, ctx) => (await import('./operations')).testMysql(conn, ctx),
  query: {
    statementSchema: mysqlStatementSchema,
    resultType: 'sql',
    execute: async (conn, statement, parameters, ctx) =>
      (await import('./operations')).executeMysql(conn, statement, parameters, ctx),
  },
  discover: {
    importSchema: async (conn, ctx) => (await import('./operations')).importMysqlSchema(conn, ctx),
  },
  source: {
    operation: null,
    read: async (conn, step, ctx) => (await sourceCode()).readMysql(conn, step, ctx),
    // With its COPY encoders run once on made-up rows (exercise.ts).
    load: loadedBy(sourceCode, async () => (await import('./exercise')).exerciseMysqlEncoders()),
  },
  sink: {
    operation: null,
    write: async (conn, input, step, ctx) => (await sinkCode()).writeMysql(conn, input, step, ctx),
    load: loadedBy(sinkCode),
  },
  changes: mysqlChanges,
  sessions: {
    warm: (conn, ctx, opts) =>
      void import('./session').then((m) => m.warmMysqlSession(conn, ctx, opts)).catch(() => {}),
  },
  ledger: {
    committedWrites: async (conn, step, keyPrefix, ctx) =>
      (await import('./ledger')).committedWrites(conn, step, keyPrefix, ctx),
  },
} satisfies ConnectorDefinition<MysqlConnection['config'], MysqlConnection['credentials'], SqlStatement>;

export const definition = mysql;
