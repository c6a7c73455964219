import { z } from 'zod';
import { allowPrivateHostsField, httpUrlField, secretField } from '../fields';
import { soqlPlaceholders } from './soql';

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

// Pipeline steps: a source runs SOQL, a sink upserts by an external id.
const NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

export const salesforceSourceOperation = z
  .object({
    operation_type: z.literal('object_rows'),
    soql: z
      .string()
      .min(1)
      .max(100_000)
      .describe('SOQL query; `{{…}}` templates become escaped SOQL literals.'),
  })
  .strict();

export const salesforceSinkOperation = z
  .object({
    operation_type: z.literal('object_rows'),
    object: z.string().regex(NAME, 'an sObject API name such as Contact or Invoice__c').max(255),
    external_id_field: z.string().regex(NAME, 'a field API name such as External_Id__c').max(255),
    mode: z.literal('upsert').default('upsert'),
  })
  .strict();

/** The parsed config and credentials as the session code reads them. */
export type SalesforceConfig = { instance_url: string; api_version: string; allow_private_hosts?: boolean };
export type SalesforceCredentials = { client_id: string; client_secret: string };
