import { googleAuthModules } from '../google/auth';
import { sqlSinkOperation } from '../relational/pipeline';
import type { ConnectorDefinition } from '../types';
import { type BigQueryConnection, bigqueryModule } from './client';
import { bigqueryConfigSchema, bigqueryCredentialsSchema, bigqueryStatementSchema } from './config';
import { type BigQueryStatement, executeBigQuery, importBigQuerySchema, testBigQuery } from './operations';
import { writeBigQuery } from './sink';
import { readBigQuery } from './source';

/** What the client loads on its first call (types.ts SourceCapability.load). */
const loadClient = async () => {
  await Promise.all([bigqueryModule(), googleAuthModules()]);
};

export * from './config';

// The cloud-warehouse connector whose config names a project (docs/connectors/bigquery.md).
export const bigqueryConnector = {
  type: 'bigquery',
  label: 'BigQuery',
  configSchema: bigqueryConfigSchema,
  credentialsSchema: bigqueryCredentialsSchema,
  credentialDestination: [],
  credentialsRequired: true,
  defaultReadOnly: false,
  test: (conn, ctx) => testBigQuery(conn as BigQueryConnection, ctx),
  query: {
    statementSchema: bigqueryStatementSchema,
    resultType: 'sql',
    execute: (conn, statement, parameters, ctx) =>
      executeBigQuery(conn as BigQueryConnection, statement as BigQueryStatement, parameters, ctx),
  },
  discover: { importSchema: (conn, ctx) => importBigQuerySchema(conn as BigQueryConnection, ctx) },
  source: {
    operation: null,
    read: (conn, step, ctx) => readBigQuery(conn as BigQueryConnection, step, ctx),
    load: loadClient,
  },
  sink: {
    operation: sqlSinkOperation('BigQuery', ['insert']),
    write: (conn, input, step, ctx) => writeBigQuery(conn as BigQueryConnection, input, step, ctx),
    load: loadClient,
  },
} satisfies ConnectorDefinition;
