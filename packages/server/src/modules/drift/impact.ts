import { type PipelineSpec, planSpec } from '@sluice/engine';
import { type Binder, type Col, openBinder, sqlRefs } from './dry-bind';
import { type SourceView, schemaBinder, sourceView } from './impact-sources';
import { type Change, maxSeverity, type Severity } from './schema-diff';
import { type NormalSchema, nameKey, typeSatisfies } from './schema-normalize';

// The impact walk of docs/drift-and-contracts.md#impacts: each pipeline bound to the changed data
// source is walked in DAG order over empty DuckDB tables, once with the old schema and once with
// the candidate. A transform that bound before and no longer binds is a breaking `step` impact with
// the binder's message; outputs that differ give `edge` impacts; a sink whose input differs gives
// `sink` and `unknown_consumer` impacts; runs in flight give `run` impacts; `pipeline` rolls up.

export type Impact = {
  kind: 'pipeline' | 'step' | 'edge' | 'sink' | 'run' | 'unknown_consumer';
  severity: Severity;
  message: string;
  pipeline_slug?: string;
  step_slug?: string;
  edge_slug?: string;
};

export type ContractColumn = { name: string; type: string; nullable: boolean };

export type PipelineTarget = {
  pipelineSlug: string;
  specHash: string;
  spec: PipelineSpec;
  /** Environments where the pipeline reads the data source through one of `refs`. */
  environments: string[];
  refs: Set<string>;
  /** Latest contract revision columns per sink step slug. */
  contracts: Map<string, { slug: string; columns: ContractColumn[] }>;
  runs: { slug: string; state: string; environment: string }[];
};

type ColDiff = { removed: Col[]; added: Col[]; retyped: { name: string; before: string; after: string }[] };

export function diffCols(a: Col[], b: Col[]): ColDiff {
  const am = new Map(a.map((c) => [nameKey(c.name), c]));
  const bm = new Map(b.map((c) => [nameKey(c.name), c]));
  return {
    removed: a.filter((c) => !bm.has(nameKey(c.name))),
    added: b.filter((c) => !am.has(nameKey(c.name))),
    retyped: a.flatMap((c) => {
      const d = bm.get(nameKey(c.name));
      return d && d.type !== c.type ? [{ name: c.name, before: c.type, after: d.type }] : [];
    }),
  };
}

