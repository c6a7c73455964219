import type { SqlStatement } from '../relational/config';
import type { ConnectorDefinition } from '../types';
import { postgresConfigSchema, postgresCredentialsSchema, postgresStatementSchema } from './config';
import type { PgConnection } from './connect';

// PostgreSQL (docs/connectors/postgres.md). Every call opens one session to the address the
// egress guard checked and closes it before returning. The driver loads on first use, so a process
// that never talks to this kind never holds it.

export * from './config';

export const postgres = {
  type: 'postgres',
  label: 'PostgreSQL',
  configSchema: postgresConfigSchema,
  credentialsSchema: postgresCredentialsSchema,
  credentialDestination: ['host', 'port'],
  credentialsRequired: false,
  defaultReadOnly: false,
  test: async (conn, ctx) => (await import('./operations')).testPg(conn, ctx),
  query: {
    statementSchema: postgresStatementSchema,
    resultType: 'sql',
    execute: async (conn, statement, parameters, ctx) =>
      (await import('./operations')).executePg(conn, statement, parameters, ctx),
  },
  discover: { importSchema: async (conn, ctx) => (await import('./operations')).importPgSchema(conn, ctx) },
  source: {
    operation: null,
    read: async (conn, step, ctx) => (await import('./source')).readPg(conn, step, ctx),
  },
  sink: {
    operation: null,
    write: async (conn, input, step, ctx) => (await import('./sink')).writePg(conn, input, step, ctx),
  },
  ledger: {
    committedWrites: async (conn, step, keyPrefix, ctx) =>
      (await import('./ledger')).committedWrites(conn, step, keyPrefix, ctx),
  },
  // Change data capture (docs/cdc.md).
  changes: {
    check: async (conn, op, ctx) => (await import('./changes/check')).checkPgChanges(conn, op, ctx),
    read: async (conn, step, capture, ctx) =>
      (await import('./changes/read')).readPgChanges(conn, step, capture, ctx),
    captures: async (conn, prefix, ctx) => (await import('./changes/admin')).pgCaptures(conn, prefix, ctx),
    release: async (conn, capture, ctx) => (await import('./changes/admin')).pgRelease(conn, capture, ctx),
  },
} satisfies ConnectorDefinition<PgConnection['config'], PgConnection['credentials'], SqlStatement>;

export const definition = postgres;
