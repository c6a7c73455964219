// bench:history's seeding (history.bench.ts): runs with their log lines and events generated in SQL
// into a store set up through the API, the history partitions their times need made first, the
// keys and indexes no foreign key uses dropped for the load and built again after it (checked to
// be as before), then the tables vacuumed, analyzed and checkpointed.
import pg from 'pg';
import {
  ensurePartitions,
  eventsHistory,
  type HistoryTable,
  runLogsHistory,
} from '../packages/server/src/db/partitions';
import { LOG_BATCH_LINES } from '../packages/server/src/db/schema/pipelines';
import { dbUrl, type Platform } from './pipeline-support';

/** The store to seed: its database, its API (for the partitions) and a session on it. */
export type SeedStore = { name: string; p: Platform; client: pg.Client };

/** What to generate, and over how many sessions. */
export type SeedPlan = {
  runs: number;
  /** Spread evenly over the runs. */
  logLines: number;
  events: number;
  /** The store's pipelines the runs are spread over (as many as it has). */
  pipelines: number;
  /** Runs fall over this many days up to an hour ago; events over `eventDays` up to a minute ago. */
  runDays: number;
  eventDays: number;
  /** Rows of runs or events a seeding statement inserts. */
  chunk: number;
  connections: number;
};

const n = (x: number) => x.toLocaleString('en-US');

/** Partitions for every period from `since` on, as the hourly step would have made them. */
async function partitionsSince(s: SeedStore, h: HistoryTable, since: Date) {
  for (let t = since.getTime(); t <= Date.now(); t += 7 * 86_400_000) {
    await ensurePartitions(s.p.rt.deps.db, { ...h, ahead: 0 }, new Date(t));
  }
  await ensurePartitions(s.p.rt.deps.db, h, new Date());
}

/** Keys and indexes of the seeded tables and their partitions, and the constraints on them. */
async function schemaOf(c: pg.Client): Promise<string[]> {
  const { rows } = await c.query(
    `with t as (select relid from unnest(array['pipeline_runs','pipeline_run_logs','events']) p,
                       lateral pg_partition_tree(p::regclass))
     select 'index ' || x.indexrelid::regclass || ': ' || pg_get_indexdef(x.indexrelid) as d
       from pg_index x where x.indrelid in (select relid from t)
     union all
     select 'constraint ' || conrelid::regclass || '.' || conname || ': ' || pg_get_constraintdef(oid)
       from pg_constraint where conrelid in (select relid from t)
     order by 1`,
  );
  return rows.map((r) => r.d as string);
}

type Deferred = { table: string; drop: string; create: string };

/**
 * The keys and indexes on the seeded tables that no foreign key depends on (dropping a parent's
 * index drops its partitions' ones), to be built once after the rows are in: one sort each
 * instead of one insert per row. The runs' primary key stays (the run log's foreign key uses it).
 */
async function deferredIndexes(c: pg.Client): Promise<Deferred[]> {
  const { rows } = await c.query(
    `select c.relname as t, i.relname as i, pg_get_indexdef(x.indexrelid) as def,
            con.conname as con, pg_get_constraintdef(con.oid) as condef
       from pg_index x
       join pg_class i on i.oid = x.indexrelid
       join pg_class c on c.oid = x.indrelid
       left join pg_constraint con on con.conindid = x.indexrelid and con.conrelid = c.oid
      where c.relname in ('pipeline_runs','pipeline_run_logs','events')
        and c.relnamespace = current_schema()::regnamespace
        and not exists (select 1 from pg_constraint f where f.contype = 'f' and f.conindid = x.indexrelid)
      order by c.relname, i.relname`,
  );
  return rows.map((r) =>
    r.con
      ? {
          table: r.t,
          drop: `alter table "${r.t}" drop constraint "${r.con}"`,
          create: `alter table "${r.t}" add constraint "${r.con}" ${r.condef}`,
        }
      : // A partitioned table's index is printed `ON ONLY` the parent: built so, it would cover no partition.
        { table: r.t, drop: `drop index "${r.i}"`, create: (r.def as string).replace(' ON ONLY ', ' ON ') },
  );
}

