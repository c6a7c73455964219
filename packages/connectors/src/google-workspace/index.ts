import { z } from 'zod';
import { serviceAccountJsonField } from '../fields';
import type { ConnectorDefinition } from '../types';
import type { WorkspaceConnection } from './client';
import { executeWorkspace, importWorkspaceSchema, testWorkspace } from './operations';
import { writeWorkspace } from './sink';
import { readWorkspace } from './source';
import {
  googleId,
  googleWorkspaceStatementSchema,
  type WorkspaceStatement,
  workspaceStepSchema,
} from './statement';

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

export const googleWorkspaceConnector = {
  type: 'google_workspace',
  label: 'Google Workspace',
  configSchema: googleWorkspaceConfigSchema,
  credentialsSchema: googleWorkspaceCredentialsSchema,
  credentialDestination: [],
  credentialsRequired: true,
  defaultReadOnly: false,
  test: (conn, ctx) => testWorkspace(conn as WorkspaceConnection, ctx),
  query: {
    statementSchema: googleWorkspaceStatementSchema,
    resultType: 'workspace_file',
    execute: (conn, statement, parameters, ctx) =>
      executeWorkspace(conn as WorkspaceConnection, statement as WorkspaceStatement, parameters, ctx),
  },
  discover: { importSchema: (conn, ctx) => importWorkspaceSchema(conn as WorkspaceConnection, ctx) },
  source: {
    operation: workspaceStepSchema,
    read: (conn, step, ctx) => readWorkspace(conn as WorkspaceConnection, step, ctx),
  },
  sink: {
    operation: workspaceStepSchema,
    write: (conn, input, step, ctx) => writeWorkspace(conn as WorkspaceConnection, input, step, ctx),
  },
} satisfies ConnectorDefinition;
