import pg from 'pg';
import { expect } from 'vitest';

// Pipeline-run fixtures shared by the runs API suite and the worker process suite: an HTTP
// source (test/peers/records-api.ts) loading into a PostgreSQL table, set up through the API.

export type Call = (
  method: string,
  url: string,
  body?: unknown,
) => Promise<{ statusCode: number; body: string; json(): any }>;

/** An API host's calls as the holder of `token()` (read at each call: it may be set later). */
export function bearerCall(
  app: { inject(opts: { method: any; url: string; headers: Record<string, string>; payload?: string }): any },
  token: () => string,
): Call {
  return (method, url, body) =>
    app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${token()}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
}

export const PG_ADMIN = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export function pgUrl(database: string) {
  const u = new URL(PG_ADMIN);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function pgQuery<T = any>(database: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: pgUrl(database) });
  await c.connect();
  try {
    return (await c.query(text, values as any[])).rows as T[];
  } finally {
    await c.end();
  }
}

/** A scratch database with the sink table `orders (id primary key, name, region)`. */
export async function createSinkDatabase(name: string) {
  await pgQuery('postgres', `drop database if exists ${name} with (force)`);
  await pgQuery('postgres', `create database ${name}`);
  await pgQuery(name, 'create table orders (id bigint primary key, name text not null, region text)');
  return { drop: () => pgQuery('postgres', `drop database if exists ${name} with (force)`) };
}

/** Source `orders` (HTTP, incremental by `after`) → sink `load` (upsert into orders by id). */
export function ordersSpec(opts: { inputs?: boolean } = {}) {
  return {
    steps: [
      {
        slug: 'orders',
        kind: 'source',
        data_source_ref: 'shop-api',
        operation: {
          operation_type: 'http',
          method: 'GET',
          path: '/orders',
          query_params: {
            after: '{{runtime.incremental.lower_bound.cursor}}',
            run: '{{runtime.run_slug}}',
            ...(opts.inputs === false ? {} : { region: '{{runtime.input.region}}' }),
          },
        },
        response: { records_path: 'data', cursor_path: 'next_cursor' },
      },
      {
        slug: 'load',
        kind: 'sink',
        data_source_ref: 'warehouse',
        operation: { operation_type: 'sql', write: { table: 'orders', mode: 'upsert', key: ['id'] } },
      },
    ],
    edges: [{ from: 'orders', to: 'load' }],
    inputs: opts.inputs === false ? {} : { region: { required: true } },
  };
}

async function ok(res: ReturnType<Call>, status: number | number[]) {
  const r = await res;
  expect([status].flat(), `${r.statusCode} ${r.body}`).toContain(r.statusCode);
  return r.json();
}

/**
 * Organization `acme` (already bootstrapped): data sources, project `shop`, environment
 * `staging`, and a deployed pipeline with that spec, all through the API.
 */
/** The body of `POST …/data-sources` for a PostgreSQL data source on the test server's `database`. */
export function pgDataSourceBody(slug: string, name: string, database: string) {
  const u = new URL(PG_ADMIN);
  return {
    type: 'postgres',
    name,
    slug,
    config: {
      host: u.hostname,
      port: Number(u.port || 5432),
      database,
      user: decodeURIComponent(u.username || 'postgres'),
      allow_private_hosts: true,
    },
    credentials: { password: decodeURIComponent(u.password) || 'unused' },
  };
}

