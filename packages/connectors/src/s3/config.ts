import { z } from 'zod';
import { allowPrivateHostsField, httpUrlField, secretField, timeoutSecondsField } from '../fields';

// Shapes of the S3 connector: config and write-only credentials (docs/connectors/s3.md), the
// saved-query statement and the pipeline operation (`operation_type: s3`).

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
    timeout_seconds: timeoutSecondsField(300, 10).describe(
      'Seconds to wait for a connection or for the next bytes of an answer, 1 to 300 (default 10).',
    ),
    allow_private_hosts: allowPrivateHostsField,
  })
  .strict()
  .describe('S3 connector configuration.');
export type S3Config = z.infer<typeof s3ConfigSchema>;

export const s3CredentialsSchema = z
  .object({
    access_key_id: z.string().min(1).max(256).describe('Access key id.'),
    secret_access_key: secretField('Secret access key.'),
    session_token: secretField('Session token of temporary credentials.').optional(),
  })
  .strict()
  .describe('S3 credentials. Write-only.');
export type S3Credentials = z.infer<typeof s3CredentialsSchema>;

export const s3Formats = ['auto', 'csv', 'json', 'ndjson', 'parquet', 'file'] as const;
export type S3Format = (typeof s3Formats)[number];

const key = z
  .string()
  .min(1)
  .max(1024)
  .describe('Object key below the configured prefix; `{{name}}` placeholders allowed.');
const format = z
  .enum(s3Formats)
  .default('auto')
  .describe(
    "auto (by the key's extension, then the Content-Type), csv, json, ndjson, parquet or file (raw bytes).",
  );
const delimiter = z.string().length(1).optional().describe('CSV delimiter (default `,`, `\\t` for .tsv).');
const hasHeader = z.boolean().default(true).describe('The CSV has a header row (default true).');
const contentType = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\w.+-]+\/[\w.+-]+(?:\s*;.*)?$/, 'a media type')
  .optional()
  .describe('Content-Type stored with a written object (default by format).');
const overwrite = z.boolean().default(true).describe('Replace an existing object (default true).');

export const s3StatementSchema = z
  .object({
    type: z.literal('s3'),
    operation: z.enum(['list', 'read', 'write']).default('read'),
    key: key.optional(),
    prefix: z
      .string()
      .max(1024)
      .optional()
      .describe('list: key prefix below the configured prefix; placeholders allowed.'),
    format,
    delimiter,
    has_header: hasHeader,
    content: z
      .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
      .optional()
      .describe(
        'write: the object content (text, a JSON object or an array of records); placeholders allowed.',
      ),
    content_type: contentType,
    overwrite,
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.operation !== 'list' && !s.key)
      ctx.addIssue({ code: 'custom', path: ['key'], message: `a ${s.operation} needs a key` });
    if (s.operation === 'write' && s.content === undefined)
      ctx.addIssue({ code: 'custom', path: ['content'], message: 'a write needs content' });
    if (s.operation !== 'write' && s.content !== undefined)
      ctx.addIssue({ code: 'custom', path: ['content'], message: 'content belongs to write' });
    if (s.operation === 'write' && s.format === 'parquet')
      ctx.addIssue({ code: 'custom', path: ['format'], message: 'writing Parquet is not supported' });
  })
  .describe('S3 statement: list objects, read one object, or write one.');
export type S3Statement = z.infer<typeof s3StatementSchema>;

/** `operation_type: s3` of a pipeline step; checked here because the engine leaves it open. */
export const s3OperationSchema = z
  .object({
    operation_type: z.literal('s3'),
    operation: z.enum(['list', 'read', 'write']).optional(),
    key: key.optional(),
    prefix: z.string().max(1024).optional(),
    format,
    delimiter,
    has_header: hasHeader,
    content_type: contentType,
    overwrite,
    part_size_mib: z
      .int()
      .min(5)
      .max(512)
      .default(8)
      .describe('Size of each part of a multipart upload, in MiB (default 8).'),
  })
  .strict();
export type S3Operation = z.infer<typeof s3OperationSchema>;
