// `npm run bench:cdc`: PostgreSQL change data capture (docs/cdc.md) against the decode limit,
// `pg_recvlogical` decoding the same WAL (a second pgoutput slot of the same publication,
// created at the same point) to /dev/null, in one run. Not a test: it prints figures.
//
// The Sluice side is the connector path a run takes on a worker: bounded reads of the capture
// (max_changes per read, the slot advanced to each committed position, the replication session
// kept between reads in a session pool as a worker keeps it) handed to the PostgreSQL sink in
// another database, in one of two modes, each from its own capture slot created at the same
// point as the baseline's:
// - changelog: the change rows appended to a table (mode insert) with its ledger; afterwards it
//   must hold exactly the workload's inserts, updates and deletes;
// - apply: the changes applied by key to a copy of the table (mode apply, issue 25 item 7);
//   afterwards a hash of every row of the target must equal the source's.
// Memory: the peak resident size (VmHWM) of this process over each Sluice side only, reset
// (/proc/self/clear_refs) before it.
//
//   BENCH_CHANGES=1000000   changes (half inserts, 30% updates, 20% deletes; 1,000 per transaction);
//                           a list (1000000,10000000) runs each on a fresh cluster and prints a table
//   BENCH_MAX_CHANGES=100000  the step's max_changes (changes per read)
//   BENCH_MODES=changelog,apply  the Sluice sides to run, in this order
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { egressPolicy } from '../packages/connectors/src/egress';
import { postgres } from '../packages/connectors/src/postgres/index';
import { createSessionPool } from '../packages/connectors/src/session-pool';
import { type ConnectorContext, defaultLimits } from '../packages/connectors/src/types';
import { createDatabase, startPostgresCluster } from '../test/peers/postgres-cluster';
import { clusterConnection } from '../test/support/cdc-cluster';
import { stepContext } from '../test/support/step-context';

const COUNTS = (process.env.BENCH_CHANGES ?? '1000000').split(',').map(Number);
const MAX_CHANGES = Number(process.env.BENCH_MAX_CHANGES ?? 100_000);
const MODES = (process.env.BENCH_MODES ?? 'changelog,apply').split(',') as Mode[];
type Mode = 'changelog' | 'apply';
const TX = 1000;
const load = () => os.loadavg()[0].toFixed(1);
const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };

type Figures = {
  mode: Mode;
  changes: number;
  baseline: number;
  sluice: number;
  reads: number;
  /** Replication sessions the reads used (distinct WAL sender pids). */
  sessions: number;
  peakMiB: number;
  load: string;
  /** CPU seconds of each side: [client process, PostgreSQL server]. */
  baselineCpu: [number, number];
  sluiceCpu: [number, number];
};

const TICK = 100; // USER_HZ: /proc times are in 1/100 s on Linux

/** utime + stime, cutime + cstime and the parent pid of a process, from /proc/<pid>/stat. */
function procStat(pid: number | 'self') {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(f[1]), own: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) };
}

/** CPU seconds of this process and the children it waited for (pg_recvlogical). */
const clientCpu = () => {
  const s = procStat('self');
  return (s.own + s.reaped) / TICK;
};

/** CPU seconds of the whole server: the postmaster, its live processes and the ended ones. */
function serverCpu(dataDir: string): number {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const main = procStat(postmaster);
  let ticks = main.own + main.reaped;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const s = procStat(Number(entry));
      if (s.ppid === postmaster) ticks += s.own;
    } catch {
      // Ended meanwhile: counted in the postmaster's reaped time.
    }
  }
  return ticks / TICK;
}

/** The peak resident size since the last reset, in MiB (Linux). */
function peakMiB(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
}

/** From now on VmHWM counts from the current resident size. */
function resetPeak() {
  writeFileSync('/proc/self/clear_refs', '5');
}

