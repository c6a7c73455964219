import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Shop } from '../../../../../test/support/runs-shop';
import { startShop } from '../../../../../test/support/runs-shop';
import { TIME_ORDERED_ID_SQL } from '../../db/ids';
import { resetClaimedStepsSql, resetStepsSql } from './run-progress.repo';

// The rows a run adds get ids (and generated slugs) that grow with time
// (docs/operations.md#row-ids): ordered by the store's own uuid and text order, later rows come
// last, so each index takes them at its right edge. Step ids still list a run's steps in plan order.

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('time-ordered run ids', () => {
  let shop: Shop;
  const slugs: string[] = [];

  beforeAll(async () => {
    shop = await startShop();
    // Generated slugs, and one given by the caller, a millisecond apart at least.
    for (const body of [{}, { run_slug: 'given-slug' }, {}]) {
      const res = await shop.execute('orders-sync', { input: { region: 'eu' }, ...body });
      expect(res.statusCode, res.body).toBe(202);
      slugs.push(res.json().slug);
      await new Promise((r) => setTimeout(r, 2));
    }
  });
  afterAll(() => shop?.t.close());

  it('orders runs, their sealed inputs and their events by creation, in the store', async () => {
    const runs = await shop.q(
      `select r.id::text, r.slug, i.id::text as input_id from pipeline_runs r
         join pipeline_run_inputs i on i.run_id = r.id
        where r.slug = any($1::text[]) order by r.id`,
      [slugs],
    );
    expect(runs.map((r: any) => r.slug)).toEqual(slugs);
    for (const r of runs as any[]) {
      expect(r.id).toMatch(V7);
      expect(r.input_id).toMatch(V7);
    }
    expect([...runs].sort((a: any, b: any) => (a.input_id < b.input_id ? -1 : 1))).toEqual(runs);

    const generated = [slugs[0], slugs[2]];
    for (const s of generated) expect(s).toMatch(/^run-[a-z0-9]{16}$/);
    // A generated slug starts with its second (base 36), so later slugs sort later: the second
    // it was made in, just before the statement that stored it at `created_at`.
    const second = (slug: string, at: number) => {
      const s = Number.parseInt(slug, 36);
      expect(s).toBeGreaterThanOrEqual(Math.floor(at) - 1);
      expect(s).toBeLessThanOrEqual(Math.floor(at));
    };
    const made = await shop.q(
      'select slug, extract(epoch from created_at)::float8 as at from pipeline_runs where slug = any($1::text[])',
      [generated],
    );
    for (const r of made as any[]) second(r.slug.slice(4, 11), r.at);

    const events = await shop.q(
      `select id::text, slug, entity_slug, extract(epoch from occurred_at)::float8 as at from events
        where entity_type = 'pipeline_run' and entity_slug = any($1::text[]) order by id`,
      [slugs],
    );
    expect(events.map((e: any) => e.entity_slug)).toEqual(slugs);
    for (const e of events as any[]) {
      expect(e.id).toMatch(V7);
      expect(e.slug).toMatch(/^ev-[a-z0-9]{20}$/);
      second(e.slug.slice(3, 10), e.at);
    }
  });

  it('gives the runs queue jobs ids of the same kind, made in SQL', async () => {
    const jobs = await shop.q(
      `select j.id::text from pgboss.job j join pipeline_runs r on r.id::text = j.data->>'runId'
        where r.slug = any($1::text[]) order by j.id`,
      [slugs],
    );
    expect(jobs).toHaveLength(3);
    const [made] = await shop.q(`select ${TIME_ORDERED_ID_SQL}::text as id`);
    for (const j of [...jobs, made] as { id: string }[]) expect(j.id).toMatch(V7);
    const ms = Number.parseInt(made.id.replace(/-/g, '').slice(0, 12), 16);
    expect(Math.abs(ms - Date.now())).toBeLessThan(60_000);
  });

  it('lists steps in plan order by id, whichever statement made them', async () => {
    const db = shop.t.rt.deps.db;
    const order = ['extract', 'a-transform', 'zz-load', 'b-notify'];
    const [first, , last] = (await shop.q(
      'select id from pipeline_runs where slug = any($1::text[]) order by id',
      [slugs],
    )) as { id: string }[];
    await db.execute(resetStepsSql(first.id, order).reset);
    const run = await shop.runRow(slugs[2]);
    const claimed = sql`(select id, pipeline_id as "pipelineId", spec_hash as "specHash", true as "stepsReset"
                           from pipeline_runs where id = ${last.id}::uuid)`;
    await db.execute(
      sql`with w as ${claimed}, ${resetClaimedStepsSql(sql.raw('w'), {
        [`${run.pipeline_id}:${run.spec_hash}`]: order,
      })} select 1`,
    );
    for (const runId of [first.id, last.id]) {
      const steps = await shop.q(
        'select id::text, step_slug from pipeline_run_steps where run_id = $1 order by id',
        [runId],
      );
      expect(steps.map((s: any) => s.step_slug)).toEqual(order);
      // Position, then the milliseconds of the statement that made them.
      expect(steps.map((s: any) => s.id.slice(0, 8))).toEqual([
        '00000000',
        '00000001',
        '00000002',
        '00000003',
      ]);
      const times = steps.map((s: any) => Number.parseInt(s.id.replace(/-/g, '').slice(8, 20), 16));
      expect(new Set(times).size).toBe(1);
      expect(Math.abs(times[0] - Date.now())).toBeLessThan(60_000);
    }
  });
});
