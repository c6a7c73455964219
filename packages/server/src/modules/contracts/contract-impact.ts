import { pipelineSpecSchema } from '@sluice/engine';
import type { Ctx, Scope } from '../../context';
import type { DbOrTx, Tx } from '../../db/client';
import {
  type Change,
  contractProblems,
  environmentsOfPipeline,
  type Impact,
  maxSeverity,
  publicChange,
  refSchemas,
  sinkInputs,
  specInEnvironment,
  writeReport,
} from '../drift/index';

import type { ContractView, RevisionRow } from './contracts.repo';

// What a contract's latest revision means for its pipeline in every environment it is bound
// in: the sink's computed input (dry-bound over the stored schemas of the bound data sources)
// against the promised columns.

export type StaticCheck = {
  environment: string;
  specHash: string;
  status: 'pass' | 'fail' | 'unknown';
  problems: string[];
};

export async function staticChecks(
  db: DbOrTx,
  contract: ContractView,
  revision: RevisionRow,
): Promise<StaticCheck[]> {
  const out: StaticCheck[] = [];
  for (const env of await environmentsOfPipeline(db, contract.pipelineId)) {
    const version = await specInEnvironment(db, contract.pipelineId, env.id);
    const spec = pipelineSpecSchema.safeParse(version?.spec);
    if (!version || !spec.success) continue;
    const schemas = new Map(
      (await refSchemas(db, contract.pipelineId, env.id)).map((r) => [r.refSlug, r.schema]),
    );
    const step = spec.data.steps.find((s) => s.slug === contract.stepSlug);
    if (step?.kind !== 'sink') {
      out.push({
        environment: env.slug,
        specHash: version.specHash,
        status: 'fail',
        problems: [`the spec has no sink ${contract.stepSlug}`],
      });
      continue;
    }
    const input = (await sinkInputs(spec.data, schemas)).get(contract.stepSlug) ?? null;
    if (!input) {
      out.push({ environment: env.slug, specHash: version.specHash, status: 'unknown', problems: [] });
      continue;
    }
    const problems = contractProblems(revision.columns, input);
    out.push({
      environment: env.slug,
      specHash: version.specHash,
      status: problems.length ? 'fail' : 'pass',
      problems,
    });
  }
  return out;
}

/** The contract_impact report of a new revision for the pipeline it binds. */
export async function contractImpactReports(
  tx: Tx,
  contract: ContractView,
  revision: RevisionRow,
  diff: Change[],
  scope: Scope,
  ctx: Ctx,
  projectSlug: string,
) {
  const changes: Change[] =
    revision.basedOn === null
      ? revision.columns.map((c) => ({
          kind: 'column_added',
          path: c.name,
          before: null,
          after: c.type,
          severity: 'safe',
          reason_code: 'contract_column_added',
        }))
      : diff;
  const where = { pipeline_slug: contract.pipelineSlug, step_slug: contract.stepSlug };
  const impacts: Impact[] = [];
  for (const check of await staticChecks(tx, contract, revision))
    for (const problem of check.problems)
      impacts.push({
        ...where,
        kind: 'sink',
        severity: 'breaking',
        message: `sink ${contract.stepSlug} (${check.specHash.slice(0, 7)} in ${check.environment}) breaks revision ${revision.slug}: ${problem}`,
      });
  const breaking = changes.filter((c) => c.severity === 'breaking');
  if (breaking.length > 0)
    impacts.push({
      ...where,
      kind: 'unknown_consumer',
      severity: 'warning',
      message: `readers of sink ${contract.stepSlug} relied on revision ${revision.basedOn}: ${breaking.map((c) => `${c.reason_code} ${c.path}`).join('; ')}`,
    });
  const worst = maxSeverity(...changes.map((c) => c.severity), ...impacts.map((i) => i.severity));
  impacts.push({
    pipeline_slug: contract.pipelineSlug,
    kind: 'pipeline',
    severity: worst,
    message: `pipeline ${contract.pipelineSlug}: contract ${contract.slug} revision ${revision.slug}, ${impacts.length} impacts`,
  });
  await writeReport(
    tx,
    ctx.deps,
    {
      organizationId: contract.organizationId,
      projectId: contract.projectId,
      reportType: 'contract_impact',
      subjectKey: `contract:${contract.id}`,
      pipelineId: contract.pipelineId,
      projectSlug,
      subject: { kind: 'pipeline', slug: contract.pipelineSlug },
    },
    { revision_slug: revision.basedOn },
    {
      severity: worst,
      summary: `revision ${revision.slug} of contract ${contract.slug}: ${changes.length} changes (${breaking.length} breaking), ${impacts.length - 1} impacts`,
      changes: changes.map(publicChange),
      impacts,
    },
    scope.actor,
    ctx.requestId,
  );
}
