import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Call,
  createDataSource,
  createMysqlDatabase,
  createProjectAndEnvironment,
  deployPipeline,
  mysqlDataSource,
  ORG,
  ok,
  pgDataSource,
} from '../../../../../test/pipelines/support';
import { startTestApp, type TestApp } from '../../../../../test/support/app';
import { createSinkDatabase, pgQuery, waitUntil } from '../../../../../test/support/runs';

// Issue 12 acceptance on real PostgreSQL and MariaDB sources: schema imports through the job,
// reports read back through the API. The imports run in order and the reports are cumulative,
// so each step checks the newest report (and what it superseded).

const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
const SINK_DB = `sluice_drift_sink_${id}`;

type Dialect = {
  name: string;
  ds: (slug: string) => unknown;
  setup(): Promise<void>;
  exec(sql: string): Promise<void>;
  drop(): Promise<void>;
  ddl: Record<'cosmetic' | 'widen' | 'add' | 'dropUnread' | 'dropRead' | 'harmless' | 'rename', string[]>;
};

const pgDb = `sluice_drift_pg_${id}`;
const myDb = `sluice_drift_my_${id}`;
let my: Awaited<ReturnType<typeof createMysqlDatabase>> | null = null;

const dialects: Dialect[] = [
  {
    name: 'PostgreSQL',
    ds: (slug) => pgDataSource(slug, pgDb),
    setup: async () => {
      await pgQuery('postgres', `create database ${pgDb}`);
      await pgQuery(pgDb, 'create table orders (id int, email varchar(100), note text, region varchar(20))');
    },
    exec: async (sql) => void (await pgQuery(pgDb, sql)),
    drop: async () => void (await pgQuery('postgres', `drop database if exists ${pgDb} with (force)`)),
    ddl: {
      cosmetic: ['alter table orders alter email type text', 'alter table orders rename region to "Region"'],
      widen: ['alter table orders alter id type bigint'],
      add: ['alter table orders add vip boolean'],
      dropUnread: ['alter table orders drop note'],
      dropRead: ['alter table orders drop email'],
      harmless: ['create table audit (x int)'],
      rename: ['alter table orders rename "Region" to area'],
    },
  },
  {
    name: 'MariaDB',
    ds: (slug) => mysqlDataSource(slug, myDb),
    setup: async () => {
      my = await createMysqlDatabase(myDb);
      await my.query('CREATE TABLE orders (id INT, email VARCHAR(100), note TEXT, region VARCHAR(20))');
    },
    exec: async (sql) => void (await my!.query(sql)),
    drop: async () => void (await my?.drop()),
    ddl: {
      cosmetic: [
        'ALTER TABLE orders MODIFY email TEXT',
        'ALTER TABLE orders CHANGE region REGION VARCHAR(20)',
      ],
      widen: ['ALTER TABLE orders MODIFY id BIGINT'],
      add: ['ALTER TABLE orders ADD vip BOOLEAN'],
      dropUnread: ['ALTER TABLE orders DROP note'],
      dropRead: ['ALTER TABLE orders DROP email'],
      harmless: ['CREATE TABLE audit (x INT)'],
      rename: ['ALTER TABLE orders CHANGE REGION area VARCHAR(20)'],
    },
  },
];

const source = (sql: string) => ({
  slug: 'src',
  kind: 'source',
  data_source_ref: 'shop-db',
  operation: { operation_type: 'sql', sql },
});
const sink = (table: string) => ({
  slug: 'load',
  kind: 'sink',
  data_source_ref: 'warehouse',
  operation: { operation_type: 'sql', write: { table, mode: 'insert', create_table: true } },
});
/** Reads email (and id) in a transform: dropping email breaks it. */
const cleanSpec = {
  steps: [
    source('SELECT * FROM orders'),
    {
      slug: 'clean',
      kind: 'transform',
      operation: { operation_type: 'sql', sql: 'SELECT id, lower(email) AS email FROM src' },
    },
    sink('clean_orders'),
  ],
  edges: [
    { from: 'src', to: 'clean' },
    { from: 'clean', to: 'load' },
  ],
};
/** Copies every column through SELECT * to a sink. */
const mirrorSpec = {
  steps: [
    source('SELECT * FROM orders'),
    { slug: 'copy', kind: 'transform', operation: { operation_type: 'sql', sql: 'SELECT * FROM src' } },
    sink('mirror_orders'),
  ],
  edges: [
    { from: 'src', to: 'copy' },
    { from: 'copy', to: 'load' },
  ],
};

