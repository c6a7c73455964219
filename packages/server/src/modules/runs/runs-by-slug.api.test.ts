import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../../../test/support/app';
import { type Shop, startShop } from '../../../../../test/support/runs-shop';
import { pipelines } from '../../db/schema/index';
import { firstPageSql } from './runs-by-slug.repo';

// The reads of a `{pe}` URL by its slugs (runs-by-slug.repo.ts): the runs list's plain first page
// as the ORM's paths read it, the same 404 from every read for a missing project environment,
// and the runs of another project that shares the environment, in test/support/runs-shop.ts's
// shop. The rest of the runs API is runs.api.test.ts's.

describe('runs read by their URL', () => {
  let t: TestApp;
  let owner: string;
  let orgId: string;
  let ids: Shop['ids'];
  let pe: string;
  let q: Shop['q'];
  let runRow: Shop['runRow'];
  let getRun: Shop['getRun'];

  beforeAll(async () => {
    let execute: Shop['execute'];
    ({ t, owner, orgId, ids, pe, q, runRow, execute, getRun } = await startShop());
    // Runs of both of the shop's staging pipelines.
    expect(
      (await execute('orders-sync', { input: { region: 'eu' }, run_slug: 'first-run' })).statusCode,
    ).toBe(202);
    for (const slug of ['list-a', 'list-b', 'list-c'])
      expect((await execute('other', { input: { region: 'eu' }, run_slug: slug })).statusCode).toBe(202);
  });
  afterAll(() => t?.close());

  it('reads the plain first page with its project environment in one statement, as the other paths read', async () => {
    // Steps on one listed run, one of them ended with an error (bigint counts, timestamps, jsonb).
    const runId = (await runRow('list-b')).id;
    await q(
      `insert into pipeline_run_steps (run_id, step_slug, state, rows_in, rows_out, bytes_in, bytes_out, error, started_at, finished_at)
       values ($1, 'orders', 'succeeded', 3, 3, 9000000000, 120, null, now() - interval '2 s', now() - interval '1 s'),
              ($1, 'load', 'failed', 3, 0, 120, 0, '{"code":"SINK_FAILED","message":"no table"}', now() - interval '1 s', null)`,
      [runId],
    );
    const get = async (url: string) => {
      const res = await t.call('GET', url, { token: owner });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    const plain = await get(`${pe}/runs?limit=100`);
    expect(plain.runs.length).toBeGreaterThan(3);
    expect(plain).toMatchObject({ has_more: false, next_cursor: null, prev_cursor: null });
    // Each run as the run's own read gives it, and the page as the ORM path reads it (a filter
    // every listed run matches: the pipelines of the environment's runs).
    for (const run of plain.runs) expect(run).toEqual(await getRun(run.slug));
    expect(plain.runs.find((r: any) => r.slug === 'list-b').steps).toHaveLength(2);
    const byPipeline = await Promise.all(
      [...new Set(plain.runs.map((r: any) => r.pipeline_slug))].map(
        async (slug) => (await get(`${pe}/runs?limit=100&pipeline_slug=${slug}`)).runs,
      ),
    );
    const merged = byPipeline
      .flat()
      .sort((a: any, b: any) => (a.created_at + a.slug < b.created_at + b.slug ? 1 : -1));
    expect(plain.runs).toEqual(merged);
    // Its cursor walks on through the ORM path, and back again.
    const first = await get(`${pe}/runs?limit=1`);
    expect(first.runs).toEqual(plain.runs.slice(0, 1));
    expect(first).toMatchObject({ has_more: true, prev_cursor: null });
    const second = await get(`${pe}/runs?limit=1&cursor=${encodeURIComponent(first.next_cursor)}`);
    expect(second.runs).toEqual(plain.runs.slice(1, 2));
    const back = await get(
      `${pe}/runs?limit=1&direction=prev&cursor=${encodeURIComponent(second.prev_cursor)}`,
    );
    expect(back.runs).toEqual(first.runs);

    // A linked environment without runs: an empty page.
    for (const body of [
      { name: 'QA', slug: 'qa' },
      { name: 'Loose', slug: 'loose' },
    ]) {
      expect(
        (await t.call('POST', '/organizations/acme/environments', { token: owner, body })).statusCode,
      ).toBe(201);
    }
    expect(
      (await t.call('PUT', '/organizations/acme/projects/shop/environments/qa', { token: owner })).statusCode,
    ).toBe(201);
    expect(await get('/organizations/acme/projects/shop/environments/qa/runs')).toEqual({
      runs: [],
      has_more: false,
      next_cursor: null,
      prev_cursor: null,
    });
    // No project environment: the same 404 on the one-statement path and on the ORM path.
    await q(`update environments set deleted_at = now() where slug = 'qa'`);
    for (const base of [
      '/organizations/acme/projects/nope/environments/staging',
      '/organizations/acme/projects/shop/environments/nope',
      '/organizations/acme/projects/shop/environments/loose',
      '/organizations/acme/projects/shop/environments/qa',
    ]) {
      const plainRes = await t.call('GET', `${base}/runs`, { token: owner });
      const filtered = await t.call('GET', `${base}/runs?state=queued`, { token: owner });
      expect(plainRes.statusCode, base).toBe(404);
      expect(filtered.statusCode, base).toBe(404);
      const { request_id: _a, ...plainError } = plainRes.json().error;
      const { request_id: _b, ...filteredError } = filtered.json().error;
      expect(plainError).toEqual(filteredError);
      // A run's own read and its log (one statement each for the project environment and the
      // run) answer the same for their project environment.
      for (const path of ['runs/list-b', 'runs/list-b/logs']) {
        const one = await t.call('GET', `${base}/${path}`, { token: owner });
        expect(one.statusCode, `${base}/${path}`).toBe(404);
        const { request_id: _c, ...oneError } = one.json().error;
        expect(oneError).toEqual(plainError);
      }
    }
    // So do checkpoints and a cancel, which find the project environment the same way.
    const pipelinePath =
      '/organizations/acme/projects/nope/environments/staging/pipelines/orders/checkpoints';
    expect((await t.call('GET', pipelinePath, { token: owner })).statusCode).toBe(404);
    expect(
      (
        await t.call('POST', '/organizations/acme/projects/nope/environments/staging/runs/list-b:cancel', {
          token: owner,
        })
      ).statusCode,
    ).toBe(404);
    // The project environment is there, the run is not: a 404 that names the run.
    const missing = await t.call('GET', `${pe}/runs/no-such-run`, { token: owner });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('NOT_FOUND');
    expect(missing.json().error.message).toMatch(/run/);
    const missingLog = await t.call('GET', `${pe}/runs/no-such-run/logs`, { token: owner });
    expect(missingLog.statusCode).toBe(404);
    expect(missingLog.json().error.message).toEqual(missing.json().error.message);
    expect(missing.json().error.message).not.toEqual(
      (
        await t.call('GET', '/organizations/acme/projects/nope/environments/staging/runs/list-b', {
          token: owner,
        })
      ).json().error.message,
    );
  });

  it("lists a project's runs only, where another project's runs share the environment", async () => {
    // Environments belong to the organization and are linked to projects: one environment holds
    // the runs of every linked project's pipelines.
    expect(
      (
        await t.call('POST', '/organizations/acme/projects', {
          token: owner,
          body: { name: 'Books', slug: 'books' },
        })
      ).statusCode,
    ).toBe(201);
    expect(
      (await t.call('PUT', '/organizations/acme/projects/books/environments/staging', { token: owner }))
        .statusCode,
    ).toBe(201);
    // A project without pipelines: an empty page on every path.
    for (const query of ['', '?state=queued', '?trigger=api']) {
      const res = await t.call(
        'GET',
        `/organizations/acme/projects/books/environments/staging/runs${query}`,
        {
          token: owner,
        },
      );
      expect(res.json(), query).toEqual({ runs: [], has_more: false, next_cursor: null, prev_cursor: null });
    }
    const books = (await q(`select id from projects where slug = 'books'`))[0].id;
    const [p] = await t.rt.deps.db
      .insert(pipelines)
      .values({ organizationId: orgId, projectId: books, slug: 'ledger', name: 'ledger' })
      .returning();
    await q(
      `insert into pipeline_runs (organization_id, pipeline_id, environment_id, slug, spec_hash, state, trigger)
       values ($1, $2, $3, 'books-run', 'x', 'queued', 'api')`,
      [orgId, p.id, ids.staging],
    );
    const booksPe = '/organizations/acme/projects/books/environments/staging';
    const slugs = async (url: string) => {
      const res = await t.call('GET', url, { token: owner });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().runs.map((r: any) => r.slug) as string[];
    };
    for (const query of ['', '?state=queued', '?trigger=api', '?limit=1&order=asc']) {
      expect(await slugs(`${booksPe}/runs${query}`), query).toEqual(['books-run']);
      expect(await slugs(`${pe}/runs${query}`), query).not.toContain('books-run');
    }
    expect(await slugs(`${pe}/runs?pipeline_slug=ledger`)).toEqual([]);
    expect(await slugs(`${booksPe}/runs?pipeline_slug=ledger`)).toEqual(['books-run']);
    // A run is read only through its own project's URL.
    expect((await t.call('GET', `${booksPe}/runs/books-run`, { token: owner })).statusCode).toBe(200);
    expect((await t.call('GET', `${booksPe}/runs/books-run/logs`, { token: owner })).statusCode).toBe(200);
    for (const path of ['runs/books-run', 'runs/books-run/logs']) {
      const other = await t.call('GET', `${pe}/${path}`, { token: owner });
      expect(other.statusCode, other.body).toBe(404);
    }
  });

  it("walks the environment's runs newest first, whatever the statistics of `pipelines` say", async () => {
    // A store of a few pipelines: autovacuum analyzes a table once 50 of its rows changed, so
    // `pipelines` is never analyzed while its runs and steps are. Its generic plan (what a
    // prepared statement settles on) then still reads the page off pipeline_runs_env_idx and
    // stops after it, instead of reading and sorting every run of the environment.
    await q(
      `insert into pipeline_runs (organization_id, pipeline_id, environment_id, slug, spec_hash, state, trigger, created_at)
       select r.organization_id, r.pipeline_id, r.environment_id, 'bulk-' || g, r.spec_hash, 'succeeded', 'api',
              r.created_at - g * interval '1 second'
         from pipeline_runs r, generate_series(1, 3000) g
        where r.slug = 'first-run'`,
    );
    await q('analyze pipeline_runs');
    await q('analyze pipeline_run_steps');
    const plan = await t.rt.deps.db.transaction(async (tx) => {
      await tx.execute(sql.raw('set local plan_cache_mode = force_generic_plan'));
      await tx.execute(sql.raw(`prepare sluice_first_page_plan (uuid, text, text) as ${firstPageSql(20)}`));
      const res: any = await tx.execute(
        sql.raw(`explain execute sluice_first_page_plan('${orgId}', 'shop', 'staging')`),
      );
      await tx.execute(sql.raw('deallocate sluice_first_page_plan'));
      return ((res.rows ?? res) as Record<string, string>[]).map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/Index Scan Backward using pipeline_runs_env_idx on pipeline_runs/);
    expect(plan).not.toMatch(/Seq Scan on pipeline_runs /);
    expect(plan).not.toMatch(/Sort Key: pipeline_runs\.created_at/);
    // And the page is the newest runs of this project's pipelines.
    const res = await t.call('GET', `${pe}/runs?limit=20`, { token: owner });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json().runs as { slug: string; created_at: string }[];
    expect(page).toHaveLength(20);
    expect(page.map((r) => r.created_at)).toEqual([...page.map((r) => r.created_at)].sort().reverse());
    expect(page.map((r) => r.slug)).not.toContain('books-run');
  });
});
