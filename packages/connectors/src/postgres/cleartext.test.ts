import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CleartextPgPeer, startCleartextPgPeer } from '../../../../test/peers/pg-cleartext';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import { postgres } from './index';

// A server asking for the password in cleartext (pg_hba `password`, or a fake PostgreSQL) only
// gets it over TLS or on a private host the data source opted into with allow_private_hosts.
describe('postgres: cleartext password authentication', () => {
  let peer: CleartextPgPeer;
  const PASSWORD = 'canary-pg-cleartext-51c0e2';
  beforeAll(async () => {
    peer = await startCleartextPgPeer();
  });
  afterAll(() => peer?.close());

  const conn = (config: Record<string, unknown>) => ({
    config: postgres.configSchema.parse({
      host: '127.0.0.1',
      port: peer.port,
      database: 'app',
      user: 'etl',
      ...config,
    }),
    credentials: { password: PASSWORD },
  });

  async function testWith(config: Record<string, unknown>, ctx: ConnectorContext) {
    return postgres.test(conn(config), ctx).then(
      () => null,
      (e) => e,
    );
  }

  it('refuses to send it to a host reached only through the operator allowlist', async () => {
    // The operator allowlists loopback; the data source did not ask for private hosts.
    const ctx: ConnectorContext = {
      policy: { allowPrivate: false, allowCidrs: ['127.0.0.1/32'] },
      limits: defaultLimits,
    };
    const err = await testWith({}, ctx);
    expect(err).toBeInstanceOf(ConnectorError);
    expect(err.code).toBe('AUTHENTICATION_FAILED');
    expect(err.message).toMatch(/cleartext/);
    expect(err.message).not.toContain(PASSWORD);
    expect(peer.received()).not.toContain(PASSWORD);
  });

  it('sends it on a private host the data source opted into (the peer would notice)', async () => {
    const ctx: ConnectorContext = { policy: { allowPrivate: true }, limits: defaultLimits };
    const err = await testWith({ allow_private_hosts: true }, ctx);
    expect(err?.code).toBe('AUTHENTICATION_FAILED');
    expect(peer.received()).toContain(PASSWORD);
  });
});
