// Helpers of `npm run bench:pipeline` and the other benches: scratch PostgreSQL databases, the
// limit's COPY from a file, and the Sluice API in this process (in-process requests on a scratch
// platform database). worker-process.ts starts `sluice worker` and measures a run in it,
// proc-cpu.ts reads /proc, people-source.ts serves the HTTP JSON benches' records.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { type App, buildApp } from '../packages/server/src/app';
import { parseConfig } from '../packages/server/src/env';
import { bootstrap } from '../packages/server/src/modules/system/bootstrap';
import { openRuntime, type Runtime } from '../packages/server/src/runtime';
import { contextSwitches, cpuSeconds } from './proc-cpu';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ADMIN_URL =
  process.env.SLUICE_BENCH_PG_URL ??
  process.env.SLUICE_TEST_PG_URL ??
  'postgres://postgres@127.0.0.1:5432/postgres';

export function dbUrl(database: string): string {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function sql<T = any>(database: string, text: string, values: unknown[] = []): Promise<T[]> {
  // Named, so statement-counter.mjs leaves the bench's own statements out of a run's cost.
  const c = new pg.Client({ connectionString: dbUrl(database), application_name: 'sluice-bench' });
  await c.connect();
  try {
    return (await c.query(text, values as any[])).rows as T[];
  } finally {
    await c.end();
  }
}

/** The benches' ten columns: ints, a bigint, numerics, text, timestamps, a boolean and a nullable text. */
export const ROW_COLUMNS = `id integer primary key, qty integer, big bigint, amount numeric(12,2), ratio numeric,
  name text, email text, created_at timestamptz, updated_at timestamp, active boolean, note text`;

/** (Re)creates `table` in `database` with ROW_COLUMNS and n generated rows, then analyzes it. */
export async function fillRows(database: string, table: string, n: number): Promise<void> {
  await sql(database, `drop table if exists ${table}`);
  await sql(database, `create table ${table} (${ROW_COLUMNS})`);
  await sql(
    database,
    `insert into ${table}
       select i, i % 1000, i::bigint * 1000003, (i % 100000) / 100.0, i / 7.0,
              'name ' || i, 'user' || i || '@example.com',
              timestamptz '2024-01-01 00:00:00+00' + i * interval '1 second',
              timestamp '2024-01-01 00:00:00' + i * interval '1 minute',
              i % 2 = 0, case when i % 3 = 0 then null else 'note ' || i end
         from generate_series(1, $1) i`,
    [n],
  );
  await sql(database, `vacuum analyze ${table}`);
}

/** Drops and creates `table (columns)` in `database`, then checkpoints (each load starts alike). */
export async function resetTarget(database: string, table: string, columns: string) {
  await sql(database, `drop table if exists ${table}`);
  await sql(database, `create table ${table} (${columns})`);
  await sql('postgres', 'checkpoint');
}

/** The rows of `table` in `database`. */
export async function count(database: string, table: string): Promise<number> {
  return Number((await sql(database, `select count(*)::bigint as n from ${table}`))[0].n);
}

/** The 1, 5 and 15 minute load averages, as a bench prints them beside its figures. */
export const loadAverages = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

export const createDatabase = (name: string) => sql('postgres', `create database ${name}`);
export const dropDatabase = (name: string) => sql('postgres', `drop database if exists ${name} with (force)`);

/** Runs a shell command line; resolves with its wall time in ms, rejects on a non-zero exit. */
export function shell(line: string, env: Record<string, string> = {}): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', line], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c) => {
      err += c;
    });
    child.on('close', (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`${line}: exit ${code}\n${err}`)),
    );
  });
}

/**
 * The data path's physical limit (issue 26 item 8): the target server's own binary
 * `COPY table FROM 'file'` of the same rows, server-side (no client, no network). `file` is a
 * path on the server's host written before by `writeLimitFile`; the server runs as its own
 * user and must be able to read it. Only the COPY statement is timed (autocommit: its commit
 * and WAL flush included, as a Sluice run's). Resolves with rows/s; checks the row count.
 */
