import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServiceAccount, testServiceAccount } from '../peers/google-oauth';
import { type FakeFile, startWorkspaceFake, type WorkspaceFake } from '../peers/google-workspace-api';
import {
  createProjectAndEnvironment,
  deployPipeline,
  ORG,
  pgDataSource,
  runToEnd,
  stepOf,
} from '../pipelines/support';
import { startTestApp, type TestApp } from '../support/app';
import { dumpStore, pgQuery } from '../support/runs';

// Issue 6 acceptance for Google Workspace over the API: test-connection (success, bad key,
// revoked token, missing permission, quota), schema import, saved queries on a sheet and a
// Drive file, 10,000 rows Sheet → PostgreSQL and PostgreSQL → Sheet (append), and the service
// account's private key kept out of every response, error, log and stored record. Sheets and
// Drive are the fake in test/peers/google-workspace-api.ts, reached through the real SDKs with
// SLUICE_GOOGLE_API_ROOT.

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const PG_DB = `sluice_gw_${id}`;
const N = 10_000;

let fake: WorkspaceFake;
let sa: TestServiceAccount;
let t: TestApp;
let owner: string;
let folder: FakeFile;
let book: FakeFile;
let out: FakeFile;

const call = (method: string, url: string, body?: unknown) => t.call(method, url, { token: owner, body });

async function addWorkspace(slug: string, json: string, config: Record<string, unknown>) {
  const res = await call('POST', `${ORG}/data-sources`, {
    type: 'google_workspace',
    name: slug,
    slug,
    config,
    credentials: { service_account_json: json },
  });
  expect(res.statusCode, res.body).toBe(201);
}

