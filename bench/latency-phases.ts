// bench:latency's latency phases (latency.bench.ts): one run at a time, then runs at a rate a
// minute, alone or beside authenticated list requests, each printed with its bare baseline,
// its cost per run and the issue-26 targets it is judged on.
import { loopDelay, startApiLoad, waitSampler } from './latency-probes';
import { bareBaseline, fmt, type Lat, type LatencyBench, pct, report, sluiceRuns } from './latency-runs';
import { loadAverages, sql } from './pipeline-support';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long the workers idle after the one-at-a-time runs, measured (several of their 2 s polls). */
const IDLE_MS = 6000;

/** `runs` runs executed one at a time, 200 ms apart, beside as many of the bare baseline. */
export async function onePhase(b: LatencyBench, runs: number) {
  const { counters, perRun, costLine } = b.cost;
  console.log(`\nOne run at a time, ${runs} runs (load average ${loadAverages()})`);
  const bareSeq = await bareBaseline(b.dst, runs, 120);
  report('bare insert+NOTIFY → listener', bareSeq);
  const seqRuns: Lat = { running: [], done: [], api: [] };
  const seqBefore = await counters(b.workers);
  const seqFrom = performance.now();
  for (let i = 0; i < runs; i++) {
    const r = await sluiceRuns(b.p, 1, 0);
    seqRuns.running.push(...r.running);
    seqRuns.done.push(...r.done);
    seqRuns.api!.push(...r.api!);
    await sleep(200);
  }
  b.expected += runs;
  report('Sluice', seqRuns);
  // Fresh workers' first runs (each worker takes one of the first few): what a warm start is for.
  console.log(
    `  the first ${Math.min(4, runs)} runs, execute→finished: ${seqRuns.done.slice(0, 4).map(fmt).join(', ')}; ` +
      `the last ${Math.min(runs, 10)}: p50 ${fmt(pct(seqRuns.done.slice(-10), 50))}`,
  );
  const seqCost = await perRun(seqBefore, b.workers, runs);
  const seqMs = performance.now() - seqFrom;
  console.log(costLine(seqCost));
  // What the workers and the store spend with no run at all (queue polls, timers), warm, after
  // the runs: one at a time they idle between runs, and that idle time is billed to the runs; the
  // workers' CPU and the platform's statements and commits, each printed apart.
  const idleBefore = await counters(b.workers);
  const idleFrom = performance.now();
  await sleep(IDLE_MS);
  const idleAfter = await counters(b.workers);
  const idleMs = performance.now() - idleFrom;
  type Idled = 'workerCpuMs' | 'platformStatements' | 'ownCommits';
  /** A counter's idle rate (per ms), and its share of each run of the phase at that rate. */
  const idleRate = (k: Idled) => (idleAfter[k] - idleBefore[k]) / idleMs;
  const idleShare = (k: Idled) => idleRate(k) * (seqMs / runs);
  const cpu = idleShare('workerCpuMs');
  console.log(
    `  of the workers' CPU per run, ${cpu.toFixed(1)} ms is what they spend with no run (${(idleRate('workerCpuMs') * 1000).toFixed(1)} ms/s ` +
      `measured idle after, × ${(seqMs / 1000).toFixed(1)} s of this phase ÷ ${runs} runs): ` +
      `${(seqCost.workerCpuMs - cpu).toFixed(1)} ms per run beside it`,
  );
  const statements = idleShare('platformStatements');
  const commits = idleShare('ownCommits');
  console.log(
    `  of the platform statements and commits per run, ${statements.toFixed(2)} and ${commits.toFixed(2)} are what ` +
      `the platform sends with no run (${(idleMs / 1000).toFixed(1)} s measured idle after, scaled the same way): ` +
      `${(seqCost.platformStatements - statements).toFixed(2)} statements and ${(seqCost.ownCommits - commits).toFixed(2)} commits per run beside them`,
  );
}