async function benchOnce(count: number): Promise<Figures[]> {
  const cluster = await startPostgresCluster({
    settings: { wal_level: 'logical', max_wal_size: '4GB' },
  });
  try {
    const srcUrl = await createDatabase(cluster.url, 'src');
    const dstUrl = await createDatabase(cluster.url, 'dst');
    const src = new pg.Client({ connectionString: srcUrl });
    src.on('error', () => {});
    await src.connect();
    const connOf = (database: string) =>
      clusterConnection(cluster, database, { statement_timeout_seconds: 300 });
    const source = connOf('src');
    const target = connOf('dst');
    await src.query('CREATE TABLE items (id int PRIMARY KEY, qty int NOT NULL, note text)');
    const op = {
      operation_type: 'cdc',
      tables: ['public.items'],
      snapshot: 'never',
      max_changes: MAX_CHANGES,
    };
    // One worker's session pool: the replication session outlives a read, as on a worker.
    const pool = createSessionPool({ maxIdle: 4 });
    const workerCtx: ConnectorContext = { ...ctx, sessions: pool };
    let run = 0;
    const read = async (capture: string, cursor: string | null) => {
      const step = stepContext({ kind: 'source', data_source_ref: 'src', operation: op }, { cursor });
      return postgres.changes.read(source, { ...step, runSlug: `bench-${++run}` }, capture, workerCtx);
    };
    // Each mode's capture slot, then the baseline's slot on the same publication's tables at the same point.
    const cursors = new Map<Mode, string | null>();
    for (const mode of MODES) {
      const created = await read(`sluice_bench_${mode}`, null);
      if (created.payload.kind === 'rows') for await (const _ of created.payload.batches);
      cursors.set(mode, await created.nextCursor());
    }
    const capture = `sluice_bench_${MODES[0]}`;
    await src.query(`SELECT pg_create_logical_replication_slot('bench_recv', 'pgoutput')`);

    const inserts = Math.floor(count * 0.5);
    const updates = Math.floor(count * 0.3);
    const deletes = count - inserts - updates;
    const t0 = Date.now();
    for (let i = 0; i < inserts; i += TX) {
      await src.query(
        `INSERT INTO items SELECT g, g, md5(g::text) FROM generate_series($1::int, $2::int) g`,
        [i + 1, Math.min(inserts, i + TX)],
      );
    }
    for (let i = 0; i < updates; i += TX) {
      await src.query('UPDATE items SET qty = qty + 1 WHERE id BETWEEN $1 AND $2', [
        i + 1,
        Math.min(updates, i + TX),
      ]);
    }
    for (let i = 0; i < deletes; i += TX) {
      const from = inserts - deletes + 1;
      await src.query('DELETE FROM items WHERE id BETWEEN $1 AND $2', [
        from + i,
        Math.min(inserts, from + i + TX - 1),
      ]);
    }
    const end = (await src.query<{ l: string }>('SELECT pg_current_wal_insert_lsn()::text AS l')).rows[0].l;
    console.log(
      `workload: ${count} changes written in ${((Date.now() - t0) / 1000).toFixed(1)} s (load ${load()})`,
    );

    // Baseline: the decode limit.
    const dataDir = join(cluster.dir, 'data');
    const cpu = () => [clientCpu(), serverCpu(dataDir)] as [number, number];
    // After a short pause: the server processes that served the phase have ended and been
    // reaped (their time moved into the postmaster's), so none is missed between two readings.
    const since = async (a: [number, number]) => {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      return cpu().map((v, i) => v - a[i]) as [number, number];
    };
    const bc0 = cpu();
    const b0 = Date.now();
    execFileSync('/usr/lib/postgresql/15/bin/pg_recvlogical', [
      '-d',
      srcUrl,
      '--slot',
      'bench_recv',
      '--start',
      '-E',
      end,
      '-o',
      'proto_version=1',
      '-o',
      `publication_names=${capture}`,
      '-f',
      '/dev/null',
    ]);
    const baseline = (Date.now() - b0) / 1000;
    const baselineCpu = await since(bc0);
    console.log(
      `pg_recvlogical → /dev/null: ${baseline.toFixed(2)} s, ${Math.round(count / baseline)} changes/s (load ${load()})`,
    );

    const all: Figures[] = [];
    for (const mode of MODES) {
      // Sluice: bounded reads into the PostgreSQL sink until a read hands on nothing.
      const capture = `sluice_bench_${mode}`;
      const write =
        mode === 'apply'
          ? { table: 'items', mode: 'apply', key: ['id'], create_table: true }
          : { table: 'changelog', mode: 'insert', create_table: true };
      const sinkStep = stepContext({
        kind: 'sink',
        data_source_ref: 'dst',
        operation: { operation_type: 'sql', write },
      });
      resetPeak();
      const sc0 = cpu();
      const s0 = Date.now();
      let applied = 0;
      let reads = 0;
      const pids = new Set<number>();
      let cursor = cursors.get(mode) ?? null;
      for (;;) {
        const out = await read(capture, cursor);
        reads++;
        const r = await postgres.sink.write(target, out.payload, sinkStep, {
          ...workerCtx,
          commitKey: `bench-${run}`,
        });
        cursor = await out.nextCursor();
        applied += r.rows;
        const pid = await src.query<{ pid: number | null }>(
          'SELECT active_pid AS pid FROM pg_replication_slots WHERE slot_name = $1',
          [capture],
        );
        if (pid.rows[0]?.pid != null) pids.add(pid.rows[0].pid);
        if (r.rows === 0) break;
      }
      const sluice = (Date.now() - s0) / 1000;
      const sluiceCpu = await since(sc0);
      const memory = peakMiB();
      const sluiceLoad = load();
      console.log(
        `sluice cdc → postgres sink (${mode}): ${sluice.toFixed(2)} s, ${Math.round(applied / sluice)} changes/s, ${reads} reads over ${pids.size} replication session(s), peak rss (VmHWM) ${memory} MiB (load ${sluiceLoad})`,
      );
      if (mode === 'apply') await checkApplied(src, dstUrl);
      else await checkChangelog(dstUrl, { delete: deletes, insert: inserts, update: updates });
      console.log(
        `ratio sluice (${mode}) / pg_recvlogical: ${(baseline / sluice).toFixed(2)} (target ≥ 0.8)`,
      );
      console.log(
        `CPU seconds: pg_recvlogical ${baselineCpu[0].toFixed(1)} + server ${baselineCpu[1].toFixed(1)}; sluice ${sluiceCpu[0].toFixed(1)} + server ${sluiceCpu[1].toFixed(1)}`,
      );
      all.push({
        mode,
        changes: count,
        baseline,
        sluice,
        reads,
        sessions: pids.size,
        peakMiB: memory,
        load: sluiceLoad,
        baselineCpu,
        sluiceCpu,
      });
    }
    await pool.close();
    await src.end();
    return all;
  } finally {
    await cluster.destroy();
  }
}

