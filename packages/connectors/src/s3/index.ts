import { z } from 'zod';
import { allowPrivateHostsField, httpUrlField, secretField } from '../fields';
import type { ConnectorDefinition } from '../types';

export const s3ConfigSchema = z
  .object({
    bucket: z
      .string()
      .min(3)
      .max(63)
      .regex(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/, 'an S3 bucket name')
      .describe('Bucket name.'),
    region: z
      .string()
      .min(1)
      .max(64)
      .default('us-east-1')
      .describe('Region of the bucket (default us-east-1).'),
    endpoint: httpUrlField(
      'Endpoint of an S3-compatible service (MinIO, R2, …); AWS when absent.',
    ).optional(),
    force_path_style: z
      .boolean()
      .default(false)
      .describe('Address the bucket in the path instead of the host name (most S3-compatible services).'),
    prefix: z.string().max(1024).optional().describe('Key prefix that statement keys are relative to.'),
    allow_private_hosts: allowPrivateHostsField,
  })
  .strict()
  .describe('S3 connector configuration.');

export const s3CredentialsSchema = z
  .object({
    access_key_id: z.string().min(1).max(256).describe('Access key id.'),
    secret_access_key: secretField('Secret access key.'),
    session_token: secretField('Session token of temporary credentials.').optional(),
  })
  .strict()
  .describe('S3 credentials. Write-only.');

export const s3Connector: ConnectorDefinition = {
  type: 's3',
  label: 'Amazon S3',
  configSchema: s3ConfigSchema,
  credentialsSchema: s3CredentialsSchema,
  credentialsRequired: true,
  defaultReadOnly: false,
  statementSchema: null,
  resultType: 's3',
};
