import type { ConnectorDefinition } from '../types';
import { executeFtp, importFtpSchema, testFtp } from './operations';
import { readFtp, writeFtp } from './pipeline';
import {
  type FtpConfig,
  type FtpCredentials,
  type FtpStatement,
  ftpConfigSchema,
  ftpCredentialsSchema,
  ftpOperationSchema,
  ftpStatementSchema,
} from './schemas';

// FTP and explicit FTPS (docs/connectors/ftp.md): files below base_path read and written as
// CSV, JSON, spreadsheets or raw bytes, in saved queries and pipeline steps.

export { ftpConfigSchema, ftpCredentialsSchema, ftpStatementSchema } from './schemas';

export const ftpConnector: ConnectorDefinition<FtpConfig, FtpCredentials, FtpStatement> = {
  type: 'ftp',
  label: 'FTP',
  configSchema: ftpConfigSchema,
  credentialsSchema: ftpCredentialsSchema,
  credentialDestination: ['host', 'port'],
  credentialsRequired: true,
  defaultReadOnly: false,
  statementSchema: ftpStatementSchema,
  resultType: 'ftp',
  pipelineOperation: { source: ftpOperationSchema, sink: ftpOperationSchema },
  test: (conn, ctx) => testFtp(conn, ctx),
  importSchema: (conn, ctx) => importFtpSchema(conn, ctx),
  execute: (conn, statement, parameters, ctx) => executeFtp(conn, statement, parameters, ctx),
  read: (conn, step, ctx) => readFtp(conn, step, ctx),
  write: (conn, input, step, ctx) => writeFtp(conn, input, step, ctx),
};
