import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { csvRecords } from '@sluice/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FTP_PASSWORD, FTP_USER, startVsftpd, type VsftpdPeer } from '../peers/vsftpd';
import { pgQuery, waitUntil } from '../support/runs';
import {
  createDataSource,
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  ok,
  PE,
  pgDataSource,
  type Reply,
  runToEnd,
  scratchRuntime,
  stepOf,
} from './support';

// FTP through the API and the worker, on PostgreSQL as the platform store: a 100,000-row CSV
// from a real vsftpd into PostgreSQL, and the table back into a CSV file on the FTP server,
// every row accounted for. Along the way: test connection, schema import and a saved query,
// and the FTP password (a recognisable canary) never shows in a response, a run record or
// anywhere in the store.

const N = 100_000;
const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const STORE_DB = `sluice_ftp_${id}`;
const SINK_DB = `sluice_ftp_dst_${id}`;
const WRONG_PASSWORD = 'Canary-FtpWrong-4u8Zp1';

const label = (i: number) => (i % 1000 === 0 ? `item "${i}", line\nbreak` : `item-${i}`);

describe('FTP ⇄ PostgreSQL through the API', () => {
  let s: Awaited<ReturnType<typeof scratchRuntime>>;
  let peer: VsftpdPeer;
  const bodies: string[] = [];
  const call = async (method: string, url: string, body?: unknown): Promise<Reply> => {
    const r = await s.call(method, url, body);
    bodies.push(r.body);
    return r;
  };

  beforeAll(async () => {
    peer = await startVsftpd();
    const lines = ['id,label,amount'];
    for (let i = 1; i <= N; i++) {
      const l = label(i);
      lines.push(
        `${i},${/[",\n]/.test(l) ? `"${l.replace(/"/g, '""')}"` : l},${((i % 10_000) / 100).toFixed(2)}`,
      );
    }
    peer.put('exchange/in/items.csv', `${lines.join('\n')}\n`);
    await pgQuery('postgres', `drop database if exists ${SINK_DB} with (force)`);
    await pgQuery('postgres', `create database ${SINK_DB}`);
    await pgQuery(
      SINK_DB,
      'create table items (id bigint primary key, label text not null, amount numeric(12,2) not null)',
    );
    s = await scratchRuntime(STORE_DB, { worker: true });
    const ftp = (slug: string, password: string) => ({
      type: 'ftp',
      name: slug,
      slug,
      config: { host: peer.host, port: peer.port, base_path: 'exchange', allow_private_hosts: true },
      credentials: { username: FTP_USER, password },
    });
    await createDataSource(call, ftp('files', FTP_PASSWORD));
    await createDataSource(call, ftp('files-wrong', WRONG_PASSWORD));
    await createDataSource(call, pgDataSource('warehouse', SINK_DB));
    await createProjectAndEnvironment(call);
  }, 180_000);

  afterAll(async () => {
    await s?.close();
    await peer?.close();
    await pgQuery('postgres', `drop database if exists ${SINK_DB} with (force)`);
  });

  it('tests the connection, imports the schema and runs a saved query', async () => {
    const good = await ok(call('POST', `${ORG}/data-sources/files/test-connection`), [200, 201]);
    expect(JSON.stringify(good)).not.toMatch(/AUTHENTICATION_FAILED/);
    const bad = await call('POST', `${ORG}/data-sources/files-wrong/test-connection`);
    expect(bad.body).toContain('AUTHENTICATION_FAILED');
    const wrong = await ok(call('GET', `${ORG}/data-sources/files-wrong`), 200);
    expect(wrong.test_error).toMatch(/refused the login/);
    // A failed import stores its diagnostic: that must not carry the password either.
    await ok(call('POST', `${ORG}/data-sources/files-wrong/schema-import`), [200, 201, 202]);
    const failed = await waitUntil(
      async () => (await call('GET', `${ORG}/data-sources/files-wrong`)).json(),
      (ds) => ds.schema_status !== 'importing',
      60_000,
    );
    expect(failed.schema_status).toBe('failed');

    await ok(call('POST', `${ORG}/data-sources/files/schema-import`), [200, 201, 202]);
    const imported = await waitUntil(
      async () => (await call('GET', `${ORG}/data-sources/files`)).json(),
      (ds) => ds.schema_status !== 'importing',
      60_000,
    );
    expect(imported.schema_status, JSON.stringify(imported)).toBe('ready');
    expect(JSON.stringify(imported)).toContain('in/items.csv');
    expect(JSON.stringify(imported)).toContain('"name":"amount"');

    await ok(
      call('POST', `${ORG}/queries`, {
        name: 'peek',
        slug: 'peek',
        data_source_slug: 'files',
        statement: { type: 'ftp', path: 'in/{{file}}', format: 'csv' },
      }),
      201,
    );
    const exec = await ok(
      call('POST', `${ORG}/queries/peek:execute`, { parameters: { file: 'items.csv' } }),
      200,
    );
    expect(JSON.stringify(exec)).toContain('"column_names":["id","label","amount"]');
    // The FTP result fields of docs/connectors/ftp.md on the common envelope.
    expect(exec).toMatchObject({
      result_type: 'ftp',
      type: 'ftp',
      success: true,
      duration_ms: expect.any(Number),
      payload: { operation: 'read', format: 'csv' },
    });
    expect(exec.payload).toEqual(exec.result);
    expect(JSON.stringify(exec)).toContain(`"row_count":${N}`);
    const traversal = await call('POST', `${ORG}/queries/peek:execute`, {
      parameters: { file: '../../etc/passwd' },
    });
    expect(traversal.statusCode).toBeLessThan(500);
    expect(traversal.body).toContain('PERMISSION_DENIED');
  }, 120_000);

  it('moves 100,000 CSV rows from FTP into PostgreSQL and back into an FTP file', async () => {
    await deployPipeline(call, {
      pipeline: 'ftp-in',
      spec: {
        steps: [
          {
            slug: 'read',
            kind: 'source',
            data_source_ref: 'files',
            operation: { operation_type: 'ftp', path: 'in/items.csv' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', write: { table: 'items', mode: 'insert' } },
          },
        ],
        edges: [{ from: 'read', to: 'load' }],
      },
      bindings: { files: 'files', warehouse: 'warehouse' },
    });
    // The connector's operation fields are checked at validation once the ref is bound.
    const draft = await ok(
      call('POST', `${PE}/pipeline-validation`, {
        pipeline_slug: 'ftp-in',
        spec: {
          steps: [
            {
              slug: 'read',
              kind: 'source',
              data_source_ref: 'files',
              operation: { operation_type: 'ftp', path: 'in/items.csv', format: 'xml', dlimiter: ';' },
            },
            {
              slug: 'load',
              kind: 'sink',
              data_source_ref: 'warehouse',
              operation: { operation_type: 'sql', write: { table: 'items', mode: 'insert' } },
            },
          ],
          edges: [{ from: 'read', to: 'load' }],
        },
      }),
      201,
    );
    expect(draft.valid).toBe(false);
    expect(draft.findings.map((f: any) => [f.code, f.path])).toEqual(
      expect.arrayContaining([
        ['OPERATION_INVALID', 'steps[0].operation.format'],
        ['OPERATION_INVALID', 'steps[0].operation'],
      ]),
    );
    const into = await runToEnd(call, 'ftp-in', { run_slug: 'ftp-in-1' }, 240_000);
    expect(into, JSON.stringify(into)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(into, 'load')).toMatchObject({ state: 'succeeded', rows_out: N });
    const [db] = await pgQuery(
      SINK_DB,
      "select count(*)::text as n, sum(id)::text as ids, sum(amount)::text as amounts, md5(string_agg(label, ',' order by id)) as labels from items",
    );
    expect(db.n).toBe(String(N));
    expect(db.ids).toBe(String((N * (N + 1)) / 2));
    let amounts = 0;
    for (let i = 1; i <= N; i++) amounts += i % 10_000;
    expect(Number(db.amounts)).toBeCloseTo(amounts / 100, 2);

    await deployPipeline(call, {
      pipeline: 'ftp-out',
      spec: {
        steps: [
          {
            slug: 'extract',
            kind: 'source',
            data_source_ref: 'warehouse',
            operation: { operation_type: 'sql', sql: 'SELECT id, label, amount FROM items ORDER BY id' },
          },
          {
            slug: 'upload',
            kind: 'sink',
            data_source_ref: 'files',
            operation: { operation_type: 'ftp', path: 'out/{{runtime.run_slug}}.csv' },
          },
        ],
        edges: [{ from: 'extract', to: 'upload' }],
      },
      bindings: { files: 'files', warehouse: 'warehouse' },
    });
    const out = await runToEnd(call, 'ftp-out', { run_slug: 'ftp-out-1' }, 240_000);
    expect(out, JSON.stringify(out)).toMatchObject({ state: 'succeeded', error: null });
    expect(stepOf(out, 'upload')).toMatchObject({ state: 'succeeded', rows_in: N, rows_out: N });

    const file = path.join(peer.root, 'exchange/out/ftp-out-1.csv');
    expect(stepOf(out, 'upload').bytes_out).toBe(fs.statSync(file).size);
    async function* chunks() {
      yield* fs.createReadStream(file);
    }
    let header: (string | null)[] | null = null;
    let count = 0;
    let ids = 0;
    let mismatched = 0;
    for await (const batch of csvRecords(chunks(), ',')) {
      for (const r of batch) {
        if (!header) {
          header = r;
          continue;
        }
        count++;
        const n = Number(r[0]);
        ids += n;
        if (r[1] !== label(n) || Number(r[2]) !== (n % 10_000) / 100) mismatched++;
      }
    }
    expect(header).toEqual(['id', 'label', 'amount']);
    expect({ count, ids, mismatched }).toEqual({ count: N, ids: (N * (N + 1)) / 2, mismatched: 0 });
    expect(fs.readdirSync(path.dirname(file))).toEqual(['ftp-out-1.csv']);

    const logs = await ok(call('GET', `${ORG}/projects/shop/environments/staging/runs/ftp-out-1/logs`), 200);
    expect(JSON.stringify(logs)).toContain('ftp-out-1.csv');
  }, 300_000);

  it('never shows the FTP password: responses, run records or anywhere in the store', async () => {
    expect(bodies.length).toBeGreaterThan(10);
    for (const b of bodies) {
      expect(b).not.toContain(FTP_PASSWORD);
      expect(b).not.toContain(WRONG_PASSWORD);
    }
    const tables = (await s.sql(
      "select table_schema, table_name from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema') and table_type = 'BASE TABLE'",
    )) as { table_schema: string; table_name: string }[];
    expect(tables.length).toBeGreaterThan(5);
    for (const t of tables) {
      const q = `"${t.table_schema}"."${t.table_name}"`;
      const rows = (await s.sql(
        `select count(*)::int as n from ${q} x where x::text like $1 or x::text like $2`,
        [`%${FTP_PASSWORD}%`, `%${WRONG_PASSWORD}%`],
      )) as { n: number }[];
      expect(rows[0].n, q).toBe(0);
    }
    expect(s.logs()).not.toContain(FTP_PASSWORD);
    expect(s.logs()).not.toContain(WRONG_PASSWORD);
  });
});
