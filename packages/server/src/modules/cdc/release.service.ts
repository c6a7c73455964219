import { type Deps, systemActor } from '../../context';
import type { DbOrTx } from '../../db/client';
import { capabilityFor, dataSourceById, describeFailure, loadConnection } from '../data-sources/index';
import { recordEvent } from '../events/index';
import { resolveNotification } from '../notifications/index';
import { activeDeployments } from './captures.repo';
import { cdcSteps, ownedCaptures } from './owned';

// Dropping the captures a deployment no longer needs (docs/cdc.md "Slot safety"): the change
// that retires them (undeploy, a deploy without the step, deleting the pipeline) enqueues one
// `cdc.release` job per capture in its own transaction; the job talks to the source.

export const RELEASE_JOB = 'cdc.release';

export type ReleaseRequest = {
  organizationId: string;
  pipelineId: string;
  environmentId: string;
  dataSourceId: string;
  capture: string;
  projectSlug: string;
  pipelineSlug: string;
  environmentSlug: string;
  stepSlug: string;
};

/**
 * Inside the transaction that changes what is deployed, before the change: enqueues the
 * release of each capture of the pipeline (in one environment, or all when null) whose step
 * the next spec (null: nothing deployed any more) does not keep as a cdc source step.
 */
export async function retireCaptures(
  tx: DbOrTx,
  deps: Pick<Deps, 'queue'>,
  at: { organizationId: string; pipelineId: string; environmentId: string | null; nextSpec: unknown | null },
): Promise<number> {
  const kept = new Set(at.nextSpec ? cdcSteps(at.nextSpec).map((s) => s.slug) : []);
  const retired = ownedCaptures(await activeDeployments(tx, at.organizationId, at.pipelineId)).filter(
    (o) => (at.environmentId === null || o.environmentId === at.environmentId) && !kept.has(o.stepSlug),
  );
  for (const o of retired) {
    await deps.queue.enqueue(tx, RELEASE_JOB, {
      organizationId: at.organizationId,
      pipelineId: o.pipelineId,
      environmentId: o.environmentId,
      dataSourceId: o.dataSource.id,
      capture: o.name,
      projectSlug: o.projectSlug,
      pipelineSlug: o.pipelineSlug,
      environmentSlug: o.environmentSlug,
      stepSlug: o.stepSlug,
    });
  }
  return retired.length;
}

/**
 * The job: drops the capture on its data source, best effort. A retryable failure is thrown
 * while tries remain (the queue tries again); the last failure, or one no retry can help,
 * records a `release` event with `released: false` and the reason, and the capture is left
 * as an orphan that `GET …/data-sources/{data_source}/captures` lists.
 */
export async function releaseCapture(deps: Deps, r: ReleaseRequest, lastTry: boolean): Promise<void> {
  // Deployed again meanwhile (the same step in the same environment has the same capture).
  const owned = ownedCaptures(await activeDeployments(deps.db, r.organizationId, r.pipelineId));
  if (owned.some((o) => o.name === r.capture)) return;
  const row = await dataSourceById(deps.db, r.dataSourceId);
  if (!row) return;
  let failure: { code: string; message: string } | null = null;
  try {
    const loaded = await loadConnection(deps.db, deps, row);
    await capabilityFor(row.type, 'changes').release(loaded.connection, r.capture, loaded.ctx);
  } catch (err) {
    const described = describeFailure(err);
    if (described.unexpected)
      deps.log.error({ err, dataSource: row.slug }, 'capture release failed unexpectedly');
    failure = described.failure;
    if (!lastTry && (err as { retryable?: boolean }).retryable === true) throw err;
  }
  await deps.db.transaction(async (tx) => {
    await recordEvent(
      tx,
      { organizationId: r.organizationId, actor: systemActor, requestId: null },
      {
        entityType: 'data_source',
        entitySlug: row.slug,
        action: 'release',
        metadata: {
          capture_name: r.capture,
          released: failure === null,
          project_slug: r.projectSlug,
          pipeline_slug: r.pipelineSlug,
          environment_slug: r.environmentSlug,
          step_slug: r.stepSlug,
          error_code: failure?.code ?? null,
          error_message: failure?.message ?? null,
        },
      },
    );
    if (failure) return;
    // Nothing is left to lag behind: its alerts are over.
    for (const type of ['cdc_capture_lagging', 'cdc_capture_inactive'] as const) {
      await resolveNotification(tx, deps, {
        organizationId: r.organizationId,
        type,
        projectSlug: r.projectSlug,
        environmentSlug: r.environmentSlug,
        subject: { kind: 'capture', slug: r.capture.replace(/_/g, '-') },
      });
    }
  });
}
