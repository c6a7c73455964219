import type { CapturedSchemaTable } from '@sluice/connectors';
import type { Deps } from '../../context';
import { dataSourceById, lockDataSourceById } from '../data-sources/index';
import * as repo from './drift.repo';
import { recordSourceSchemaReports } from './drift.service';
import { isContractImpact } from './impact';
import { computeReport } from './report';
import { diffSchemas } from './schema-diff';
import { nameKey, normalizeSchema } from './schema-normalize';
import { targetsOfDataSource } from './targets';

// Schema changes seen by a change-data-capture read (docs/cdc.md "Schema changes"): the
// captured tables as the source describes them at the start of a run stand in for those tables
// in the data source's imported schema. A difference is recorded as a `source_schema` drift
// report exactly as an import would record it (docs/drift-and-contracts.md#when-reports-are-written),
// and a contracted sink of the running pipeline whose input no longer holds stops the read.

/** The run's failure when a captured table breaks a contract: nothing is handed on. */
export class CapturedSchemaBreak extends Error {
  readonly code = 'CONTRACT_BROKEN';
}

export type CapturingRun = {
  dataSourceId: string;
  pipelineId: string;
  environmentId: string;
  specHash: string;
  spec: unknown;
};

/** The imported schema with the captured tables in place of (or added to) their imported form. */
export function withCapturedTables(
  imported: Record<string, unknown>,
  captured: CapturedSchemaTable[],
): Record<string, unknown> {
  type Table = { schema?: string; name: string; columns: unknown[] };
  const tables = [...((imported.tables as Table[] | undefined) ?? [])];
  const keyOf = (schema: string | undefined, name: string) => nameKey(schema ? `${schema}.${name}` : name);
  for (const c of captured) {
    const at = tables.findIndex((t) => keyOf(t.schema, t.name) === keyOf(c.schema, c.name));
    const next = c.columns === null ? null : { schema: c.schema, name: c.name, columns: c.columns };
    if (at >= 0) {
      if (next) tables[at] = { ...tables[at], columns: next.columns };
      else tables.splice(at, 1);
    } else if (next) tables.push(next);
  }
  return { ...imported, tables };
}

const relational = (schema: unknown) => (schema as { schema_type?: unknown })?.schema_type === 'relational';

/** Whether the captured tables differ from the imported schema. */
function drifted(imported: Record<string, unknown>, captured: CapturedSchemaTable[]): boolean {
  const candidate = withCapturedTables(imported, captured);
  return diffSchemas(normalizeSchema(imported), normalizeSchema(candidate)).length > 0;
}

/**
 * Called by a cdc read before it hands anything on. Without an imported relational schema there
 * is nothing to compare with, so nothing happens. Throws CapturedSchemaBreak, after the report
 * is stored, when a contracted sink of this run's spec no longer receives what it promises.
 */
export async function recordCapturedSchema(
  deps: Deps,
  run: CapturingRun,
  captured: CapturedSchemaTable[],
): Promise<void> {
  // The common case (nothing changed since the import, no report open) reads twice, locks
  // nothing and dry-binds nothing. An open report means the schema may break the contract even
  // when an import already stored the change, so the contract is checked then too.
  const seen = await dataSourceById(deps.db, run.dataSourceId);
  if (!seen || !relational(seen.schema)) return;
  if (!drifted(seen.schema, captured) && !(await repo.openBaselineOf(deps.db, seen.id))) return;
  const broken = await deps.db.transaction(async (tx) => {
    const ds = await lockDataSourceById(tx, run.dataSourceId);
    if (!ds || !relational(ds.schema)) return null;
    const candidate = withCapturedTables(ds.schema, captured);
    await recordSourceSchemaReports(tx, deps, ds, ds.schema, candidate);
    const baseline = (await repo.openBaselineOf(tx, ds.id)) ?? ds.schema;
    // The contract is checked against the spec that runs, whatever is deployed.
    const projects = await targetsOfDataSource(tx, ds.id, {
      pipelineId: run.pipelineId,
      environmentId: run.environmentId,
      specHash: run.specHash,
      spec: run.spec,
    });
    const mine = projects
      .flatMap((p) => p.targets)
      .filter(
        (t) => (t as { pipelineId?: string }).pipelineId === run.pipelineId && t.specHash === run.specHash,
      );
    if (mine.length === 0 || mine.every((t) => t.contracts.size === 0)) return null;
    const body = await computeReport(baseline, candidate, mine);
    const problems = body.impacts.filter(isContractImpact).map((i) => i.message);
    if (problems.length === 0) return null;
    const changes = body.changes
      .filter((c) => c.severity !== 'safe')
      .map(
        (c) =>
          `${c.reason_code} ${c.path}${c.before || c.after ? ` (${c.before ?? '-'} → ${c.after ?? '-'})` : ''}`,
      );
    return `the captured schema of ${ds.slug} changed (${changes.join('; ') || 'see its drift report'}) and ${problems.join('; ')}; no sink committed and the position did not move: fix the source or revise the contract, then run again`;
  });
  if (broken) throw new CapturedSchemaBreak(broken);
}
