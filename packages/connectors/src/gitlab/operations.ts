import { forgeOperations } from '../gitforge/operations';
import { gitlabForge } from './client';

// The core test, branches, schema import and saved queries: the shared forge code on GitLab's client.
export const {
  test: testGitlab,
  listBranches: listGitlabBranches,
  importSchema: importGitlabSchema,
  execute: executeGitlab,
} = forgeOperations(gitlabForge);
