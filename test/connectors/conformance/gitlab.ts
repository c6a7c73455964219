import { startGitlabFake } from '../../peers/gitlab-api';
import { forgeFixture } from './forge';

// GitLab: the stateful fake of API v4 (tokens, projects, files, commits).

export const gitlabFixture = forgeFixture('gitlab', { project: 'acme/data' }, async () => {
  const fake = await startGitlabFake();
  fake.addProject('acme/data', { files: { 'README.md': '# hi\n' } });
  return fake;
});
