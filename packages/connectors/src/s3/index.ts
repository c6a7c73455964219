import { loadedBy } from '../capabilities';
import type { ConnectorDefinition } from '../types';
import {
  type S3Config,
  type S3Credentials,
  type S3Statement,
  s3ConfigSchema,
  s3CredentialsSchema,
  s3OperationSchema,
  s3StatementSchema,
} from './config';

// Amazon S3 and S3-compatible stores (docs/connectors/s3.md). The AWS SDK and the code below load
// only when an S3 data source is used; every call builds its own client and destroys it before
// returning.

export { s3ConfigSchema, s3CredentialsSchema, s3StatementSchema };

// The pipeline code loads on first use; `load` loads the same (capabilities.ts).
const sourceCode = () => import('./source');
const sinkCode = () => import('./sink');
const s3Module = async () => (await import('./client')).s3Module();
const uploadModule = async () => (await import('./objects')).uploadModule();

export const s3Connector = {
  type: 's3',
  label: 'Amazon S3',
  configSchema: s3ConfigSchema,
  credentialsSchema: s3CredentialsSchema,
  credentialDestination: ['endpoint'],
  credentialsRequired: true,
  defaultReadOnly: false,
  test: async (conn, ctx) => (await import('./operations')).testS3(conn, ctx),
  query: {
    statementSchema: s3StatementSchema,
    resultType: 's3',
    execute: async (conn, statement, parameters, ctx) =>
      (await import('./operations')).executeS3(conn, statement, parameters, ctx),
  },
  discover: { importSchema: async (conn, ctx) => (await import('./operations')).importS3Schema(conn, ctx) },
  source: {
    operation: s3OperationSchema,
    read: async (conn, step, ctx) => (await sourceCode()).readS3(conn, step, ctx),
    load: loadedBy(sourceCode, s3Module),
  },
  sink: {
    operation: s3OperationSchema,
    write: async (conn, input, step, ctx) => (await sinkCode()).writeS3(conn, input, step, ctx),
    load: loadedBy(sinkCode, s3Module, uploadModule),
  },
} satisfies ConnectorDefinition<S3Config, S3Credentials, S3Statement>;
