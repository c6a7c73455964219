import { loadedBy } from '../capabilities';
import { undici } from '../egress';
import type { ConnectorDefinition } from '../types';
import type { SalesforceConfig, SalesforceCredentials } from './config';
import {
  salesforceConfigSchema,
  salesforceCredentialsSchema,
  salesforceSinkOperation,
  salesforceSourceOperation,
  salesforceStatementSchema,
} from './config';
import type { SoqlStatement } from './operations';

export * from './config';

// Salesforce through jsforce (docs/connectors/salesforce.md): the client-credentials flow of a
// connected app against the instance's own token endpoint, then REST. Read-only by default.
// jsforce and the code below load on first use.
// The pipeline code loads on first use; `load` loads the same (capabilities.ts).
const sourceCode = () => import('./source');
const sinkCode = () => import('./sink');

export const salesforceConnector = {
  type: 'salesforce',
  label: 'Salesforce',
  configSchema: salesforceConfigSchema,
  credentialsSchema: salesforceCredentialsSchema,
  credentialDestination: ['instance_url'],
  credentialsRequired: true,
  // A CRM is the system of record: writes are opt-in.
  defaultReadOnly: true,
  test: async (conn, ctx) => (await import('./operations')).testSalesforce(conn, ctx),
  query: {
    statementSchema: salesforceStatementSchema,
    resultType: 'object_rows',
    execute: async (conn, statement, parameters, ctx) =>
      (await import('./operations')).executeSalesforce(conn, statement, parameters, ctx),
  },
  discover: {
    importSchema: async (conn, ctx) => (await import('./operations')).importSalesforceSchema(conn, ctx),
  },
  source: {
    operation: salesforceSourceOperation,
    read: async (conn, step, ctx) => (await sourceCode()).readSalesforce(conn, step, ctx),
    load: loadedBy(sourceCode, undici),
  },
  sink: {
    operation: salesforceSinkOperation,
    write: async (conn, input, step, ctx) => (await sinkCode()).writeSalesforce(conn, input, step, ctx),
    load: loadedBy(sinkCode, undici),
  },
} satisfies ConnectorDefinition<SalesforceConfig, SalesforceCredentials, SoqlStatement>;
