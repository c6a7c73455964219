import { startGitHttpsPeer } from '../../peers/git-https';
import { commitFiles } from '../../peers/git-repos';
import { type ConformanceFixture, configOf, contextFor, type Target } from './fixture';

// Git over HTTPS: the real `git http-backend` behind a token check. The network timeout of git
// is the operator's setting (SLUICE_GIT_TIMEOUT_SECONDS, docs/connectors/git.md).

const TIMEOUT_SECONDS = 3;
const TOKEN = `ghp_Conformance${Math.random().toString(36).slice(2, 12)}`;

const connection = (t: Target, token: string) => {
  process.env.SLUICE_GIT_TIMEOUT_SECONDS = String(TIMEOUT_SECONDS);
  return {
    conn: {
      config: configOf('git', {
        repo_url: `https://${t.host}:${t.port}/shop.git`,
        allow_private_hosts: t.allowPrivate,
      }),
      credentials: { auth_type: 'https', username: 'sluice', token },
    },
    ctx: contextFor(t),
  };
};

export const gitFixture: ConformanceFixture = {
  at: (t) => connection(t, TOKEN),
  silentTimeoutSeconds: TIMEOUT_SECONDS,
  sinkOperation: { operation_type: 'git', path: 'conformance/people.csv', branch: 'main', format: 'csv' },
  async live() {
    const peer = await startGitHttpsPeer({ token: TOKEN });
    // git must trust the peer's certificate (as an operator's private CA would be trusted).
    const savedCa = process.env.GIT_SSL_CAINFO;
    process.env.GIT_SSL_CAINFO = peer.caFile;
    commitFiles(peer.createRepo('shop'), 'main', { 'README.md': '# shop\n' });
    const at = { host: '127.0.0.1', port: peer.port, allowPrivate: true };
    return {
      good: connection(at, TOKEN),
      badCredentials: connection(at, 'ghp_NotTheRightToken123'),
      roundTrip: { name: 'conformance/people.csv', fields: ['id', 'name'], throughSink: true },
      close: async () => {
        process.env.GIT_SSL_CAINFO = savedCa;
        await peer.close();
      },
    };
  },
};
