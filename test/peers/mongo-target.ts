import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { startMongoWire } from './mongo-wire';

// The MongoDB a test talks to: a real server when MONGO_URL is set
// (mongodb://user:password@host:port/?authSource=admin&tls=true), else the in-process wire
// peer with one SCRAM user. Either way tests seed and check data through the official driver
// (`admin`), never through the peer's internals.

export type MongoTarget = {
  hosts: string[];
  username: string | undefined;
  password: string | undefined;
  authSource: string;
  tls: boolean;
  /** A driver client with the same access, for seeding and assertions. */
  admin: MongoClient;
  real: boolean;
  close(): Promise<void>;
};

export async function startMongoTarget(): Promise<MongoTarget> {
  const url = process.env.MONGO_URL;
  if (url) {
    const u = new URL(url);
    const admin = new MongoClient(url, { serverSelectionTimeoutMS: 10_000 });
    await admin.connect();
    return {
      hosts: u.host.split(','),
      username: u.username ? decodeURIComponent(u.username) : undefined,
      password: u.password ? decodeURIComponent(u.password) : undefined,
      authSource: u.searchParams.get('authSource') ?? 'admin',
      tls: u.searchParams.get('tls') === 'true' || u.searchParams.get('ssl') === 'true',
      admin,
      real: true,
      close: () => admin.close(),
    };
  }
  const password = `peer-${randomBytes(8).toString('hex')}`;
  const peer = await startMongoWire({ users: [{ db: 'admin', user: 'sluice', password }] });
  const admin = new MongoClient(
    `mongodb://sluice:${password}@${peer.host}/?authSource=admin&directConnection=true`,
    {
      serverSelectionTimeoutMS: 5_000,
    },
  );
  await admin.connect();
  return {
    hosts: [peer.host],
    username: 'sluice',
    password,
    authSource: 'admin',
    tls: false,
    admin,
    real: false,
    close: async () => {
      await admin.close();
      await peer.close();
    },
  };
}

/** Connector config and credentials for a database of the target. */
export function mongoDataSource(t: MongoTarget, database: string, password = t.password) {
  return {
    config: {
      hosts: t.hosts,
      database,
      ...(t.username ? { username: t.username } : {}),
      auth_source: t.authSource,
      tls: t.tls,
      allow_private_hosts: true,
    },
    credentials: password === undefined ? {} : { password },
  };
}
