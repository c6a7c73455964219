import type { ProofSnapshot } from '@sluice/connectors';
import { and, eq } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { contracts, pipelines, projects } from '../../db/schema/index';
import { latestRevisionOf } from '../contracts/index';
import type { DataSourceRow } from '../data-sources/index';
import { computeReport, type ReportBody, targetsOfDataSource } from '../drift/index';

// What a commit's files would do to the pipelines that read them: the data source's imported
// file schema with the observed files' columns put in, diffed and dry-bound by the drift module
// (the same analysis a schema import runs), so proof names the step, edge, sink and contract.

type FileSchema = { schema_type: 'file'; files: { name: string; fields: unknown[] }[] };

const isFileSchema = (s: unknown): s is FileSchema =>
  !!s &&
  typeof s === 'object' &&
  (s as FileSchema).schema_type === 'file' &&
  Array.isArray((s as FileSchema).files);

/** The drift report the commit implies against the imported schema; null without one. */
export async function driftAtCommit(
  db: DbOrTx,
  ds: DataSourceRow,
  snapshot: ProofSnapshot,
  asked: string[],
): Promise<ReportBody | null> {
  const stored = ds.schema;
  if (!isFileSchema(stored)) return null;
  const seen = new Map(snapshot.files.filter((f) => f.fields !== null).map((f) => [f.path, f.fields]));
  const gone = (name: string) =>
    snapshot.missing.some((m) => name === m || name.startsWith(`${m.replace(/\/$/, '')}/`));
  const files = stored.files
    .filter((f) => !gone(f.name))
    .map((f) => (seen.has(f.name) ? { ...f, fields: seen.get(f.name)! } : f));
  for (const [name, fields] of seen)
    if (!files.some((f) => f.name === name)) files.push({ name, fields: fields! });
  const candidate = { ...stored, files };
  // Only what the observation read can have changed; the rest of the schema stands as imported.
  if (asked.length === 0) return null;
  const targets = (await targetsOfDataSource(db, ds.id)).flatMap((p) => p.targets);
  return computeReport(stored, candidate, targets);
}

export type ContractTarget = {
  slug: string;
  pipelineId: string;
  pipelineSlug: string;
  stepSlug: string;
  revision: { slug: string; digest: string } | null;
};

/** A contract target names `contract` (unique in the organization) or `project/contract`. */
export async function findContractTarget(
  db: DbOrTx,
  organizationId: string,
  ref: string,
): Promise<ContractTarget[]> {
  const [projectSlug, contractSlug] = ref.includes('/') ? ref.split('/', 2) : [null, ref];
  const rows = await db
    .select({
      id: contracts.id,
      slug: contracts.slug,
      pipelineId: contracts.pipelineId,
      stepSlug: contracts.stepSlug,
      pipelineSlug: pipelines.slug,
    })
    .from(contracts)
    .innerJoin(projects, eq(projects.id, contracts.projectId))
    .innerJoin(pipelines, eq(pipelines.id, contracts.pipelineId))
    .where(
      and(
        eq(projects.organizationId, organizationId),
        eq(contracts.slug, contractSlug),
        projectSlug ? eq(projects.slug, projectSlug) : undefined,
      ),
    );
  const out: ContractTarget[] = [];
  for (const r of rows) {
    const latest = await latestRevisionOf(db, r.id);
    out.push({
      slug: r.slug,
      pipelineId: r.pipelineId,
      pipelineSlug: r.pipelineSlug,
      stepSlug: r.stepSlug,
      revision: latest ? { slug: latest.slug, digest: latest.digest } : null,
    });
  }
  return out;
}
