import { randomBytes } from 'node:crypto';
import { mongoDataSource, startMongoTarget } from '../../peers/mongo-target';
import { type ConformanceFixture, configOf, contextFor, type Target } from './fixture';

// MongoDB: the wire-protocol peer with SCRAM users (or MONGO_URL's real server).

const reach = (
  t: Target,
  source: { config: Record<string, unknown>; credentials: Record<string, unknown> },
) => ({
  conn: {
    config: configOf('mongodb', { ...source.config, allow_private_hosts: t.allowPrivate }),
    credentials: source.credentials,
  },
  ctx: contextFor(t),
});

export const mongodbFixture: ConformanceFixture = {
  at: (t) =>
    reach(t, {
      config: { hosts: [`${t.host}:${t.port}`], database: 'shop', username: 'sluice', tls: false },
      credentials: { password: 'unused' },
    }),
  // The connector's own connect timeout (CONNECT_TIMEOUT_SECONDS in mongodb/connect.ts).
  silentTimeoutSeconds: 5,
  sinkOperation: { operation_type: 'mongodb', collection: 'conformance_people', write: { mode: 'insert' } },
  async live() {
    const target = await startMongoTarget();
    const db = `sluice_cf_${randomBytes(4).toString('hex')}`;
    const at = { host: '127.0.0.1', port: 0, allowPrivate: true };
    return {
      good: reach(at, mongoDataSource(target, db)),
      badCredentials: reach(at, mongoDataSource(target, db, `Wrong-${randomBytes(6).toString('hex')}`)),
      roundTrip: { name: 'conformance_people', fields: ['id', 'name'], throughSink: true },
      close: async () => {
        await target.admin
          .db(db)
          .dropDatabase()
          .catch(() => {});
        await target.close();
      },
    };
  },
};
