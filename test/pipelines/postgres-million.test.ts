import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgQuery } from '../support/runs';
import {
  checkpoints,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  pgDataSource,
  runToEnd,
  scratchRuntime,
  stepOf,
} from './support';

// One million rows from PostgreSQL to PostgreSQL through the API and the worker, on PostgreSQL
// as the platform store: every row arrives (count, sum of ids, a checksum of a text column and
// of a numeric one agree on both sides) and the run's counters say so.

const N = 1_000_000;
const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const STORE_DB = `sluice_pm_${id}`;
const SOURCE_DB = `sluice_pm_src_${id}`;
const SINK_DB = `sluice_pm_dst_${id}`;

const fingerprint = async (db: string) =>
  (
    await pgQuery(
      db,
      `select count(*)::bigint::text as n, sum(id)::text as ids, sum(amount)::text as amounts,
              md5(string_agg(label, ',' order by id)) as labels
         from items`,
    )
  )[0];

describe('PostgreSQL to PostgreSQL, one million rows', () => {
  let s: Awaited<ReturnType<typeof scratchRuntime>>;

  beforeAll(async () => {
    for (const db of [SOURCE_DB, SINK_DB]) {
      await pgQuery('postgres', `drop database if exists ${db} with (force)`);
      await pgQuery('postgres', `create database ${db}`);
      await pgQuery(
        db,
        'create table items (id bigint primary key, label text not null, amount numeric(12,2) not null)',
      );
    }
    await pgQuery(
      SOURCE_DB,
      `insert into items select g, md5(g::text) || case when g % 1000 = 0 then ' "quoted", ' || E'\\n' else '' end,
              (g % 100000) / 100.0
         from generate_series(1, ${N}) g`,
    );
    s = await scratchRuntime(STORE_DB, { worker: true });
    await createDataSource(s.call, pgDataSource('source-db', SOURCE_DB));
    await createDataSource(s.call, pgDataSource('sink-db', SINK_DB));
    await createProjectAndEnvironment(s.call);
    await deployPipeline(s.call, {
      pipeline: 'copy-items',
      spec: {
        steps: [
          {
            slug: 'read',
            kind: 'source',
            data_source_ref: 'source-db',
            operation: { operation_type: 'sql', sql: 'SELECT id, label, amount FROM items' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'sink-db',
            operation: { operation_type: 'sql', write: { table: 'items', mode: 'insert' } },
          },
        ],
        edges: [{ from: 'read', to: 'load' }],
      },
      bindings: { 'source-db': 'source-db', 'sink-db': 'sink-db' },
    });
  }, 180_000);

  afterAll(async () => {
    await s?.close();
    for (const db of [SOURCE_DB, SINK_DB])
      await pgQuery('postgres', `drop database if exists ${db} with (force)`);
  });

  it('accounts for every row', async () => {
    const started = Date.now();
    const run = await runToEnd(s.call, 'copy-items', { run_slug: 'million' }, 280_000);
    const seconds = (Date.now() - started) / 1000;
    expect(run, JSON.stringify(run)).toMatchObject({ state: 'succeeded', attempt: 1, error: null });
    expect(stepOf(run, 'read')).toMatchObject({ state: 'succeeded', rows_out: N });
    expect(stepOf(run, 'load')).toMatchObject({ state: 'succeeded', rows_in: N, rows_out: N });
    expect(stepOf(run, 'load').bytes_out).toBeGreaterThan(N * 40);

    const source = await fingerprint(SOURCE_DB);
    expect(source.n).toBe(String(N));
    expect(source.ids).toBe(String((N * (N + 1)) / 2));
    expect(await fingerprint(SINK_DB)).toEqual(source);
    // A SQL source has no cursor.
    expect(await checkpoints(s.call, 'copy-items')).toEqual([]);
    console.info(`1,000,000 rows PostgreSQL → PostgreSQL in ${seconds.toFixed(1)} s`);
  }, 300_000);
});
