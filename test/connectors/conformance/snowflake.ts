import { randomBytes } from 'node:crypto';
import { startSnowflakeApi } from '../../peers/snowflake-api';
import { type ConformanceFixture, configOf, contextFor, type Target } from './fixture';

// Snowflake: the fake of the REST protocol snowflake-sdk speaks (logins, queries, result chunks).

const PASSWORD = `SfPw-${randomBytes(12).toString('hex')}`;

// Plain http is for private hosts only, so a blocked target is https.
const reach = (
  t: Target,
  password: string,
  accessUrl = `${t.allowPrivate ? 'http' : 'https'}://${t.host}:${t.port}`,
  timeout = 3,
) => ({
  conn: {
    config: configOf('snowflake', {
      account: 'testorg-testacct',
      username: 'loader',
      warehouse: 'LOAD_WH',
      database: 'ANALYTICS',
      schema: 'PUBLIC',
      access_url: accessUrl,
      timeout_seconds: timeout,
      allow_private_hosts: t.allowPrivate,
    }),
    credentials: { password },
  },
  ctx: contextFor(t),
});

export const snowflakeFixture: ConformanceFixture = {
  at: (t) => reach(t, PASSWORD),
  // timeout_seconds 3, and a deadline 2 s after it over the SDK's retries (snowflake/connect.ts).
  silentTimeoutSeconds: 5,
  sinkOperation: { operation_type: 'sql', write: { table: 'PEOPLE', mode: 'insert' } },
  async live() {
    const peer = await startSnowflakeApi({
      users: [{ name: 'loader', password: PASSWORD, roles: ['LOADER', 'PUBLIC'] }],
      tables: [
        {
          schema: 'PUBLIC',
          name: 'PEOPLE',
          columns: [
            { name: 'ID', type: 'NUMBER(38,0)' },
            { name: 'NAME', type: 'VARCHAR' },
          ],
          rows: [],
        },
      ],
    });
    const at = { host: '127.0.0.1', port: Number(new URL(peer.url).port), allowPrivate: true };
    return {
      good: reach(at, PASSWORD, peer.url, 10),
      badCredentials: reach(at, 'wrong-password-for-snowflake', peer.url, 10),
      roundTrip: { name: 'PUBLIC.PEOPLE', fields: ['ID', 'NAME'], throughSink: true },
      close: () => peer.close(),
    };
  },
};
