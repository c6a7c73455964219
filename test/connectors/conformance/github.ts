import { startGithubFake } from '../../peers/github-api';
import { forgeFixture } from './forge';

// GitHub: the stateful fake of the REST API (tokens, repositories, files, commits).

export const githubFixture = forgeFixture('github', { owner: 'acme', repo: 'repo' }, async () => {
  const fake = await startGithubFake();
  fake.addRepo('acme/repo', { files: { 'README.md': '# hi\n' } });
  return fake;
});
