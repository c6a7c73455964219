import { type SqlStatement, sqlStatementSchema } from '../relational/config';
import { sqlSinkOperation } from '../relational/pipeline';
import type { ConnectorDefinition } from '../types';
import type { SnowflakeConfig, SnowflakeCredentials } from './config';
import { snowflakeConfigSchema, snowflakeCredentialsSchema } from './config';
import { executeSnowflake, importSnowflakeSchema, testSnowflake } from './operations';
import { writeSnowflake } from './sink';
import { readSnowflake } from './source';

export * from './config';

// Snowflake through snowflake-sdk (docs/connectors/snowflake.md). Every call signs in, works
// and signs out; the SDK is loaded on first use.
export const snowflakeConnector = {
  type: 'snowflake',
  label: 'Snowflake',
  configSchema: snowflakeConfigSchema,
  credentialsSchema: snowflakeCredentialsSchema,
  credentialDestination: ['account', 'access_url'],
  credentialsRequired: true,
  defaultReadOnly: false,
  test: (conn, ctx) => testSnowflake(conn, ctx),
  query: {
    // `{{name}}` placeholders are sent as `?` binds.
    statementSchema: sqlStatementSchema('mysql'),
    resultType: 'sql',
    execute: (conn, statement, parameters, ctx) => executeSnowflake(conn, statement, parameters, ctx),
  },
  discover: { importSchema: (conn, ctx) => importSnowflakeSchema(conn, ctx) },
  source: { operation: null, read: (conn, step, ctx) => readSnowflake(conn, step, ctx) },
  sink: {
    operation: sqlSinkOperation('Snowflake', ['insert', 'upsert', 'replace']),
    write: (conn, input, step, ctx) => writeSnowflake(conn, input, step, ctx),
  },
} satisfies ConnectorDefinition<SnowflakeConfig, SnowflakeCredentials, SqlStatement>;
