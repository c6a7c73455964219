import type { ProofFile, ProofSnapshot } from '@sluice/connectors';
import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import {
  dataSourceBindings,
  dataSourceRefs,
  environments,
  pipelineDeployments,
  pipelineVersions,
} from '../../db/schema/index';
import type { ProofTarget } from '../../db/schema/proof';
import type { TargetResult } from './proof.schemas';

// What each kind of target reads at the commit, and what it finds there.

/** A file a deployed pipeline reads from the data source: step and environment named. */
export type PipelineRead = { step: string; environment: string; path: string };

/** Source steps of the active deployments of a pipeline whose ref is bound to the data source. */
export async function pipelineReads(
  db: DbOrTx,
  pipelineId: string,
  dataSourceId: string,
): Promise<PipelineRead[]> {
  const deployed = await db
    .select({ spec: pipelineVersions.spec, environment: environments.slug, environmentId: environments.id })
    .from(pipelineDeployments)
    .innerJoin(
      pipelineVersions,
      and(
        eq(pipelineVersions.pipelineId, pipelineDeployments.pipelineId),
        eq(pipelineVersions.specHash, pipelineDeployments.specHash),
      ),
    )
    .innerJoin(environments, eq(environments.id, pipelineDeployments.environmentId))
    .where(and(eq(pipelineDeployments.pipelineId, pipelineId), eq(pipelineDeployments.active, true)));
  const bound = await db
    .select({ ref: dataSourceRefs.slug, environmentId: dataSourceBindings.environmentId })
    .from(dataSourceBindings)
    .innerJoin(dataSourceRefs, eq(dataSourceRefs.id, dataSourceBindings.refId))
    .where(
      and(eq(dataSourceBindings.pipelineId, pipelineId), eq(dataSourceBindings.dataSourceId, dataSourceId)),
    );
  const reads: PipelineRead[] = [];
  for (const d of deployed) {
    const refs = new Set(bound.filter((b) => b.environmentId === d.environmentId).map((b) => b.ref));
    for (const step of (d.spec.steps ?? []) as any[]) {
      const path = step.operation?.path;
      if (step.kind === 'source' && refs.has(step.data_source_ref) && typeof path === 'string')
        reads.push({ step: step.slug, environment: d.environment, path });
    }
  }
  return reads;
}

const underPath = (f: ProofFile, path: string) =>
  f.path === path || f.path.startsWith(`${path.replace(/\/$/, '')}/`);

type Finding = TargetResult['findings'][number];

/** Missing and unreadable files: an error each; a tabular file without columns: a warning. */
function fileFindings(
  snapshot: ProofSnapshot,
  path: string,
  reader: string | null,
): { files: ProofFile[]; findings: Finding[] } {
  const by = reader ? ` (read by ${reader})` : '';
  if (snapshot.missing.includes(path))
    return {
      files: [],
      findings: [
        {
          severity: 'error',
          code: 'FILE_MISSING',
          message: `${path}${by} does not exist at this commit`,
          path,
        },
      ],
    };
  const files = snapshot.files.filter((f) => underPath(f, path));
  const findings: Finding[] = [];
  for (const f of files) {
    if (!f.readable)
      findings.push({
        severity: 'error',
        code: 'FILE_UNREADABLE',
        message: `${f.path}${by} could not be parsed`,
        path: f.path,
      });
    else if (f.fields && f.fields.length === 0)
      findings.push({
        severity: 'warning',
        code: 'NO_COLUMNS',
        message: `${f.path}${by} has no columns`,
        path: f.path,
      });
  }
  return { files, findings };
}

export const resultOf = (findings: Finding[]): TargetResult['result'] =>
  findings.some((f) => f.severity === 'error')
    ? 'fail'
    : findings.some((f) => f.severity === 'warning')
      ? 'warn'
      : 'pass';

export function checkPath(snapshot: ProofSnapshot, target: ProofTarget): TargetResult {
  const { files, findings } = fileFindings(snapshot, target.ref, null);
  return {
    kind: target.kind,
    ref: target.ref,
    result: resultOf(findings),
    files: files.map((f) => f.path),
    findings,
  };
}

type DriftImpact = {
  kind: string;
  severity: string;
  message: string;
  pipeline_slug?: string;
  step_slug?: string;
};

/** The drift impacts on one pipeline as findings: breaking is an error, warning a warning. */
export function impactFindings(
  impacts: DriftImpact[],
  pipelineSlug: string,
  contractStep?: string,
): Finding[] {
  return impacts
    .filter((i) => i.pipeline_slug === pipelineSlug && i.severity !== 'safe' && i.kind !== 'pipeline')
    .map((i) => ({
      severity: i.severity === 'breaking' ? ('error' as const) : ('warning' as const),
      code:
        contractStep && i.kind === 'sink' && i.step_slug === contractStep && i.severity === 'breaking'
          ? 'CONTRACT_BROKEN'
          : `DRIFT_${i.kind.toUpperCase()}`,
      message: i.message,
      path: null,
    }));
}

export function checkPipeline(
  snapshot: ProofSnapshot,
  target: ProofTarget,
  reads: PipelineRead[],
  impacts: Finding[] = [],
): TargetResult {
  if (reads.length === 0)
    return {
      kind: target.kind,
      ref: target.ref,
      result: 'warn',
      files: [],
      findings: [
        {
          severity: 'warning',
          code: 'NOTHING_READ',
          message: `no deployment of ${target.ref} reads a file of this data source`,
          path: null,
        },
      ],
    };
  const files = new Set<string>();
  const findings: Finding[] = [];
  for (const r of reads) {
    const got = fileFindings(snapshot, r.path, `step ${r.step} in ${r.environment}`);
    for (const f of got.files) files.add(f.path);
    findings.push(...got.findings);
  }
  findings.push(...impacts);
  return { kind: target.kind, ref: target.ref, result: resultOf(findings), files: [...files], findings };
}
