import { loadedBy } from '../capabilities';
import type { ConnectorDefinition } from '../types';
import {
  type FtpConfig,
  type FtpCredentials,
  type FtpStatement,
  ftpConfigSchema,
  ftpCredentialsSchema,
  ftpOperationSchema,
  ftpStatementSchema,
} from './config';

// FTP and explicit FTPS (docs/connectors/ftp.md): files below base_path read and written as
// CSV, JSON, spreadsheets or raw bytes, in saved queries and pipeline steps.

export { ftpConfigSchema, ftpCredentialsSchema, ftpStatementSchema } from './config';

// The pipeline code loads on first use; `load` loads the same (capabilities.ts).
const sourceCode = () => import('./source');
const sinkCode = () => import('./sink');

export const ftpConnector = {
  type: 'ftp',
  label: 'FTP',
  configSchema: ftpConfigSchema,
  credentialsSchema: ftpCredentialsSchema,
  credentialDestination: ['host', 'port'],
  credentialsRequired: true,
  defaultReadOnly: false,
  // The driver loads on first use, so a process that never talks to this kind never holds it.
  test: async (conn, ctx) => (await import('./operations')).testFtp(conn, ctx),
  query: {
    statementSchema: ftpStatementSchema,
    resultType: 'ftp',
    execute: async (conn, statement, parameters, ctx) =>
      (await import('./operations')).executeFtp(conn, statement, parameters, ctx),
  },
  discover: { importSchema: async (conn, ctx) => (await import('./operations')).importFtpSchema(conn, ctx) },
  source: {
    operation: ftpOperationSchema,
    read: async (conn, step, ctx) => (await sourceCode()).readFtp(conn, step, ctx),
    load: loadedBy(sourceCode),
  },
  sink: {
    operation: ftpOperationSchema,
    write: async (conn, input, step, ctx) => (await sinkCode()).writeFtp(conn, input, step, ctx),
    load: loadedBy(sinkCode),
  },
} satisfies ConnectorDefinition<FtpConfig, FtpCredentials, FtpStatement>;
