import { z } from 'zod';
import { allowPrivateHostsField, httpUrlField, secretField } from '../fields';
import type { ConnectorDefinition } from '../types';
import type { SalesforceConfig, SalesforceCredentials } from './client';
import { executeSalesforce, importSalesforceSchema, type SoqlStatement, testSalesforce } from './operations';
import { writeSalesforce } from './sink';
import { soqlPlaceholders } from './soql';
import { readSalesforce, salesforceSinkOperation, salesforceSourceOperation } from './source';

// Salesforce through jsforce (docs/connectors/salesforce.md): the client-credentials flow of a
// connected app against the instance's own token endpoint, then REST. Read-only by default.

export const salesforceConfigSchema = z
  .object({
    instance_url: httpUrlField('Instance URL, for example `https://mycompany.my.salesforce.com`.'),
    api_version: z
      .string()
      .regex(/^\d{2,3}\.\d$/, 'a version such as 62.0')
      .default('62.0')
      .describe('REST API version (default 62.0).'),
    allow_private_hosts: allowPrivateHostsField,
  })
  .strict()
  // A loopback or private endpoint (a test double, an internal proxy) may be plain http; a
  // real instance is always https.
  .refine((c) => c.instance_url.startsWith('https://') || c.allow_private_hosts, {
    message: 'must use https',
    path: ['instance_url'],
  })
  .describe('Salesforce connector configuration.');

export const salesforceCredentialsSchema = z
  .object({
    client_id: z.string().min(1).max(1024).describe('Consumer key of the connected app.'),
    client_secret: secretField('Consumer secret of the connected app.'),
  })
  .strict()
  .describe('Salesforce client-credentials flow of a connected app. Write-only.');

export const salesforceStatementSchema = z
  .object({
    type: z.literal('soql').describe('Statement kind: soql.'),
    soql: z
      .string()
      .min(1)
      .max(100_000)
      .describe('One SOQL query. `{{name}}` placeholders become escaped SOQL literals, never raw text.'),
  })
  .strict()
  .superRefine((s, ctx) => {
    try {
      soqlPlaceholders(s.soql);
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: ['soql'], message: (err as Error).message });
    }
  });

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
