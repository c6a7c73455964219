// What a phase of runs cost, per run: statements sent through `pg` (by this process, and by the
// workers: statement-counter.mjs writes their counts into statsDir), the transactions those
// sessions committed on the platform database (`ownCommits`, counted by statement-counter.mjs
// from what they send: the platform's own commits), committed transactions on the platform and
// the data database as the server counts them and new data-database sessions (pg_stat_database
// deltas: these also take autovacuum and the bench's own polling), and
// CPU time of the workers and of this process (API + load generator), CPU time of the PostgreSQL
// backends serving the platform and the data database (/proc/<pid>/stat of each backend in
// pg_stat_activity, sampled every second so a backend that ends loses at most a second; the
// server's own background processes, shared with every other database, are left out) and how
// often the workers' event loops were late (statement-counter.mjs). And the NOTIFYs sent on the
// platform database's queue channel, by kind, as a listener of the bench hears them: each one is a
// committing transaction that took PostgreSQL's server-wide notification lock (docs/scaling.md).
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { dbUrl, sql } from './pipeline-support';
import type { WorkerProcess } from './worker-process';

type Counters = {
  statements: number;
  /** Of those, the ones sent to the platform database (the rest go to the data database). */
  platformStatements: number;
  /** Transactions the platform's own sessions (API, workers) committed on the platform database. */
  ownCommits: number;
  /** pg_stat_database's xact_commit of the platform database: also autovacuum and the bench's polling. */
  platformCommits: number;
  dataCommits: number;
  dataSessions: number;
  workerCpuMs: number;
  ownCpuMs: number;
  /** CPU of the PostgreSQL backends connected to the platform / the data database. */
  storeCpuMs: number;
  dataCpuMs: number;
  /** Worker event-loop samples (every 10 ms) that came ≥ 50 / ≥ 100 ms late. */
  lagOver50: number;
  lagOver100: number;
  /** NOTIFYs heard on the queue channel: new jobs, `taken` announcements, presence (`here`/`bye`). */
  notifyJobs: number;
  notifyTaken: number;
  notifyPresence: number;
  /** The workers' queue fetches, those that took no job, their polls for ready jobs, and the notifications they heard. */
  fetches: number;
  emptyFetches: number;
  polls: number;
  wakeups: number;
};

