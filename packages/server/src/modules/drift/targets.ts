import { pipelineSpecSchema } from '@sluice/engine';
import type { DbOrTx } from '../../db/client';
import * as repo from './drift.repo';
import type { PipelineTarget } from './impact';

// The pipelines a data source change reaches: every binding of the data source in any
// environment, grouped per project, one target per (pipeline, spec) with the environments that
// run that spec. A draft spec may stand in for one pipeline in one environment (the preview).

export type ProjectTargets = { projectId: string; projectSlug: string; targets: PipelineTarget[] };

export type Draft = { pipelineId: string; environmentId: string; specHash: string; spec: unknown };

export async function targetsOfDataSource(
  db: DbOrTx,
  dataSourceId: string,
  draft?: Draft,
): Promise<ProjectTargets[]> {
  const bindings = await repo.bindingsOfDataSource(db, dataSourceId);
  const projects = new Map<string, ProjectTargets>();
  const byKey = new Map<string, PipelineTarget & { envIds: string[]; pipelineId: string }>();
  for (const b of bindings) {
    const useDraft = draft && draft.pipelineId === b.pipelineId && draft.environmentId === b.environmentId;
    const version = useDraft
      ? { specHash: draft.specHash, spec: draft.spec }
      : await repo.specInEnvironment(db, b.pipelineId, b.environmentId);
    if (!version) continue;
    const parsed = pipelineSpecSchema.safeParse(version.spec);
    if (!parsed.success) continue;
    let project = projects.get(b.projectId);
    if (!project) {
      project = { projectId: b.projectId, projectSlug: b.projectSlug, targets: [] };
      projects.set(b.projectId, project);
    }
    const key = `${b.pipelineId}:${version.specHash}`;
    let t = byKey.get(key);
    if (!t) {
      t = {
        pipelineId: b.pipelineId,
        pipelineSlug: b.pipelineSlug,
        specHash: version.specHash,
        spec: parsed.data,
        environments: [],
        envIds: [],
        refs: new Set(),
        contracts: new Map(),
        runs: [],
      };
      byKey.set(key, t);
      project.targets.push(t);
    }
    if (!t.envIds.includes(b.environmentId)) {
      t.envIds.push(b.environmentId);
      t.environments.push(b.environmentSlug);
    }
    t.refs.add(b.refSlug);
  }
  for (const t of byKey.values()) {
    for (const c of await repo.contractColumnsOf(db, t.pipelineId))
      t.contracts.set(c.stepSlug, { slug: c.slug, columns: c.columns });
    t.runs = await repo.runsInFlight(db, t.pipelineId, t.envIds);
  }
  return [...projects.values()];
}