/** The changelog holds exactly the workload's changes. */
async function checkChangelog(dstUrl: string, want: Record<string, number>) {
  const dst = new pg.Client({ connectionString: dstUrl });
  await dst.connect();
  try {
    const counts = (
      await dst.query<{ op: string; n: string }>(
        'SELECT _op AS op, count(*) AS n FROM changelog GROUP BY _op ORDER BY _op',
      )
    ).rows;
    const got = Object.fromEntries(counts.map((c) => [c.op, Number(c.n)]));
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      throw new Error(
        `the changelog holds ${JSON.stringify(got)}, the workload made ${JSON.stringify(want)}`,
      );
    }
  } finally {
    await dst.end();
  }
}

/** Every row of the applied copy equals the source's: a count and a hash of all rows, on each side. */
async function checkApplied(src: pg.Client, dstUrl: string) {
  const HASH = `SELECT count(*)::text AS n, md5(string_agg(concat_ws('|', id, qty, coalesce(note, '~')), ',' ORDER BY id)) AS h FROM items`;
  const dst = new pg.Client({ connectionString: dstUrl });
  await dst.connect();
  try {
    const a = (await src.query<{ n: string; h: string }>(HASH)).rows[0];
    const b = (await dst.query<{ n: string; h: string }>(HASH)).rows[0];
    if (a.n !== b.n || a.h !== b.h) {
      throw new Error(`the applied copy (${b.n} rows, ${b.h}) differs from the source (${a.n} rows, ${a.h})`);
    }
    console.log(`apply check: target equals source, ${a.n} rows, md5 ${a.h}`);
  } finally {
    await dst.end();
  }
}

async function main() {
  const all: Figures[] = [];
  for (const n of COUNTS) all.push(...(await benchOnce(n)));
  console.log(`\nmax_changes ${MAX_CHANGES}, ${os.cpus().length} CPUs`);
  console.log(
    'mode | changes | pg_recvlogical changes/s | sluice changes/s | ratio | reads | sessions | peak rss (VmHWM) | load',
  );
  for (const f of all) {
    console.log(
      `${f.mode} | ${f.changes} | ${Math.round(f.changes / f.baseline)} | ${Math.round(f.changes / f.sluice)} | ${(f.baseline / f.sluice).toFixed(2)} | ${f.reads} | ${f.sessions} | ${f.peakMiB} MiB | ${f.load}`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
