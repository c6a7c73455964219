import { forgeOperations } from '../gitforge/operations';
import { githubForge } from './client';

// The core test, branches, schema import and saved queries: the shared forge code on GitHub's client.
export const {
  test: testGithub,
  listBranches: listGithubBranches,
  importSchema: importGithubSchema,
  execute: executeGithub,
} = forgeOperations(githubForge);
