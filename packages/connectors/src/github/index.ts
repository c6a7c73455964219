import { forgeCore } from '../gitforge/kind';
import { forgeFetchModule } from '../gitforge/transport';
import type { ConnectorDefinition } from '../types';
import { githubModule } from './client';
import {
  githubConfigSchema,
  githubSinkOperation,
  githubSourceOperation,
  githubStatementSchema,
} from './config';
import { executeGithub, importGithubSchema, listGithubBranches, testGithub } from './operations';
import { githubProof } from './proof';
import { writeGithub } from './sink';
import { readGithub } from './source';

// GitHub (docs/connectors/github.md): the shared hosted-forge code (gitforge/) on GitHub's own SDK
// client (client.ts). The SDK is loaded on first use.

/** What the client loads on its first call (types.ts SourceCapability.load). */
const loadClient = async () => {
  await Promise.all([githubModule(), forgeFetchModule()]);
};

export * from './config';

export const githubConnector = {
  type: 'github',
  label: 'GitHub',
  configSchema: githubConfigSchema,
  ...forgeCore,
  test: testGithub,
  query: { statementSchema: githubStatementSchema, resultType: 'git', execute: executeGithub },
  discover: { importSchema: importGithubSchema },
  branches: { listBranches: listGithubBranches },
  source: { operation: githubSourceOperation, read: readGithub, load: loadClient },
  sink: { operation: githubSinkOperation, write: writeGithub, load: loadClient },
  proof: { repositoryId: githubProof.repositoryId, snapshot: githubProof.snapshot },
  checks: { publish: githubProof.publish },
} satisfies ConnectorDefinition;
