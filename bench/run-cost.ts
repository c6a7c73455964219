// What a phase of runs cost, per run: statements sent through `pg` (by this process, and by the
// workers: statement-counter.mjs writes their counts into statsDir), committed transactions on
// the platform and the data database, new data-database sessions (pg_stat_database deltas), and
// CPU time of the workers and of this process (API + load generator).
import fs from 'node:fs';
import path from 'node:path';
import { sql, type WorkerProcess } from './pipeline-support';

type Counters = {
  statements: number;
  /** Of those, the ones sent to the platform database (the rest go to the data database). */
  platformStatements: number;
  platformCommits: number;
  dataCommits: number;
  dataSessions: number;
  workerCpuMs: number;
  ownCpuMs: number;
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
  async function counters(workers: WorkerProcess[]): Promise<Counters> {
    type Stats = { statements: number; byDatabase: Record<string, number> };
    const own = (globalThis as { __benchStatements?: Stats }).__benchStatements!;
    let statements = own.statements;
    let platformStatements = own.byDatabase[opts.platformDb] ?? 0;
    for (const f of fs.readdirSync(opts.statsDir)) {
      try {
        const stats: Stats = JSON.parse(fs.readFileSync(path.join(opts.statsDir, f), 'utf8'));
        statements += stats.statements;
        platformStatements += stats.byDatabase[opts.platformDb] ?? 0;
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
    return {
      statements,
      platformStatements,
      platformCommits: Number(of(opts.platformDb).xact_commit),
      dataCommits: Number(of(opts.dataDb).xact_commit),
      dataSessions: Number(of(opts.dataDb).sessions),
      workerCpuMs: workers.reduce((sum, w) => sum + cpuMsOf(w.pid), 0),
      ownCpuMs: (cpu.user + cpu.system) / 1000,
    };
  }

  /** What a phase cost per run, each counter's delta divided by the runs. */
  async function perRun(before: Counters, workers: WorkerProcess[], runs: number) {
    // The statistics collector lags a little.
    await sleep(1500);
    const after = await counters(workers);
    return Object.fromEntries(
      Object.keys(after).map((k) => [k, (after[k as keyof Counters] - before[k as keyof Counters]) / runs]),
    ) as Counters;
  }

  /** What a phase cost per run, as one line. */
  async function costPerRun(before: Counters, workers: WorkerProcess[], runs: number): Promise<string> {
    return costLine(await perRun(before, workers, runs));
  }

  function costLine(cost: Counters): string {
    const per = (k: keyof Counters) => cost[k].toFixed(k.endsWith('CpuMs') ? 1 : 2);
    return (
      `  per run: ${per('statements')} statements (${per('platformStatements')} on the platform database), ` +
      `${per('platformCommits')} platform commits, ` +
      `${per('dataCommits')} data commits, ${per('dataSessions')} new data sessions, ` +
      `CPU ${per('workerCpuMs')} ms in workers + ${per('ownCpuMs')} ms in the API/bench process`
    );
  }

  const reportCost = async (before: Counters, workers: WorkerProcess[], runs: number) =>
    console.log(await costPerRun(before, workers, runs));

  return { counters, perRun, costLine, costPerRun, reportCost };
}
