import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../../test/support/app';
import { runJobNow } from '../../../../test/support/jobs';
import { ADMIN_URL, storeKind, withDatabase } from '../../../../test/support/stores';
import { eventsRetentionJob } from '../jobs/events-retention';
import { listEvents } from '../modules/events/events.repo';
import { listLogs } from '../modules/runs/run-logs.repo';
import { insertLogs } from '../modules/runs/run-progress.repo';
import { openStore, type Store } from './client';
import { migrate, migrationsFolder } from './migrate';
import {
  addPeriods,
  ensurePartitions,
  eventsHistory,
  listPartitions,
  periodStart,
  runLogsHistory,
} from './partitions';
import { startParams } from './pglite';

const DAY = 86_400_000;
const now = new Date();
const ago = (days: number) => new Date(now.getTime() - days * DAY);
const rowsOf = (res: any) => (res.rows ?? res) as any[];

type Exec = (text: string, values?: unknown[]) => Promise<{ rows: any[] }>;

/** A project, an environment and a pipeline of the organization, in SQL. */
async function insertPipeline(exec: Exec, orgId: string) {
  const one = async (text: string, values: unknown[]) => (await exec(text, values)).rows[0].id as string;
  const projectId = await one(
    `insert into projects (organization_id, slug, name) values ($1, 'p', 'P') returning id`,
    [orgId],
  );
  const envId = await one(
    `insert into environments (organization_id, slug, name) values ($1, 'e', 'E') returning id`,
    [orgId],
  );
  const pipelineId = await one(
    `insert into pipelines (organization_id, project_id, slug, name) values ($1, $2, 'pl', 'Pl') returning id`,
    [orgId, projectId],
  );
  return { envId, pipelineId };
}