/** CPU time (user + system) of a process, from /proc. */
function cpuMsOf(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function runCost(opts: { statsDir: string; platformDb: string; dataDb: string }) {
  // Backend CPU, accumulated per database over every backend seen (pid → last CPU read).
  const backends = new Map<number, { db: string; cpu: number }>();
  const backendCpu: Record<string, number> = { [opts.platformDb]: 0, [opts.dataDb]: 0 };
  async function sampleBackends() {
    const rows = await sql(
      'postgres',
      `select pid, datname from pg_stat_activity where datname = any($1) and application_name <> 'sluice-bench'`,
      [[opts.platformDb, opts.dataDb]],
    );
    for (const r of rows) {
      const cpu = cpuMsOf(r.pid);
      const seen = backends.get(r.pid);
      backendCpu[r.datname] += cpu - (seen && seen.db === r.datname ? seen.cpu : 0);
      backends.set(r.pid, { db: r.datname, cpu });
    }
  }
  let sampling: Promise<void> = Promise.resolve();
  const sample = () => {
    sampling = sampling.then(sampleBackends).catch(() => {});
    return sampling;
  };
  const sampler = setInterval(sample, 1000);
  sampler.unref();

  // jobs/queue.ts JOBS_CHANNEL; the bench's own connection, not counted as a statement.
  const heard = { jobs: 0, taken: 0, presence: 0 };
  const listener = new pg.Client({
    connectionString: dbUrl(opts.platformDb),
    application_name: 'sluice-bench',
  });
  listener.on('notification', (msg) => {
    const p = msg.payload ?? '';
    if (p.startsWith('taken:')) heard.taken++;
    else if (p.startsWith('here:') || p.startsWith('bye:')) heard.presence++;
    else heard.jobs++;
  });
  // Connected at the first count (the platform database does not exist yet when this is made).
  let listening: Promise<unknown> | null = null;

  async function counters(workers: WorkerProcess[]): Promise<Counters> {
    type Stats = {
      statements: number;
      byDatabase: Record<string, number>;
      commitsByDatabase?: Record<string, number>;
      lag?: { over50: number; over100: number };
      queue?: { fetches: number; emptyFetches: number; polls: number; notifications: number };
    };
    const own = (globalThis as { __benchStatements?: Stats }).__benchStatements!;
    let statements = own.statements;
    let platformStatements = own.byDatabase[opts.platformDb] ?? 0;
    let ownCommits = own.commitsByDatabase?.[opts.platformDb] ?? 0;
    let lagOver50 = 0;
    let lagOver100 = 0;
    const queue = { fetches: 0, emptyFetches: 0, polls: 0, notifications: 0 };
    for (const f of fs.readdirSync(opts.statsDir).filter((name) => name.endsWith('.json'))) {
      try {
        const stats: Stats = JSON.parse(fs.readFileSync(path.join(opts.statsDir, f), 'utf8'));
        statements += stats.statements;
        platformStatements += stats.byDatabase[opts.platformDb] ?? 0;
        ownCommits += stats.commitsByDatabase?.[opts.platformDb] ?? 0;
        lagOver50 += stats.lag?.over50 ?? 0;
        lagOver100 += stats.lag?.over100 ?? 0;
        for (const k of Object.keys(queue) as (keyof typeof queue)[]) queue[k] += stats.queue?.[k] ?? 0;
      } catch {
        // being written
      }
    }
    const rows = await sql(
      'postgres',
      'select datname, xact_commit, sessions from pg_stat_database where datname = any($1)',
      [[opts.platformDb, opts.dataDb]],
    );
    const of = (db: string) => rows.find((r) => r.datname === db) ?? { xact_commit: 0, sessions: 0 };
    const cpu = process.cpuUsage();
    await sample();
    listening ??= listener.connect().then(() => listener.query('listen sluice_jobs'));
    await listening;
    return {
      statements,
      platformStatements,
      ownCommits,
      platformCommits: Number(of(opts.platformDb).xact_commit),
      dataCommits: Number(of(opts.dataDb).xact_commit),
      dataSessions: Number(of(opts.dataDb).sessions),
      workerCpuMs: workers.reduce((sum, w) => sum + cpuMsOf(w.pid), 0),
      ownCpuMs: (cpu.user + cpu.system) / 1000,
      storeCpuMs: backendCpu[opts.platformDb],
      dataCpuMs: backendCpu[opts.dataDb],
      lagOver50,
      lagOver100,
      notifyJobs: heard.jobs,
      notifyTaken: heard.taken,
      notifyPresence: heard.presence,
      fetches: queue.fetches,
      emptyFetches: queue.emptyFetches,
      polls: queue.polls,
      wakeups: queue.notifications,
    };
  }

  /** What a phase cost per run, each counter's delta divided by the runs. */
  async function perRun(before: Counters, workers: WorkerProcess[], runs: number) {
    // The statistics collector lags a little.
    await sleep(1500);
    const after = await counters(workers);
    const per = Object.fromEntries(
      Object.keys(after).map((k) => [k, (after[k as keyof Counters] - before[k as keyof Counters]) / runs]),
    ) as Counters;
    return { ...per, runs };
  }

  /** What a phase cost per run, as one line. */
  async function costPerRun(before: Counters, workers: WorkerProcess[], runs: number): Promise<string> {
    return costLine(await perRun(before, workers, runs));
  }

  function costLine(cost: Counters & { runs: number }): string {
    const per = (k: keyof Counters) => cost[k].toFixed(k.endsWith('CpuMs') ? 1 : 2);
    const total = (k: keyof Counters) => (cost[k] * cost.runs).toFixed(0);
    return (
      `  per run: ${per('statements')} statements (${per('platformStatements')} on the platform database), ` +
      `${per('ownCommits')} platform commits by its sessions (${per('platformCommits')} by pg_stat_database, ` +
      `with autovacuum and the bench's polling), ` +
      `${per('dataCommits')} data commits, ${per('dataSessions')} new data sessions, ` +
      `CPU ${per('workerCpuMs')} ms in workers + ${per('ownCpuMs')} ms in the API/bench process + ` +
      `${per('storeCpuMs')} ms in platform-database backends + ${per('dataCpuMs')} ms in data-database backends; ` +
      `worker event loops late ≥ 50 ms ${total('lagOver50')} times, ≥ 100 ms ${total('lagOver100')} times (10 ms timer); ` +
      `NOTIFYing commits ${(cost.notifyJobs + cost.notifyTaken + cost.notifyPresence).toFixed(2)}: ` +
      `${per('notifyJobs')} new-job, ${per('notifyTaken')} taken, ${per('notifyPresence')} presence; ` +
      `workers' queue: ${per('fetches')} fetches (${per('emptyFetches')} empty), ${per('polls')} polls, ` +
      `${per('wakeups')} notifications heard`
    );
  }

  const reportCost = async (before: Counters, workers: WorkerProcess[], runs: number) =>
    console.log(await costPerRun(before, workers, runs));

  const stop = () => {
    clearInterval(sampler);
    if (listening) void listener.end().catch(() => {});
  };
  return { counters, perRun, costLine, costPerRun, reportCost, stop };
}
