import { onFirstCall } from '../lazy';
import { type SqlStatement, sqlStatementSchema } from '../relational/config';
import { sqlSinkOperation } from '../relational/pipeline';
import type { ConnectorDefinition } from '../types';
import type { SnowflakeConfig, SnowflakeCredentials } from './config';
import { snowflakeConfigSchema, snowflakeCredentialsSchema } from './config';

// Operations, source and sink load on first use (../lazy.ts).
const operations = () => import('./operations');

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
  test: onFirstCall(operations, 'testSnowflake'),
  query: {
    // `{{name}}` placeholders are sent as `?` binds.
    statementSchema: sqlStatementSchema('mysql'),
    resultType: 'sql',
    execute: onFirstCall(operations, 'executeSnowflake'),
  },
  discover: { importSchema: onFirstCall(operations, 'importSnowflakeSchema') },
  source: { operation: null, read: onFirstCall(() => import('./source'), 'readSnowflake') },
  sink: {
    operation: sqlSinkOperation('Snowflake', ['insert', 'upsert', 'replace']),
    write: onFirstCall(() => import('./sink'), 'writeSnowflake'),
  },
} satisfies ConnectorDefinition<SnowflakeConfig, SnowflakeCredentials, SqlStatement>;