/** A store migrated up to (not including) 0017_history_partitions, as existing deployments are. */
async function storeBeforePartitions(): Promise<{ store: Store; drop(): Promise<void> }> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-mig-'));
  fs.cpSync(migrationsFolder, folder, { recursive: true });
  const journalFile = path.join(folder, 'meta/_journal.json');
  const journal = JSON.parse(fs.readFileSync(journalFile, 'utf8'));
  journal.entries = journal.entries.filter((e: { tag: string }) => e.tag < '0017');
  fs.writeFileSync(journalFile, JSON.stringify(journal));
  let store: Store;
  let dropStore: () => Promise<void>;
  if (storeKind() === 'postgres') {
    const name = `sluice_mig_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    store = await openStore({ databaseUrl: withDatabase(ADMIN_URL, name), dataDir: folder });
    await migratePg(store.db as any, { migrationsFolder: folder });
    dropStore = async () => {
      const c = new pg.Client({ connectionString: ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-mig-data-'));
    // A new store copies the template `npm install` migrated (db/pglite.ts): a store of an older
    // release is made as one without a template, by initdb (its child process script).
    const initdb = fileURLToPath(new URL('./pglite-initdb.mjs', import.meta.url));
    execFileSync(process.execPath, [initdb, path.join(dir, 'pgdata'), JSON.stringify(await startParams())]);
    store = await openStore({ dataDir: dir });
    await migratePglite(store.db as any, { migrationsFolder: folder });
    dropStore = async () => fs.rmSync(dir, { recursive: true, force: true });
  }
  return {
    store,
    async drop() {
      await store.close();
      await dropStore();
      fs.rmSync(folder, { recursive: true, force: true });
    },
  };
}

describe('history partitions', () => {
  describe('migrating a store that has history', () => {
    let old: Awaited<ReturnType<typeof storeBeforePartitions>>;
    let orgId: string;
    let runs: { id: string; slug: string; createdAt: Date; finishedAt: Date | null }[];
    const exec = (text: string, values: unknown[] = []) => old.store.executeSql(text, values);

    /**
     * Every page of the activity list and of each run's log, walked with cursors (the log only
     * once the store has 0018's batches, which listLogs reads).
     */
    async function readLists(withLogs = true) {
      const walk = async (
        page: (cursor?: string) => Promise<{ items: any[]; next_cursor: string | null }>,
      ) => {
        const out: any[] = [];
        let cursor: string | undefined;
        do {
          const p = await page(cursor);
          out.push(...p.items);
          cursor = p.next_cursor ?? undefined;
        } while (cursor);
        return out;
      };
      const q = { limit: 7, order: 'desc' as const, direction: 'next' as const };
      const activity = await walk((cursor) =>
        listEvents(old.store, orgId, 'activity', { ...q, sort_by: 'event_occurred_at', cursor }),
      );
      if (!withLogs) return { activity };
      const logs = [];
      for (const run of runs) {
        logs.push(await walk((cursor) => listLogs(old.store.db, run, { ...q, sort_by: 'log_seq', cursor })));
      }
      return { activity, logs };
    }

    /** Each run's lines as the store held them one a row before 0018, newest first. */
    async function linesBefore() {
      const out = [];
      for (const run of runs) {
        const rows = await exec(
          `select seq, step_slug as "stepSlug", level, message, at from pipeline_run_logs
            where run_id = $1 order by seq desc`,
          [run.id],
        );
        out.push(rows.rows.map((r) => ({ ...r, at: new Date(r.at) })));
      }
      return out;
    }

    beforeAll(async () => {
      old = await storeBeforePartitions();
      [{ id: orgId }] = (
        await exec(`insert into organizations (slug, name) values ('acme', 'Acme') returning id`)
      ).rows;
      const { envId, pipelineId } = await insertPipeline(exec, orgId);
      // Three runs 70, 20 and 0 days old, five lines each (the two older ones ended with their
      // last line, so their log reads are bounded on both sides), and a run of 1,100 lines
      // numbered 1–599 and 601–1,101 (more than one batch of 0018's, and a gap); 30 events over
      // the last 40 days.
      runs = (
        await exec(
          `insert into pipeline_runs (organization_id, pipeline_id, environment_id, slug, spec_hash, created_at,
                                      finished_at)
           select $1, $2, $3, 'r' || d, 'h', t, case when d > 0 then t + interval '5 minutes' end
             from unnest(array[70, 20, 0, 1]) d, lateral (select now() - make_interval(days => d) as t) x
           returning id, slug, created_at as "createdAt", finished_at as "finishedAt"`,
          [orgId, pipelineId, envId],
        )
      ).rows;
      await exec(
        `insert into pipeline_run_logs (run_id, seq, step_slug, level, message, at)
         select r.id, s, case when s % 2 = 0 then 'load' end, 'info', 'line ' || s,
                r.created_at + s * interval '1.5 seconds'
           from pipeline_runs r, generate_series(1, case when r.slug = 'r1' then 1101 else 5 end) s
          where s <> 600 or r.slug <> 'r1'`,
      );
      await exec(
        `insert into events (organization_id, slug, event_class, actor_type, entity_type, action, occurred_at)
         select $1, 'ev' || i, case when i % 3 = 0 then 'security_audit' else 'activity' end, 'system',
                'pipeline', 'update', now() - make_interval(hours => i * 32)
           from generate_series(1, 30) i`,
        [orgId],
      );
    });
    afterAll(async () => {
      await old?.drop();
    });

    it('keeps every row and id, and the lists read the same before and after', async () => {
      const idsOf = async (table: string) =>
        (await exec(`select id::text from ${table} order by id`)).rows.map((r) => r.id);
      const before = {
        lists: await readLists(false),
        events: await idsOf('events'),
        logs: await linesBefore(),
      };
      expect(before.lists.activity).toHaveLength(20);
      expect(before.logs.map((l) => l.length)).toEqual([5, 5, 5, 1100]);

      await migrate(old.store);

      expect(await idsOf('events')).toEqual(before.events);
      const after = await readLists();
      expect(after.activity).toEqual(before.lists.activity);
      // Every line keeps its number, step, level, text and time, page after page.
      expect(
        after.logs!.map((lines) =>
          lines.map(({ seq, stepSlug, level, message, at }) => ({ seq, stepSlug, level, message, at })),
        ),
      ).toEqual(before.logs);
      // In batches of at most 500 consecutive numbers: the gap at 600 starts a new one.
      const batches = rowsOf(
        await exec(`select seq, last_seq from pipeline_run_logs where run_id = $1 order by seq`, [
          runs[3]!.id,
        ]),
      );
      expect(batches).toEqual([
        { seq: 1, last_seq: 500 },
        { seq: 501, last_seq: 599 },
        { seq: 601, last_seq: 1001 },
        { seq: 1002, last_seq: 1101 },
      ]);
      // Pages of two: the first one comes from the window alone (back to the start of the week seven days ago),
      // the next ones from every partition, and together they are the same list.
      const byTwo = [];
      let cursor: string | undefined;
      do {
        const p = await listEvents(old.store, orgId, 'activity', {
          limit: 2,
          order: 'desc',
          direction: 'next',
          sort_by: 'event_occurred_at',
          cursor,
        });
        byTwo.push(...p.items.map((e) => [e.slug, e.occurredAt]));
        cursor = p.next_cursor ?? undefined;
      } while (cursor);
      expect(byTwo).toEqual(before.lists.activity.map((e) => [e.slug, e.occurredAt]));
      const kinds = rowsOf(
        await exec(
          `select c.relname, c.relkind from pg_class c where c.relname in ('events', 'pipeline_run_logs') order by 1`,
        ),
      );
      expect(kinds).toEqual([
        { relname: 'events', relkind: 'p' },
        { relname: 'pipeline_run_logs', relkind: 'p' },
      ]);
      // Old rows sit in their own weeks and months, not in the default partitions.
      const inDefault = rowsOf(
        await exec(
          `select (select count(*) from events_default)::int as e, (select count(*) from pipeline_run_logs_default)::int as l`,
        ),
      );
      expect(inDefault).toEqual([{ e: 0, l: 0 }]);
      const logParts = await listPartitions(old.store.db, 'pipeline_run_logs');
      expect(logParts[0]!.from.getTime()).toBe(periodStart(ago(70), 'month').getTime());
      expect(logParts.at(-1)!.from.getTime()).toBe(
        addPeriods(periodStart(now, 'month'), 'month', 1).getTime(),
      );
      // New lines number on from the migrated ones.
      await insertLogs(old.store.db, runs[2]!.id, [
        { stepSlug: null, level: 'info', message: 'after', at: new Date() },
      ]);
      const [newest] = (
        await listLogs(old.store.db, runs[2]!, {
          limit: 1,
          order: 'desc',
          direction: 'next',
          sort_by: 'log_seq',
        })
      ).items;
      expect(newest).toMatchObject({ seq: 6, message: 'after' });
    });
  });

  describe('retention and partitions ahead', () => {
    let t: TestApp;
    let orgId: string;
    let runId: string;
    const exec = (text: string, values: unknown[] = []) => t.rt.deps.store.executeSql(text, values);

    beforeAll(async () => {
      t = await startTestApp({ env: { SLUICE_RUN_LOG_RETENTION_DAYS: '45' } });
      await t.bootstrap();
      [{ id: orgId }] = (await exec(`select id from organizations where slug = 'acme'`)).rows;
      const { envId, pipelineId } = await insertPipeline(exec, orgId);
      [{ id: runId }] = (
        await exec(
          `insert into pipeline_runs (organization_id, pipeline_id, environment_id, slug, spec_hash, created_at)
           values ($1, $2, $3, 'r', 'h', now() - interval '120 days') returning id`,
          [orgId, pipelineId, envId],
        )
      ).rows;
    });
    afterAll(async () => {
      await t?.close();
    });

    it('creates the coming partitions and moves rows the default partition caught into them', async () => {
      const far = new Date(now.getTime() + 6 * 7 * DAY);
      await exec(
        `insert into events (organization_id, slug, event_class, actor_type, entity_type, action, occurred_at)
         values ($1, 'ahead', 'activity', 'system', 'pipeline', 'update', $2)`,
        [orgId, far],
      );
      const where = async () =>
        rowsOf(await exec(`select tableoid::regclass::text as part from events where slug = 'ahead'`))[0]
          .part;
      expect(await where()).toBe('events_default');

      const created = await ensurePartitions(
        t.rt.deps.db,
        eventsHistory,
        new Date(now.getTime() + 5 * 7 * DAY),
      );
      expect(created.length).toBeGreaterThan(0);
      expect(await where()).toBe(
        `events_p${periodStart(far, 'week').toISOString().slice(0, 10).replaceAll('-', '')}`,
      );
      // Again: nothing left to create.
      expect(
        await ensurePartitions(t.rt.deps.db, eventsHistory, new Date(now.getTime() + 5 * 7 * DAY)),
      ).toEqual([]);
    });

    it('drops whole partitions older than the window, keeps newer ones and their rows', async () => {
      // History as an older deployment has it: partitions back to 120 days ago, filled.
      for (let d = 120; d >= 0; d -= 7) {
        await ensurePartitions(t.rt.deps.db, { ...eventsHistory, ahead: 0 }, ago(d));
        await ensurePartitions(t.rt.deps.db, { ...runLogsHistory, ahead: 0 }, ago(d));
      }
      // A line a day, each its own batch (as a worker that writes once a day would).
      await exec(
        `insert into pipeline_run_logs (run_id, seq, last_seq, at, lines)
         select $1, d, d, now() - make_interval(days => d), jsonb_build_array(jsonb_build_array(null, 'info', 'day ' || d, 0))
           from generate_series(0, 119) d`,
        [runId],
      );
      await exec(
        `insert into events (organization_id, slug, event_class, actor_type, entity_type, action, occurred_at)
         select $1, 'old' || d, 'activity', 'system', 'pipeline', 'update', now() - make_interval(days => d)
           from generate_series(0, 60) d`,
        [orgId],
      );
      const before = {
        events: await listPartitions(t.rt.deps.db, 'events'),
        logs: await listPartitions(t.rt.deps.db, 'pipeline_run_logs'),
      };

      await runJobNow(t.rt.deps, eventsRetentionJob, {});

      const after = {
        events: await listPartitions(t.rt.deps.db, 'events'),
        logs: await listPartitions(t.rt.deps.db, 'pipeline_run_logs'),
      };
      const windowEnd = (days: number) => ago(days).getTime();
      expect(after.events.map((p) => p.name)).toEqual(
        before.events.filter((p) => p.to.getTime() > windowEnd(30)).map((p) => p.name),
      );
      expect(after.logs.map((p) => p.name)).toEqual(
        before.logs.filter((p) => p.to.getTime() > windowEnd(45)).map((p) => p.name),
      );
      expect(after.events.length).toBeLessThan(before.events.length);
      expect(after.logs.length).toBeLessThan(before.logs.length);
      // Inside the window every row stays: the organization keeps 30 days of events.
      const [{ e, l }] = rowsOf(
        await exec(
          `select (select count(*) from events where slug like 'old%' and occurred_at > now() - interval '29 days')::int as e,
                  (select count(*) from pipeline_run_logs where run_id = $1 and at > now() - interval '45 days')::int as l`,
          [runId],
        ),
      );
      expect(e).toBe(29);
      expect(l).toBe(45);
      // Beyond it nothing is left, whether its partition was dropped or rows were deleted.
      const [{ n }] = rowsOf(
        await exec(`select count(*)::int as n from events where occurred_at < now() - interval '31 days'`),
      );
      expect(n).toBe(0);
    });
  });
});
