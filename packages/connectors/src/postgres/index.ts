import { loadedWithConnector } from '../capabilities';
import type { SqlStatement } from '../relational/config';
import type { ConnectorDefinition } from '../types';
import { pgCaptures, pgRelease } from './changes/admin';
import { checkPgChanges } from './changes/check';
import { readPgChanges } from './changes/read';
import { postgresConfigSchema, postgresCredentialsSchema, postgresStatementSchema } from './config';
import type { PgConnection } from './connect';
import { committedWrites } from './ledger';
import { executePg, importPgSchema, testPg } from './operations';
import { warmPgSession } from './session';
import { writePg } from './sink';
import { readPg } from './source';

// PostgreSQL (docs/connectors/postgres.md). Every call opens one session to the address the
// egress guard checked and closes it before returning.

export * from './config';

export const postgres = {
  type: 'postgres',
  label: 'PostgreSQL',
  configSchema: postgresConfigSchema,
  credentialsSchema: postgresCredentialsSchema,
  credentialDestination: ['host', 'port'],
  credentialsRequired: false,
  defaultReadOnly: false,
  test: (conn, ctx) => testPg(conn, ctx),
  query: {
    statementSchema: postgresStatementSchema,
    resultType: 'sql',
    execute: (conn, statement, parameters, ctx) => executePg(conn, statement, parameters, ctx),
  },
  discover: { importSchema: (conn, ctx) => importPgSchema(conn, ctx) },
  source: { operation: null, read: (conn, step, ctx) => readPg(conn, step, ctx), load: loadedWithConnector },
  sink: {
    operation: null,
    write: (conn, input, step, ctx) => writePg(conn, input, step, ctx),
    load: loadedWithConnector,
  },
  sessions: { warm: (conn, ctx, opts) => warmPgSession(conn, ctx, opts) },
  ledger: { committedWrites: (conn, step, keyPrefix, ctx) => committedWrites(conn, step, keyPrefix, ctx) },
  // Change data capture (docs/cdc.md).
  changes: {
    check: (conn, op, ctx) => checkPgChanges(conn, op, ctx),
    read: (conn, step, capture, ctx) => readPgChanges(conn, step, capture, ctx),
    captures: (conn, prefix, ctx) => pgCaptures(conn, prefix, ctx),
    release: (conn, capture, ctx) => pgRelease(conn, capture, ctx),
  },
} satisfies ConnectorDefinition<PgConnection['config'], PgConnection['credentials'], SqlStatement>;

export const definition = postgres;