const testConnection = async (slug: string) => {
  const res = await call('POST', `${ORG}/data-sources/${slug}/test-connection`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

beforeAll(async () => {
  fake = await startWorkspaceFake();
  sa = testServiceAccount(fake.tokenUri);
  fake.oauth.trust(sa.email, sa.publicKey);
  folder = fake.addFolder('shop');
  const sheetRows: unknown[][] = [['id', 'name', 'price', 'active']];
  for (let i = 1; i <= N; i++) sheetRows.push([i, `item-${i}`, i / 4, i % 2 === 0]);
  book = fake.addSpreadsheet('Catalog', { Items: sheetRows }, folder.id);
  out = fake.addSpreadsheet('Report', { Orders: [['id', 'name', 'qty']] }, folder.id);
  fake.addFile('notes.txt', 'text/plain', 'hello', folder.id);
  await pgQuery('postgres', `drop database if exists ${PG_DB} with (force)`);
  await pgQuery('postgres', `create database ${PG_DB}`);
  await pgQuery(
    PG_DB,
    `create table orders as select g as id, 'order-' || g as name, g % 7 as qty from generate_series(1, ${N}) g`,
  );
  t = await startTestApp({
    worker: true,
    env: { SLUICE_GOOGLE_API_ROOT: fake.url, SLUICE_EGRESS_ALLOW_CIDRS: '127.0.0.1/32' },
  });
  owner = (await t.bootstrap('acme')).api_key;
  await createProjectAndEnvironment((m, u, b) => call(m, u, b));
  await addWorkspace('catalog', sa.json, { spreadsheet_id: book.id, drive_folder_id: folder.id });
  await addWorkspace('report', sa.json, { spreadsheet_id: out.id });
  const pg = await call('POST', `${ORG}/data-sources`, pgDataSource('pg', PG_DB));
  expect(pg.statusCode, pg.body).toBe(201);
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
  await pgQuery('postgres', `drop database if exists ${PG_DB} with (force)`).catch(() => {});
});

describe('Google Workspace connector over the API', () => {
  it('tests the connection and reports each failure with its code', async () => {
    expect(await testConnection('catalog')).toMatchObject({ ok: true, error: null });
    const wrongKey = testServiceAccount(fake.tokenUri, sa.email);
    await addWorkspace('gw-badkey', wrongKey.json, { spreadsheet_id: book.id });
    const denied = testServiceAccount(fake.tokenUri, 'unshared@test-project.iam.gserviceaccount.com');
    fake.oauth.trust(denied.email, denied.publicKey);
    fake.deny(denied.email);
    await addWorkspace('gw-denied', denied.json, { spreadsheet_id: book.id });
    expect((await testConnection('gw-badkey')).error.code).toBe('AUTHENTICATION_FAILED');
    expect((await testConnection('gw-denied')).error.code).toBe('PERMISSION_DENIED');
    fake.oauth.rejectTokens(true);
    expect((await testConnection('catalog')).error.code).toBe('AUTHENTICATION_FAILED');
    fake.oauth.rejectTokens(false);
    fake.failNext(1, 'quotaExceeded');
    expect((await testConnection('catalog')).error).toMatchObject({ code: 'REMOTE_ERROR' });
    expect(await testConnection('catalog')).toMatchObject({ ok: true });
  });

  it('imports spreadsheets and files with their header fields', async () => {
    const res = await call('POST', `${ORG}/data-sources/catalog/schema-import`);
    expect(res.statusCode, res.body).toBe(202);
    let ds: any;
    for (let i = 0; i < 100; i++) {
      ds = (await call('GET', `${ORG}/data-sources/catalog`)).json();
      if (ds.schema_status !== 'importing') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(ds.schema_status).toBe('ready');
    expect(ds.schema.schema_type).toBe('file');
    expect(ds.schema.files).toContainEqual({
      name: 'Catalog/Items',
      fields: [
        { name: 'id', type: 'number' },
        { name: 'name', type: 'string' },
        { name: 'price', type: 'number' },
        { name: 'active', type: 'boolean' },
      ],
      mime_type: 'application/vnd.google-apps.spreadsheet',
      resource_id: `${book.id}!'Items'`,
    });
    expect(ds.schema.files.map((f: any) => f.name)).toEqual(['Catalog/Items', 'Report/Orders', 'notes.txt']);
  });

  it('executes saved queries on a range and a Drive file', async () => {
    const saved = await call('POST', `${ORG}/queries`, {
      name: 'first-items',
      slug: 'first-items',
      data_source_slug: 'catalog',
      statement: { type: 'google_workspace', operation: 'read_range', range: 'Items!A1:D4' },
    });
    expect(saved.statusCode, saved.body).toBe(201);
    const res = await call('POST', `${ORG}/queries/first-items:execute`, { parameters: {} });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'succeeded',
      result_type: 'workspace_file',
      result: {
        operation: 'read_range',
        column_names: ['id', 'name', 'price', 'active'],
        rows: [
          [1, 'item-1', 0.25, false],
          [2, 'item-2', 0.5, true],
          [3, 'item-3', 0.75, false],
        ],
      },
    });
    const bad = await call('POST', `${ORG}/queries`, {
      name: 'no-range',
      slug: 'no-range',
      data_source_slug: 'catalog',
      statement: { type: 'google_workspace', operation: 'read_range' },
    });
    expect(bad.statusCode).toBe(400);
    await call('POST', `${ORG}/queries`, {
      name: 'write-note',
      slug: 'write-note',
      data_source_slug: 'catalog',
      statement: {
        type: 'google_workspace',
        operation: 'write_file',
        name: 'note-{{n}}.txt',
        content: 'written by sluice',
      },
    });
    const written = (
      await call('POST', `${ORG}/queries/write-note:execute`, { parameters: { n: 7 } })
    ).json();
    expect(written).toMatchObject({
      status: 'succeeded',
      result: {
        operation: 'write_file',
        created: true,
        file: { size_bytes: 17, digest_algorithm: 'sha256' },
      },
    });
    expect(fake.files.get(written.result.file_id)?.content.toString()).toBe('written by sluice');
  });

  it(`moves ${N} rows Sheet → PostgreSQL and PostgreSQL → Sheet`, async () => {
    const pe = (m: string, u: string, b?: unknown) => call(m, u, b);
    await deployPipeline(pe, {
      pipeline: 'sheet-to-pg',
      spec: {
        steps: [
          {
            slug: 'items',
            kind: 'source',
            data_source_ref: 'sheet',
            operation: { operation_type: 'workspace_file', operation: 'read_range', range: 'Items!A:D' },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'pg',
            operation: {
              operation_type: 'sql',
              write: { table: 'items', mode: 'insert', create_table: true },
            },
          },
        ],
        edges: [{ from: 'items', to: 'load' }],
      },
      bindings: { sheet: 'catalog', pg: 'pg' },
    });
    const run = await runToEnd(pe, 'sheet-to-pg', {}, 120_000);
    expect(run.state, JSON.stringify(run)).toBe('succeeded');
    expect(stepOf(run, 'load').rows_in).toBe(N);
    const [sum] = await pgQuery(
      PG_DB,
      'select count(*)::int as n, sum(id)::bigint::text as s, sum(price)::float8 as p, count(*) filter (where active)::int as a from items',
    );
    expect(sum).toEqual({ n: N, s: String((N * (N + 1)) / 2), p: (N * (N + 1)) / 2 / 4, a: N / 2 });
    // Read in row blocks, never the whole sheet at once.
    expect(fake.requests.filter((r) => r.path.includes('/values/Items')).length).toBeGreaterThanOrEqual(3);

    await deployPipeline(pe, {
      pipeline: 'pg-to-sheet',
      spec: {
        steps: [
          {
            slug: 'orders',
            kind: 'source',
            data_source_ref: 'pg',
            operation: { operation_type: 'sql', sql: 'SELECT name, id, qty FROM orders ORDER BY id' },
          },
          {
            slug: 'append',
            kind: 'sink',
            data_source_ref: 'sheet',
            operation: { operation_type: 'workspace_file', operation: 'append_rows', range: 'Orders!A:C' },
          },
        ],
        edges: [{ from: 'orders', to: 'append' }],
      },
      bindings: { sheet: 'report', pg: 'pg' },
    });
    const load = await runToEnd(pe, 'pg-to-sheet', {}, 120_000);
    expect(load.state, JSON.stringify(load)).toBe('succeeded');
    const rows = out.sheets?.get('Orders') ?? [];
    expect(rows.length).toBe(N + 1);
    expect(rows[1]).toEqual([1, 'order-1', 1]);
    expect(rows[N]).toEqual([N, `order-${N}`, N % 7]);
    const appends = fake.requests.filter((r) => r.path.endsWith(':append'));
    expect(appends.length).toBe(N / 1000);
  });

  it('writes rows to a Drive CSV file and reads it back into PostgreSQL', async () => {
    const pe = (m: string, u: string, b?: unknown) => call(m, u, b);
    await deployPipeline(pe, {
      pipeline: 'pg-to-drive',
      spec: {
        steps: [
          {
            slug: 'orders',
            kind: 'source',
            data_source_ref: 'pg',
            operation: {
              operation_type: 'sql',
              sql: 'SELECT id, name FROM orders WHERE id <= 100 ORDER BY id',
            },
          },
          {
            slug: 'export',
            kind: 'sink',
            data_source_ref: 'drive',
            operation: {
              operation_type: 'workspace_file',
              operation: 'write_file',
              name: 'orders-{{runtime.run_slug}}.csv',
            },
          },
        ],
        edges: [{ from: 'orders', to: 'export' }],
      },
      bindings: { pg: 'pg', drive: 'catalog' },
    });
    const exported = await runToEnd(pe, 'pg-to-drive', {}, 60_000);
    expect(exported.state, JSON.stringify(exported)).toBe('succeeded');
    const file = [...fake.files.values()].find((f) => f.name === `orders-${exported.slug}.csv`);
    expect(file).toMatchObject({ mimeType: 'text/csv', parents: [folder.id] });
    expect(file?.content.toString().split('\n').slice(0, 2)).toEqual(['"id","name"', '"1","order-1"']);

    await deployPipeline(pe, {
      pipeline: 'drive-to-pg',
      spec: {
        steps: [
          {
            slug: 'csv',
            kind: 'source',
            data_source_ref: 'drive',
            operation: { operation_type: 'workspace_file', operation: 'read_file', file_id: file?.id },
          },
          {
            slug: 'load',
            kind: 'sink',
            data_source_ref: 'pg',
            operation: {
              operation_type: 'sql',
              write: { table: 'from_drive', mode: 'insert', create_table: true },
            },
          },
        ],
        edges: [{ from: 'csv', to: 'load' }],
      },
      bindings: { pg: 'pg', drive: 'catalog' },
    });
    const imported = await runToEnd(pe, 'drive-to-pg', {}, 60_000);
    expect(imported.state, JSON.stringify(imported)).toBe('succeeded');
    const [n] = await pgQuery(PG_DB, 'select count(*)::int as n, max(name) as m from from_drive');
    expect(n).toEqual({ n: 100, m: 'order-99' });
  });

  it('never shows or stores the private key', async () => {
    const texts = [
      (await call('GET', `${ORG}/data-sources/catalog`)).body,
      (await call('GET', `${ORG}/data-sources?limit=100`)).body,
      (await call('GET', `${ORG}/queries/first-items/executions`)).body,
      (await call('GET', `${ORG}/projects/shop/environments/staging/runs?limit=100`)).body,
      t.logs(),
      await dumpStore((q) => t.rt.deps.store.executeSql(q)),
    ];
    const lines = sa.privateKey.split('\n').filter((l) => l.length > 40);
    for (const text of texts) {
      for (const line of lines) expect(text.includes(line)).toBe(false);
      expect(text).not.toContain('PRIVATE KEY');
    }
  });
});
