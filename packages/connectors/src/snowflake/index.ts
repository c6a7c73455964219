import { loadedBy } from '../capabilities';
import { type SqlStatement, sqlStatementSchema } from '../relational/config';
import { sqlSinkOperation } from '../relational/pipeline';
import type { ConnectorDefinition } from '../types';
import type { SnowflakeConfig, SnowflakeCredentials } from './config';
import { snowflakeConfigSchema, snowflakeCredentialsSchema } from './config';

export * from './config';

// Snowflake through snowflake-sdk (docs/connectors/snowflake.md). Every call signs in, works
// and signs out; the SDK is loaded on first use.
// The pipeline code loads on first use; `load` loads the same (capabilities.ts).
const sourceCode = () => import('./source');
const sinkCode = () => import('./sink');
/** Snowflake's SDK, loaded with the code that uses it. */
const sdk = async () => (await import('./connect')).loadSdk();

export const snowflakeConnector = {
  type: 'snowflake',
  label: 'Snowflake',
  configSchema: snowflakeConfigSchema,
  credentialsSchema: snowflakeCredentialsSchema,
  credentialDestination: ['account', 'access_url'],
  credentialsRequired: true,
  defaultReadOnly: false,
  test: async (conn, ctx) => (await import('./operations')).testSnowflake(conn, ctx),
  query: {
    // `{{name}}` placeholders are sent as `?` binds.
    statementSchema: sqlStatementSchema('mysql'),
    resultType: 'sql',
    execute: async (conn, statement, parameters, ctx) =>
      (await import('./operations')).executeSnowflake(conn, statement, parameters, ctx),
  },
  discover: {
    importSchema: async (conn, ctx) => (await import('./operations')).importSnowflakeSchema(conn, ctx),
  },
  source: {
    operation: null,
    read: async (conn, step, ctx) => (await sourceCode()).readSnowflake(conn, step, ctx),
    load: loadedBy(sourceCode, sdk),
  },
  sink: {
    operation: sqlSinkOperation('Snowflake', ['insert', 'upsert', 'replace']),
    write: async (conn, input, step, ctx) => (await sinkCode()).writeSnowflake(conn, input, step, ctx),
    load: loadedBy(sinkCode, sdk),
  },
} satisfies ConnectorDefinition<SnowflakeConfig, SnowflakeCredentials, SqlStatement>;
