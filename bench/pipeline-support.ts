// Helpers of `npm run bench:pipeline` and the other benches: scratch PostgreSQL databases, the
// Sluice API in this process (in-process requests on a scratch platform database), and `sluice
// worker` as a child process with its resident memory sampled (proc-cpu.ts reads /proc;
// people-source.ts serves the HTTP JSON benches' records).
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { compiledBuildIsFresh } from '../packages/cli/bin/fresh.mjs';
import { type App, buildApp } from '../packages/server/src/app';
import { parseConfig } from '../packages/server/src/env';
import { bootstrap } from '../packages/server/src/modules/system/bootstrap';
import { openRuntime, type Runtime } from '../packages/server/src/runtime';
import { type CpuGroups, cpuReport, cpuSeconds, sampleCpu, statusKb } from './proc-cpu';

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
    const started = performance.now();
    const r = await c.query(`COPY ${table} FROM '${file}' (FORMAT binary)`);
    const ms = performance.now() - started;
    if (r.rowCount !== n) throw new Error(`the limit's COPY loaded ${r.rowCount} rows, expected ${n}`);
    const rps = n / (ms / 1000);
    console.log(
      `  limit: server COPY FROM file ${rps.toFixed(0).padStart(8)} rows/s  (${(ms / 1000).toFixed(2)} s, binary, server-side; ` +
        `backend CPU ${(cpuSeconds(pid) - cpu).toFixed(2)} s)`,
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
  call(method: string, url: string, body?: unknown): Promise<any>;
  /** Serves the API host on a local port as well (for a load generator in another process). */
  listen(): Promise<string>;
  close(): Promise<void>;
};

