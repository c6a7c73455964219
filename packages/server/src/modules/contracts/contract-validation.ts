import type { Finding, PipelineSpec } from '@sluice/engine';
import type { DbOrTx } from '../../db/client';
import { contractProblems, refSchemas, sinkInputs } from '../drift/index';

import { latestContracts, ofPipeline } from './contracts.repo';

// Validation's "contracts still hold" (docs/drift-and-contracts.md#contracts): each contracted
// sink's computed input, dry-bound over the stored schemas of the bound data sources, against the
// latest revision. A broken promise is an error (CONTRACT_BROKEN); an input that cannot be computed
// (a source kind without a schema, say) is a warning (CONTRACT_NOT_CHECKED).

export async function contractFindings(
  db: DbOrTx,
  place: { pipelineId: string; environmentId: string },
  spec: PipelineSpec,
): Promise<Finding[]> {
  const contracts = await latestContracts(db, ofPipeline(place.pipelineId));
  if (contracts.length === 0) return [];
  const schemas = new Map(
    (await refSchemas(db, place.pipelineId, place.environmentId)).map((r) => [r.refSlug, r.schema]),
  );
  const inputs = await sinkInputs(spec, schemas);
  const out: Finding[] = [];
  for (const { contract, revision } of contracts) {
    const i = spec.steps.findIndex((s) => s.slug === contract.stepSlug);
    const name = `contract ${contract.slug} (revision ${revision.slug})`;
    if (i < 0 || spec.steps[i].kind !== 'sink') {
      out.push({
        code: 'CONTRACT_BROKEN',
        message: `${name} describes sink ${contract.stepSlug}, which this spec no longer has`,
        path: 'steps',
        severity: 'error',
      });
      continue;
    }
    const input = inputs.get(contract.stepSlug) ?? null;
    if (!input) {
      out.push({
        code: 'CONTRACT_NOT_CHECKED',
        message: `${name}: the columns reaching sink ${contract.stepSlug} could not be computed from the imported schemas`,
        path: `steps[${i}]`,
        severity: 'warning',
      });
      continue;
    }
    for (const problem of contractProblems(revision.columns, input))
      out.push({
        code: 'CONTRACT_BROKEN',
        message: `${name}: ${problem}`,
        path: `steps[${i}]`,
        severity: 'error',
      });
  }
  return out;
}
