import { z } from 'zod';
import { allowPrivateHostsField, httpUrlField, secretField } from '../fields';
import type { ConnectorDefinition } from '../types';

export const salesforceConfigSchema = z
  .object({
    instance_url: httpUrlField('Instance URL, for example `https://mycompany.my.salesforce.com`.').refine(
      (v) => v.startsWith('https://'),
      'must use https',
    ),
    api_version: z
      .string()
      .regex(/^\d{2,3}\.\d$/, 'a version such as 62.0')
      .default('62.0')
      .describe('REST API version (default 62.0).'),
    allow_private_hosts: allowPrivateHostsField,
  })
  .strict()
  .describe('Salesforce connector configuration.');

export const salesforceCredentialsSchema = z
  .object({
    client_id: z.string().min(1).max(1024).describe('Consumer key of the connected app.'),
    client_secret: secretField('Consumer secret of the connected app.'),
  })
  .strict()
  .describe('Salesforce client-credentials flow of a connected app. Write-only.');

export const salesforceConnector: ConnectorDefinition = {
  type: 'salesforce',
  label: 'Salesforce',
  configSchema: salesforceConfigSchema,
  credentialsSchema: salesforceCredentialsSchema,
  credentialsRequired: true,
  // A CRM is the system of record: writes are opt-in.
  defaultReadOnly: true,
  statementSchema: null,
  resultType: 'object_rows',
};
