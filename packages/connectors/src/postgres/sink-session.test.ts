import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  executeRun,
  type Payload,
  type Ports,
  pipelineSpecSchema,
  planSpec,
  RunError,
  type SourceOutput,
  type StepContext,
} from '@sluice/engine';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepContext } from '../../../../test/support/step-context';
import { egressPolicy } from '../egress';
import { createSessionPool, type SessionPool } from '../session-pool';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import { postgres, postgresConfigSchema } from './index';

// The sink's session opened at the run's start, beside the source's (sinkSession capability and
// the engine's SinkOpener port), on the real PostgreSQL at 127.0.0.1:5432: taken by the write
// when the run gets there, and released on every other path, so no backend is left behind.

const ADMIN_URL = process.env.SLUICE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB = `sluice_sink_open_${randomBytes(4).toString('hex')}`;
const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
const admin = new URL(ADMIN_URL);
const conn = {
  config: postgresConfigSchema.parse({
    host: admin.hostname,
    port: Number(admin.port || 5432),
    database: DB,
    user: 'postgres',
    allow_private_hosts: true,
  }),
  credentials: { password: 'unused' },
};

let db: pg.Client;
const sql = async (text: string, values: unknown[] = []) => (await db.query(text, values)).rows;
/** The sessions the connector has on the scratch database (not this test's own); `idle`: open and waiting. */
const backends = async (state?: 'idle') =>
  Number(
    (
      await sql(
        `SELECT count(*) AS n FROM pg_stat_activity
          WHERE datname = $1 AND pid <> pg_backend_pid() AND ($2::text IS NULL OR state = $2)`,
        [DB, state ?? null],
      )
    )[0].n,
  );
/** Until no session of the connector is left on the server (a closed one goes within moments). */
const noneLeft = async () => {
  for (let i = 0; i < 200 && (await backends()) > 0; i++) await new Promise((r) => setTimeout(r, 10));
  return backends();
};