export async function copyFileLimit(
  database: string,
  table: string,
  file: string,
  n: number,
): Promise<number> {
  const c = new pg.Client({ connectionString: dbUrl(database), application_name: 'sluice-bench' });
  await c.connect();
  try {
    const pid = (await c.query('select pg_backend_pid() as pid')).rows[0].pid as number;
    const cpu = cpuSeconds(pid);
    const switches = contextSwitches(pid);
    const started = performance.now();
    const r = await c.query(`COPY ${table} FROM '${file}' (FORMAT binary)`);
    const ms = performance.now() - started;
    const after = contextSwitches(pid);
    if (r.rowCount !== n) throw new Error(`the limit's COPY loaded ${r.rowCount} rows, expected ${n}`);
    const rps = n / (ms / 1000);
    console.log(
      `  limit: server COPY FROM file ${rps.toFixed(0).padStart(8)} rows/s  (${(ms / 1000).toFixed(2)} s, binary, server-side; ` +
        `backend CPU ${(cpuSeconds(pid) - cpu).toFixed(2)} s; ${after.waits - switches.waits} waits, ` +
        `${after.preempted - switches.preempted} times preempted)`,
    );
    return rps;
  } finally {
    await c.end();
  }
}

/** Writes `query`'s rows on the server to `file` in binary COPY format, for `copyFileLimit`. */
export async function writeLimitFile(database: string, query: string, file: string): Promise<void> {
  await sql(database, `COPY (${query}) TO '${file}' (FORMAT binary)`);
}

/** A file path for the limit's rows on the server's host (the bench and server share /tmp). */
export const limitFile = (tag: string) => `/tmp/sluice_bench_limit_${process.pid}_${tag}.bin`;

/** Removes this process's limit files (the bench runs as a user that may delete them). */
export function removeLimitFiles() {
  for (const f of fs.readdirSync('/tmp')) {
    if (f.startsWith(`sluice_bench_limit_${process.pid}_`)) fs.rmSync(path.join('/tmp', f), { force: true });
  }
}

export type Platform = {
  rt: Runtime;
  app: App;
  /** The owner API key the calls authenticate with. */
  apiKey: string;
  /** The bootstrapped owner's personal access token (null when the store was bootstrapped before). */
  personalAccessToken: string | null;
  call(method: string, url: string, body?: unknown): Promise<any>;
  /** Serves the API host on a local port as well (for a load generator in another process). */
  listen(): Promise<string>;
  close(): Promise<void>;
};

