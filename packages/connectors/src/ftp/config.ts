import { z } from 'zod';
import { allowPrivateHostsField, hostField, portField, secretField, timeoutSecondsField } from '../fields';

// The FTP shapes of docs/connectors/ftp.md, exact: config, write-only
// credentials, the saved-query statement, and the pipeline operation built from it.

export const ftpConfigSchema = z
  .object({
    host: hostField.describe('FTP server host name or IP address.'),
    port: portField(21),
    base_path: z.string().max(1024).optional().describe('Directory that statement paths are relative to.'),
    connect_timeout: timeoutSecondsField(300, 5).describe(
      'Connect timeout in seconds, 1 to 300 (default 5).',
    ),
    allow_private_hosts: allowPrivateHostsField,
  })
  .strict()
  .describe('FTP connector configuration.');

export const ftpCredentialsSchema = z
  .object({
    username: z.string().min(1).max(1024).describe('FTP user name.'),
    password: secretField('FTP password.'),
  })
  .strict()
  .describe('FTP credentials. Write-only.');

const placeholderPath = z.string().min(1).max(2048);

export const ftpStatementSchema = z
  .object({
    type: z.literal('ftp').describe('Statement type: `ftp`.'),
    path: placeholderPath.describe('File path (relative to base_path); `{{name}}` placeholders allowed.'),
    operation: z.enum(['read', 'write']).default('read').describe('Read or write the file (default read).'),
    format: z
      .enum(['auto', 'csv', 'json', 'file', 'spreadsheet'])
      .default('auto')
      .describe('How the file is interpreted (default auto).'),
    delimiter: z.string().length(1).optional().describe('CSV delimiter, one character.'),
    has_header: z
      .boolean()
      .optional()
      .describe('Whether the first CSV or spreadsheet row holds column names.'),
    overwrite: z.boolean().default(true).describe('Replace an existing file when writing (default true).'),
    sheet: z.string().max(255).optional().describe('Spreadsheet sheet name.'),
    range: z.string().max(64).optional().describe('A1 range within the sheet.'),
    content: z
      .union([z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown())), z.string()])
      .optional()
      .describe('What to write: an object, an array of objects or a string.'),
  })
  .strict()
  .describe('FTP statement.');

export type FtpConfig = z.infer<typeof ftpConfigSchema>;
export type FtpCredentials = z.infer<typeof ftpCredentialsSchema>;
export type FtpStatement = z.infer<typeof ftpStatementSchema>;
export type FtpConn = { config: FtpConfig; credentials: FtpCredentials | null };

/**
 * A pipeline step's `ftp` operation: the statement's fields under `operation_type: ftp`. A source
 * reads; a sink writes its upstream payload (`content` is not used there).
 */
export const ftpOperationSchema = ftpStatementSchema
  .omit({ type: true, content: true, operation: true })
  .extend({
    operation_type: z.literal('ftp'),
    operation: z.enum(['read', 'write']).optional(),
  })
  .strict();
export type FtpOperation = z.infer<typeof ftpOperationSchema>;
