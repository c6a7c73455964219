// `sluice worker` (and other `sluice` commands) as child processes of the benches, exactly as a
// user starts them, with their resident memory sampled; and a pipeline run measured in a fresh
// worker (runInWorker: execute → finished, the worker's and the databases' CPU, every row counted).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { compiledBuildIsFresh } from '../packages/cli/bin/fresh.mjs';
import { type Started, startProcess, statusMB } from './memory-support';
import { PE, type Platform, repoRoot, sql } from './pipeline-support';
import {
  type CpuGroups,
  contextSwitches,
  cpuReport,
  cpuSeconds,
  faultsAndSystem,
  sampleCpu,
  threadCpu,
  threadReport,
} from './proc-cpu';

export type WorkerProcess = {
  pid: number;
  /** Starts sampling VmRSS every 100 ms (from now on). */
  sample(): void;
  /** Peak VmRSS sampled since `sample()`, the kernel's high-water mark VmHWM, idle VmRSS; in MB (10⁶ bytes). */
  peaks(): { sampledMB: number; hwmMB: number; idleMB: number };
  /** What its warm start loaded, as its ready lines say (docs/operations.md#a-workers-warm-start). */
  warmStart: string | null;
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
}): Promise<Started> {
  const { dist } = opts;
  // A stale build makes `sluice` run its sources through tsx (slower to start, ~100 MB more):
  // the figures would measure the TypeScript loader (bench:memory refuses the same way).
  if (!dist && !compiledBuildIsFresh(new URL('../packages/cli/', import.meta.url)))
    throw new Error(
      'packages/cli/dist is not built from the sources as they are: run `npm run build -w @sluice/cli` first',
    );
  const script = dist
    ? path.join(repoRoot, 'bench/dist-worker.mjs')
    : path.join(repoRoot, 'packages/cli/bin/sluice.mjs');
  return startProcess(
    [...(opts.nodeArgs ?? []), script, ...opts.command],
    { ...opts.env, ...(dist ? { BENCH_WORKER_DIST: path.resolve(repoRoot, dist) } : {}) },
    opts.ready,
  );
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
  const p = await startSluice({
    command: ['worker', ...workerArgs],
    env,
    ready: 'Sluice worker is running',
    nodeArgs,
    dist,
  });
  const { pid } = p;
  const idle = statusMB(pid, 'VmRSS');
  const warmStart = /^ {2}warm start: +(.*)$/m.exec(p.output())?.[1] ?? null;
  let peak = 0;
  let sampler: NodeJS.Timeout | null = null;
  return {
    pid,
    warmStart,
    sample() {
      peak = statusMB(pid, 'VmRSS');
      sampler = setInterval(() => {
        try {
          peak = Math.max(peak, statusMB(pid, 'VmRSS'));
        } catch {
          // the process has ended
        }
      }, 100);
    },
    peaks() {
      return { sampledMB: peak, hwmMB: statusMB(pid, 'VmHWM'), idleMB: idle };
    },
    async stop() {
      if (sampler) clearInterval(sampler);
      await p.stop();
      if ((await p.exited) !== 0 && p.output().trim())
        process.stderr.write(`worker output:\n${p.output()}\n`);
    },
  };
}

/**
 * CPU seconds of the backends connected to `database` besides the bench's own (same host), and
 * their context switches: voluntary (it waited: for input, a lock, its WAL written) and not
 * (the scheduler took its core for another process).
 */
async function sessionsCpu(database: string): Promise<{ s: number; waits: number; preempted: number }> {
  const pids = await sql<{ pid: number }>(
    database,
    "select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()",
  );
  const total = { s: 0, waits: 0, preempted: 0 };
  for (const { pid } of pids) {
    try {
      total.s += cpuSeconds(pid);
      const switches = contextSwitches(pid);
      total.waits += switches.waits;
      total.preempted += switches.preempted;
    } catch {} // ended meanwhile
  }
  return total;
}

/**
 * BENCH_PERF=dir: Linux `perf record` (Debian's linux-perf) of the worker (every thread, native
 * frames too: DuckDB's, the kernel's) from execute until the run is seen finished, into
 * dir/worker-PID.data. BENCH_PERF_EVENT picks the event (default cpu-clock; e.g. page-faults).
 * Read with `perf report -i FILE --no-children --sort dso,sym`; `--perf-basic-prof` in
 * BENCH_WORKER_NODE_ARGS names the JavaScript frames.
 */
