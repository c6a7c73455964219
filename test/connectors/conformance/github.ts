import { startGithubFake } from '../../peers/github-api';
import type { ConformanceFixture, Target } from './fixture';
import { FORGE_TIMEOUT_SECONDS, forgeReach, forgeSinkOperation } from './forge';

// GitHub: the stateful fake of the REST API (tokens, repositories, files, commits).

const reach = (t: Target, token: string, baseUrl?: string) =>
  forgeReach('github', t, { owner: 'acme', repo: 'repo' }, token, baseUrl);

export const githubFixture: ConformanceFixture = {
  at: (t) => reach(t, 'ghu_unused'),
  silentTimeoutSeconds: FORGE_TIMEOUT_SECONDS,
  sinkOperation: forgeSinkOperation,
  async live() {
    const fake = await startGithubFake();
    fake.addRepo('acme/repo', { files: { 'README.md': '# hi\n' } });
    const token = fake.issueToken().access_token;
    const at = { host: '127.0.0.1', port: Number(new URL(fake.url).port), allowPrivate: true };
    return {
      good: reach(at, token, fake.url),
      badCredentials: reach(at, 'ghu_not-a-token-at-all', fake.url),
      roundTrip: { name: 'conformance/people.csv', throughSink: true },
      close: async () => fake.close(),
    };
  },
};