beforeAll(async () => {
  const a = new pg.Client({ connectionString: ADMIN_URL });
  await a.connect();
  await a.query(`CREATE DATABASE ${DB}`);
  await a.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${DB}`;
  db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  const a = new pg.Client({ connectionString: ADMIN_URL });
  await a.connect();
  await a.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  await a.end();
});

type Source = (step: StepContext) => Promise<SourceOutput>;

const rows = (n: number): SourceOutput => ({
  payload: {
    kind: 'rows',
    columns: [
      { name: 'id', type: 'integer' },
      { name: 'name', type: 'text' },
    ],
    batches: (async function* () {
      yield Array.from({ length: n }, (_, i) => [i + 1, `row ${i + 1}`]);
    })(),
  },
  nextCursor: async () => null,
});

/** Runs `source → load` (insert into `table`), the sink's session opened ahead through `pool`. */
async function run(table: string, source: Source, pool: SessionPool, signal = new AbortController().signal) {
  const spec = pipelineSpecSchema.parse({
    steps: [
      {
        slug: 'extract',
        kind: 'source',
        data_source_ref: 'src',
        operation: { operation_type: 'sql', sql: 'SELECT 1' },
      },
      {
        slug: 'load',
        kind: 'sink',
        data_source_ref: 'db',
        operation: { operation_type: 'sql', write: { table, mode: 'insert', create_table: true } },
      },
    ],
    edges: [{ from: 'extract', to: 'load' }],
  });
  const { plan } = planSpec(spec);
  const opened = new Map<string, ReturnType<typeof postgres.sinkSession.open>>();
  const connectorCtx = (step: StepContext) => ({ ...ctx, signal: step.signal, sessions: pool });
  const ports: Ports = {
    readSource: source,
    writeSink: (input: Payload, step) =>
      postgres.sink.write(conn, input, step, {
        ...connectorCtx(step),
        commitKey: `${table}:${step.step.slug}:0`,
        openedSink: opened.get(step.step.slug),
      }),
    sinkOpener: {
      openSink(step) {
        const o = postgres.sinkSession.open(conn, step, connectorCtx(step));
        opened.set(step.step.slug, o);
        return o;
      },
    },
  };
  const dir = await mkdtemp(join(tmpdir(), 'sluice-sink-open-'));
  try {
    return await executeRun({
      runSlug: 'run-open',
      spec,
      plan: plan!,
      ports,
      cursors: {},
      scope: { runtime: { input: {}, env: {}, secrets: {}, run_slug: 'run-open' } },
      secretValues: [],
      signal,
      observer: { onStep: () => {} },
      log: () => {},
      tmpDir: join(dir, 'run'),
      sourceRetry: { attempts: 1, delayMs: 0 },
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A source that answers only once the sink's session is open and waiting on the server. */
const afterSinkOpened =
  (then: () => Promise<SourceOutput>): Source =>
  async () => {
    for (let i = 0; i < 300 && (await backends('idle')) === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    return then();
  };

describe('a sink session opened at the run start', () => {
  it('is the session the write uses: one session opened, handed back to the pool once', async () => {
    const pool = createSessionPool({ maxIdle: 4 });
    await run(
      'ok_rows',
      afterSinkOpened(async () => rows(3)),
      pool,
    );
    expect(await sql('SELECT id, name FROM ok_rows ORDER BY id')).toEqual([
      { id: 1, name: 'row 1' },
      { id: 2, name: 'row 2' },
      { id: 3, name: 'row 3' },
    ]);
    await new Promise((r) => setTimeout(r, 50)); // the reset after release
    expect(pool.stats()).toMatchObject({ opened: 1, idle: 1, closed: 0 });
    // A second run takes the pooled session ahead: nothing new opens.
    await run('ok_rows', async () => rows(2), pool).catch(() => {});
    expect(pool.stats().opened).toBe(1);
    await pool.close();
    expect(await noneLeft()).toBe(0);
  });

  it('is closed when the source fails before the sink starts', async () => {
    const pool = createSessionPool({ maxIdle: 4 });
    const failing = afterSinkOpened(async () => {
      throw new ConnectorError('QUERY_FAILED', 'the source broke');
    });
    const err = await run('never_written', failing, pool).catch((e) => e);
    expect(err).toBeInstanceOf(RunError);
    expect(err.code).toBe('STEP_FAILED');
    expect(err.message).toMatch(/the source broke/);
    await new Promise((r) => setTimeout(r, 50));
    // The failure aborts the run, and the run's sessions go with it: closed, not leaked.
    expect(pool.stats()).toMatchObject({ opened: 1, idle: 0, closed: 1 });
    expect(await sql(`SELECT to_regclass('never_written') AS t`)).toEqual([{ t: null }]);
    await pool.close();
    expect(await noneLeft()).toBe(0);
  });

  it('is closed when the run is canceled before the sink starts', async () => {
    const pool = createSessionPool({ maxIdle: 4 });
    const cancel = new AbortController();
    const waiting: Source = (step) =>
      afterSinkOpened(async () => {
        cancel.abort('stop');
        return new Promise<SourceOutput>((_, reject) =>
          step.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
        );
      })(step);
    const err = await run('canceled_rows', waiting, pool, cancel.signal).catch((e) => e);
    expect(err.code).toBe('CANCELED');
    // Torn down with the run: closed, never pooled.
    expect(pool.stats()).toMatchObject({ opened: 1, idle: 0, closed: 1 });
    expect(await noneLeft()).toBe(0);
    await pool.close();
  });

  it("is released when the write fails; an opening that failed is the write's failure", async () => {
    const pool = createSessionPool({ maxIdle: 4 });
    await sql('CREATE TABLE narrow (id int PRIMARY KEY)');
    // The target lacks a column: the write took the early session and fails on it.
    const err = await run('narrow', async () => rows(1), pool).catch((e) => e);
    expect(err.code).toBe('STEP_FAILED');
    expect(err.message).toMatch(/column "name" is not in table/);
    await pool.close();
    expect(await noneLeft()).toBe(0);

    // An opening that failed (no such database) fails the write with its error: the write does
    // not connect again, though its own connection would have worked.
    const pool2 = createSessionPool({ maxIdle: 4 });
    const step = stepContext({
      slug: 'load',
      kind: 'sink',
      data_source_ref: 'db',
      operation: {
        operation_type: 'sql',
        write: { table: 'not_written', mode: 'insert', create_table: true },
      },
    });
    const bad = { ...conn, config: { ...conn.config, database: `${DB}_missing` } };
    const opening = postgres.sinkSession.open(bad, step, { ...ctx, sessions: pool2 });
    const refused = await opening.catch((e) => e);
    expect(refused).toBeInstanceOf(ConnectorError);
    const written = await postgres.sink
      .write(conn, rows(1).payload, step, {
        ...ctx,
        sessions: pool2,
        commitKey: 'k:load:0',
        openedSink: opening,
      })
      .catch((e) => e);
    expect(written).toBe(refused);
    expect(pool2.stats()).toMatchObject({ opened: 0, idle: 0 });
    expect(await sql(`SELECT to_regclass('not_written') AS t`)).toEqual([{ t: null }]);
    await pool2.close();
  });
});
