import { googleAuthModules } from '../google/auth';
import type { ConnectorDefinition } from '../types';
import type { WorkspaceConnection } from './client';
import {
  googleWorkspaceConfigSchema,
  googleWorkspaceCredentialsSchema,
  googleWorkspaceStatementSchema,
  type WorkspaceStatement,
  workspaceStepSchema,
} from './config';
import { executeWorkspace, importWorkspaceSchema, testWorkspace } from './operations';
import { writeWorkspace } from './sink';
import { readWorkspace } from './source';

/** What the client loads on its first call (types.ts SourceCapability.load). */
const loadClient = async () => {
  await Promise.all([import('@googleapis/sheets'), import('@googleapis/drive'), googleAuthModules()]);
};

export * from './config';
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
    load: loadClient,
  },
  sink: {
    operation: workspaceStepSchema,
    write: (conn, input, step, ctx) => writeWorkspace(conn as WorkspaceConnection, input, step, ctx),
    load: loadClient,
  },
} satisfies ConnectorDefinition;
