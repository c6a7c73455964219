import {
  passwordCredentialsSchema,
  relationalConfigSchema,
  type SqlStatement,
  sqlStatementSchema,
} from '../relational/config';
import type { ConnectorDefinition } from '../types';
import type { PgConnection } from './connect';
import { committedWrites } from './ledger';
import { executePg, importPgSchema, testPg } from './operations';
import { readPg } from './read';
import { writePg } from './write';

// PostgreSQL (docs/connectors/postgres.md). Every call opens one session to the address the
// egress guard checked and closes it before returning.

export const postgresConfigSchema = relationalConfigSchema(5432, 'PostgreSQL');

export const postgres: ConnectorDefinition<
  PgConnection['config'],
  PgConnection['credentials'],
  SqlStatement
> = {
  type: 'postgres',
  label: 'PostgreSQL',
  configSchema: postgresConfigSchema,
  credentialsSchema: passwordCredentialsSchema,
  credentialDestination: ['host', 'port'],
  credentialsRequired: false,
  defaultReadOnly: false,
  statementSchema: sqlStatementSchema('postgres'),
  resultType: 'sql',
  test: (conn, ctx) => testPg(conn, ctx),
  importSchema: (conn, ctx) => importPgSchema(conn, ctx),
  execute: (conn, statement, parameters, ctx) => executePg(conn, statement, parameters, ctx),
  read: (conn, step, ctx) => readPg(conn, step, ctx),
  write: (conn, input, step, ctx) => writePg(conn, input, step, ctx),
  committedWrites: (conn, step, keyPrefix, ctx) => committedWrites(conn, step, keyPrefix, ctx),
};

export const definition = postgres;
