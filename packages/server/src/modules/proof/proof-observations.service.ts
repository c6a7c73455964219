import { createHash } from 'node:crypto';
import { capabilityOf, connectorFor } from '@sluice/connectors';
import { canonicalJson } from '@sluice/engine';
import type { Ctx, Deps, Scope } from '../../context';
import { AppError, notFound } from '../../http/errors';
import { iso, isoOrNull, randomSlug } from '../../http/fields';
import type { ListQuery } from '../../http/pagination';
import { dataSourceById, describeFailure, loadConnection, src } from '../data-sources/index';

import { recordEvent } from '../events/index';
import * as repo from './proof.repo';
import type { TargetResult } from './proof.schemas';
import { type ContractTarget, driftAtCommit, findContractTarget } from './proof-drift';
import { findPipelineTarget, provableSource } from './proof-settings.service';
import { checkPath, checkPipeline, impactFindings, type PipelineRead, pipelineReads } from './proof-targets';

export const OBSERVE_JOB = 'proof.observe';

export function toObservation(dataSourceSlug: string, candidateSlug: string | null, r: repo.ObservationRow) {
  return {
    slug: r.slug,
    data_source_slug: dataSourceSlug,
    candidate_slug: candidateSlug,
    repository_id: r.repositoryId,
    commit_sha: r.commitSha,
    tree_sha: r.treeSha,
    state: r.state as 'running' | 'passed' | 'warned' | 'failed' | 'error',
    targets: (r.results ?? []) as TargetResult[],
    inputs: (r.inputs ?? []) as {
      path: string;
      sha256: string;
      git_blob: string;
      size: number;
      fields: { name: string; type: string }[] | null;
    }[],
    error: r.error ?? null,
    digest: r.digest,
    observed_at: isoOrNull(r.observedAt),
    created_at: iso(r.createdAt),
  };
}

async function present(ctx: Ctx, dataSourceSlug: string, rows: repo.ObservationRow[]) {
  const slugs = await repo.candidateSlugs(
    ctx.deps.db,
    rows.map((r) => r.candidateId).filter((id): id is string => id !== null),
  );
  return rows.map((r) =>
    toObservation(dataSourceSlug, r.candidateId ? (slugs.get(r.candidateId) ?? null) : null, r),
  );
}

export async function requestObservation(
  ctx: Ctx,
  scope: Scope,
  slug: string,
  body: { commit_sha?: string; ref?: string },
) {
  const { row } = await provableSource(ctx, scope, slug);
  if (body.commit_sha && body.ref)
    throw new AppError('VALIDATION_FAILED', 'give commit_sha or ref, not both');
  const created = await ctx.deps.db.transaction(async (tx) => {
    const settings = await repo.findSettings(tx, row.id);
    if (!settings?.enabled)
      throw new AppError('CONFLICT', 'proof is not enabled for this data source (PUT proof-settings)');
    const obs = await repo.insertObservation(tx, {
      organizationId: scope.org.id,
      dataSourceId: row.id,
      slug: randomSlug('obs'),
      requestedCommit: body.commit_sha ?? null,
      requestedRef: body.ref ?? null,
      state: 'running',
      targets: settings.targets,
    });
    await ctx.deps.queue.enqueue(tx, OBSERVE_JOB, { observationId: obs.id });
    await recordEvent(tx, src(scope, ctx), {
      entityType: 'data_source',
      entitySlug: row.slug,
      action: 'execute',
      metadata: {
        proof_observation_slug: obs.slug,
        commit_sha: body.commit_sha ?? null,
        ref: body.ref ?? null,
      },
    });
    return obs;
  });
  return toObservation(row.slug, null, created);
}

export async function listObservations(ctx: Ctx, scope: Scope, slug: string, query: ListQuery) {
  const { row } = await provableSource(ctx, scope, slug);
  const page = await repo.listObservations(ctx.deps.db, row.id, query);
  return { ...page, items: await present(ctx, row.slug, page.items) };
}

export async function getObservation(ctx: Ctx, scope: Scope, slug: string, observationSlug: string) {
  const { row } = await provableSource(ctx, scope, slug);
  const obs = await repo.findObservation(ctx.deps.db, row.id, observationSlug);
  if (!obs) throw notFound('observation');
  return (await present(ctx, row.slug, [obs]))[0];
}

/** SHA-256 of the canonical JSON of what an observation states (everything but its own digest). */
export function observationDigest(o: ReturnType<typeof toObservation>): string {
  const { digest: _digest, ...stated } = o;
  return createHash('sha256').update(canonicalJson(stated)).digest('hex');
}

const stateOf = (results: TargetResult[]) =>
  results.some((r) => r.result === 'fail' || r.result === 'error')
    ? 'failed'
    : results.some((r) => r.result === 'warn')
      ? 'warned'
      : 'passed';

/**
 * The observation job: reads every target's files at the commit through the connector (outside
 * any transaction), checks them, then writes the one immutable result.
 */
