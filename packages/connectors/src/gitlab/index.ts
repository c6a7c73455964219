import { forgeCore } from '../gitforge/kind';
import { forgeFetchModule } from '../gitforge/transport';
import type { ConnectorDefinition } from '../types';
import { gitlabModules } from './client';
import {
  gitlabConfigSchema,
  gitlabSinkOperation,
  gitlabSourceOperation,
  gitlabStatementSchema,
} from './config';
import { executeGitlab, importGitlabSchema, listGitlabBranches, testGitlab } from './operations';
import { gitlabProof } from './proof';
import { writeGitlab } from './sink';
import { readGitlab } from './source';

// GitLab (docs/connectors/gitlab.md): the shared hosted-forge code (gitforge/) on GitLab's own SDK
// client (client.ts). The SDK is loaded on first use.

/** What the client loads on its first call (types.ts SourceCapability.load). */
const loadClient = async () => {
  await Promise.all([gitlabModules(), forgeFetchModule()]);
};

export * from './config';

export const gitlabConnector = {
  type: 'gitlab',
  label: 'GitLab',
  configSchema: gitlabConfigSchema,
  ...forgeCore,
  test: testGitlab,
  query: { statementSchema: gitlabStatementSchema, resultType: 'git', execute: executeGitlab },
  discover: { importSchema: importGitlabSchema },
  branches: { listBranches: listGitlabBranches },
  source: { operation: gitlabSourceOperation, read: readGitlab, load: loadClient },
  sink: { operation: gitlabSinkOperation, write: writeGitlab, load: loadClient },
  proof: { repositoryId: gitlabProof.repositoryId, snapshot: gitlabProof.snapshot },
  checks: { publish: gitlabProof.publish },
} satisfies ConnectorDefinition;
