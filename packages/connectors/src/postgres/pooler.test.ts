import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PgBouncerPeer, startPgBouncer } from '../../../../test/peers/pgbouncer';
import { stepContext } from '../../../../test/support/step-context';
import { egressPolicy } from '../egress';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import type { PgConnection } from './connect';
import { postgres, postgresConfigSchema } from './index';

// A data source that points at PgBouncer (Debian's 1.18, transaction pooling, in front of the
// real server) instead of PostgreSQL itself: every Sluice session carries its statement limit,
// and a read-only one its READ ONLY default, as startup settings, which PgBouncer refuses. The
// connection test and a pipeline read say so (docs/connectors/postgres.md), instead of
// "closed the connection".

const ADMIN_URL = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };

let bouncer: PgBouncerPeer;
beforeAll(async () => {
  bouncer = await startPgBouncer({ serverUrl: ADMIN_URL });
}, 120_000);
afterAll(async () => {
  await bouncer?.close();
});

const behindPooler = (): PgConnection => ({
  config: postgresConfigSchema.parse({
    host: '127.0.0.1',
    port: bouncer.port,
    database: 'postgres',
    user: 'postgres',
    allow_private_hosts: true,
  }),
  credentials: { password: 'unused' },
});

describe('a PostgreSQL data source that points at PgBouncer', () => {
  it('fails its connection test with the pooler named and the way out', async () => {
    const tested = postgres.test(behindPooler(), ctx);
    await expect(tested).rejects.toBeInstanceOf(ConnectorError);
    await expect(tested).rejects.toMatchObject({
      code: 'CONNECTION_FAILED',
      message: expect.stringMatching(
        /refused the session's settings \(unsupported startup parameter: statement_timeout\): .*PgBouncer.*point the data source at the PostgreSQL server itself/,
      ),
    });
  });

  it('fails a read-only pipeline read the same way, before any statement', async () => {
    const step = stepContext({
      kind: 'source',
      data_source_ref: 'db',
      operation: { operation_type: 'sql', sql: 'SELECT 1 AS n' },
    });
    const read = postgres.source.read(behindPooler(), step, ctx);
    await expect(read).rejects.toBeInstanceOf(ConnectorError);
    await expect(read).rejects.toMatchObject({
      code: 'CONNECTION_FAILED',
      message: expect.stringMatching(/unsupported startup parameter/),
    });
    expect(bouncer.log()).toMatch(/unsupported startup parameter: statement_timeout/);
  });
});