function perfRecord(pid: number): { stop(): Promise<void> } | null {
  const dir = process.env.BENCH_PERF;
  if (!dir) return null;
  fs.mkdirSync(dir, { recursive: true });
  const event = process.env.BENCH_PERF_EVENT ?? 'cpu-clock';
  const out = path.join(dir, `worker-${pid}.data`);
  // A timer samples at 999 Hz; any other event (page-faults) is recorded every time it happens.
  const rate = event === 'cpu-clock' ? ['-F', '999'] : ['-c', '1'];
  const child = spawn('perf', ['record', '-q', '-e', event, '-g', ...rate, '-p', String(pid), '-o', out], {
    stdio: 'ignore',
  });
  let failed: Error | null = null;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    // No perf on this machine (ENOENT): the run is measured without it, and the bench says so.
    child.once('error', (err) => {
      failed = err;
      resolve();
    });
  });
  return {
    async stop() {
      child.kill('SIGINT');
      await exited;
      console.log(
        failed
          ? `  no perf record of the worker: ${(failed as Error).message}`
          : `  perf record of the worker (${event}): ${out}`,
      );
    },
  };
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
  // BENCH_WORKER_NODE_ARGS: node options for the worker (V8 flags NODE_OPTIONS refuses).
  const nodeArgs = process.env.BENCH_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const worker = await startWorker(
    { ...opts.env, SLUICE_QUEUE_POLL_SECONDS: '0.5' },
    [...nodeArgs, ...prof, ...log],
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
    const none = { s: 0, waits: 0, preempted: 0 };
    const targetBefore = opts.targetDb && opts.warm ? await sessionsCpu(opts.targetDb) : none;
    const cpuStart = cpuSeconds(worker.pid);
    const faultsStart = faultsAndSystem(worker.pid);
    const threadsStart = threadCpu(worker.pid);
    // Every 25 ms only for a 25 ms timeline: the sampling costs the bench ~5 % of a core at that
    // rate (reading /proc), which the run competes with; the totals do not depend on the rate.
    const every = Number(process.env.BENCH_TIMELINE ?? 0) === 25 ? 25 : 100;
    const sampler = opts.cpuGroups ? sampleCpu(opts.cpuGroups, { worker: worker.pid }, every) : null;
    const perf = perfRecord(worker.pid);
    const wallStart = performance.now();
    const executedAt = Date.now();
    const queued = await p.call('POST', `${PE}/pipelines/${pipeline}:execute`, {});
    // The API host is this process: its first execute of an invocation is also its slowest.
    const answeredMs = Date.now() - executedAt;
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
    await perf?.stop();
    const peaks = worker.peaks();
    const cpu = cpuSeconds(worker.pid) - cpuStart;
    const faultsEnd = faultsAndSystem(worker.pid);
    const threads = threadReport(worker.pid, threadsStart, threadCpu(worker.pid), cpu);
    const sampled = sampler?.stop() ?? null;
    const targetEnd = opts.targetDb ? await sessionsCpu(opts.targetDb) : null;
    const targetCpu = targetEnd ? targetEnd.s - targetBefore.s : null;
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
      `  worker RSS: idle ${peaks.idleMB.toFixed(0)} MB${worker.warmStart ? ` (warm start: ${worker.warmStart})` : ''}, peak sampled ${peaks.sampledMB.toFixed(0)} MB, ` +
        `VmHWM ${peaks.hwmMB.toFixed(0)} MB; worker CPU ${cpu.toFixed(2)} s (every thread, execute→seen)` +
        (targetEnd === null
          ? ''
          : `; target backend CPU ${targetCpu!.toFixed(2)} s (the worker's sessions; ` +
            `${targetEnd.waits - targetBefore.waits} waits, ${targetEnd.preempted - targetBefore.preempted} times preempted)`),
    );
    console.log(`  worker CPU by thread: ${threads}`);
    console.log(
      `  worker memory first touched: ${faultsEnd.faults - faultsStart.faults} minor page faults; ` +
        `of its CPU ${(faultsEnd.systemS - faultsStart.systemS).toFixed(2)} s in the kernel`,
    );
    if (sampled) {
      for (const line of cpuReport(
        sampled,
        Number(process.env.BENCH_TIMELINE ?? 0) === 1 ? 100 : Number(process.env.BENCH_TIMELINE ?? 0),
      ))
        console.log(`  ${line}`);
      console.log(
        `  execute → answered ${answeredMs} ms (this process's API), → run started ${Date.parse(run.started_at) - executedAt} ms, → finished ${wallMs.toFixed(0)} ms (the worker's clock)`,
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
