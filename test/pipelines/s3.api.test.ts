import { randomBytes } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { csvRecords } from '@sluice/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSilentTcpServer } from '../peers/silent-tcp';
import { type SwiftS3Peer, startSwiftS3 } from '../peers/swift-s3';
import { startTestApp, type TestApp } from '../support/app';
import { createSinkDatabase, dumpStore, pgQuery, waitUntil } from '../support/runs';
import {
  type Call,
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  ok,
  pgDataSource,
  runToEnd,
  stepOf,
} from './support';

// Issue 5 acceptance over the API with the in-process worker, against OpenStack Swift's s3api:
// connection tests and their failures, schema import, a saved query, and a 100,000-row CSV
// moved from S3 into PostgreSQL and from PostgreSQL back into S3 (multipart), every row
// accounted for; the secret access key is never in a response, error, log or stored record.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const PG_DB = `sluice_s3_pg_${id}`;
const BUCKET = `sluice-e2e-${randomBytes(4).toString('hex')}`;
const SECRET = `CanaryS3Secret${randomBytes(12).toString('hex')}`;
const ROWS = 100_000;

/** Row i of the source CSV: a quoted name with a comma, a decimal and a date. */
const row = (i: number) =>
  [
    i,
    `name ${i}, "q"`,
    ((i * 7) % 10_000) / 100,
    `2026-${String((i % 12) + 1).padStart(2, '0')}-15`,
  ] as const;
const csvField = (v: string | number) => (typeof v === 'string' ? `"${v.replace(/"/g, '""')}"` : String(v));

function sourceCsv(): string {
  const lines = ['id,name,score,day'];
  for (let i = 1; i <= ROWS; i++) lines.push(row(i).map(csvField).join(','));
  return `${lines.join('\n')}\n`;
}

