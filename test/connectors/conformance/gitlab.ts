import { startGitlabFake } from '../../peers/gitlab-api';
import type { ConformanceFixture, Target } from './fixture';
import { FORGE_TIMEOUT_SECONDS, forgeReach, forgeSinkOperation } from './forge';

// GitLab: the stateful fake of API v4 (tokens, projects, files, commits).

const reach = (t: Target, token: string, baseUrl?: string) =>
  forgeReach('gitlab', t, { project: 'acme/data' }, token, baseUrl);

export const gitlabFixture: ConformanceFixture = {
  at: (t) => reach(t, 'glo_unused'),
  silentTimeoutSeconds: FORGE_TIMEOUT_SECONDS,
  sinkOperation: forgeSinkOperation,
  async live() {
    const fake = await startGitlabFake();
    fake.addProject('acme/data', { files: { 'README.md': '# hi\n' } });
    const token = fake.issueToken().access_token;
    const at = { host: '127.0.0.1', port: Number(new URL(fake.url).port), allowPrivate: true };
    return {
      good: reach(at, token, fake.url),
      badCredentials: reach(at, 'glo_not-a-token-at-all', fake.url),
      roundTrip: { name: 'conformance/people.csv', throughSink: true },
      close: async () => fake.close(),
    };
  },
};
