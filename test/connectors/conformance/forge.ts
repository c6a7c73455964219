import type { ConformanceFixture, Target } from './fixture';
import { configOf, contextFor, SUITE_ANSWER_TIMEOUT_MS } from './fixture';

// The github and gitlab fixtures are one: an OAuth access token as the credentials, the fake
// API's URL as base_url, and a file committed through the sink.

type ForgeFake = { url: string; issueToken(): { access_token: string }; close(): unknown };

export function forgeFixture(
  type: 'github' | 'gitlab',
  config: Record<string, unknown>,
  start: () => Promise<ForgeFake>,
): ConformanceFixture {
  const reach = (t: Target, token: string, baseUrl = `http://${t.host}:${t.port}`) => ({
    conn: {
      config: configOf(type, { ...config, base_url: baseUrl, allow_private_hosts: t.allowPrivate }),
      credentials: { access_token: token },
    },
    ctx: contextFor(t),
  });
  return {
    at: (t) => reach(t, 'token-unused'),
    // The suite's answer timeout, in place of the forge's own 30 s (gitforge/transport.ts).
    silentTimeoutSeconds: SUITE_ANSWER_TIMEOUT_MS / 1000,
    sinkOperation: { operation_type: 'git', path: 'conformance/people.csv', format: 'csv' },
    async live() {
      const fake = await start();
      const at = { host: '127.0.0.1', port: Number(new URL(fake.url).port), allowPrivate: true };
      return {
        good: reach(at, fake.issueToken().access_token, fake.url),
        badCredentials: reach(at, 'not-a-token-at-all', fake.url),
        roundTrip: { name: 'conformance/people.csv', throughSink: true },
        close: async () => {
          await fake.close();
        },
      };
    },
  };
}
