import { captureName } from './capture-name';
import type { DeployedRow } from './captures.repo';

// The captures deployed pipelines own: one per cdc source step bound to a data source in an
// environment (docs/cdc.md "Slot safety").

export type OwnedCapture = {
  name: string;
  organizationId: string;
  deployedAt: Date;
  pipelineId: string;
  pipelineSlug: string;
  projectSlug: string;
  environmentId: string;
  environmentSlug: string;
  stepSlug: string;
  dataSource: { id: string; slug: string; type: string };
  /** When the step's position was last committed by a run, or null before the first. */
  lastCheckpointAt: Date | null;
  /** The step's committed checkpoint text, or null before the first. */
  cursor: string | null;
};

type SpecStep = {
  slug: string;
  kind: string;
  data_source_ref?: string;
  operation?: { operation_type?: string };
};

/** The cdc source steps of a spec and the ref each reads through. */
export function cdcSteps(spec: unknown): { slug: string; ref: string }[] {
  const steps = ((spec as { steps?: SpecStep[] } | null)?.steps ?? []) as SpecStep[];
  return steps
    .filter((s) => s.kind === 'source' && s.operation?.operation_type === 'cdc' && s.data_source_ref)
    .map((s) => ({ slug: s.slug, ref: s.data_source_ref as string }));
}

export function ownedCaptures(rows: DeployedRow[]): OwnedCapture[] {
  return rows.flatMap((row) =>
    cdcSteps(row.spec).flatMap((step) => {
      const ds = row.bindings.find((b) => b.ref === step.ref);
      if (!ds) return [];
      const at = row.checkpoints[step.slug];
      return [
        {
          name: captureName(row.pipelineId, row.environmentId, step.slug),
          organizationId: row.organizationId,
          deployedAt: new Date(row.deployedAt),
          pipelineId: row.pipelineId,
          pipelineSlug: row.pipelineSlug,
          projectSlug: row.projectSlug,
          environmentId: row.environmentId,
          environmentSlug: row.environmentSlug,
          stepSlug: step.slug,
          dataSource: { id: ds.id, slug: ds.slug, type: ds.type },
          lastCheckpointAt: at ? new Date(at) : null,
          cursor: row.cursors?.[step.slug] ?? null,
        },
      ];
    }),
  );
}
