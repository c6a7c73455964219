import type { ConnectorDefinition } from '../types';
import type { SalesforceConfig, SalesforceCredentials } from './config';
import {
  salesforceConfigSchema,
  salesforceCredentialsSchema,
  salesforceSinkOperation,
  salesforceSourceOperation,
  salesforceStatementSchema,
} from './config';
import { executeSalesforce, importSalesforceSchema, type SoqlStatement, testSalesforce } from './operations';
import { writeSalesforce } from './sink';
import { readSalesforce } from './source';

export * from './config';

// Salesforce through jsforce (docs/connectors/salesforce.md): the client-credentials flow of a
// connected app against the instance's own token endpoint, then REST. Read-only by default.
export const salesforceConnector = {
  type: 'salesforce',
  label: 'Salesforce',
  configSchema: salesforceConfigSchema,
  credentialsSchema: salesforceCredentialsSchema,
  credentialDestination: ['instance_url'],
  credentialsRequired: true,
  // A CRM is the system of record: writes are opt-in.
  defaultReadOnly: true,
  test: (conn, ctx) => testSalesforce(conn, ctx),
  query: {
    statementSchema: salesforceStatementSchema,
    resultType: 'object_rows',
    execute: (conn, statement, parameters, ctx) => executeSalesforce(conn, statement, parameters, ctx),
  },
  discover: { importSchema: (conn, ctx) => importSalesforceSchema(conn, ctx) },
  source: {
    operation: salesforceSourceOperation,
    read: (conn, step, ctx) => readSalesforce(conn, step, ctx),
  },
  sink: {
    operation: salesforceSinkOperation,
    write: (conn, input, step, ctx) => writeSalesforce(conn, input, step, ctx),
  },
} satisfies ConnectorDefinition<SalesforceConfig, SalesforceCredentials, SoqlStatement>;
