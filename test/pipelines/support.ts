import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import mysql from 'mysql2/promise';
import { expect } from 'vitest';
import { buildApp } from '../../packages/server/src/app';
import { parseConfig } from '../../packages/server/src/env';
import { startWorker } from '../../packages/server/src/jobs/worker';
import { bootstrap } from '../../packages/server/src/modules/system/bootstrap';
import { openRuntime } from '../../packages/server/src/runtime';
import { PG_ADMIN, pgQuery, pgUrl, terminal, waitUntil } from '../support/runs';

// Set-up through the API for the pipeline acceptance suites: data sources (HTTP, PostgreSQL,
// MySQL), project and environment, and pipelines pushed, bound, validated and deployed; plus
// the MariaDB scratch databases the MySQL sinks write to.

export type Reply = { statusCode: number; body: string; json(): any };
export type Call = (method: string, url: string, body?: unknown) => Promise<Reply>;

export const ORG = '/organizations/acme';
export const PE = `${ORG}/projects/shop/environments/staging`;

export async function ok(res: Promise<Reply>, status: number | number[]) {
  const r = await res;
  expect([status].flat(), `${r.statusCode} ${r.body}`).toContain(r.statusCode);
  return r.json();
}

/** Project `shop` and environment `staging` of organization `acme`, attached. */
export async function createProjectAndEnvironment(call: Call) {
  await ok(call('POST', `${ORG}/projects`, { name: 'Shop', slug: 'shop' }), 201);
  await ok(call('POST', `${ORG}/environments`, { name: 'Staging', slug: 'staging' }), 201);
  await ok(call('PUT', `${ORG}/projects/shop/environments/staging`), 201);
}

export const httpDataSource = (slug: string, baseUrl: string) => ({
  type: 'http',
  name: slug,
  slug,
  config: { base_url: baseUrl, allow_private_hosts: true },
  credentials: {},
});

/** A PostgreSQL data source on the server of PG_ADMIN, or on another port of 127.0.0.1. */
export function pgDataSource(slug: string, database: string, port?: number) {
  const u = new URL(PG_ADMIN);
  return {
    type: 'postgres',
    name: slug,
    slug,
    config: {
      host: port ? '127.0.0.1' : u.hostname,
      port: port ?? Number(u.port || 5432),
      database,
      user: port ? 'postgres' : decodeURIComponent(u.username || 'postgres'),
      allow_private_hosts: true,
    },
    credentials: { password: port ? '' : decodeURIComponent(u.password) },
  };
}

export const MYSQL_HOST = process.env.SLUICE_TEST_MYSQL_HOST ?? '127.0.0.1';
export const MYSQL_PORT = Number(process.env.SLUICE_TEST_MYSQL_PORT ?? 3306);

export const mysqlDataSource = (slug: string, database: string) => ({
  type: 'mysql',
  name: slug,
  slug,
  config: { host: MYSQL_HOST, port: MYSQL_PORT, database, user: 'root', allow_private_hosts: true },
  credentials: { password: '' },
});

export async function createDataSource(call: Call, body: unknown) {
  await ok(call('POST', `${ORG}/data-sources`, body), 201);
}

/** Creates (or pushes a new version of) a pipeline, binds its refs, validates and deploys it. */
export async function deployPipeline(
  call: Call,
  opts: { pipeline: string; spec: unknown; bindings: Record<string, string>; create?: boolean },
): Promise<string> {
  const base = `${ORG}/projects/shop/pipelines`;
  if (opts.create !== false) {
    await ok(call('POST', base, { name: opts.pipeline, slug: opts.pipeline }), 201);
  }
  const version = await ok(
    call('POST', `${base}/${opts.pipeline}/versions`, { spec: opts.spec }),
    [200, 201],
  );
  for (const [ref, ds] of Object.entries(opts.bindings)) {
    await ok(
      call('PUT', `${PE}/pipelines/${opts.pipeline}/data-source-bindings/${ref}`, { data_source_slug: ds }),
      [200, 201],
    );
  }
  const validation = await ok(
    call('POST', `${PE}/pipeline-validation`, { pipeline_slug: opts.pipeline, spec_hash: version.spec_hash }),
    [200, 201],
  );
  expect(validation.valid, JSON.stringify(validation.findings)).toBe(true);
  await ok(
    call('POST', `${PE}/pipelines/${opts.pipeline}:deploy`, { spec_hash: version.spec_hash }),
    [200, 201],
  );
  return version.spec_hash as string;
}