const empty = (d: ColDiff) => d.removed.length + d.added.length + d.retyped.length === 0;
const WIDER: Record<string, string[]> = {
  TINYINT: ['SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'DOUBLE'],
  SMALLINT: ['INTEGER', 'BIGINT', 'HUGEINT', 'DOUBLE'],
  INTEGER: ['BIGINT', 'HUGEINT', 'DOUBLE'],
  BIGINT: ['HUGEINT'],
  FLOAT: ['DOUBLE'],
};
const widened = (r: { before: string; after: string }) => WIDER[r.before]?.includes(r.after) ?? false;
/** An added column matters only where it leaves Sluice (a sink); inside, a step selects what it reads. */
const diffSeverity = (d: ColDiff, atSink: boolean): Severity =>
  d.removed.length > 0 || (atSink && d.added.length > 0) || d.retyped.some((r) => !widened(r))
    ? 'warning'
    : 'safe';

export function describeDiff(d: ColDiff): string {
  return [
    ...d.removed.map((c) => `column ${c.name} removed`),
    ...d.added.map((c) => `column ${c.name} added (${c.type})`),
    ...d.retyped.map((r) => `column ${r.name} ${r.before} -> ${r.after}`),
  ].join('; ');
}

type Sides = {
  before: NormalSchema;
  after: NormalSchema;
  binders: { before: Binder | null; after: Binder | null };
};

/** Opens the source-side binders once for every pipeline of one analysis. */
export async function openSides(
  before: NormalSchema,
  after: NormalSchema,
): Promise<Sides & { close(): void }> {
  const relational = (s: NormalSchema) =>
    s.schema_type === 'relational' ? schemaBinder(s) : Promise.resolve(null);
  const b = await relational(before);
  const a = await relational(after);
  return {
    before,
    after,
    binders: { before: b, after: a },
    close: () => {
      b?.close();
      a?.close();
    },
  };
}

export type PipelineFindings = {
  impacts: Impact[];
  /** Field names (keys) a step reads, per entity key, for column_removed_referenced. */
  referenced: Set<string>;
  /** Field names newly reaching a sink (star_widened). */
  reachingSinks: Set<string>;
  /** Field names whose type change reaches a sink, and whether every step still binds. */
  retypedAtSinks: Set<string>;
  allBind: boolean;
};

export async function analyzePipeline(
  sides: Sides,
  t: PipelineTarget,
  changes: Change[],
): Promise<PipelineFindings> {
  const out: PipelineFindings = {
    impacts: [],
    referenced: new Set(),
    reachingSinks: new Set(),
    retypedAtSinks: new Set(),
    allBind: true,
  };
  const plan = planSpec(t.spec).plan;
  if (!plan) return out;
  const steps = new Map(t.spec.steps.map((s) => [s.slug, s]));
  const removedNames = new Set(
    changes.filter((c) => c.kind === 'column_removed' && c.field).map((c) => nameKey(c.field!)),
  );
  const where = { pipeline_slug: t.pipelineSlug };
  const outputs = new Map<string, { before: Col[] | null; after: Col[] | null }>();
  // Fields of the changed entities that flow out of each step (a transform reads them by name).
  const carried = new Map<string, Set<string>>();
  const binders = { before: await openBinder(), after: await openBinder() };
  try {
    for (const slug of plan.order) {
      const step = steps.get(slug)!;
      const upstream = plan.upstream[slug] ?? [];
      const ups = upstream.map((u) => ({ slug: u, ...outputs.get(u)! }));
      if (step.kind === 'source') {
        if (!step.data_source_ref || !t.refs.has(step.data_source_ref)) {
          outputs.set(slug, { before: null, after: null });
          continue;
        }
        const b: SourceView = await sourceView(sides.before, sides.binders.before, step);
        const a: SourceView = await sourceView(sides.after, sides.binders.after, step);
        outputs.set(slug, { before: b.output, after: a.output });
        const names = new Set<string>();
        for (const e of sides.before.entities)
          if (b.entities.has(nameKey(e.name))) for (const f of e.fields) names.add(nameKey(f.name));
        carried.set(slug, names);
        for (const c of b.refs?.columns ?? []) if (names.has(nameKey(c))) out.referenced.add(nameKey(c));
        const cursor = (step.operation as { cursor_column?: string }).cursor_column;
        if (cursor) out.referenced.add(nameKey(cursor));
        if (!b.error && a.error) {
          out.allBind = false;
          const cols = (b.refs?.columns ?? []).filter((c) => removedNames.has(nameKey(c)));
          out.impacts.push({
            ...where,
            kind: 'step',
            step_slug: slug,
            severity: 'breaking',
            message: `step ${slug}${cols.length ? ` reads column ${[...new Set(cols)].join(', ')}, which was removed` : ' no longer reads its source'}: ${a.error}`,
          });
        }
        continue;
      }
      // Transforms and sinks see each upstream as a table named by its slug.
      const incoming = new Set<string>();
      for (const u of ups) for (const n of carried.get(u.slug) ?? []) incoming.add(n);
      if (step.kind === 'transform') {
        const sql = (step.operation as { sql?: string }).sql ?? '';
        const refs = await sqlRefs(sql);
        for (const c of refs?.columns ?? []) if (incoming.has(nameKey(c))) out.referenced.add(nameKey(c));
        const bind = async (side: 'before' | 'after') => {
          for (const u of ups) if (u[side]) await binders[side].table(u.slug, u[side]!);
          return binders[side].describe(sql);
        };
        const b = await bind('before');
        const a = await bind('after');
        outputs.set(slug, { before: b.ok ? b.columns : null, after: a.ok ? a.columns : null });
        carried.set(slug, incoming);
        if (b.ok && !a.ok) {
          out.allBind = false;
          const cols = [...new Set((refs?.columns ?? []).filter((c) => removedNames.has(nameKey(c))))];
          out.impacts.push({
            ...where,
            kind: 'step',
            step_slug: slug,
            severity: 'breaking',
            message: `step ${slug}${cols.length ? ` reads column ${cols.join(', ')}, which was removed upstream` : ' no longer binds'}: ${a.message}`,
          });
        } else if (!b.ok) {
          // Not analyzable by binding (an upstream we cannot see): fall back to the parser's references.
          const cols = [
            ...new Set(
              (refs?.columns ?? []).filter((c) => removedNames.has(nameKey(c)) && incoming.has(nameKey(c))),
            ),
          ];
          if (cols.length > 0)
            out.impacts.push({
              ...where,
              kind: 'step',
              step_slug: slug,
              severity: 'breaking',
              message: `step ${slug} reads column ${cols.join(', ')}, which was removed (found by parsing; the step could not be dry-bound)`,
            });
        }
      }
      for (const u of ups) {
        if (!u.before || !u.after) continue;
        const d = diffCols(u.before, u.after);
        if (empty(d)) continue;
        out.impacts.push({
          ...where,
          kind: 'edge',
          edge_slug: `${u.slug}->${slug}`,
          severity: diffSeverity(d, false),
          message: `edge ${u.slug} -> ${slug}: ${describeDiff(d)}`,
        });
        if (step.kind === 'sink') sinkImpacts(out, t, slug, d, u.after);
      }
      if (step.kind === 'sink')
        for (const u of ups)
          if (u.before && !u.after) {
            const c = t.contracts.get(slug);
            out.impacts.push({
              ...where,
              kind: 'sink',
              step_slug: slug,
              severity: 'breaking',
              message: `sink ${slug} receives nothing from ${u.slug}, which no longer binds${c ? `; contract ${c.slug} cannot hold` : ''}`,
            });
          }
      if (step.kind === 'sink') {
        const write = (step.operation as { write?: { key?: string[] } }).write;
        for (const k of write?.key ?? []) out.referenced.add(nameKey(k));
        contractImpacts(
          out,
          t,
          slug,
          ups.map((u) => u.after),
        );
      }
    }
  } finally {
    binders.before.close();
    binders.after.close();
  }
  for (const r of t.runs)
    out.impacts.push({
      ...where,
      kind: 'run',
      severity: 'warning',
      message: `run ${r.slug} (${r.state}) in ${r.environment} started on the old schema`,
    });
  const worst = maxSeverity(...out.impacts.map((i) => i.severity));
  const counted = out.impacts.filter((i) => i.severity !== 'safe').length;
  out.impacts.push({
    ...where,
    kind: 'pipeline',
    severity: worst,
    message:
      out.impacts.length === 0
        ? `pipeline ${t.pipelineSlug} (${t.specHash.slice(0, 7)} in ${t.environments.join(', ')}) is not affected`
        : `pipeline ${t.pipelineSlug} (${t.specHash.slice(0, 7)} in ${t.environments.join(', ')}): ${out.impacts.length} impacts, ${counted} not safe`,
  });
  return out;
}

function sinkImpacts(out: PipelineFindings, t: PipelineTarget, slug: string, d: ColDiff, after: Col[]) {
  const where = { pipeline_slug: t.pipelineSlug, step_slug: slug };
  for (const c of d.added) out.reachingSinks.add(nameKey(c.name));
  for (const r of d.retyped) if (!widened(r)) out.retypedAtSinks.add(nameKey(r.name));
  const severity = diffSeverity(d, true);
  out.impacts.push({
    ...where,
    kind: 'sink',
    severity,
    message: `sink ${slug} receives different columns (${describeDiff(d)}); ${after.length} columns now`,
  });
  out.impacts.push({
    ...where,
    kind: 'unknown_consumer',
    severity,
    message: `readers of what sink ${slug} writes are invisible to Sluice and may depend on: ${describeDiff(d)}`,
  });
}

/** A breaking sink impact that names a contract (the two messages above and below). */
export const isContractImpact = (i: Impact) =>
  i.kind === 'sink' &&
  i.severity === 'breaking' &&
  (/ breaks contract /.test(i.message) || / cannot hold$/.test(i.message));

/** A contracted sink whose candidate input no longer satisfies the latest revision. */
function contractImpacts(out: PipelineFindings, t: PipelineTarget, slug: string, inputs: (Col[] | null)[]) {
  const contract = t.contracts.get(slug);
  if (!contract) return;
  for (const input of inputs) {
    if (!input) continue;
    for (const problem of contractProblems(contract.columns, input))
      out.impacts.push({
        pipeline_slug: t.pipelineSlug,
        step_slug: slug,
        kind: 'sink',
        severity: 'breaking',
        message: `sink ${slug} breaks contract ${contract.slug}: ${problem}`,
      });
  }
}

/** What an output schema fails of a contract's columns: missing columns and changed types. */
export function contractProblems(columns: ContractColumn[], output: Col[]): string[] {
  const have = new Map(output.map((c) => [nameKey(c.name), c]));
  const out: string[] = [];
  for (const c of columns) {
    const got = have.get(nameKey(c.name));
    if (!got) out.push(`promised column ${c.name} is missing`);
    else if (!typeSatisfies(c.type, got.type) && got.type !== 'NULL')
      out.push(`promised column ${c.name} is ${c.type}, the output is ${got.type}`);
  }
  return out;
}
