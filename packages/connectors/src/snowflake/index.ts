import { type SqlStatement, sqlStatementSchema } from '../relational/config';
import { sqlSinkOperation } from '../relational/pipeline';
import type { ConnectorDefinition } from '../types';
import type { SnowflakeConfig, SnowflakeCredentials } from './config';
import { snowflakeConfigSchema, snowflakeCredentialsSchema } from './config';

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
    read: async (conn, step, ctx) => (await import('./source')).readSnowflake(conn, step, ctx),
    load: async () => {
      await Promise.all([import('./source'), (await import('./connect')).loadSdk()]);
    },
  },
  sink: {
    operation: sqlSinkOperation('Snowflake', ['insert', 'upsert', 'replace']),
    write: async (conn, input, step, ctx) => (await import('./sink')).writeSnowflake(conn, input, step, ctx),
    load: async () => {
      await Promise.all([import('./sink'), (await import('./connect')).loadSdk()]);
    },
  },
} satisfies ConnectorDefinition<SnowflakeConfig, SnowflakeCredentials, SqlStatement>;
