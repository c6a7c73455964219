import { createSessionPool } from '@sluice/connectors';
import type { Deps } from '../context';
import { deliverAlert } from './alert-deliver';
import { testAlertDestination } from './alert-destination-test';
import { dispatchNotification } from './alert-dispatch';
import type { JobName } from './catalog';
import { sendAccountExistsEmail } from './email-account-exists';
import { sendInvitationEmail } from './email-invitation';
import { sendVerificationEmail } from './email-verification';
import { pruneEvents } from './events-retention';
import { observeProof } from './proof-observe';
import type { JobHandler } from './queue';
import { runPipeline } from './run-pipeline';
import { startRunSweeper, sweepRuns } from './run-sweep';
import { importDataSourceSchema } from './schema-import';
import { startTriggerTicker } from './trigger-ticker';

const handlers: { [N in JobName]: (deps: Deps) => JobHandler<N> } = {
  'email.verification': sendVerificationEmail,
  'email.account_exists': sendAccountExistsEmail,
  'email.invitation': sendInvitationEmail,
  'data_sources.schema_import': importDataSourceSchema,
  'proof.observe': observeProof,
  'events.retention': pruneEvents,
  'pipelines.run': runPipeline,
  'pipelines.sweep': sweepRuns,
  'alerts.dispatch': dispatchNotification,
  'alerts.deliver': deliverAlert,
  'alerts.destination_test': testAlertDestination,
};

/** Starts consuming every queue of the catalog in this process. */
export async function startWorker(baseDeps: Deps, opts: { concurrency?: number } = {}) {
  const concurrency = opts.concurrency ?? 1;
  // Data sessions of pipeline runs outlive a run (session-pool.ts); enough idle ones for every
  // run slot's source and sink, closed when the queue stops (those still in use as they return).
  const sessions = createSessionPool({ maxIdle: 2 * concurrency + 2 });
  // A view of the caller's deps, not a copy: what is set on them later (a test's injected clock,
  // say) reaches the handlers too.
  const deps: Deps = new Proxy(baseDeps, {
    get: (target, prop, receiver) => (prop === 'sessions' ? sessions : Reflect.get(target, prop, receiver)),
  });
  deps.queue.onStop(() => sessions.close());
  for (const name of Object.keys(handlers) as JobName[]) {
    await deps.queue.work(name, handlers[name](deps) as JobHandler<typeof name>, { concurrency });
  }
  // Hourly retention sweep; pg-boss keeps one schedule per name across all workers.
  await deps.queue.boss.schedule('events.retention', '7 * * * *', {});
  // Runs whose worker died: every minute by cron, and by each worker on its own (run-sweep.ts).
  await deps.queue.boss.schedule('pipelines.sweep', '* * * * *', {});
  await startRunSweeper(deps);
  startTriggerTicker(deps);
}
