import { onFirstCall } from '../lazy';
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

// Operations, source and sink load on first use (../lazy.ts).
const operations = () => import('./operations');

// Amazon S3 and S3-compatible stores (docs/connectors/s3.md). The AWS SDK is loaded only when
// an S3 data source is used; every call builds its own client and destroys it before returning.

export { s3ConfigSchema, s3CredentialsSchema, s3StatementSchema };

export const s3Connector = {
  type: 's3',
  label: 'Amazon S3',
  configSchema: s3ConfigSchema,
  credentialsSchema: s3CredentialsSchema,
  credentialDestination: ['endpoint'],
  credentialsRequired: true,
  defaultReadOnly: false,
  test: onFirstCall(operations, 'testS3'),
  query: {
    statementSchema: s3StatementSchema,
    resultType: 's3',
    execute: onFirstCall(operations, 'executeS3'),
  },
  discover: { importSchema: onFirstCall(operations, 'importS3Schema') },
  source: { operation: s3OperationSchema, read: onFirstCall(() => import('./source'), 'readS3') },
  sink: { operation: s3OperationSchema, write: onFirstCall(() => import('./sink'), 'writeS3') },
} satisfies ConnectorDefinition<S3Config, S3Credentials, S3Statement>;