/** Executes and answers the accepted run (202). */
export async function execute(call: Call, pipeline: string, body: Record<string, unknown> = {}) {
  return ok(call('POST', `${PE}/pipelines/${pipeline}:execute`, body), 202);
}

export const getRun = async (call: Call, slug: string) => (await call('GET', `${PE}/runs/${slug}`)).json();

export const finished = (call: Call, slug: string, ms = 60_000) =>
  waitUntil(() => getRun(call, slug), terminal, ms);

/** Executes and waits for the run's end. */
export async function runToEnd(call: Call, pipeline: string, body: Record<string, unknown>, ms?: number) {
  const accepted = await execute(call, pipeline, body);
  return finished(call, accepted.slug, ms);
}

export async function checkpoints(call: Call, pipeline: string) {
  return (await ok(call('GET', `${PE}/pipelines/${pipeline}/checkpoints`), 200)).checkpoints as {
    step_slug: string;
    cursor: string | null;
    run_slug: string | null;
  }[];
}

export const stepOf = (run: any, slug: string) => run.steps.find((s: any) => s.step_slug === slug);

/** A MariaDB scratch database; `query` runs in it. */
export async function createMysqlDatabase(name: string) {
  const conn = await mysql.createConnection({
    host: MYSQL_HOST,
    port: MYSQL_PORT,
    user: 'root',
    dateStrings: true,
    decimalNumbers: false,
  });
  await conn.query(`DROP DATABASE IF EXISTS ${name}`);
  await conn.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await conn.query(`USE ${name}`);
  return {
    query: async <T = any>(text: string, values: unknown[] = []) =>
      (await conn.query(text, values))[0] as T[],
    async drop() {
      await conn.query(`DROP DATABASE IF EXISTS ${name}`).catch(() => {});
      await conn.end();
    },
  };
}

/**
 * An API host (and optionally an in-process worker) on a scratch PostgreSQL database of its
 * own, for the unit-project suites that need PostgreSQL as the platform store; bootstrapped
 * with organization `acme`.
 */
export async function scratchRuntime(
  database: string,
  opts: { worker?: boolean; env?: Record<string, string> } = {},
) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-pl-'));
  await pgQuery('postgres', `drop database if exists ${database} with (force)`);
  await pgQuery('postgres', `create database ${database}`);
  const env = {
    DATABASE_URL: pgUrl(database),
    SLUICE_DATA_DIR: dataDir,
    SLUICE_MASTER_KEY: randomBytes(32).toString('base64'),
    SLUICE_QUEUE_POLL_SECONDS: '0.5',
    SLUICE_CHECK_RESPONSES: '1',
    ...opts.env,
  };
  let captured = '';
  const logStream = new PassThrough();
  logStream.on('data', (c) => {
    captured += c.toString();
  });
  const rt = await openRuntime(parseConfig({ SLUICE_LOG_LEVEL: 'info', ...env }), {
    supervise: false,
    logStream,
  });
  if (opts.worker) await startWorker(rt.deps);
  const app = await buildApp(rt.deps);
  await app.ready();
  const token = (await bootstrap(rt.deps, { orgSlug: 'acme', email: 'owner@example.com' })).api_key;
  const call: Call = (method, url, body) =>
    app.inject({
      method: method as any,
      url,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
  return {
    rt,
    call,
    /** The owner's API key. */
    token,
    /** Configuration for `sluice` processes on the same store. */
    env,
    logs: () => captured,
    sql: async (text: string, values: unknown[] = []) => (await rt.deps.store.executeSql(text, values)).rows,
    async close() {
      await app.close();
      await rt.close();
      await pgQuery('postgres', `drop database if exists ${database} with (force)`);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