describe.each(dialects)('drift reports on a $name source', (d) => {
  let t: TestApp;
  let token: string;
  let warehouse: { drop(): Promise<unknown> };
  const call: Call = (method, url, body) => t.call(method, url, { token, body });
  const reports = async () =>
    (await ok(call('GET', `${ORG}/data-sources/shop-db/drift-reports`), 200)).reports as any[];
  const importSchema = async () => {
    // The request moves the data source to importing; the job moves it on.
    await ok(call('POST', `${ORG}/data-sources/shop-db/schema-import`), 202);
    const ds = await waitUntil(
      async () => (await call('GET', `${ORG}/data-sources/shop-db`)).json(),
      (x: any) => x.schema_status !== 'importing',
      30_000,
    );
    expect(ds.schema_status, JSON.stringify(ds.schema_diagnostic)).toBe('ready');
    return ds;
  };
  const change = async (ddl: string[]) => {
    for (const sql of ddl) await d.exec(sql);
    await importSchema();
    return reports();
  };
  const reasons = (r: any) =>
    r.changes.map((c: any) => `${c.reason_code}:${c.path.split('.').slice(-1)[0].toLowerCase()}`);

  beforeAll(async () => {
    await d.drop();
    await d.setup();
    warehouse = await createSinkDatabase(`${SINK_DB}_${d.name.toLowerCase()}`);
    t = await startTestApp({ worker: true });
    token = (await t.bootstrap('acme')).api_key;
    await createDataSource(call, d.ds('shop-db'));
    await createDataSource(call, pgDataSource('warehouse', `${SINK_DB}_${d.name.toLowerCase()}`));
    await createProjectAndEnvironment(call);
    for (const [pipeline, spec] of [
      ['clean', cleanSpec],
      ['mirror', mirrorSpec],
    ] as const)
      await deployPipeline(call, {
        pipeline,
        spec,
        bindings: { 'shop-db': 'shop-db', warehouse: 'warehouse' },
      });
    await importSchema();
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await d.drop();
    await warehouse?.drop();
  });

  it('walks cosmetic, safe, warning, breaking and rename changes through cumulative reports', async () => {
    expect(await reports()).toEqual([]);

    // varchar <-> text and case changes are never changes.
    expect(await change(d.ddl.cosmetic)).toEqual([]);

    const [widened] = await change(d.ddl.widen);
    expect(widened).toMatchObject({
      report_type: 'source_schema',
      status: 'open',
      severity: 'safe',
      data_source_slug: 'shop-db',
      project_slug: 'shop',
      superseded_at: null,
    });
    expect(widened.changes).toEqual([
      expect.objectContaining({
        kind: 'type_changed',
        path: expect.stringMatching(/orders\.id$/),
        before: 'integer',
        after: 'bigint',
        reason_code: 'type_widened',
        severity: 'safe',
      }),
    ]);
    expect(
      widened.impacts
        .filter((i: any) => i.kind === 'pipeline')
        .map((i: any) => i.pipeline_slug)
        .sort(),
    ).toEqual(['clean', 'mirror']);

    // A second identical import writes nothing.
    await importSchema();
    expect(await reports()).toHaveLength(1);

    const [added, old] = await change(d.ddl.add);
    expect(old).toMatchObject({ slug: widened.slug, status: 'superseded' });
    expect(old.superseded_at).not.toBeNull();
    expect(added.severity).toBe('warning');
    expect(reasons(added)).toEqual(expect.arrayContaining(['type_widened:id', 'star_widened:vip']));
    expect(added.impacts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'sink', pipeline_slug: 'mirror', step_slug: 'load' }),
        expect.objectContaining({ kind: 'unknown_consumer', pipeline_slug: 'mirror', severity: 'warning' }),
      ]),
    );

    const [unread] = await change(d.ddl.dropUnread);
    expect(unread.severity).toBe('warning');
    expect(unread.changes.find((c: any) => c.path.endsWith('.note'))).toMatchObject({
      kind: 'column_removed',
      reason_code: 'column_removed_unreferenced',
      severity: 'warning',
    });

    // The preview of the next change is the report the import then writes, and stores nothing.
    const stored = (await ok(call('GET', `${ORG}/data-sources/shop-db`), 200)).schema;
    const candidate = structuredClone(stored);
    const orders = candidate.tables.find((x: any) => x.name === 'orders');
    orders.columns = orders.columns.filter((c: any) => c.name !== 'email');
    const preview = await ok(
      call('POST', `${ORG}/projects/shop/pipelines/clean/drift-preview`, {
        environment_slug: 'staging',
        data_source_slug: 'shop-db',
        schema: candidate,
      }),
      200,
    );
    expect(await reports()).toHaveLength(3);
    expect((await ok(call('GET', `${ORG}/data-sources/shop-db`), 200)).schema).toEqual(stored);

    const [broken] = await change(d.ddl.dropRead);
    expect({
      severity: broken.severity,
      summary: broken.summary,
      changes: broken.changes,
      impacts: broken.impacts,
    }).toEqual(preview);
    expect(broken.severity).toBe('breaking');
    expect(broken.changes.find((c: any) => c.path.endsWith('.email'))).toMatchObject({
      reason_code: 'column_removed_referenced',
      severity: 'breaking',
    });
    const step = broken.impacts.find((i: any) => i.kind === 'step');
    expect(step).toMatchObject({ pipeline_slug: 'clean', step_slug: 'clean', severity: 'breaking' });
    expect(step.message).toMatch(/email/);
    const got = await ok(call('GET', `${ORG}/projects/shop/drift-reports/${broken.slug}`), 200);
    expect(got).toEqual(broken);

    // A draft that stops reading email: the same drift no longer breaks anything.
    const draftSpec = structuredClone(cleanSpec) as any;
    draftSpec.steps[1].operation.sql = 'SELECT id FROM src';
    const draft = await ok(
      call('POST', `${ORG}/projects/shop/pipelines/clean/drift-preview`, {
        environment_slug: 'staging',
        data_source_slug: 'shop-db',
        spec: draftSpec,
      }),
      200,
    );
    expect(draft.severity).toBe('warning');
    expect(draft.impacts.filter((i: any) => i.kind === 'step')).toEqual([]);
    expect(draft.changes.find((c: any) => c.path.endsWith('.email')).reason_code).toBe(
      'column_removed_unreferenced',
    );
    expect(await reports()).toHaveLength(4);

    // A harmless later import does not hide the earlier break.
    const [later] = await change(d.ddl.harmless);
    expect(later.severity).toBe('breaking');
    expect(reasons(later)).toEqual(
      expect.arrayContaining(['table_added:audit', 'column_removed_referenced:email']),
    );

    const [renamed] = await change(d.ddl.rename);
    expect(reasons(renamed)).toEqual(
      expect.arrayContaining(['column_removed_unreferenced:region', 'rename_suspected:area']),
    );
    const list = await ok(call('GET', `${ORG}/projects/shop/drift-reports?limit=100`), 200);
    expect(list.reports.filter((r: any) => r.status === 'open')).toHaveLength(1);
    expect(list.reports[0].slug).toBe(renamed.slug);
  });
});

