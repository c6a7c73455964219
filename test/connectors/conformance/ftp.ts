import { FTP_PASSWORD, FTP_USER, startVsftpd } from '../../peers/vsftpd';
import { type ConformanceFixture, configOf, contextFor, type Target } from './fixture';

// FTP: a real vsftpd on loopback (plain FTP), with its user's root as the data source's files.

// vsftpd answers a failed login after a pause: the live connections wait longer.
const connection = (t: Target, password: string, timeout = 1) => ({
  conn: {
    config: configOf('ftp', {
      host: t.host,
      port: t.port,
      connect_timeout: timeout,
      allow_private_hosts: t.allowPrivate,
    }),
    credentials: { username: FTP_USER, password },
  },
  ctx: contextFor(t),
});

export const ftpFixture: ConformanceFixture = {
  at: (t) => connection(t, FTP_PASSWORD),
  silentTimeoutSeconds: 1,
  sinkOperation: { operation_type: 'ftp', path: 'conformance/people.csv' },
  async live() {
    const peer = await startVsftpd();
    const at = { host: peer.host, port: peer.port, allowPrivate: true };
    return {
      good: connection(at, FTP_PASSWORD, 10),
      badCredentials: connection(at, 'wrong-password-for-ftp', 10),
      roundTrip: { name: 'conformance/people.csv', fields: ['id', 'name'], throughSink: true },
      close: () => peer.close(),
    };
  },
};
