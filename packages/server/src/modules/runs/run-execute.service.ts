import { randomUUID } from 'node:crypto';
import type { PipelineSpec } from '@sluice/engine';
import type { Ctx, Scope } from '../../context';
import type { Keyring } from '../../crypto/keyring';
import type { Tx } from '../../db/client';
import { AppError, conflict, notFound, validationFailed } from '../../http/errors';
import { randomSlug } from '../../http/fields';
import { assertProtectedConfirmation, eventSource } from '../environments/index';

import { recordEvent } from '../events/index';
import { findExecuteTarget } from './run-execute.repo';
import * as repo from './runs.repo';
import { type PeSlugs, runResource, toRun } from './runs.service';

export const RUN_INPUT_KIND = 'pipeline_run_input';

export const runInputBinding = (organizationId: string, recordId: string) => ({
  organizationId,
  kind: RUN_INPUT_KIND,
  recordId,
});

export type ExecuteInput = {
  input?: Record<string, unknown>;
  protected_environment_confirmation?: string | null;
  run_slug?: string;
};

/** Declared inputs must be given when required, and nothing undeclared may be given. */
function checkInputs(declared: Record<string, { required: boolean }>, given: Record<string, unknown>) {
  const issues = [];
  for (const [key, def] of Object.entries(declared)) {
    if (def.required && !Object.hasOwn(given, key)) {
      issues.push({ path: `input.${key}`, code: 'required', message: `input ${key} is required` });
    }
  }
  for (const key of Object.keys(given)) {
    if (!Object.hasOwn(declared, key)) {
      issues.push({
        path: `input.${key}`,
        code: 'unrecognized_key',
        message: `input ${key} is not declared in the spec's inputs`,
      });
    }
  }
  if (issues.length) throw validationFailed(issues);
}

/**
 * Accepts an execution: the run (queued, input key names only), its sealed input values, the job
 * and the event commit together. A repeated run slug of the same pipeline and environment
 * answers that run instead (`created: false`).
 */
export async function executePipeline(
  ctx: Ctx,
  scope: Scope,
  pe: PeSlugs & { pipeline: string },
  body: ExecuteInput,
): Promise<{ created: boolean; run: Awaited<ReturnType<typeof runResource>> }> {
  const { deps } = ctx;
  const input = body.input ?? {};
  return deps.db.transaction(async (tx) => {
    // One read for everything checked below, in the order the errors are answered.
    const target = await findExecuteTarget(tx, scope.org.id, {
      project: pe.project,
      environment: pe.environment,
      pipeline: pe.pipeline,
      run: body.run_slug ?? null,
    });
    if (!target?.environment) throw notFound('project environment');
    const { environment } = target;
    const place = {
      organizationId: scope.org.id,
      projectId: target.projectId,
      environmentId: environment.id,
    };
    const pipeline = target.pipeline;
    if (!pipeline) throw notFound('pipeline');
    assertProtectedConfirmation(environment, body.protected_environment_confirmation);

    if (body.run_slug && target.sameSlug) {
      const existing = await sameSlugRun(tx, scope, pipeline.id, place.environmentId, body.run_slug);
      if (existing) return { created: false, run: await runResource(tx, existing) };
    }

    if (!target.deployment) {
      throw new AppError(
        'PIPELINE_NOT_DEPLOYED',
        `pipeline ${pipeline.slug} has no active deployment in environment ${environment.slug}`,
      );
    }
    const deployment = { specHash: target.deployment.specHash, spec: target.deployment.spec as PipelineSpec };
    checkInputs(deployment.spec.inputs ?? {}, input);

    const slug = body.run_slug ?? randomSlug('run');
    const inserted = await repo.insertRun(tx, {
      organizationId: scope.org.id,
      pipelineId: pipeline.id,
      environmentId: place.environmentId,
      slug,
      specHash: deployment.specHash,
      state: 'queued',
      trigger: 'api',
      inputKeys: Object.keys(input).sort(),
    });
    if (!inserted) {
      // A concurrent execute with the same slug committed first: answer as if it came first.
      const existing = await sameSlugRun(tx, scope, pipeline.id, place.environmentId, slug);
      if (existing) return { created: false, run: await runResource(tx, existing) };
      throw conflict(`run slug ${slug} is already taken`);
    }

    // Values only: a run without input has nothing to seal (its input_keys are empty, and the
    // worker reads no input row for it).
    if (inserted.inputKeys.length > 0) {
      await sealRunInput(tx, deps.keyring, scope.org.id, inserted.id, input);
    }
    await deps.queue.enqueue(tx, 'pipelines.run', { runId: inserted.id });
    await recordEvent(tx, eventSource(scope, ctx), {
      entityType: 'pipeline_run',
      entitySlug: slug,
      action: 'execute',
      metadata: {
        pipeline_slug: pipeline.slug,
        environment_slug: environment.slug,
        spec_hash: deployment.specHash,
        input_keys: Object.keys(input).sort(),
      },
    });
    // Just inserted, in this transaction: no step rows yet, and the slugs are at hand.
    const run = { ...inserted, pipelineSlug: pipeline.slug, environmentSlug: environment.slug };
    return { created: true, run: toRun(run, []) };
  });
}

/** The run a repeated slug names: same pipeline and environment, else 409 (slugs are per organization). */
async function sameSlugRun(tx: Tx, scope: Scope, pipelineId: string, environmentId: string, slug: string) {
  const existing = await repo.findRunInOrganization(tx, scope.org.id, slug);
  if (!existing) return null;
  if (existing.pipelineId !== pipelineId || existing.environmentId !== environmentId) {
    throw conflict(`run slug ${slug} is already used by another pipeline or environment`);
  }
  return existing;
}

/** Seals a run's input values under the keyring and stores them beside the run. */
export async function sealRunInput(
  tx: Tx,
  keyring: Keyring,
  organizationId: string,
  runId: string,
  input: unknown,
) {
  const inputId = randomUUID();
  const sealed = await keyring.encrypt(tx, JSON.stringify(input), runInputBinding(organizationId, inputId));
  await repo.insertRunInput(tx, {
    id: inputId,
    organizationId,
    runId,
    kid: sealed.kid,
    ciphertext: sealed.ciphertext,
  });
}