/** The Sluice API on the platform database, called in process (no socket), as the owner key. */
export async function openPlatform(env: Record<string, string>, apiKey?: string): Promise<Platform> {
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const rt = await openRuntime(parseConfig({ ...env, SLUICE_LOG_LEVEL: 'warn' }), {
    logStream: sink,
    supervise: false,
    // As `sluice serve` opens it: its pool open and warm from the start.
    warmPool: true,
  });
  const app = await buildApp(rt.deps);
  await app.ready();
  // A store bootstrapped by an earlier invocation (kept) is called with the key it printed.
  const api_key =
    apiKey ?? (await bootstrap(rt.deps, { orgSlug: 'acme', email: 'bench@example.com' })).api_key;
  return {
    rt,
    app,
    apiKey: api_key,
    listen: () => app.listen({ host: '127.0.0.1', port: 0 }),
    async call(method, url, body) {
      const res = await app.inject({
        method: method as any,
        url,
        headers: {
          authorization: `Bearer ${api_key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        payload: body === undefined ? undefined : JSON.stringify(body),
      });
      if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
      return res.body ? res.json() : null;
    },
    async close() {
      await app.close();
      await rt.close();
    },
  };
}

/** A PostgreSQL data source on the bench server (statement timeout at its maximum). */
export function pgDataSource(slug: string, database: string, readOnly = false) {
  const u = new URL(ADMIN_URL);
  return {
    type: 'postgres',
    name: slug,
    slug,
    read_only: readOnly,
    config: {
      host: u.hostname,
      port: Number(u.port || 5432),
      database,
      user: decodeURIComponent(u.username || 'postgres'),
      statement_timeout_seconds: 300,
      allow_private_hosts: true,
    },
    credentials: { password: decodeURIComponent(u.password) || 'unused' },
  };
}

/** Pushes, binds (ref = data source slug), validates and deploys a pipeline; returns `{pe}`. */
export async function deployPipeline(p: Platform, slug: string, spec: any): Promise<void> {
  const org = '/organizations/acme';
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
 * The bench project and environment, the PostgreSQL data source `target-db` on `database`, and
 * `tick` deployed: one row (`SELECT 1 AS n`) into `database`'s table `ticks`.
 */
export async function setUpTick(p: Platform, database: string): Promise<void> {
  await p.call('POST', '/organizations/acme/projects', { name: 'Bench', slug: 'bench' });
  await p.call('POST', '/organizations/acme/environments', { name: 'Bench', slug: 'bench' });
  await p.call('PUT', '/organizations/acme/projects/bench/environments/bench');
  await p.call('POST', '/organizations/acme/data-sources', pgDataSource('target-db', database));
  await deployPipeline(p, 'tick', {
    steps: [
      {
        slug: 'one',
        kind: 'source',
        data_source_ref: 'target-db',
        operation: { operation_type: 'sql', sql: 'SELECT 1 AS n' },
      },
      {
        slug: 'load',
        kind: 'sink',
        data_source_ref: 'target-db',
        operation: { operation_type: 'sql', write: { table: 'ticks', mode: 'insert' } },
      },
    ],
    edges: [{ from: 'one', to: 'load' }],
  });
}

export type WorkerProcess = {
  pid: number;
  /** Starts sampling VmRSS every 100 ms (from now on). */
  sample(): void;
  /** Peak VmRSS sampled since `sample()`, the kernel's high-water mark VmHWM, idle VmRSS; in MB (10⁶ bytes). */
  peaks(): { sampledMB: number; hwmMB: number; idleMB: number };
  stop(): Promise<void>;
};

/**
 * A `sluice` command (`worker`, `serve`, …) exactly as a user runs it (packages/cli/bin/sluice.mjs),
 * or of another compiled CLI build (`dist`, through bench/dist-worker.mjs), with only `env` of
 * Sluice's settings; resolves once its output holds `ready`. `nodeArgs` (e.g. --cpu-prof) go to node.
 */
export async function startSluice(opts: {
  command: string[];
  env: Record<string, string>;
  ready: string;
  nodeArgs?: string[];
  dist?: string;
}): Promise<{ child: ChildProcess; exited: Promise<void>; output(): string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(childEnv)) {
    if (key.startsWith('SLUICE_') || key === 'DATABASE_URL') delete childEnv[key];
  }
  const { dist } = opts;
  // A stale build makes `sluice` run its sources through tsx (slower to start, ~100 MB more):
  // the figures would measure the TypeScript loader (bench:memory refuses the same way).
  if (!dist && !compiledBuildIsFresh(new URL('../packages/cli/', import.meta.url)))
    throw new Error(
      'packages/cli/dist is not built from the sources as they are: run `npm run build -w @sluice/cli` first',
    );
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(opts.nodeArgs ?? []),
      dist
        ? path.join(repoRoot, 'bench/dist-worker.mjs')
        : path.join(repoRoot, 'packages/cli/bin/sluice.mjs'),
      ...opts.command,
    ],
    {
      cwd: repoRoot,
      env: {
        ...childEnv,
        SLUICE_LOG_LEVEL: 'warn',
        ...opts.env,
        ...(dist ? { BENCH_WORKER_DIST: path.resolve(repoRoot, dist) } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout?.on('data', (c) => {
    out += c;
  });
  child.stderr?.on('data', (c) => {
    out += c;
  });
  const exited = new Promise<void>((r) => child.on('close', () => r()));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (out.includes(opts.ready)) {
        clearInterval(timer);
        resolve();
      } else if (child.exitCode !== null) {
        clearInterval(timer);
        reject(new Error(`sluice ${opts.command[0]} exited:\n${out}`));
      }
    }, 50);
  });
  return { child, exited, output: () => out };
}

/**
 * `sluice worker` exactly as a user runs it (packages/cli/bin/sluice.mjs), a fresh process per
 * measurement so its high-water mark belongs to one run. `nodeArgs` (e.g. --cpu-prof) go to node.
 */
export async function startWorker(
  env: Record<string, string>,
  nodeArgs: string[] = [],
  workerArgs: string[] = [],
  /** Another compiled CLI build to run (bench/dist-worker.mjs), instead of this checkout's `sluice`. */
  dist?: string,
): Promise<WorkerProcess> {
  const { child, exited, output } = await startSluice({
    command: ['worker', ...workerArgs],
    env,
    ready: 'Sluice worker is running',
    nodeArgs,
    dist,
  });
  const pid = child.pid!;
  const idle = statusKb(pid, 'VmRSS');
  let peak = 0;
  let sampler: NodeJS.Timeout | null = null;
  return {
    pid,
    sample() {
      peak = statusKb(pid, 'VmRSS');
      sampler = setInterval(() => {
        try {
          peak = Math.max(peak, statusKb(pid, 'VmRSS'));
        } catch {
          // the process has ended
        }
      }, 100);
    },
    peaks() {
      const mb = (kb: number) => (kb * 1024) / 1e6;
      return { sampledMB: mb(peak), hwmMB: mb(statusKb(pid, 'VmHWM')), idleMB: mb(idle) };
    },
    async stop() {
      if (sampler) clearInterval(sampler);
      child.kill('SIGTERM');
      await exited;
      if (child.exitCode !== 0 && output().trim()) process.stderr.write(`worker output:\n${output()}\n`);
    },
  };
}

/** CPU seconds of the backends connected to `database` besides the bench's own (same host). */
async function sessionsCpu(database: string): Promise<number> {
  const pids = await sql<{ pid: number }>(
    database,
    "select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()",
  );
  let total = 0;
  for (const { pid } of pids) {
    try {
      total += cpuSeconds(pid);
    } catch {} // ended meanwhile
  }
  return total;
}

/**
 * Executes a deployed pipeline in a fresh worker process (execute through the API, poll until
 * the run ends); rows/s over the run's own timing and over execute → finished, and the worker's
 * memory. `loaded` counts the target's rows afterwards (must be `n`).
 */
export async function runInWorker(
  p: Platform,
  pipeline: string,
  n: number,
  loaded: () => Promise<number>,
  opts: {
    env: Record<string, string>;
    profDir: string | null;
    /**
     * Runs the pipeline once in the same worker before the measured run, then calls this (it
     * empties the target): the measured run finds the worker's modules (DuckDB's) loaded, as a
     * long-running worker's every run after its first does.
     */
    warm?: () => Promise<void>;
    /**
     * The target database: the CPU time of the worker's sessions on it (its pooled sink
     * session, a new backend per fresh worker) is printed once the run ended. The COPY's
     * parsing happens there, so this moves with the format the sink writes, not with the load.
     */
    targetDb?: string;
    /**
     * Processes whose CPU is sampled from execute to the run's end, beside the worker's (e.g.
     * `{ source: backendsOf(SRC), target: backendsOf(DST), server: pgServerProcesses }`): totals
     * printed, a timeline too with BENCH_TIMELINE=1, and returned.
     */
    cpuGroups?: CpuGroups;
    /** Another compiled CLI build for the worker (bench/dist-worker.mjs), for an A/B against it. */
    dist?: string;
  },
) {
  // A directory per run: node writes one profile per thread (tsx's loader runs in its own).
  const prof = opts.profDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.profDir}`] : [];
  // BENCH_STATEMENT_LOG=file: the worker appends each statement it sends, and when its answer
  // came, to the file (statement-counter.mjs): where the time before the first byte goes.
  const log = process.env.BENCH_STATEMENT_LOG
    ? ['--import', new URL('./statement-counter.mjs', import.meta.url).href]
    : [];
  const worker = await startWorker(
    { ...opts.env, SLUICE_QUEUE_POLL_SECONDS: '0.5' },
    [...prof, ...log],
    [],
    opts.dist,
  );
  try {
    if (opts.warm) {
      const first = await p.call('POST', `${PE}/pipelines/${pipeline}:execute`, {});
      for (;;) {
        await new Promise((r) => setTimeout(r, 200));
        const r = await p.call('GET', `${PE}/runs/${first.slug}`);
        if (r.state === 'succeeded') break;
        if (['failed', 'canceled'].includes(r.state)) throw new Error(`warm-up run ${r.state}`);
      }
      await opts.warm();
    }
    worker.sample();
    // A warm worker's pooled target session already spent the warm-up run's CPU.
    const targetBefore = opts.targetDb && opts.warm ? await sessionsCpu(opts.targetDb) : 0;
    const cpuStart = cpuSeconds(worker.pid);
    // Every 25 ms only for a 25 ms timeline: the sampling costs the bench ~5 % of a core at that
    // rate (reading /proc), which the run competes with; the totals do not depend on the rate.
    const every = Number(process.env.BENCH_TIMELINE ?? 0) === 25 ? 25 : 100;
    const sampler = opts.cpuGroups ? sampleCpu(opts.cpuGroups, { worker: worker.pid }, every) : null;
    const wallStart = performance.now();
    const executedAt = Date.now();
    const queued = await p.call('POST', `${PE}/pipelines/${pipeline}:execute`, {});
    if (process.env.BENCH_STATEMENT_LOG)
      fs.appendFileSync(process.env.BENCH_STATEMENT_LOG, `bench\texecute\t${executedAt}\t-\t${pipeline}\n`);
    let run: any;
    for (;;) {
      await new Promise((r) => setTimeout(r, 200));
      run = await p.call('GET', `${PE}/runs/${queued.slug}`);
      if (['succeeded', 'failed', 'canceled'].includes(run.state)) break;
    }
    // The run ends when its record says it finished (the worker's clock on this same host), not
    // when the 200 ms poll below first sees it; the polled figure is printed beside it.
    const seenMs = performance.now() - wallStart;
    const wallMs = Date.parse(run.finished_at) - executedAt;
    const peaks = worker.peaks();
    const cpu = cpuSeconds(worker.pid) - cpuStart;
    const sampled = sampler?.stop() ?? null;
    const targetCpu = opts.targetDb ? (await sessionsCpu(opts.targetDb)) - targetBefore : null;
    if (run.state !== 'succeeded') throw new Error(`run ${run.state}: ${JSON.stringify(run.error)}`);
    const got = await loaded();
    if (got !== n) throw new Error(`the run loaded ${got} rows, expected ${n}`);
    const counted = run.steps.map((s: any) => `${s.step_slug} ${s.rows_out}`).join(', ');
    const runMs = Date.parse(run.finished_at) - Date.parse(run.started_at);
    const rps = n / (runMs / 1000);
    const wallRps = n / (wallMs / 1000);
    const steps = run.steps
      .map(
        (s: any) =>
          `${s.step_slug} ${((Date.parse(s.finished_at) - Date.parse(s.started_at)) / 1000).toFixed(1)} s`,
      )
      .join(', ');
    console.log(
      `  Sluice run                   ${rps.toFixed(0).padStart(8)} rows/s  (run ${(runMs / 1000).toFixed(1)} s, ` +
        `execute→finished ${(wallMs / 1000).toFixed(2)} s, seen by polling ${(seenMs / 1000).toFixed(2)} s; ${steps})`,
    );
    console.log(
      `  execute→finished ${wallRps.toFixed(0).padStart(8)} rows/s; rows out per step (run record): ${counted}`,
    );
    console.log(
      `  worker RSS: idle ${peaks.idleMB.toFixed(0)} MB, peak sampled ${peaks.sampledMB.toFixed(0)} MB, ` +
        `VmHWM ${peaks.hwmMB.toFixed(0)} MB; worker CPU ${cpu.toFixed(2)} s (every thread, execute→seen)` +
        (targetCpu === null ? '' : `; target backend CPU ${targetCpu.toFixed(2)} s (the worker's sessions)`),
    );
    if (sampled) {
      for (const line of cpuReport(
        sampled,
        Number(process.env.BENCH_TIMELINE ?? 0) === 1 ? 100 : Number(process.env.BENCH_TIMELINE ?? 0),
      ))
        console.log(`  ${line}`);
      console.log(
        `  execute → run started ${Date.parse(run.started_at) - executedAt} ms, execute → finished ${wallMs.toFixed(0)} ms (the worker's clock)`,
      );
    }
    if (process.env.BENCH_RUN_LOG) {
      // The run's own log (which way each step took), with the worker's timestamps.
      const logs = await p.call('GET', `${PE}/runs/${queued.slug}/logs?limit=100`);
      const t0 = Date.parse(run.started_at);
      for (const l of logs.logs ?? [])
        console.log(`    +${Date.parse(l.at) - t0} ms ${l.step_slug ?? ''} ${l.message}`);
    }
    return {
      rps,
      wallRps,
      wallMs,
      peakMB: Math.max(peaks.sampledMB, peaks.hwmMB),
      workerCpuMs: cpu * 1000,
      cpu: sampled?.totals ?? null,
    };
  } finally {
    await worker.stop();
  }
}
