import { randomBytes, randomUUID } from 'node:crypto';
import { specHash } from '@sluice/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../../../test/support/app';
import { type Shop, shopSpec, startShop } from '../../../../../test/support/runs-shop';
import { pipelineCheckpoints } from '../../db/schema/index';
import { insertLogs } from './run-progress.repo';

// Runs without the engine: execute (validation, idempotency, sealing), lists, cancel of queued
// runs, logs and checkpoints, in test/support/runs-shop.ts's shop. The worker's lease rules are
// runs.lease.api.test.ts's; the reads by a URL's slugs (the plain first page, every read's 404)
// runs-by-slug.api.test.ts's.

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

  beforeAll(async () => {
    ({ t, owner, orgId, ids, pe, prodPe, q, runRow, execute } = await startShop());
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
});
