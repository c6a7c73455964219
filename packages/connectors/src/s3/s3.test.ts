import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Payload } from '@sluice/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SwiftS3Peer, startSwiftS3 } from '../../../../test/peers/swift-s3';
import { batches, bytesOf, chunksOf, collect, stepContext } from '../../../../test/support/step-context';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import { s3ConfigSchema, s3CredentialsSchema, s3StatementSchema } from './config';
import { s3Connector } from './index';

// The S3 connector against OpenStack Swift's s3api (a production S3 implementation) on
// loopback: connection tests and their failures, schema import, queries, pipeline read/write.

const BUCKET = 'sluice-conn';
const ctx: ConnectorContext = { policy: { allowPrivate: true }, limits: defaultLimits };

describe('S3 connector (Swift s3api peer)', () => {
  let peer: SwiftS3Peer;
  const conn = (config: Record<string, unknown> = {}, credentials: Record<string, unknown> = {}) => ({
    config: s3ConfigSchema.parse({
      bucket: BUCKET,
      endpoint: peer.endpoint,
      force_path_style: true,
      allow_private_hosts: true,
      ...config,
    }),
    credentials: s3CredentialsSchema.parse({
      access_key_id: peer.accessKeyId,
      secret_access_key: peer.secretAccessKey,
      ...credentials,
    }),
  });
  const fails = async (p: Promise<unknown>, code: string) => {
    const err = await p.then(
      () => null,
      (e) => e,
    );
    expect(err, `expected ${code}`).toBeInstanceOf(ConnectorError);
    expect(err.code, err.message).toBe(code);
    expect(err.message).not.toContain(peer.secretAccessKey);
    return err as ConnectorError;
  };
  const exec = (statement: Record<string, unknown>, parameters: Record<string, unknown> = {}, c = conn()) =>
    s3Connector.query.execute(c, s3StatementSchema.parse({ type: 's3', ...statement }), parameters, ctx);
  const source = (operation: Record<string, unknown>) =>
    stepContext({
      kind: 'source',
      data_source_ref: 'lake',
      operation: { operation_type: 's3', ...operation },
    });
  const sink = (operation: Record<string, unknown>) =>
    stepContext(
      { kind: 'sink', data_source_ref: 'lake', operation: { operation_type: 's3', ...operation } },
      { scope: { runtime: { input: { day: '2026-11-21' } } } },
    );

  beforeAll(async () => {
    peer = await startSwiftS3();
    await peer.createBucket(BUCKET);
  }, 180_000);
  afterAll(async () => {
    await peer?.stop();
  });

  it('tests the connection, and says why it fails', async () => {
    await s3Connector.test(conn(), ctx);
    await fails(s3Connector.test(conn({}, { access_key_id: 'nobody:nobody' }), ctx), 'AUTHENTICATION_FAILED');
    const missing = await fails(s3Connector.test(conn({ bucket: 'no-such-bucket' }), ctx), 'NOT_FOUND');
    expect(missing.message).toContain('no-such-bucket');
    await fails(
      s3Connector.test(conn({ endpoint: 'http://localhost:9', force_path_style: false }), {
        ...ctx,
        policy: { allowPrivate: false },
      }),
      'PRIVATE_HOST_BLOCKED',
    );
  });

  it('writes, lists and reads objects through saved-query statements', async () => {
    const written = await exec(
      {
        operation: 'write',
        key: 'q/{{name}}.csv',
        content: [
          { id: 1, name: 'a,b' },
          { id: 2, name: null },
        ],
      },
      { name: 'people' },
    );
    expect(written.result_type).toBe('s3');
    expect(written.payload).toMatchObject({
      type: 's3',
      success: true,
      payload: { operation: 'write', format: 'csv', key: 'q/people.csv', written_rows: 2 },
    });
    const file = (written.payload.payload as any).file;
    expect(file).toMatchObject({ mime_type: 'text/csv', digest_algorithm: 'sha256', filename: 'people.csv' });
    expect(file.digest).toMatch(/^[0-9a-f]{64}$/);

    await exec({ operation: 'write', key: 'q/items.json', content: [{ a: 1 }, { a: 2 }, { a: 3 }] });
    await exec({ operation: 'write', key: 'q/items.ndjson', content: [{ b: true }, { b: false }] });
    await exec({ operation: 'write', key: 'q/note.txt', content: 'hello {{who}}' }, { who: 'world' });
    await fails(
      exec({ operation: 'write', key: 'q/note.txt', content: 'again', overwrite: false }),
      'QUERY_FAILED',
    );
    await fails(
      s3Connector.query.execute(
        conn(),
        s3StatementSchema.parse({ type: 's3', operation: 'write', key: 'x.txt', content: 'x' }),
        {},
        { ...ctx, readOnly: true },
      ),
      'PERMISSION_DENIED',
    );

    const list = await exec({ operation: 'list', prefix: 'q/' });
    const keys = ((list.payload.payload as any).objects as { key: string }[]).map((o) => o.key).sort();
    expect(keys).toEqual(['q/items.json', 'q/items.ndjson', 'q/note.txt', 'q/people.csv']);
    expect(list.row_count).toBe(4);
    const firstTwo = await s3Connector.query.execute(
      conn(),
      s3StatementSchema.parse({ type: 's3', operation: 'list', prefix: 'q/' }),
      {},
      { ...ctx, limits: { ...defaultLimits, maxRows: 2 } },
    );
    expect([firstTwo.row_count, firstTwo.truncated]).toEqual([2, true]);

    const csv = await exec({ operation: 'read', key: 'q/people.csv' });
    expect(csv.payload.payload).toMatchObject({
      format: 'csv',
      column_names: ['id', 'name'],
      rows: [
        ['1', 'a,b'],
        ['2', null],
      ],
    });
    expect((await exec({ operation: 'read', key: 'q/items.json' })).payload.payload).toMatchObject({
      format: 'json',
      rows: [{ a: 1 }, { a: 2 }, { a: 3 }],
    });
    expect((await exec({ operation: 'read', key: 'q/items.ndjson' })).payload.payload).toMatchObject({
      format: 'ndjson',
      rows: [{ b: true }, { b: false }],
    });
    const note = await exec({ operation: 'read', key: 'q/note.txt' });
    expect((note.payload.payload as any).file).toMatchObject({
      mime_type: 'text/plain',
      size_bytes: 11,
      filename: 'note.txt',
    });

    const limited = await s3Connector.query.execute(
      conn(),
      s3StatementSchema.parse({ type: 's3', operation: 'read', key: 'q/items.json' }),
      {},
      { ...ctx, limits: { ...defaultLimits, maxRows: 2 } },
    );
    expect(limited.truncated).toBe(true);
    expect(limited.row_count).toBe(2);

    await fails(exec({ operation: 'read', key: 'q/missing.csv' }), 'NOT_FOUND');
    await fails(exec({ operation: 'read', key: 'q/{{nope}}.csv' }), 'INVALID_STATEMENT');
    expect(s3StatementSchema.safeParse({ type: 's3', operation: 'read' }).success).toBe(false);
    expect(s3StatementSchema.safeParse({ type: 's3', operation: 'write', key: 'a' }).success).toBe(false);
  });

  it('reads Parquet through DuckDB, and imports a file schema', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sluice-pq-'));
    try {
      const { DuckDBInstance } = await import('@duckdb/node-api');
      const db = await DuckDBInstance.create(':memory:');
      const c = await db.connect();
      const file = join(dir, 'm.parquet');
      await c.run(
        `COPY (SELECT i::BIGINT AS id, 'n' || i AS name, (i * 1.5)::DOUBLE AS score FROM range(3000) t(i)) TO '${file}' (FORMAT parquet)`,
      );
      c.closeSync();
      db.closeSync();
      const bytes = await readFile(file);
      await s3Connector.sink.write(
        conn({ prefix: 'schema' }),
        { kind: 'file', mimeType: 'application/octet-stream', chunks: chunksOf(bytes) },
        sink({ key: 'metrics.parquet', format: 'file' }),
        ctx,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const c = conn({ prefix: 'schema/' });
    await exec(
      {
        operation: 'write',
        key: 'orders.csv',
        content: [{ id: 1, amount: 2.5, day: '2026-01-02', ok: true }],
      },
      {},
      c,
    );
    await exec(
      {
        operation: 'write',
        key: 'events.ndjson',
        content: [
          { kind: 'a', n: 1 },
          { kind: 'b', n: 2, extra: { x: 1 } },
        ],
      },
      {},
      c,
    );
    await exec({ operation: 'write', key: 'readme.txt', content: 'plain' }, {}, c);

    const pq = await exec({ operation: 'read', key: 'metrics.parquet' }, {}, c);
    expect(pq.row_count).toBe(1000);
    expect(pq.truncated).toBe(true);
    expect((pq.payload.payload as any).rows[2]).toEqual(['2', 'n2', 3]);

    const out = await s3Connector.source.read(c, source({ key: 'metrics.parquet' }), ctx);
    expect(out.payload.kind).toBe('rows');
    expect((out.payload as any).columns.map((x: any) => x.name)).toEqual(['id', 'name', 'score']);
    const { items } = await collect(out.payload);
    expect(items).toHaveLength(3000);
    expect(await out.nextCursor()).toBeNull();

    const schema = await s3Connector.discover.importSchema(c, ctx);
    expect(schema.schema_type).toBe('file');
    if (schema.schema_type !== 'file') return;
    const byName = Object.fromEntries(schema.files.map((f) => [f.name, f]));
    expect(Object.keys(byName).sort()).toEqual([
      'events.ndjson',
      'metrics.parquet',
      'orders.csv',
      'readme.txt',
    ]);
    expect(byName['orders.csv']).toEqual({
      name: 'orders.csv',
      resource_id: 'schema/orders.csv',
      mime_type: 'text/csv',
      fields: [
        { name: 'id', type: 'bigint' },
        { name: 'amount', type: 'double' },
        { name: 'day', type: 'date' },
        { name: 'ok', type: 'boolean' },
      ],
    });
    expect(byName['events.ndjson'].fields).toEqual([
      { name: 'kind', type: 'text' },
      { name: 'n', type: 'bigint' },
      { name: 'extra', type: 'json' },
    ]);
    expect(byName['metrics.parquet'].fields).toEqual([
      { name: 'id', type: 'BIGINT' },
      { name: 'name', type: 'VARCHAR' },
      { name: 'score', type: 'DOUBLE' },
    ]);
    expect(byName['readme.txt']).toMatchObject({
      fields: [],
      mime_type: 'text/plain',
      resource_id: 'schema/readme.txt',
    });
  });

  it('streams objects into pipelines as CSV, JSON records, files and listings', async () => {
    const csv = 'id,name\n1,"x\ny"\n2,z\n';
    const w = await s3Connector.sink.write(
      conn(),
      { kind: 'csv', delimiter: ',', header: true, chunks: chunksOf(csv) },
      sink({ key: 'p/{{runtime.input.day}}/people.csv' }),
      ctx,
    );
    expect(w).toEqual({ rows: 2, bytes: Buffer.byteLength(csv) });

    const read = await s3Connector.source.read(conn(), source({ key: 'p/2026-11-21/people.csv' }), ctx);
    expect(read.payload).toMatchObject({ kind: 'csv', delimiter: ',', header: true });
    expect((await bytesOf(read.payload)).toString()).toBe(csv);

    const rows: Payload = {
      kind: 'rows',
      columns: [
        { name: 'id', type: 'int4' },
        { name: 'tags', type: 'jsonb' },
      ],
      batches: batches([
        [1, { a: 1 }],
        [2, null],
      ]),
    };
    expect(await s3Connector.sink.write(conn(), rows, sink({ key: 'p/rows.json' }), ctx)).toMatchObject({
      rows: 2,
    });
    const json = await s3Connector.source.read(conn(), source({ key: 'p/rows.json' }), ctx);
    expect((await collect(json.payload)).items).toEqual([
      { id: 1, tags: { a: 1 } },
      { id: 2, tags: null },
    ]);

    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.from([0, 255, 1, 254])]);
    await s3Connector.sink.write(
      conn(),
      { kind: 'file', mimeType: 'application/pdf', filename: 'r.pdf', chunks: chunksOf(pdf) },
      sink({ key: 'p/report.pdf' }),
      ctx,
    );
    const file = await s3Connector.source.read(conn(), source({ key: 'p/report.pdf' }), ctx);
    expect(file.payload).toMatchObject({ kind: 'file', mimeType: 'application/pdf', filename: 'report.pdf' });
    const fileStep = source({ key: 'p/report.pdf' });
    const again = await s3Connector.source.read(conn(), fileStep, ctx);
    expect(Buffer.compare(await bytesOf(again.payload), pdf)).toBe(0);
    const meta = JSON.parse(fileStep.lines.at(-1)!.message.replace(/^file payload /, ''));
    expect(meta).toEqual({
      mime_type: 'application/pdf',
      size_bytes: pdf.length,
      digest_algorithm: 'sha256',
      digest: createHash('sha256').update(pdf).digest('hex'),
      filename: 'report.pdf',
    });
    await bytesOf(file.payload);

    const listing = await s3Connector.source.read(conn(), source({ prefix: 'p/' }), ctx);
    const { items } = await collect(listing.payload);
    expect((items as { key: string }[]).map((o) => o.key).sort()).toEqual([
      'p/2026-11-21/people.csv',
      'p/report.pdf',
      'p/rows.json',
    ]);

    await fails(s3Connector.source.read(conn(), source({ key: 'p/nope.csv' }), ctx), 'NOT_FOUND');
    await fails(s3Connector.source.read(conn(), source({ key: 'p/x', bogus: 1 }), ctx), 'INVALID_STATEMENT');
    await fails(
      s3Connector.sink.write(conn(), rows, sink({ key: 'p/x.csv', overwrite: false }), {
        ...ctx,
        readOnly: true,
      }),
      'PERMISSION_DENIED',
    );
  });

  it('uploads a large payload in parts and reads it back intact', async () => {
    const line = (i: number) => `${i},name-${i},${'x'.repeat(40)}\n`;
    let expected = 'id,name,pad\n';
    async function* chunks() {
      yield Buffer.from('id,name,pad\n');
      for (let b = 0; b < 24; b++) {
        let text = '';
        for (let i = b * 5000; i < (b + 1) * 5000; i++) text += line(i);
        expected += text;
        yield Buffer.from(text);
      }
    }
    const step = sink({ key: 'big/rows.csv', part_size_mib: 5 });
    const res = await s3Connector.sink.write(
      conn(),
      { kind: 'csv', delimiter: ',', header: true, chunks: chunks() },
      step,
      ctx,
    );
    expect(res.rows).toBe(120_000);
    expect(res.bytes).toBe(Buffer.byteLength(expected));
    expect(res.bytes).toBeGreaterThan(5 * 1024 * 1024);
    expect(step.lines.map((l) => l.message).join('\n')).toMatch(/in [2-9] parts/);
    const back = await s3Connector.source.read(conn(), source({ key: 'big/rows.csv' }), ctx);
    expect((await bytesOf(back.payload)).toString() === expected).toBe(true);
  });

  it('never puts the secret key into errors or logs', async () => {
    const secret = 'canary-s3-secret-9d2f71';
    const c = conn({}, { secret_access_key: secret });
    for (const call of [
      () => s3Connector.test(c, ctx),
      () => exec({ operation: 'list' }, {}, c),
      () => s3Connector.source.read(c, source({ key: 'x.csv' }), ctx),
      () => s3Connector.discover.importSchema(c, ctx),
    ]) {
      const err = await fails(call(), 'AUTHENTICATION_FAILED');
      expect(JSON.stringify({ ...err, message: err.message })).not.toContain(secret);
    }
  });
});
