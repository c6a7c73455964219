import { configOf, contextFor, type Target } from './fixture';

// What the github and gitlab fixtures share: an OAuth access token as the credentials, the
// fake API's URL as base_url, and a file committed through the sink.

export const forgeReach = (
  type: 'github' | 'gitlab',
  t: Target,
  config: Record<string, unknown>,
  token: string,
  baseUrl = `http://${t.host}:${t.port}`,
) => ({
  conn: {
    config: configOf(type, { ...config, base_url: baseUrl, allow_private_hosts: t.allowPrivate }),
    credentials: { access_token: token },
  },
  ctx: contextFor(t),
});

export const forgeSinkOperation = { operation_type: 'git', path: 'conformance/people.csv', format: 'csv' };

/** The forge's own request timeout (gitforge/transport.ts). */
export const FORGE_TIMEOUT_SECONDS = 30;
