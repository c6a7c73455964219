// What a phase of runs cost, per run: statements sent through `pg` (by this process, and by the
// workers: statement-counter.mjs writes their counts into statsDir), committed transactions on
// the platform and the data database, new data-database sessions (pg_stat_database deltas), and
// CPU time of the workers and of this process (API + load generator).
import fs from 'node:fs';
import path from 'node:path';
import { sql, type WorkerProcess } from './pipeline-support';

type Counters = {
  statements: number;
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
    let statements = (globalThis as { __benchStatements?: { statements: number } }).__benchStatements!
      .statements;
    for (const f of fs.readdirSync(opts.statsDir)) {
      try {
        statements += JSON.parse(fs.readFileSync(path.join(opts.statsDir, f), 'utf8')).statements;
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
    const own = process.cpuUsage();
    return {
      statements,
      platformCommits: Number(of(opts.platformDb).xact_commit),
      dataCommits: Number(of(opts.dataDb).xact_commit),
      dataSessions: Number(of(opts.dataDb).sessions),
      workerCpuMs: workers.reduce((sum, w) => sum + cpuMsOf(w.pid), 0),
      ownCpuMs: (own.user + own.system) / 1000,
    };
  }

  /** What a phase cost per run; the statistics collector lags a little, so it waits first. */
  async function costPerRun(before: Counters, workers: WorkerProcess[], runs: number): Promise<string> {
    await sleep(1500);
    const after = await counters(workers);
    const per = (k: keyof Counters) => ((after[k] - before[k]) / runs).toFixed(k.endsWith('CpuMs') ? 1 : 2);
    return (
      `  per run: ${per('statements')} statements, ${per('platformCommits')} platform commits, ` +
      `${per('dataCommits')} data commits, ${per('dataSessions')} new data sessions, ` +
      `CPU ${per('workerCpuMs')} ms in workers + ${per('ownCpuMs')} ms in the API/bench process`
    );
  }

  const reportCost = async (before: Counters, workers: WorkerProcess[], runs: number) =>
    console.log(await costPerRun(before, workers, runs));

  return { counters, costPerRun, reportCost };
}