export async function runObservation(deps: Deps, observationId: string): Promise<void> {
  const obs = await repo.findObservationById(deps.db, observationId);
  if (obs?.state !== 'running') return;
  const ds = await dataSourceById(deps.db, obs.dataSourceId);
  const settings = ds && (await repo.findSettings(deps.db, ds.id));
  if (!ds || !settings) return;
  const ctx: Ctx = { deps, requestId: null };

  let outcome: Partial<repo.ObservationRow> & { candidate?: { repositoryId: string; commitSha: string } };
  try {
    const proof = capabilityOf(connectorFor(ds.type), 'proof');
    const reads = new Map<string, PipelineRead[]>();
    for (const t of obs.targets.filter((t) => t.kind === 'pipeline')) {
      const [p] = await findPipelineTarget(ctx, ds.organizationId, t.ref);
      reads.set(t.ref, p ? await pipelineReads(deps.db, p.id, ds.id) : []);
    }
    const contractsOf = new Map<string, ContractTarget | null>();
    for (const t of obs.targets.filter((t) => t.kind === 'contract')) {
      const found = await findContractTarget(deps.db, ds.organizationId, t.ref);
      const c = found.length === 1 ? found[0] : null;
      contractsOf.set(t.ref, c);
      if (c && !reads.has(`contract:${t.ref}`))
        reads.set(`contract:${t.ref}`, await pipelineReads(deps.db, c.pipelineId, ds.id));
    }
    const paths = [
      ...obs.targets.filter((t) => t.kind === 'path').map((t) => t.ref),
      ...[...reads.values()].flat().map((r) => r.path),
    ];
    const loaded = await loadConnection(deps.db, deps, ds);
    const snapshot = await proof.snapshot(loaded.connection, loaded.ctx, {
      commit: obs.requestedCommit ?? undefined,
      ref: obs.requestedRef ?? undefined,
      paths,
    });
    const base = {
      repositoryId: snapshot.repository_id,
      commitSha: snapshot.commit_sha,
      treeSha: snapshot.tree_sha,
    };
    if (snapshot.repository_id !== settings.expectedRepositoryId) {
      outcome = {
        ...base,
        state: 'error',
        results: [],
        inputs: [],
        error: {
          code: 'REPOSITORY_MISMATCH',
          message: `the repository is ${snapshot.repository_id}, not the expected one`,
        },
      };
    } else {
      const drift = await driftAtCommit(deps.db, ds, snapshot, paths);
      const impacts = drift?.impacts ?? [];
      const results = obs.targets.map((t): TargetResult => {
        if (t.kind === 'path') return checkPath(snapshot, t);
        if (t.kind === 'pipeline') {
          const slug = t.ref.split('/').pop()!;
          return checkPipeline(snapshot, t, reads.get(t.ref) ?? [], impactFindings(impacts, slug));
        }
        const c = contractsOf.get(t.ref);
        if (!c)
          return {
            kind: t.kind,
            ref: t.ref,
            result: 'error',
            files: [],
            findings: [
              {
                severity: 'error',
                code: 'CONTRACT_NOT_FOUND',
                message: `contract ${t.ref} was not found`,
                path: null,
              },
            ],
            contract_revision: null,
          };
        const checked = checkPipeline(
          snapshot,
          t,
          reads.get(`contract:${t.ref}`) ?? [],
          impactFindings(impacts, c.pipelineSlug, c.stepSlug),
        );
        return { ...checked, contract_revision: c.revision };
      });
      outcome = {
        ...base,
        state: stateOf(results),
        results,
        inputs: snapshot.files.map(({ path, sha256, git_blob, size, fields }) => ({
          path,
          sha256,
          git_blob,
          size,
          fields,
        })),
        error: null,
      };
    }
    outcome.candidate = { repositoryId: snapshot.repository_id, commitSha: snapshot.commit_sha };
  } catch (err) {
    const { failure, unexpected } = describeFailure(err);
    if (unexpected) deps.log.error({ err, observationId }, 'proof observation failed unexpectedly');
    outcome = { state: 'error', results: [], inputs: [], error: failure };
  }

  await deps.db.transaction(async (tx) => {
    const current = await repo.lockObservationById(tx, observationId);
    if (current?.state !== 'running') return;
    const { candidate, ...values } = outcome;
    const cand = candidate
      ? await repo.candidateFor(tx, {
          organizationId: ds.organizationId,
          dataSourceId: ds.id,
          slug: `cand-${candidate.commitSha.slice(0, 12)}`,
          repositoryId: candidate.repositoryId,
          commitSha: candidate.commitSha,
          ref: obs.requestedRef,
        })
      : null;
    const finished = { ...current, ...values, candidateId: cand?.id ?? null, observedAt: new Date() };
    const digest = observationDigest(
      toObservation(ds.slug, cand?.slug ?? null, { ...finished, digest: null }),
    );
    await repo.finishObservation(tx, observationId, {
      ...values,
      candidateId: finished.candidateId,
      observedAt: finished.observedAt,
      digest,
    });
    await recordEvent(
      tx,
      { organizationId: ds.organizationId, actor: { type: 'system', slug: null }, requestId: null },
      {
        entityType: 'data_source',
        entitySlug: ds.slug,
        action: 'refresh',
        metadata: {
          proof_observation_slug: current.slug,
          state: finished.state,
          commit_sha: finished.commitSha ?? null,
        },
      },
    );
  });
}