/** Runs `tasks` on `clients`, each client taking the next task when its last one is done. */
async function onEach<T>(clients: pg.Client[], tasks: T[], run: (c: pg.Client, t: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    clients.map(async (c) => {
      while (next < tasks.length) await run(c, tasks[next++] as T);
    }),
  );
}

export async function seed(s: SeedStore, plan: SeedPlan) {
  const [ids] = (
    await s.client.query(
      `select o.id as org, e.id as env, array_agg(pl.id order by pl.slug) as pipelines
         from organizations o join environments e on e.organization_id = o.id
         join pipelines pl on pl.organization_id = o.id
        where o.slug = 'acme' and e.slug = 'bench' group by o.id, e.id`,
    )
  ).rows;
  await partitionsSince(s, runLogsHistory, new Date(Date.now() - (plan.runDays + 1) * 86_400_000));
  await partitionsSince(s, eventsHistory, new Date(Date.now() - (plan.eventDays + 1) * 86_400_000));
  const before = await schemaOf(s.client);
  const deferred = await deferredIndexes(s.client);
  const { rows: leaves } = await s.client.query(
    `select relid::regclass::text as t from unnest(array['pipeline_run_logs','events']) p,
            lateral pg_partition_tree(p::regclass) where isleaf`,
  );
  const leafNames = ['pipeline_runs', ...leaves.map((r) => r.t as string)];
  // The seeding sessions: no wait for each commit's flush, the foreign-key triggers off (every
  // log line's run is the one inserted beside it in the same statement; the constraint itself
  // stays), room to sort in. Autovacuum is held off the tables being filled until the explicit
  // VACUUM at the end, which a store of this age would have had many times.
  const clients: pg.Client[] = [];
  for (let i = 0; i < plan.connections; i++) {
    const c = new pg.Client({ connectionString: dbUrl(s.name), application_name: 'sluice-bench' });
    await c.connect();
    await c.query(
      `set synchronous_commit = off; set session_replication_role = replica;
       set maintenance_work_mem = '512MB'`,
    );
    clients.push(c);
  }
  const perRun = Math.max(0, Math.round(plan.logLines / Math.max(1, plan.runs)));
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  try {
    for (const t of leafNames) await s.client.query(`alter table ${t} set (autovacuum_enabled = false)`);
    for (const d of deferred) await s.client.query(d.drop);
    type Chunk = { kind: 'runs' | 'events'; lo: number; hi: number };
    const chunks: Chunk[] = [];
    for (let lo = 1; lo <= plan.runs; lo += plan.chunk)
      chunks.push({ kind: 'runs', lo, hi: Math.min(plan.runs, lo + plan.chunk - 1) });
    for (let lo = 1; lo <= plan.events; lo += plan.chunk)
      chunks.push({ kind: 'events', lo, hi: Math.min(plan.events, lo + plan.chunk - 1) });
    let runsIn = 0;
    let eventsIn = 0;
    await onEach(clients, chunks, async (c, k) => {
      if (k.kind === 'runs') {
        // Runs lo..hi evenly over `runDays` up to an hour ago, with their log lines: 1 in 50
        // failed, 1 in 97 canceled, 1 in 10 started by the API, the rest by a schedule.
        await c.query(
          `with r as (
             insert into pipeline_runs (organization_id, pipeline_id, environment_id, slug, spec_hash, state,
                                        trigger, trigger_slug, started_at, finished_at, created_at, updated_at)
             select $1, ($3::uuid[])[1 + i % ${plan.pipelines}], $2, 'h' || i, 'seeded',
                    case when i % 50 = 0 then 'failed' when i % 97 = 0 then 'canceled' else 'succeeded' end,
                    case when i % 10 = 0 then 'api' else 'schedule' end,
                    case when i % 10 = 0 then null else 'nightly' end,
                    t, t + interval '2 seconds', t, t + interval '2 seconds'
               from generate_series($4::int, $5::int) i,
                    lateral (select now() - interval '1 hour'
                                    - make_interval(secs => ($6::int - i)::float8 * ${plan.runDays * 86400} / $6::int) as t) x
             returning id, slug, created_at)
           insert into pipeline_run_logs (run_id, seq, last_seq, at, lines)
           select r.id, b.first, b.last, r.created_at + b.first * interval '10 ms',
                  (select jsonb_agg(jsonb_build_array(case when s % 2 = 0 then 'load' else 'one' end, 'info',
                                                      'seeded line ' || s || ' of run ' || r.slug, (s - b.first) * 10)
                                    order by s)
                     from generate_series(b.first, b.last) s)
             from r, lateral (select g * ${LOG_BATCH_LINES} + 1 as first, least(${perRun}, (g + 1) * ${LOG_BATCH_LINES}) as last
                                from generate_series(0, ${Math.ceil(perRun / LOG_BATCH_LINES) - 1}) g) b`,
          [ids.org, ids.env, ids.pipelines, k.lo, k.hi, plan.runs],
        );
        runsIn += k.hi - k.lo + 1;
      } else {
        await c.query(
          `insert into events (organization_id, slug, event_class, actor_type, actor_slug, entity_type,
                               entity_slug, action, request_id, occurred_at, metadata)
           select $1, 'evs' || i, case when i % 10 = 0 then 'security_audit' else 'activity' end,
                  'api_key', 'bench-key', 'pipeline_run', 'h' || i, 'update', 'req-' || i,
                  now() - interval '1 minute' - make_interval(secs => ($4::int - i)::float8 * ${plan.eventDays * 86400} / $4::int),
                  '{"state":"succeeded"}'
             from generate_series($2::int, $3::int) i`,
          [ids.org, k.lo, k.hi, plan.events],
        );
        eventsIn += k.hi - k.lo + 1;
      }
      process.stdout.write(
        `\r  seeded ${n(runsIn)} runs, ${n(runsIn * perRun)} log lines, ${n(eventsIn)} events (${elapsed()})`,
      );
    });
    const loadS = (performance.now() - started) / 1000;
    // Largest first, so the two sessions finish about together.
    await onEach(
      clients,
      [...deferred].sort((a, b) => weight[b.table] - weight[a.table]),
      async (c, d) => {
        await c.query(d.create);
      },
    );
    const indexS = (performance.now() - started) / 1000 - loadS;
    await onEach(clients, leafNames, async (c, t) => {
      await c.query(`alter table ${t} reset (autovacuum_enabled)`);
      await c.query(`vacuum ${t}`);
    });
    await onEach(clients, ['pipeline_runs', 'pipeline_run_logs', 'events'], async (c, t) => {
      await c.query(`analyze ${t}`);
    });
    // Written out now, not by a checkpoint spread over the measurement.
    await s.client.query('checkpoint');
    const vacuumS = (performance.now() - started) / 1000 - loadS - indexS;
    const after = await schemaOf(s.client);
    if (JSON.stringify(after) !== JSON.stringify(before)) {
      throw new Error(
        `seeded schema differs:\n${after.filter((d) => !before.includes(d)).join('\n')}\n---\n${before.filter((d) => !after.includes(d)).join('\n')}`,
      );
    }
    console.log(
      `\n  seed ${elapsed()}: rows ${loadS.toFixed(0)} s, ${deferred.length} keys and indexes ${indexS.toFixed(0)} s, ` +
        `vacuum analyze ${vacuumS.toFixed(0)} s (${plan.connections} sessions; keys and indexes as before: ${after.length} definitions)`,
    );
  } finally {
    for (const c of clients) await c.end();
  }
}

/** The run log's indexes first: they cover ten times the rows. */
const weight: Record<string, number> = { pipeline_run_logs: 3, pipeline_runs: 2, events: 1 };

export async function sizes(s: SeedStore): Promise<string> {
  const { rows } = await s.client.query(
    `select t, pg_size_pretty(sum(pg_total_relation_size(relid))) as size
       from unnest(array['pipeline_runs','pipeline_run_logs','events']) t,
            lateral (select relid from pg_partition_tree(t::regclass) union select t::regclass) p
      group by t order by t`,
  );
  const [{ db }] = (await s.client.query(`select pg_size_pretty(pg_database_size(current_database())) as db`))
    .rows;
  return `database ${db}; ${rows.map((r) => `${r.t} ${r.size}`).join(', ')}`;
}
