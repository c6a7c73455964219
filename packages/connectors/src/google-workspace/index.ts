import { z } from 'zod';
import { serviceAccountJsonField } from '../fields';
import type { ConnectorDefinition } from '../types';

const googleId = (what: string) =>
  z
    .string()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9_-]+$/, 'the id from the document or folder URL')
    .describe(what);

export const googleWorkspaceConfigSchema = z
  .object({
    spreadsheet_id: googleId('Spreadsheet to read and write (the id in its URL).').optional(),
    drive_folder_id: googleId('Drive folder whose files are listed and read.').optional(),
  })
  .strict()
  .describe('Google Workspace connector configuration: a spreadsheet, a Drive folder, or both.');

export const googleWorkspaceCredentialsSchema = z
  .object({ service_account_json: serviceAccountJsonField })
  .strict()
  .describe('Google Workspace credentials: a service account the files are shared with. Write-only.');

export const googleWorkspaceConnector: ConnectorDefinition = {
  type: 'google_workspace',
  label: 'Google Workspace',
  configSchema: googleWorkspaceConfigSchema,
  credentialsSchema: googleWorkspaceCredentialsSchema,
  credentialsRequired: true,
  defaultReadOnly: false,
  statementSchema: null,
  resultType: 'workspace_file',
};
