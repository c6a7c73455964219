import { onFirstCall } from '../lazy';
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

// Operations, source and sink load on first use (../lazy.ts).
const operations = () => import('./operations');

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
  test: onFirstCall(operations, 'testSalesforce'),
  query: {
    statementSchema: salesforceStatementSchema,
    resultType: 'object_rows',
    execute: onFirstCall(operations, 'executeSalesforce'),
  },
  discover: { importSchema: onFirstCall(operations, 'importSalesforceSchema') },
  source: {
    operation: salesforceSourceOperation,
    read: onFirstCall(() => import('./source'), 'readSalesforce'),
  },
  sink: {
    operation: salesforceSinkOperation,
    write: onFirstCall(() => import('./sink'), 'writeSalesforce'),
  },
} satisfies ConnectorDefinition<SalesforceConfig, SalesforceCredentials, SoqlStatement>;