export type RatedOptions = {
  /** Which of the `rated`, `api` and `high` phases run. */
  phases: Set<string>;
  seconds: number;
  rate: number;
  apiRate: number;
  highRate: number;
  apiList: string;
  apiPath: string;
  apiConnections: number;
  /** Runs executed at once a second before each rated phase, not counted in it (0: none). */
  warmup: number;
};

/** The rated phases: `rate`, `rate` beside `apiRate` list requests a second, `highRate`; then their summary. */
export async function ratedPhases(b: LatencyBench, o: RatedOptions) {
  const { counters, perRun, costLine } = b.cost;
  // A server with autovacuum off (this machine's CI configuration) keeps the statistics of
  // the store's first empty minute and every dead row of the phases before: the runs list then
  // sorts the environment's runs for each page. Before each rated phase the bench does what
  // autovacuum would do now on a production server, and says so; with autovacuum on, nothing.
  // Only what autovacuum would: a table is analyzed once 50 rows + 10% changed since its last
  // analysis and vacuumed once 50 + 20% are dead (PostgreSQL's defaults). Analyzing every
  // table of a store with no runs yet (when `api` is the first phase) would tell the planner
  // its runs and steps are empty, which autovacuum never does: the first 1,500 runs then ran
  // on plans made for empty tables (runs-list p99 ~1 s, 60–90 of 500 requests a second served).
  const autovacuum = (await sql(b.store, "select current_setting('autovacuum') as a"))[0].a;
  const analyzeIfNoAutovacuum = async () => {
    if (autovacuum !== 'off') return;
    const due = await sql(
      b.store,
      `select quote_ident(s.schemaname) || '.' || quote_ident(s.relname) as t,
              s.n_dead_tup >= 50 + 0.2 * greatest(c.reltuples, 0) as vacuum,
              s.n_mod_since_analyze >= 50 + 0.1 * greatest(c.reltuples, 0) as analyze
         from pg_stat_user_tables s join pg_class c on c.oid = s.relid`,
    );
    const vacuumed = due.filter((r) => r.vacuum).map((r) => r.t as string);
    const analyzed = due.filter((r) => r.analyze && !r.vacuum).map((r) => r.t as string);
    if (vacuumed.length > 0) await sql(b.store, `vacuum (analyze) ${vacuumed.join(', ')}`);
    if (analyzed.length > 0) await sql(b.store, `analyze ${analyzed.join(', ')}`);
    console.log(
      `  the server's autovacuum is off: before this phase what it would do now, VACUUM (ANALYZE) of ` +
        `${vacuumed.length} table(s) and ANALYZE of ${analyzed.length} (50 rows + 20% dead, 50 + 10% changed)`,
    );
  };
  const host = b.p;
  const loop = loopDelay();
  const waits = await waitSampler(b.store);
  const apiUrl = o.phases.has('api') ? await host.listen() : '';
  const ratedFigures: string[] = [];
  /** `rate` runs a minute for `o.seconds`, beside `apiRate` list requests a second when > 0. */
  const ratedPhase = async (rate: number, apiRate: number) => {
    const count = Math.round((rate / 60) * o.seconds);
    console.log(
      `\n${rate} runs/min for ${o.seconds} s, ${count} runs` +
        (apiRate
          ? `, beside ${apiRate} authenticated ${o.apiList}-list requests/s over ${o.apiConnections} connections`
          : '') +
        ` (load average ${loadAverages()})`,
    );
    await analyzeIfNoAutovacuum();
    const bareRate = await bareBaseline(b.dst, count, rate);
    report('bare insert+NOTIFY → listener', bareRate);
    if (o.warmup > 0) {
      const w = await sluiceRuns(host, o.warmup, 0);
      b.expected += o.warmup;
      console.log(
        `  warm-up (BENCH_RATED_WARMUP): ${o.warmup} runs at once, execute→finished p50 ${fmt(pct(w.done, 50))} ` +
          `max ${fmt(Math.max(...w.done))}, just before the phase and not counted in it (nor in its cost per run)`,
      );
      await sleep(1000);
    }
    const before = await counters(b.workers);
    const apiLoad = apiRate
      ? startApiLoad(`${apiUrl}${o.apiPath}`, host.apiKey, apiRate, o.seconds + 1, o.apiConnections)
      : null;
    if (apiLoad) await sleep(1000);
    loop.reset();
    waits.take();
    const rated = await sluiceRuns(host, count, rate);
    const lag = loop.read();
    const waited = waits.take();
    b.expected += count;
    report('Sluice', rated);
    const cost = await perRun(before, b.workers, count);
    console.log(costLine(cost));
    const achieved = (count / rated.wallMs) * 60_000;
    const p50 = pct(rated.running, 50);
    const p99 = pct(rated.done, 99);
    console.log(
      `  ratio (bare / Sluice, execute→finished p50): ${(pct(bareRate.done, 50) / pct(rated.done, 50)).toFixed(2)}; ` +
        `achieved ${achieved.toFixed(0)} runs/min (503 retries ${rated.retries}); load average ${loadAverages()}`,
    );
    console.log(
      `  API process event-loop delay p99 ${fmt(lag.p99)}, max ${fmt(lag.max)}; platform sessions per ` +
        `100 ms sample: ${waited}`,
    );
    let api = '';
    if (apiLoad) {
      const a = await apiLoad.done;
      api = `; API ${a.rps.toFixed(0)} req/s p99 ${a.p99} ms`;
      console.log(
        `  API load: ${a.rps.toFixed(0)} req/s achieved of ${apiRate} asked, p50 ${a.p50} ms, p99 ${a.p99} ms ` +
          `(${a.total} requests, non-2xx ${a.non2xx}, errors ${a.errors})`,
      );
      if (a.non2xx || a.errors) throw new Error('the API load had failed requests');
    }
    console.log(
      `  targets: execute→running median < 100 ms → ${fmt(p50)} ${p50 < 100 ? 'met' : 'MISSED'}; ` +
        `execute→finished p99 < 500 ms (issue 26) → ${fmt(p99)} ${p99 < 500 ? 'met' : 'MISSED'}` +
        (o.warmup > 0 ? ' (after a warm-up burst: not the issue’s figure)' : ''),
    );
    ratedFigures.push(
      `${rate} runs/min${apiRate ? ` + ${apiRate} req/s` : ''}: achieved ${achieved.toFixed(0)}, ` +
        `execute→finished p50 ${fmt(pct(rated.done, 50))} p99 ${fmt(p99)}${api}`,
    );
    return cost;
  };
  if (o.phases.has('rated')) {
    const ratedCost = await ratedPhase(o.rate, 0);
    // What a trivial run costs the platform database (API + workers, idle polling included),
    // against what the bare mechanism costs: 2 statements (insert, notify) and 1 commit. The
    // commits are the ones the API's and the workers' sessions made (not autovacuum's, not the
    // bench's polling, which pg_stat_database counts beside them).
    const stmts = ratedCost.platformStatements;
    const commits = ratedCost.ownCommits;
    console.log(
      `  targets: ≤ 12 platform statements per run → ${stmts.toFixed(2)} ${stmts <= 12 ? 'met' : 'MISSED'} ` +
        `(bare: 2, ratio ${(stmts / 2).toFixed(1)}×); ≤ 4 platform commits per run → ${commits.toFixed(2)} ` +
        `${commits <= 4 ? 'met' : 'MISSED'} (bare: 1)`,
    );
  }
  if (o.phases.has('api')) await ratedPhase(o.rate, o.apiRate);
  if (o.phases.has('high')) await ratedPhase(o.highRate, 0);
  loop.stop();
  await waits.stop();
  if (ratedFigures.length > 0) {
    console.log(`\nSummary (load average ${loadAverages()}):`);
    for (const f of ratedFigures) console.log(`  ${f}`);
  }
}
