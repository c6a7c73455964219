import { eq } from 'drizzle-orm';
import type { Actor, Deps } from '../../context';
import type { Tx } from '../../db/client';
import { timeOrderedId } from '../../db/ids';
import { environments, pipelineRuns } from '../../db/schema/index';
import { timeOrderedSlug } from '../../http/fields';
import { recordEvent } from '../events/index';
import { findActiveDeployment } from '../pipelines/index';
import { type RunRecord, sealRunInput } from '../runs/index';

import type { TriggerRow } from './triggers.repo';

// A run started by a trigger: the same records as an execute (run, sealed input, job, event),
// plus the trigger's identity and a key (the nominal time or the delivery id) that is unique per
// trigger, so a second host or a replay can never insert it twice.

export type StartOutcome =
  | { ok: true; run: RunRecord }
  | { ok: false; code: 'PIPELINE_NOT_DEPLOYED' | 'INPUT_INVALID' | 'DUPLICATE'; reason: string };

export type StartArgs = {
  trigger: TriggerRow;
  kind: 'schedule' | 'webhook';
  key: string;
  input: Record<string, unknown>;
  actor: Actor;
  requestId: string | null;
  pipelineSlug: string;
  environmentSlug: string;
  metadata?: Record<string, unknown>;
};

/** Declared inputs against given ones; the first problem as a sentence, or null. */
function inputProblem(declared: Record<string, { required: boolean }>, given: Record<string, unknown>) {
  for (const [key, def] of Object.entries(declared)) {
    if (def.required && !Object.hasOwn(given, key)) return `input ${key} is required by the deployed spec`;
  }
  for (const key of Object.keys(given)) {
    if (!Object.hasOwn(declared, key)) return `input ${key} is not declared in the deployed spec's inputs`;
  }
  return null;
}

export async function startTriggeredRun(tx: Tx, deps: Deps, a: StartArgs): Promise<StartOutcome> {
  const t = a.trigger;
  const [env] = await tx
    .select({ deletedAt: environments.deletedAt })
    .from(environments)
    .where(eq(environments.id, t.environmentId));
  if (!env || env.deletedAt) {
    return {
      ok: false,
      code: 'PIPELINE_NOT_DEPLOYED',
      reason: `environment ${a.environmentSlug} is deleted`,
    };
  }
  const deployment = await findActiveDeployment(tx, t.pipelineId, t.environmentId);
  if (!deployment) {
    return {
      ok: false,
      code: 'PIPELINE_NOT_DEPLOYED',
      reason: `pipeline ${a.pipelineSlug} has no active deployment in environment ${a.environmentSlug}`,
    };
  }
  const problem = inputProblem(deployment.spec.inputs ?? {}, a.input);
  if (problem) return { ok: false, code: 'INPUT_INVALID', reason: problem };

  const slug = timeOrderedSlug('run');
  const [run] = await tx
    .insert(pipelineRuns)
    .values({
      id: timeOrderedId(),
      organizationId: t.organizationId,
      pipelineId: t.pipelineId,
      environmentId: t.environmentId,
      slug,
      specHash: deployment.specHash,
      state: 'queued',
      trigger: a.kind,
      triggerId: t.id,
      triggerSlug: t.slug,
      triggerKey: a.key,
      inputKeys: Object.keys(a.input).sort(),
    })
    .onConflictDoNothing()
    .returning();
  if (!run) return { ok: false, code: 'DUPLICATE', reason: `a run for ${a.key} already exists` };

  await sealRunInput(tx, deps.keyring, t.organizationId, run.id, a.input);
  await deps.queue.enqueue(tx, 'pipelines.run', { runId: run.id });
  await recordEvent(
    tx,
    { organizationId: t.organizationId, actor: a.actor, requestId: a.requestId },
    {
      entityType: 'pipeline_run',
      entitySlug: slug,
      action: 'execute',
      metadata: {
        pipeline_slug: a.pipelineSlug,
        environment_slug: a.environmentSlug,
        spec_hash: deployment.specHash,
        trigger: a.kind,
        trigger_slug: t.slug,
        input_keys: Object.keys(a.input).sort(),
        ...a.metadata,
      },
    },
  );
  return { ok: true, run };
}