describe('S3 connector through the API', () => {
  let peer: SwiftS3Peer;
  let s3: S3Client;
  let t: TestApp;
  let token: string;
  let pgSink: { drop(): Promise<unknown> };
  const bodies: string[] = [];
  const call: Call = async (method, url, body) => {
    const res = await t.call(method, url, { token, body });
    bodies.push(res.body);
    return res;
  };
  const s3Source = (slug: string, config: Record<string, unknown> = {}, secret = SECRET) => ({
    type: 's3',
    name: slug,
    slug,
    config: {
      bucket: BUCKET,
      endpoint: peer.endpoint,
      force_path_style: true,
      allow_private_hosts: true,
      ...config,
    },
    credentials: { access_key_id: peer.accessKeyId, secret_access_key: secret },
  });
  const testConnection = (slug: string) =>
    ok(call('POST', `${ORG}/data-sources/${slug}/test-connection`), 200);

  beforeAll(async () => {
    peer = await startSwiftS3({ secretAccessKey: SECRET });
    await peer.createBucket(BUCKET);
    s3 = new S3Client({
      endpoint: peer.endpoint,
      region: peer.region,
      forcePathStyle: true,
      credentials: { accessKeyId: peer.accessKeyId, secretAccessKey: SECRET },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    await s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: 'in/people.csv',
        Body: sourceCsv(),
        ContentType: 'text/csv',
      }),
    );

    pgSink = await createSinkDatabase(PG_DB);
    await pgQuery(
      PG_DB,
      'create table people (id bigint primary key, name text not null, score numeric(10,2), day date)',
    );

    t = await startTestApp({ worker: true });
    token = (await t.bootstrap('acme')).api_key;
    await createDataSource(call, s3Source('lake'));
    await createDataSource(call, pgDataSource('warehouse', PG_DB));
    await createProjectAndEnvironment(call);
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    s3?.destroy();
    await peer?.stop();
    await pgSink?.drop();
  });

  it('tests connections: success, bad credentials, unknown host, missing bucket, timeout', async () => {
    expect(await testConnection('lake')).toMatchObject({ ok: true, error: null });

    await createDataSource(call, s3Source('lake-bad-key', {}, `${SECRET}-wrong`));
    await createDataSource(
      call,
      s3Source('lake-no-host', { endpoint: 'http://s3.no-such-host.invalid:9000' }),
    );
    await createDataSource(call, s3Source('lake-no-bucket', { bucket: 'no-such-bucket-here' }));
    const silent = await startSilentTcpServer();
    try {
      await createDataSource(
        call,
        s3Source('lake-silent', { endpoint: `http://127.0.0.1:${silent.port}`, timeout_seconds: 1 }),
      );
      const cases: [string, string][] = [
        ['lake-bad-key', 'AUTHENTICATION_FAILED'],
        ['lake-no-host', 'HOST_NOT_FOUND'],
        ['lake-no-bucket', 'NOT_FOUND'],
        ['lake-silent', 'TIMEOUT'],
      ];
      for (const [slug, code] of cases) {
        const res = await testConnection(slug);
        expect(res, slug).toMatchObject({ ok: false, error: { code } });
        const ds = await ok(call('GET', `${ORG}/data-sources/${slug}`), 200);
        expect(ds.test_error).toBe(res.error.message);
      }
    } finally {
      await silent.close();
    }
  });

  it('imports a file schema and runs a saved query', async () => {
    const req = await ok(call('POST', `${ORG}/data-sources/lake/schema-import`), [200, 202]);
    expect(req.enqueued).toBe(true);
    const ds = await waitUntil(
      () => ok(call('GET', `${ORG}/data-sources/lake`), 200),
      (d) => d.schema_status !== 'importing',
    );
    expect(ds.schema_status, JSON.stringify(ds)).toBe('ready');
    expect(ds.schema).toMatchObject({ schema_type: 'file', type: 's3' });
    expect(ds.schema.files).toContainEqual({
      name: 'in/people.csv',
      resource_id: 'in/people.csv',
      mime_type: 'text/csv',
      fields: [
        { name: 'id', type: 'bigint' },
        { name: 'name', type: 'text' },
        { name: 'score', type: 'double' },
        { name: 'day', type: 'date' },
      ],
    });

    await ok(
      call('POST', `${ORG}/queries`, {
        name: 'peek',
        slug: 'peek',
        data_source_slug: 'lake',
        statement: { type: 's3', operation: 'read', key: '{{folder}}/people.csv' },
      }),
      201,
    );
    const exec = await ok(call('POST', `${ORG}/queries/peek:execute`, { parameters: { folder: 'in' } }), 200);
    expect(exec).toMatchObject({
      status: 'succeeded',
      result_type: 's3',
      row_count: 1000,
      truncated: true,
      error: null,
    });
    expect(exec.result).toMatchObject({
      type: 's3',
      success: true,
      payload: {
        operation: 'read',
        format: 'csv',
        key: 'in/people.csv',
        column_names: ['id', 'name', 'score', 'day'],
      },
    });
    expect(exec.result.payload.rows[0]).toEqual(row(1).map(String));

    await ok(
      call('POST', `${ORG}/queries`, {
        name: 'ls',
        slug: 'ls',
        data_source_slug: 'lake',
        statement: { type: 's3', operation: 'list', prefix: 'in/' },
      }),
      201,
    );
    const ls = await ok(call('POST', `${ORG}/queries/ls:execute`, { parameters: {} }), 200);
    expect(ls.result.payload.objects).toEqual([
      expect.objectContaining({ key: 'in/people.csv', size_bytes: expect.any(Number) }),
    ]);
  });

  it('moves 100,000 CSV rows from S3 into PostgreSQL and back into S3', async () => {
    await deployPipeline(call, {
      pipeline: 's3-to-pg',
      spec: {
        steps: [
          {
            slug: 'people-csv',
            kind: 'source',
            data_source_ref: 'lake',
            operation: { operation_type: 's3', key: 'in/people.csv' },
          },
          {
            slug: 'to-pg',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', write: { table: 'people', mode: 'insert' } },
          },
        ],
        edges: [{ from: 'people-csv', to: 'to-pg' }],
      },
      bindings: { lake: 'lake', warehouse: 'warehouse' },
    });
    const load = await runToEnd(call, 's3-to-pg', { run_slug: 'load-1' }, 120_000);
    expect(load, JSON.stringify(load)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(load, 'to-pg')).toMatchObject({ rows_out: ROWS });
    const [stats] = await pgQuery(
      PG_DB,
      `select count(*)::int as n, count(distinct id)::int as ids, sum(id)::text as ids_sum, sum(score)::text as score_sum,
              min(day)::text as first_day, max(day)::text as last_day from people`,
    );
    let scoreSum = 0;
    for (let i = 1; i <= ROWS; i++) scoreSum += (i * 7) % 10_000;
    expect(stats).toEqual({
      n: ROWS,
      ids: ROWS,
      ids_sum: String((ROWS * (ROWS + 1)) / 2),
      score_sum: (scoreSum / 100).toFixed(2),
      first_day: '2026-01-15',
      last_day: '2026-12-15',
    });
    expect((await pgQuery(PG_DB, 'select name from people where id = 42'))[0].name).toBe('name 42, "q"');

    await deployPipeline(call, {
      pipeline: 'pg-to-s3',
      spec: {
        steps: [
          {
            slug: 'people',
            kind: 'source',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', sql: 'SELECT id, name, score, day FROM people ORDER BY id' },
          },
          {
            slug: 'to-lake',
            kind: 'sink',
            data_source_ref: 'lake',
            operation: { operation_type: 's3', key: 'out/{{runtime.run_slug}}/people.csv', part_size_mib: 5 },
          },
        ],
        edges: [{ from: 'people', to: 'to-lake' }],
      },
      bindings: { lake: 'lake', warehouse: 'warehouse' },
    });
    const dump = await runToEnd(call, 'pg-to-s3', { run_slug: 'dump-1' }, 120_000);
    expect(dump, JSON.stringify(dump)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(dump, 'to-lake')).toMatchObject({ rows_in: ROWS, rows_out: ROWS });

    const got = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'out/dump-1/people.csv' }));
    expect(got.ContentType).toBe('text/csv');
    const records: (string | null)[][] = [];
    for await (const batch of csvRecords(got.Body as AsyncIterable<Uint8Array>, ',')) records.push(...batch);
    expect(records[0]).toEqual(['id', 'name', 'score', 'day']);
    expect(records).toHaveLength(ROWS + 1);
    for (let i = 1; i <= ROWS; i++) {
      const [rid, name, score, day] = row(i);
      const r = records[i];
      if (r[0] !== String(rid) || r[1] !== name || Number(r[2]) !== score || r[3] !== day)
        expect(r, `row ${i}`).toEqual([String(rid), name, score.toFixed(2), day]);
    }
  }, 300_000);

  it('keeps the secret access key out of every response, error, log and stored record', async () => {
    // A run that fails on the credentials leaves its error in the run record and its logs.
    await deployPipeline(call, {
      pipeline: 'bad-key',
      spec: {
        steps: [
          {
            slug: 'people-csv',
            kind: 'source',
            data_source_ref: 'lake',
            operation: { operation_type: 's3', key: 'in/people.csv' },
          },
          {
            slug: 'to-pg',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', write: { table: 'people', mode: 'insert' } },
          },
        ],
        edges: [{ from: 'people-csv', to: 'to-pg' }],
      },
      bindings: { lake: 'lake-bad-key', warehouse: 'warehouse' },
    });
    const failed = await runToEnd(call, 'bad-key', { run_slug: 'bad-key-1' }, 60_000);
    expect(failed.state, JSON.stringify(failed)).toBe('failed');
    expect(JSON.stringify(failed)).toContain('AUTHENTICATION_FAILED');
    await ok(call('GET', `${ORG}/projects/shop/environments/staging/runs/bad-key-1/logs`), 200);

    const store = await dumpStore((q) => t.rt.deps.store.executeSql(q));
    for (const [where, text] of Object.entries({ responses: bodies.join('\n'), logs: t.logs(), store })) {
      expect(text.includes(SECRET), `secret in ${where}`).toBe(false);
    }
    expect(bodies.join('\n')).toContain('AUTHENTICATION_FAILED');
  });
});
