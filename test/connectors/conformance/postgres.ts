import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { startPostgresCluster } from '../../peers/postgres-cluster';
import { type ConformanceFixture, sqlReach } from './fixture';

// PostgreSQL: a throwaway cluster that checks scram-sha-256 passwords over TCP.

export const postgresFixture: ConformanceFixture = {
  at: (t) => sqlReach('postgres', t, 'postgres', 'sluice', 'unused'),
  silentTimeoutSeconds: 1,
  sinkOperation: { operation_type: 'sql', write: { table: 'public.conformance_people', mode: 'insert' } },
  async live() {
    const cluster = await startPostgresCluster();
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query(`CREATE ROLE sluice_t LOGIN PASSWORD '${password}'`);
    await admin.query('CREATE TABLE public.conformance_people (id integer, name text)');
    await admin.query('GRANT ALL ON SCHEMA public TO sluice_t');
    await admin.query('GRANT ALL ON public.conformance_people TO sluice_t');
    await writeFile(
      join(cluster.dir, 'data', 'pg_hba.conf'),
      'local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n',
    );
    await admin.query('SELECT pg_reload_conf()');
    const at = { host: '127.0.0.1', port: cluster.port, allowPrivate: true };
    return {
      good: sqlReach('postgres', at, 'postgres', 'sluice_t', password),
      badCredentials: sqlReach(
        'postgres',
        at,
        'postgres',
        'sluice_t',
        `wrong-${randomBytes(6).toString('hex')}`,
      ),
      roundTrip: { name: 'public.conformance_people', fields: ['id', 'name'], throughSink: true },
      countRows: async () =>
        Number((await admin.query('SELECT count(*) AS n FROM public.conformance_people')).rows[0].n),
      close: async () => {
        await admin.end();
        await cluster.destroy();
      },
    };
  },
};