export async function deployOrdersPipeline(
  call: Call,
  opts: {
    apiUrl: string;
    sinkDatabase: string;
    pipeline: string;
    spec?: unknown;
    firstTime?: boolean;
    /** [ref, data source] pairs; default the two refs of ordersSpec. */
    bindings?: [string, string][];
  },
) {
  const org = '/organizations/acme';
  if (opts.firstTime !== false) {
    await ok(
      call('POST', `${org}/data-sources`, {
        type: 'http',
        name: 'Shop API',
        slug: 'shop-api',
        config: { base_url: opts.apiUrl, allow_private_hosts: true },
        credentials: {},
      }),
      201,
    );
    await ok(
      call('POST', `${org}/data-sources`, pgDataSourceBody('warehouse', 'Warehouse', opts.sinkDatabase)),
      201,
    );
    await ok(call('POST', `${org}/projects`, { name: 'Shop', slug: 'shop' }), 201);
    await ok(call('POST', `${org}/environments`, { name: 'Staging', slug: 'staging' }), 201);
    await ok(call('PUT', `${org}/projects/shop/environments/staging`), 201);
  }
  const pe = `${org}/projects/shop/environments/staging`;
  await ok(call('POST', `${org}/projects/shop/pipelines`, { name: opts.pipeline, slug: opts.pipeline }), 201);
  const version = await ok(
    call('POST', `${org}/projects/shop/pipelines/${opts.pipeline}/versions`, {
      spec: opts.spec ?? ordersSpec(),
    }),
    [200, 201],
  );
  const bindings = opts.bindings ?? [
    ['shop-api', 'shop-api'],
    ['warehouse', 'warehouse'],
  ];
  for (const [ref, ds] of bindings) {
    await ok(
      call('PUT', `${pe}/pipelines/${opts.pipeline}/data-source-bindings/${ref}`, { data_source_slug: ds }),
      [200, 201],
    );
  }
  const validation = await ok(
    call('POST', `${pe}/pipeline-validation`, { pipeline_slug: opts.pipeline, spec_hash: version.spec_hash }),
    [200, 201],
  );
  expect(validation.valid, JSON.stringify(validation.findings)).toBe(true);
  await ok(
    call('POST', `${pe}/pipelines/${opts.pipeline}:deploy`, { spec_hash: version.spec_hash }),
    [200, 201],
  );
  return { pe, specHash: version.spec_hash as string };
}

/**
 * Project `logs`, environment `dev` enabled for it, pipeline `pl` and one pushed version of a
 * one-step spec, through the API of organization `acme`: what the app host's stream and log suites
 * write runs against. Returns the pushed version.
 */
export async function pushLogsPipeline(
  ok: (method: string, url: string, body?: unknown) => Promise<any>,
): Promise<{ spec_hash: string }> {
  await ok('POST', '/organizations/acme/projects', { slug: 'logs', name: 'Logs' });
  await ok('POST', '/organizations/acme/environments', { slug: 'dev', name: 'Dev' });
  await ok('PUT', '/organizations/acme/projects/logs/environments/dev', {});
  await ok('POST', '/organizations/acme/projects/logs/pipelines', { slug: 'pl', name: 'Pl' });
  const spec = {
    steps: [
      {
        slug: 'src',
        kind: 'source',
        data_source_ref: 'db',
        operation: { operation_type: 'sql', sql: 'select 1' },
      },
    ],
  };
  return ok('POST', '/organizations/acme/projects/logs/pipelines/pl/versions', { spec });
}

export async function waitUntil<T>(
  read: () => Promise<T>,
  done: (v: NoInfer<T>) => boolean,
  ms = 30_000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > until)
      throw new Error(`condition not reached within ${ms} ms; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

export const terminal = (run: { state: string; [k: string]: any }) =>
  ['succeeded', 'failed', 'canceled'].includes(run.state);

/** Every row of every table of the store as text: a dump to search for values that must not be kept. */
export async function dumpStore(exec: (text: string) => Promise<{ rows: any[] }>): Promise<string> {
  const tables = (
    await exec(
      `select table_schema, table_name from information_schema.tables
        where table_schema in ('public', 'pgboss') and table_type = 'BASE TABLE'`,
    )
  ).rows;
  const parts: string[] = [];
  for (const t of tables) {
    const rows = (await exec(`select t::text as row from "${t.table_schema}"."${t.table_name}" t`)).rows;
    for (const r of rows) parts.push(r.row);
  }
  return parts.join('\n');
}
