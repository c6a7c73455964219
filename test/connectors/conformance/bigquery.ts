import { startBigQueryFake } from '../../peers/bigquery-api';
import { type ConformanceFixture, configOf, type Target } from './fixture';
import { accountFor, googleContext } from './google';

// BigQuery: the fake REST API (JWT flow, jobs, tables) at the operator-set Google API root.

const config = (timeout: number) =>
  configOf('bigquery', { project_id: 'test-project', default_dataset: 'shop', timeout_seconds: timeout });

// Signing the token request takes CPU before anything connects: a second is too tight on a
// loaded machine for a refused port to be told from a silent one.
const TIMEOUT_SECONDS = 5;

export const bigqueryFixture: ConformanceFixture = {
  at: (t: Target) => {
    const ctx = googleContext(t);
    const root = ctx.endpoints?.googleApiRoot ?? '';
    return {
      conn: { config: config(TIMEOUT_SECONDS), credentials: { service_account_json: accountFor(root).json } },
      ctx,
    };
  },
  silentTimeoutSeconds: TIMEOUT_SECONDS,
  sinkOperation: { operation_type: 'sql', write: { table: 'people', mode: 'insert' } },
  async live() {
    const fake = await startBigQueryFake();
    const sa = accountFor(fake.url);
    fake.oauth.trust(sa.email, sa.publicKey);
    fake.createTable('shop', 'people', [
      { name: 'id', type: 'INTEGER' },
      { name: 'name', type: 'STRING' },
    ]);
    const at = { host: '127.0.0.1', port: Number(new URL(fake.url).port), allowPrivate: true };
    const ctx = googleContext(at, fake.url);
    return {
      good: { conn: { config: config(10), credentials: { service_account_json: sa.json } }, ctx },
      badCredentials: {
        conn: {
          config: config(10),
          // Signed by a key the fake does not trust: the same account name, another key.
          credentials: { service_account_json: accountFor(fake.url, 'stranger').json },
        },
        ctx,
      },
      roundTrip: { name: 'shop.people', fields: ['id', 'name'], throughSink: true },
      close: async () => fake.close(),
    };
  },
};
