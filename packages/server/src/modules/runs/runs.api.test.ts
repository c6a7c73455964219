import { randomBytes, randomUUID } from 'node:crypto';
import { specHash } from '@sluice/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../../../test/support/app';
import { type Shop, shopSpec, startShop } from '../../../../../test/support/runs-shop';
import { pipelineCheckpoints, pipelines } from '../../db/schema/index';
import { insertLogs } from './run-progress.repo';

// Runs without the engine: execute (validation, idempotency, sealing), lists, cancel of queued
// runs, logs and checkpoints, in test/support/runs-shop.ts's shop. The worker's lease rules are
// runs.lease.api.test.ts's.

const CANARY = `CanaryInput-${randomBytes(9).toString('hex')}`;

describe('runs', () => {
  let t: TestApp;
  let owner: string;
  let orgId: string;
  let ids: Shop['ids'];
  let pe: string;
  let prodPe: string;
  let q: Shop['q'];
  let runRow: Shop['runRow'];
  let execute: Shop['execute'];
  let getRun: Shop['getRun'];

  beforeAll(async () => {
    ({ t, owner, orgId, ids, pe, prodPe, q, runRow, execute, getRun } = await startShop());
  });
  afterAll(() => t?.close());

  describe('queued (no worker yet)', () => {
    it('refuses what cannot run: not deployed, unknown, invalid or undeclared input, protected', async () => {
      const notDeployed = await execute('draft', { input: { region: 'eu' } });
      expect(notDeployed.statusCode, notDeployed.body).toBe(409);
      expect(notDeployed.json().error.code).toBe('PIPELINE_NOT_DEPLOYED');
      expect((await execute('nope', {})).statusCode).toBe(404);
      expect(
        (
          await t.call('POST', `${pe.replace('staging', 'nowhere')}/pipelines/orders-sync:execute`, {
            token: owner,
            body: {},
          })
        ).statusCode,
      ).toBe(404);

      const missing = await execute('orders-sync', { input: { note: 'x' } });
      expect(missing.statusCode).toBe(400);
      expect(missing.json().error.validation_errors).toEqual([
        expect.objectContaining({ path: 'input.region', code: 'required' }),
      ]);
      const undeclared = await execute('orders-sync', { input: { region: 'eu', colour: 'blue' } });
      expect(undeclared.statusCode).toBe(400);
      expect(undeclared.json().error.validation_errors[0].path).toBe('input.colour');
      for (const body of [
        { input: { '1bad': 1 } },
        { input: { region: 'eu' }, extra: true },
        { input: [] },
        { run_slug: 'Not A Slug', input: { region: 'eu' } },
      ]) {
        const res = await execute('orders-sync', body);
        expect(res.statusCode, JSON.stringify(body)).toBe(400);
        expect(res.json().error.code).toBe('VALIDATION_FAILED');
      }

      const unconfirmed = await execute('orders-sync', { input: { region: 'eu' } }, prodPe);
      expect(unconfirmed.statusCode).toBe(409);
      expect(unconfirmed.json().error.code).toBe('PROTECTED_ENVIRONMENT_CONFIRMATION_REQUIRED');
      expect(await q('select 1 from pipeline_runs')).toHaveLength(0);
    });

    it('accepts an execution: 202, queued, key names only, input sealed, job and event', async () => {
      const res = await execute('orders-sync', {
        input: { region: CANARY, note: { nested: [CANARY] } },
        run_slug: 'first-run',
      });
      expect(res.statusCode, res.body).toBe(202);
      const run = res.json();
      expect(run).toMatchObject({
        slug: 'first-run',
        pipeline_slug: 'orders-sync',
        environment_slug: 'staging',
        spec_hash: specHash(shopSpec),
        state: 'queued',
        trigger: 'api',
        input_keys: ['note', 'region'],
        attempt: 1,
        started_at: null,
        finished_at: null,
        error: null,
        steps: [],
      });
      expect(res.body).not.toContain(CANARY);

      const row = await runRow('first-run');
      const sealed = await q('select * from pipeline_run_inputs where run_id = $1', [row.id]);
      expect(sealed).toHaveLength(1);
      expect(JSON.stringify(sealed)).not.toContain(CANARY);
      const jobs = await q(`select data from pgboss.job where name = 'pipelines.run'`);
      expect(jobs.map((j: any) => j.data)).toEqual([{ runId: row.id }]);
      expect(run.created_at).toBe(row.created_at.toISOString());
      // The execute statement writes the job itself: as pg-boss's own send would, with the
      // queue's policy (a job sent through pg-boss beside it, then removed, is the reference).
      const policy = `select state, priority, retry_limit, retry_delay, retry_backoff, expire_in, policy,
                             dead_letter, singleton_key, singleton_on, keep_until - start_after as kept,
                             start_after <= now() as started
                        from pgboss.job where name = 'pipelines.run' and data->>'runId' = $1`;
      const reference = randomUUID();
      const sentId = await t.rt.deps.queue.boss.send('pipelines.run', { runId: reference });
      expect(sentId).toBeTruthy();
      try {
        expect((await q(policy, [row.id]))[0]).toEqual((await q(policy, [reference]))[0]);
      } finally {
        await q('delete from pgboss.job where id = $1', [sentId]);
      }

      const events = (
        await t.call('GET', '/organizations/acme/events?entity_type=pipeline_run&entity_slug=first-run', {
          token: owner,
        })
      ).json().events;
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        action: 'execute',
        metadata: { pipeline_slug: 'orders-sync', input_keys: ['note', 'region'] },
      });
      expect(JSON.stringify(events)).not.toContain(CANARY);

      const confirmed = await execute(
        'orders-sync',
        { input: { region: 'eu' }, protected_environment_confirmation: 'prod' },
        prodPe,
      );
      expect(confirmed.statusCode).toBe(202);
      expect(confirmed.json().environment_slug).toBe('prod');
      // Generated slugs.
      const generated = await execute('other', { input: { region: 'eu' } });
      expect(generated.statusCode).toBe(202);
      expect(generated.json().slug).toMatch(/^run-[a-z0-9]{16}$/);
    });

    it('repeats a run_slug safely: 200 with the same run, 409 for another pipeline or environment', async () => {
      const before = (await q('select count(*)::int as n from pipeline_runs'))[0].n;
      const again = await execute('orders-sync', { input: { region: 'other' }, run_slug: 'first-run' });
      expect(again.statusCode).toBe(200);
      expect(again.json()).toMatchObject({
        slug: 'first-run',
        state: 'queued',
        input_keys: ['note', 'region'],
      });
      const otherPipeline = await execute('other', { input: { region: 'eu' }, run_slug: 'first-run' });
      expect(otherPipeline.statusCode).toBe(409);
      expect(otherPipeline.json().error.code).toBe('CONFLICT');
      const otherEnv = await execute(
        'orders-sync',
        { input: { region: 'eu' }, run_slug: 'first-run', protected_environment_confirmation: 'prod' },
        prodPe,
      );
      expect(otherEnv.statusCode).toBe(409);
      expect((await q('select count(*)::int as n from pipeline_runs'))[0].n).toBe(before);
      expect(await q(`select 1 from pgboss.job where name = 'pipelines.run'`)).toHaveLength(before);
    });

    it('lists runs by created_at with pipeline and state filters', async () => {
      for (const slug of ['list-a', 'list-b', 'list-c']) {
        expect((await execute('other', { input: { region: 'eu' }, run_slug: slug })).statusCode).toBe(202);
      }
      const all = (await t.call('GET', `${pe}/runs?limit=2`, { token: owner })).json();
      expect(all.runs.map((r: any) => r.slug)).toEqual(['list-c', 'list-b']);
      expect(all.has_more).toBe(true);
      const next = (
        await t.call('GET', `${pe}/runs?limit=2&cursor=${encodeURIComponent(all.next_cursor)}`, {
          token: owner,
        })
      ).json();
      expect(next.runs.map((r: any) => r.slug)).toEqual(['list-a', expect.any(String)]);

      const ofPipeline = (
        await t.call('GET', `${pe}/runs?pipeline_slug=orders-sync`, { token: owner })
      ).json();
      expect(ofPipeline.runs.map((r: any) => r.slug)).toEqual(['first-run']);
      const prod = (await t.call('GET', `${prodPe}/runs`, { token: owner })).json();
      expect(prod.runs).toHaveLength(1);
      expect((await t.call('GET', `${pe}/runs?state=running`, { token: owner })).json().runs).toEqual([]);
      expect((await t.call('GET', `${pe}/runs?state=nope`, { token: owner })).statusCode).toBe(400);
      // Another environment's run is not here.
      expect((await t.call('GET', `${prodPe}/runs/first-run`, { token: owner })).statusCode).toBe(404);
    });

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
        (await t.call('PUT', '/organizations/acme/projects/shop/environments/qa', { token: owner }))
          .statusCode,
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

    it('cancels a queued run at once and refuses to cancel an ended one', async () => {
      const run = await runRow('list-a');
      const res = await t.call('POST', `${pe}/runs/list-a:cancel`, { token: owner });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        slug: 'list-a',
        state: 'canceled',
        finished_at: expect.any(String),
      });
      expect(await q('select 1 from pipeline_run_inputs where run_id = $1', [run.id])).toHaveLength(0);
      const again = await t.call('POST', `${pe}/runs/list-a:cancel`, { token: owner });
      expect(again.statusCode).toBe(409);
      expect((await t.call('POST', `${pe}/runs/missing:cancel`, { token: owner })).statusCode).toBe(404);

      const logs = (await t.call('GET', `${pe}/runs/list-a/logs`, { token: owner })).json();
      expect(logs).toMatchObject({ has_more: false, next_cursor: null, prev_cursor: null });
      expect(logs.logs).toEqual([
        {
          seq: 1,
          step_slug: null,
          level: 'info',
          message: 'cancel requested by api_key',
          at: expect.any(String),
        },
      ]);
    });

    it('numbers log lines per run (never the store id) and pages them newest first by default', async () => {
      const run = await runRow('list-b');
      // Another run's lines in between: the numbers of list-b still run 1, 2, 3, …
      const other = await runRow('list-a');
      for (let i = 0; i < 5; i++) {
        await insertLogs(t.rt.deps.db, run.id, [
          { stepSlug: 'orders', level: 'info', message: `line ${i}`, at: new Date() },
        ]);
        await insertLogs(t.rt.deps.db, other.id, [
          { stepSlug: null, level: 'info', message: 'elsewhere', at: new Date() },
        ]);
      }
      const walk = async (order: string) => {
        const seen: [number, string][] = [];
        let cursor: string | null = null;
        do {
          const qs: string = `${order}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
          const page: any = (
            await t.call('GET', `${pe}/runs/list-b/logs?limit=2${qs}`, { token: owner })
          ).json();
          seen.push(...page.logs.map((l: any) => [l.seq, l.message] as [number, string]));
          expect(page.logs.every((l: any) => !('id' in l))).toBe(true);
          cursor = page.has_more ? page.next_cursor : null;
        } while (cursor);
        return seen;
      };
      const oldestFirst = [0, 1, 2, 3, 4].map((i) => [i + 1, `line ${i}`]);
      expect(await walk('&order=asc')).toEqual(oldestFirst);
      expect(await walk('')).toEqual([...oldestFirst].reverse());
      // A cursor that names no line number is refused, not read as one.
      const forged = await t.call('GET', `${pe}/runs/list-b/logs?cursor=eA_abc`, { token: owner });
      expect(forged.statusCode).toBe(400);
    });

    it('shows and resets checkpoints (protected environments need confirmation)', async () => {
      const url = (base: string) => `${base}/pipelines/orders-sync/checkpoints`;
      expect((await t.call('GET', url(pe), { token: owner })).json()).toEqual({
        checkpoints: [],
        has_more: false,
        next_cursor: null,
        prev_cursor: null,
      });
      const run = await runRow('first-run');
      for (const env of ['staging', 'prod']) {
        await t.rt.deps.db.insert(pipelineCheckpoints).values({
          organizationId: orgId,
          pipelineId: ids['pipeline:orders-sync'],
          environmentId: ids[env],
          stepSlug: 'orders',
          cursor: `c-${env}`,
          runId: run.id,
        });
      }
      expect((await t.call('GET', url(pe), { token: owner })).json().checkpoints).toEqual([
        { step_slug: 'orders', cursor: 'c-staging', run_slug: 'first-run', updated_at: expect.any(String) },
      ]);
      const refused = await t.call('DELETE', url(prodPe), { token: owner });
      expect(refused.statusCode).toBe(409);
      expect(refused.json().error.code).toBe('PROTECTED_ENVIRONMENT_CONFIRMATION_REQUIRED');
      expect((await t.call('DELETE', url(pe), { token: owner })).statusCode).toBe(204);
      expect((await t.call('GET', url(pe), { token: owner })).json().checkpoints).toEqual([]);
      // The other environment keeps its cursor.
      expect((await t.call('GET', url(prodPe), { token: owner })).json().checkpoints).toHaveLength(1);
      const events = (
        await t.call('GET', '/organizations/acme/events?entity_type=pipeline_checkpoint', { token: owner })
      ).json().events;
      expect(events[0]).toMatchObject({ action: 'delete', entity_slug: 'orders-sync' });
      expect((await t.call('GET', `${pe}/pipelines/nope/checkpoints`, { token: owner })).statusCode).toBe(
        404,
      );
    });
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
});
