import { loadedWithConnector } from '../capabilities';
import type { ConnectorDefinition } from '../types';
import {
  type GitConfig,
  type GitCredentials,
  type GitStatement,
  gitConfigSchema,
  gitCredentialsSchema,
  gitOperationSchema,
  gitStatementSchema,
} from './config';
import { executeGit, importSchema, listBranches, sampleFields, test } from './operations';
import { gitRepositoryId, gitSnapshot } from './proof';
import { writeGit } from './sink';
import { readGit } from './source';

export * from './config';

// The git connector (docs/connectors/git.md): any HTTPS or SSH git server through the git
// CLI (cli.ts has the sandbox). Test connection lists the remote and checks default_branch
// and base_path; schema import lists the files under base_path with the fields of CSV and
// JSON files; saved queries read, write and list branches; pipelines read and commit files.

export const gitConnector = {
  type: 'git',
  label: 'Git',
  configSchema: gitConfigSchema,
  credentialsSchema: gitCredentialsSchema,
  credentialDestination: ['repo_url'],
  credentialsRequired: true,
  defaultReadOnly: false,
  test,
  query: { statementSchema: gitStatementSchema, resultType: 'git', execute: executeGit },
  discover: { importSchema },
  branches: { listBranches },
  source: { operation: gitOperationSchema, read: readGit, load: loadedWithConnector },
  sink: { operation: gitOperationSchema, write: writeGit, load: loadedWithConnector },
  proof: {
    repositoryId: gitRepositoryId,
    snapshot: (conn, ctx, at) => gitSnapshot(conn, ctx, at, sampleFields),
  },
} satisfies ConnectorDefinition<GitConfig, GitCredentials, GitStatement>;