/** Requests to `app` in process (no socket) as `token`; a status of 300 or more throws. */
function caller(app: App, token: string): Platform['call'] {
  return async (method, url, body) => {
    const res = await app.inject({
      method: method as any,
      url,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.body ? res.json() : null;
  };
}

/** The same API host, its calls made as `apiKey` (another organization's key, say). */
export const asKey = (p: Platform, apiKey: string): Platform => ({
  ...p,
  apiKey,
  call: caller(p.app, apiKey),
});

/** The Sluice API on the platform database, called in process (no socket), as the owner key. */
export async function openPlatform(env: Record<string, string>, apiKey?: string): Promise<Platform> {
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const rt = await openRuntime(parseConfig({ ...env, SLUICE_LOG_LEVEL: 'warn' }), {
    logStream: sink,
    supervise: false,
    // As `sluice serve` opens it: its pool open and warm from the start, lists read from
    // DATABASE_READ_URL when it is set.
    warmPool: true,
    reads: true,
  });
  const app = await buildApp(rt.deps);
  await app.ready();
  // A store bootstrapped by an earlier invocation (kept) is called with the key it printed.
  const first = apiKey ? null : await bootstrap(rt.deps, { orgSlug: 'acme', email: 'bench@example.com' });
  const api_key = apiKey ?? first!.api_key;
  return {
    rt,
    app,
    apiKey: api_key,
    personalAccessToken: first?.personal_access_token ?? null,
    listen: () => app.listen({ host: '127.0.0.1', port: 0 }),
    call: caller(app, api_key),
    async close() {
      await app.close();
      await rt.close();
    },
  };
}

/** A PostgreSQL data source on the bench server (statement timeout at its maximum). */
export function pgDataSource(slug: string, database: string, readOnly = false, port?: number) {
  const u = new URL(ADMIN_URL);
  return {
    type: 'postgres',
    name: slug,
    slug,
    read_only: readOnly,
    config: {
      host: u.hostname,
      port: port ?? Number(u.port || 5432),
      database,
      user: decodeURIComponent(u.username || 'postgres'),
      statement_timeout_seconds: 300,
      allow_private_hosts: true,
    },
    credentials: { password: decodeURIComponent(u.password) || 'unused' },
  };
}

/** Pushes, binds (ref = data source slug), validates and deploys a pipeline; returns `{pe}`. */
export async function deployPipeline(p: Platform, slug: string, spec: any, orgSlug = 'acme'): Promise<void> {
  const org = `/organizations/${orgSlug}`;
  const pe = `${org}/projects/bench/environments/bench`;
  await p.call('POST', `${org}/projects/bench/pipelines`, { name: slug, slug });
  const version = await p.call('POST', `${org}/projects/bench/pipelines/${slug}/versions`, { spec });
  for (const step of spec.steps) {
    if (!step.data_source_ref) continue;
    await p.call('PUT', `${pe}/pipelines/${slug}/data-source-bindings/${step.data_source_ref}`, {
      data_source_slug: step.data_source_ref,
    });
  }
  const validation = await p.call('POST', `${pe}/pipeline-validation`, {
    pipeline_slug: slug,
    spec_hash: version.spec_hash,
  });
  if (!validation.valid) throw new Error(`${slug} is invalid: ${JSON.stringify(validation.findings)}`);
  await p.call('POST', `${pe}/pipelines/${slug}:deploy`, { spec_hash: version.spec_hash });
}

/** Deploys `slug`: `SELECT * FROM <from>` on one data source, inserted into `<into>` on another. */
export function deployCopyPipeline(
  p: Platform,
  slug: string,
  source: { ref: string; table: string; cursorColumn?: string },
  sink: { ref: string; table: string },
): Promise<void> {
  return deployPipeline(p, slug, {
    steps: [
      {
        slug: 'extract',
        kind: 'source',
        data_source_ref: source.ref,
        operation: {
          operation_type: 'sql',
          sql: `SELECT * FROM ${source.table}`,
          ...(source.cursorColumn ? { cursor_column: source.cursorColumn } : {}),
        },
      },
      {
        slug: 'load',
        kind: 'sink',
        data_source_ref: sink.ref,
        operation: { operation_type: 'sql', write: { table: sink.table, mode: 'insert' } },
      },
    ],
    edges: [{ from: 'extract', to: 'load' }],
  });
}

export const PE = '/organizations/acme/projects/bench/environments/bench';

/**
 * The same one row read incrementally: a bound template (the last cursor) and a cursor column,
 * so the source takes the cursor's path (parameter types, the cursor's greatest value), yet
 * every run reads its row.
 */
const INCREMENTAL_TICK =
  'SELECT n FROM (VALUES (1)) v(n) WHERE n > coalesce({{runtime.incremental.lower_bound.cursor}}::int, 0) - 1';

/**
 * The bench project and environment, the PostgreSQL data source `target-db` on `database`, and
 * `tick` deployed: one row (`SELECT 1 AS n`) into `database`'s table `ticks`. `incremental`:
 * the row read through a cursor (INCREMENTAL_TICK); `port`: the data source's server through
 * another port (a delay proxy, bench/delay-proxy.ts).
 */
export async function setUpTick(
  p: Platform,
  database: string,
  orgSlug = 'acme',
  opts: { incremental?: boolean; port?: number } = {},
): Promise<void> {
  const org = `/organizations/${orgSlug}`;
  await p.call('POST', `${org}/projects`, { name: 'Bench', slug: 'bench' });
  await p.call('POST', `${org}/environments`, { name: 'Bench', slug: 'bench' });
  await p.call('PUT', `${org}/projects/bench/environments/bench`);
  await p.call('POST', `${org}/data-sources`, pgDataSource('target-db', database, false, opts.port));
  await deployPipeline(
    p,
    'tick',
    {
      steps: [
        {
          slug: 'one',
          kind: 'source',
          data_source_ref: 'target-db',
          operation: opts.incremental
            ? { operation_type: 'sql', sql: INCREMENTAL_TICK, cursor_column: 'n' }
            : { operation_type: 'sql', sql: 'SELECT 1 AS n' },
        },
        {
          slug: 'load',
          kind: 'sink',
          data_source_ref: 'target-db',
          operation: { operation_type: 'sql', write: { table: 'ticks', mode: 'insert' } },
        },
      ],
      edges: [{ from: 'one', to: 'load' }],
    },
    orgSlug,
  );
}