describe('drift reports on an HTTP source with an OpenAPI document', () => {
  let t: TestApp;
  let token: string;
  let server: Server;
  let warehouse: { drop(): Promise<unknown> };
  let doc: Record<string, unknown>;
  const call: Call = (method, url, body) => t.call(method, url, { token, body });
  const item = (withEmail: boolean) => ({
    type: 'object',
    properties: { id: { type: 'integer' }, ...(withEmail ? { email: { type: 'string' } } : {}) },
  });
  const openapi = (withEmail: boolean, withDelete: boolean) => ({
    openapi: '3.0.3',
    info: { title: 'Shop', version: '1' },
    paths: {
      '/orders': {
        get: {
          responses: {
            200: {
              description: 'orders',
              content: {
                'application/json': {
                  schema: { type: 'object', properties: { data: { type: 'array', items: item(withEmail) } } },
                },
              },
            },
          },
        },
      },
      ...(withDelete
        ? {
            '/orders/{id}': {
              delete: {
                parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
                responses: { 204: { description: 'gone' } },
              },
            },
          }
        : {}),
    },
  });
  const importSchema = async () => {
    await ok(call('POST', `${ORG}/data-sources/shop-api/schema-import`), 202);
    const ds = await waitUntil(
      async () => (await call('GET', `${ORG}/data-sources/shop-api`)).json(),
      (x: any) => x.schema_status !== 'importing',
    );
    expect(ds.schema_status, JSON.stringify(ds.schema_diagnostic)).toBe('ready');
  };

  beforeAll(async () => {
    doc = openapi(true, true);
    server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(req.url === '/openapi.json' ? JSON.stringify(doc) : JSON.stringify({ data: [] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    warehouse = await createSinkDatabase(`${SINK_DB}_http`);
    t = await startTestApp({ worker: true });
    token = (await t.bootstrap('acme')).api_key;
    await createDataSource(call, {
      type: 'http',
      name: 'shop-api',
      slug: 'shop-api',
      config: { base_url: base, openapi_url: `${base}/openapi.json`, allow_private_hosts: true },
      credentials: {},
    });
    await createDataSource(call, pgDataSource('warehouse', `${SINK_DB}_http`));
    await createProjectAndEnvironment(call);
    await deployPipeline(call, {
      pipeline: 'api-orders',
      spec: {
        steps: [
          {
            slug: 'orders',
            kind: 'source',
            data_source_ref: 'shop-api',
            operation: { operation_type: 'http', method: 'GET', path: '/orders' },
            response: { records_path: 'data' },
          },
          {
            slug: 'emails',
            kind: 'transform',
            operation: { operation_type: 'sql', sql: 'SELECT id, email FROM orders' },
          },
          sink('emails'),
        ],
        edges: [
          { from: 'orders', to: 'emails' },
          { from: 'emails', to: 'load' },
        ],
      },
      bindings: { 'shop-api': 'shop-api', warehouse: 'warehouse' },
    });
    await importSchema();
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await new Promise((r) => server?.close(r));
    await warehouse?.drop();
  });

  it('reports a removed operation and a removed response field the transform reads', async () => {
    doc = openapi(false, false);
    await importSchema();
    const [report] = (await ok(call('GET', `${ORG}/data-sources/shop-api/drift-reports`), 200)).reports;
    expect(report.severity).toBe('breaking');
    expect(report.changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: 'operation_removed',
          path: 'DELETE /orders/{id}',
          reason_code: 'operation_removed',
          severity: 'breaking',
        }),
        expect.objectContaining({
          kind: 'column_removed',
          path: 'GET /orders#200.data[].email',
          reason_code: 'response_field_removed',
          severity: 'breaking',
        }),
      ]),
    );
    const step = report.impacts.find((i: any) => i.kind === 'step');
    expect(step).toMatchObject({ pipeline_slug: 'api-orders', step_slug: 'emails', severity: 'breaking' });
    expect(step.message).toMatch(/email/);
  });

  it('answers bad input with the error wrapper and precise codes', async () => {
    const preview = (pipeline: string, body: unknown) =>
      call('POST', `${ORG}/projects/shop/pipelines/${pipeline}/drift-preview`, body);
    const bad = await preview('api-orders', {
      environment_slug: 'staging',
      schema: { schema_type: 'relational', tables: 'x' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('VALIDATION_FAILED');
    expect(
      (await preview('api-orders', { environment_slug: 'staging', spec: { steps: [] } })).json().error.code,
    ).toBe('VALIDATION_FAILED');
    expect(
      (await preview('api-orders', { environment_slug: 'staging', spec: {}, spec_hash: 'abcdef1' }))
        .statusCode,
    ).toBe(400);
    expect((await preview('nope', { environment_slug: 'staging' })).statusCode).toBe(404);
    expect((await preview('api-orders', { environment_slug: 'nope' })).statusCode).toBe(404);
    expect((await preview('api-orders', { environment_slug: 'staging', extra: 1 })).statusCode).toBe(400);
    expect((await call('GET', `${ORG}/projects/shop/drift-reports/drift-missing`)).statusCode).toBe(404);
    expect((await call('GET', `${ORG}/data-sources/nope/drift-reports`)).statusCode).toBe(404);
    expect((await call('GET', `${ORG}/projects/shop/drift-reports?sort_by=name`)).statusCode).toBe(400);
    const same = await ok(preview('api-orders', { environment_slug: 'staging' }), 200);
    expect(same.severity).toBe('breaking');
  });
});
