import { type PipelineSpec, planSpec } from '@sluice/engine';
import { type Binder, type Col, openBinder } from './dry-bind';
import { schemaBinder, sourceView } from './impact-sources';
import { type NormalSchema, normalizeSchema } from './schema-normalize';

// The computed input of every sink of a spec, from the stored schemas of the data sources its
// refs are bound to: sources mapped or dry-bound, transforms dry-bound in DAG order. Null where
// it cannot be known (an unbound ref, a source kind without a schema, a step that does not bind).

export async function sinkInputs(
  spec: PipelineSpec,
  schemas: Map<string, unknown>,
): Promise<Map<string, Col[] | null>> {
  const out = new Map<string, Col[] | null>();
  const plan = planSpec(spec).plan;
  if (!plan) return out;
  const steps = new Map(spec.steps.map((s) => [s.slug, s]));
  const outputs = new Map<string, Col[] | null>();
  const normal = new Map<string, { schema: NormalSchema; binder: Binder | null }>();
  const transforms = await openBinder();
  try {
    for (const slug of plan.order) {
      const step = steps.get(slug)!;
      const ups = (plan.upstream[slug] ?? []).map((u) => outputs.get(u) ?? null);
      if (step.kind === 'source') {
        const ref = step.data_source_ref ?? '';
        if (!schemas.has(ref)) {
          outputs.set(slug, null);
          continue;
        }
        let n = normal.get(ref);
        if (!n) {
          const schema = normalizeSchema(schemas.get(ref));
          n = { schema, binder: schema.schema_type === 'relational' ? await schemaBinder(schema) : null };
          normal.set(ref, n);
        }
        outputs.set(slug, (await sourceView(n.schema, n.binder, step)).output);
      } else if (step.kind === 'transform') {
        const upstream = plan.upstream[slug] ?? [];
        if (ups.some((u) => u === null)) {
          outputs.set(slug, null);
          continue;
        }
        for (const [i, u] of upstream.entries()) await transforms.table(u, ups[i]!);
        const bound = await transforms.describe((step.operation as { sql?: string }).sql ?? '');
        outputs.set(slug, bound.ok ? bound.columns : null);
      } else {
        out.set(slug, ups.length === 1 ? ups[0] : ups.some((u) => u === null) ? null : (ups.flat() as Col[]));
      }
    }
  } finally {
    transforms.close();
    for (const n of normal.values()) n.binder?.close();
  }
  return out;
}
