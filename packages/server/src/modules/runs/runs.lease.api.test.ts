import { randomBytes, randomUUID } from 'node:crypto';
import { specHash } from '@sluice/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../../../../test/support/app';
import { RUN_LEASE_SECONDS, type Shop, shopSpec, startShop } from '../../../../../test/support/runs-shop';
import { pipelineRunInputs, pipelineRuns } from '../../db/schema/index';
import { startWorker } from '../../jobs/worker';
import { runInputBinding } from './run-execute.service';

// The worker's lease rules (claim, sweep, WORKER_LOST) on runs set up in the states a dead or a
// live worker leaves them in, in test/support/runs-shop.ts's shop, without the engine.

const CANARY = `CanaryInput-${randomBytes(9).toString('hex')}`;

describe('runs', () => {
  let t: TestApp;
  let owner: string;
  let orgId: string;
  let ids: Shop['ids'];
  let pe: string;
  let q: Shop['q'];
  let runRow: Shop['runRow'];
  let getRun: Shop['getRun'];
  let waitFor: Shop['waitFor'];

  beforeAll(async () => {
    ({ t, owner, orgId, ids, pe, q, runRow, getRun, waitFor } = await startShop());
  });
  afterAll(() => t?.close());

  describe('with a worker', () => {
    /** A run as a worker left it, with its sealed input; no job (the sweep or the test enqueues one). */
    async function seedRun(slug: string, fields: Record<string, unknown>) {
      const [run] = await t.rt.deps.db
        .insert(pipelineRuns)
        .values({
          organizationId: orgId,
          pipelineId: ids['pipeline:orders-sync'],
          environmentId: ids.staging,
          slug,
          specHash: specHash(shopSpec),
          inputKeys: ['region'],
          startedAt: new Date(),
          ...fields,
        })
        .returning();
      const inputId = randomUUID();
      const sealed = await t.rt.deps.keyring.encrypt(
        t.rt.deps.db,
        JSON.stringify({ region: CANARY }),
        runInputBinding(orgId, inputId),
      );
      await t.rt.deps.db
        .insert(pipelineRunInputs)
        .values({ id: inputId, organizationId: orgId, runId: run.id, ...sealed });
      return run;
    }
    const past = () => new Date(Date.now() - 1000);

    beforeAll(async () => {
      await startWorker(t.rt.deps);
    });

    it('recovers a run whose worker died once (attempt 2) and fails it WORKER_LOST the second time', async () => {
      await seedRun('lost-once', { state: 'running', leaseOwner: 'dead-worker', leaseExpiresAt: past() });
      await seedRun('lost-twice', {
        state: 'running',
        attempt: 2,
        leaseOwner: 'dead-worker',
        leaseExpiresAt: past(),
      });

      const recovered = await waitFor(
        () => runRow('lost-once'),
        (r) => r.attempt === 2 && r.lease_owner !== 'dead-worker',
      );
      expect(recovered.attempt).toBe(2);
      const reconcile = (
        await t.call('GET', '/organizations/acme/events?entity_slug=lost-once&action=reconcile', {
          token: owner,
        })
      ).json().events;
      expect(reconcile).toHaveLength(1);
      expect(reconcile[0].metadata).toMatchObject({ attempt: 2, reason: 'worker_lost' });
      const logs = (await t.call('GET', `${pe}/runs/lost-once/logs?order=asc`, { token: owner })).json().logs;
      expect(logs[0].message).toMatch(/worker lost; retrying \(attempt 2\)/);

      const failed = await waitFor(
        () => getRun('lost-twice'),
        (r) => r.state === 'failed',
      );
      expect(failed).toMatchObject({
        state: 'failed',
        attempt: 2,
        error: { code: 'WORKER_LOST', message: expect.any(String) },
        finished_at: expect.any(String),
      });
      const row = await runRow('lost-twice');
      expect(row.lease_owner).toBeNull();
      expect(await q('select 1 from pipeline_run_inputs where run_id = $1', [row.id])).toHaveLength(0);
      const ended = await q(`select metadata from events where entity_slug = 'lost-twice'`);
      expect(ended.map((e: any) => e.metadata)).toEqual([
        expect.objectContaining({ state: 'failed', error_code: 'WORKER_LOST' }),
      ]);
    });

    it('never takes a run held by a live lease, and ends a canceling run whose worker died', async () => {
      const held = await seedRun('held', {
        state: 'running',
        leaseOwner: 'live-worker',
        leaseExpiresAt: new Date(Date.now() + 3_600_000),
      });
      // A job for it (a duplicate, say): the worker finds it held and leaves it alone.
      await t.rt.deps.queue.enqueue(null, 'pipelines.run', { runId: held.id });
      await new Promise((r) => setTimeout(r, (RUN_LEASE_SECONDS + 1) * 1000));
      expect(await runRow('held')).toMatchObject({
        state: 'running',
        lease_owner: 'live-worker',
        attempt: 1,
      });

      // Canceled while its worker was gone: it just ends canceled.
      const cancel = await t.call('POST', `${pe}/runs/held:cancel`, { token: owner });
      expect(cancel.statusCode).toBe(202);
      expect(cancel.json().state).toBe('canceling');
      await q(`update pipeline_runs set lease_expires_at = now() - interval '1 second' where slug = 'held'`);
      const ended = await waitFor(
        () => getRun('held'),
        (r) => r.state === 'canceled',
      );
      expect(ended).toMatchObject({ state: 'canceled', attempt: 1, error: null });
      expect(await q('select 1 from pipeline_run_inputs where run_id = $1', [held.id])).toHaveLength(0);
    });
  });
});
