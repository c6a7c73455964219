import type { PipelineSpec } from '@sluice/engine';
import { sql } from 'drizzle-orm';
import type { Ctx, Scope } from '../../context';
import type { Keyring } from '../../crypto/keyring';
import type { DbOrTx, Tx } from '../../db/client';
import { timeOrderedId } from '../../db/ids';
import { AppError, conflict, notFound, validationFailed } from '../../http/errors';
import { timeOrderedSlug } from '../../http/fields';
import { assertProtectedConfirmation, eventSource } from '../environments/index';

import { eventFromRowSql } from '../events/index';
import { executeAtOnce } from './run-execute.repo';
import type { RunRow } from './runs.repo';
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
 * and the event commit together, in one statement (run-execute.repo.ts). A repeated run slug of
 * the same pipeline and environment answers that run instead (`created: false`).
 */
export async function executePipeline(
  ctx: Ctx,
  scope: Scope,
  pe: PeSlugs & { pipeline: string },
  body: ExecuteInput,
): Promise<{ created: boolean; run: Awaited<ReturnType<typeof runResource>> }> {
  const { deps } = ctx;
  const db = deps.db;
  const input = body.input ?? {};
  const inputKeys = Object.keys(input).sort();
  const runId = timeOrderedId();
  const slug = body.run_slug ?? timeOrderedSlug('run');
  const confirmation = body.protected_environment_confirmation ?? null;
  // Values only: a run without input has nothing to seal (its input_keys are empty, and the
  // worker reads no input row for it). Sealed before the statement, which writes it only when
  // the run is accepted.
  const sealed = inputKeys.length > 0 ? await sealInput(db, deps.keyring, scope.org.id, input) : null;
  const job = deps.queue.insertion('pipelines.run', { runId });
  const src = eventSource(scope, ctx);
  const { target, created } = await executeAtOnce(db, {
    organizationId: scope.org.id,
    slugs: { project: pe.project, environment: pe.environment, pipeline: pe.pipeline },
    runId,
    runSlug: slug,
    confirmation,
    inputKeys,
    sealed,
    job: job.sql,
    event: (from) =>
      eventFromRowSql(
        { ...src, organizationId: sql`${scope.org.id}::uuid` },
        {
          entityType: 'pipeline_run',
          action: 'execute',
          entitySlug: sql`run.slug`,
          metadata: sql`jsonb_build_object('pipeline_slug', ok.pipeline_slug, 'environment_slug',
            ok.environment_slug, 'spec_hash', ok.spec_hash, 'input_keys', ${JSON.stringify(inputKeys)}::jsonb)`,
        },
        from,
      ),
  });

  if (created && target?.environment && target.pipeline && target.deployment) {
    job.sent();
    const now = created.createdAt;
    // Just inserted: no step rows yet, and everything else is known.
    const run: RunRow = {
      id: runId,
      organizationId: scope.org.id,
      pipelineId: target.pipeline.id,
      environmentId: target.environment.id,
      slug,
      specHash: target.deployment.specHash,
      state: 'queued',
      trigger: 'api',
      triggerId: null,
      triggerSlug: null,
      triggerKey: null,
      inputKeys,
      error: null,
      contractChecks: [],
      attempt: created.attempt,
      leaseOwner: null,
      leaseExpiresAt: null,
      heartbeatAt: null,
      cancelRequestedAt: null,
      startedAt: null,
      finishedAt: null,
      createdAt: now,
      updatedAt: now,
      pipelineSlug: target.pipeline.slug,
      environmentSlug: target.environment.slug,
    };
    return { created: true, run: toRun(run, []) };
  }

  // Nothing was written: answer what stopped it, checked in the order of docs/runs.md on what
  // the statement read.
  if (!target?.environment) throw notFound('project environment');
  const { environment, pipeline } = target;
  if (!pipeline) throw notFound('pipeline');
  assertProtectedConfirmation(environment, confirmation);
  if (body.run_slug && target.sameSlug) {
    const existing = await sameSlugRun(db, scope, pipeline.id, environment.id, body.run_slug);
    if (existing) return { created: false, run: await runResource(db, existing) };
  }
  if (!target.deployment) {
    throw new AppError(
      'PIPELINE_NOT_DEPLOYED',
      `pipeline ${pipeline.slug} has no active deployment in environment ${environment.slug}`,
    );
  }
  checkInputs((target.deployment.spec as PipelineSpec).inputs ?? {}, input);
  // Every check held: a concurrent execute with the same slug committed first (or took it after
  // the read); answer as if it came first.
  const existing = await sameSlugRun(db, scope, pipeline.id, environment.id, slug);
  if (existing) return { created: false, run: await runResource(db, existing) };
  throw conflict(`run slug ${slug} is already taken`);
}

/** Seals an input for the run about to be inserted, under a fresh input record id. */
async function sealInput(db: DbOrTx, keyring: Keyring, organizationId: string, input: unknown) {
  const id = timeOrderedId();
  const sealedInput = await keyring.encrypt(db, JSON.stringify(input), runInputBinding(organizationId, id));
  return { id, kid: sealedInput.kid, ciphertext: sealedInput.ciphertext };
}

/** The run a repeated slug names: same pipeline and environment, else 409 (slugs are per organization). */
async function sameSlugRun(
  tx: DbOrTx,
  scope: Scope,
  pipelineId: string,
  environmentId: string,
  slug: string,
) {
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
  const inputId = timeOrderedId();
  const sealed = await keyring.encrypt(tx, JSON.stringify(input), runInputBinding(organizationId, inputId));
  await repo.insertRunInput(tx, {
    id: inputId,
    organizationId,
    runId,
    kid: sealed.kid,
    ciphertext: sealed.ciphertext,
  });
}
