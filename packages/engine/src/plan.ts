import type { OperationType, PipelineSpec, Step } from './spec';
import { templateRefs } from './templates';

// Structural validation and planning of a spec: no database, no network. The server adds the
// environment-aware checks (bindings, secrets, variables, read-only sinks) on top.

export type Finding = { code: string; message: string; path: string; severity: 'error' | 'warning' };

export type Plan = {
  /** Steps in an order where every step comes after all its upstream steps. */
  order: string[];
  upstream: Record<string, string[]>;
  downstream: Record<string, string[]>;
};

export type DerivedRef = {
  slug: string;
  data_source_type: string | null;
  required_capabilities: ('pipeline_source' | 'pipeline_sink')[];
  operation_types: OperationType[];
};

/** Operation type → the data source type it needs, or null where several families fit. */
export const dataSourceTypeOf: Record<OperationType, string | null> = {
  http: 'http',
  sql: null, // postgres, mysql, bigquery, snowflake
  mongodb: 'mongodb',
  ftp: 'ftp',
  git: null, // git, github, gitlab
  s3: 's3',
  workspace_file: 'google_workspace',
  object_rows: null, // salesforce, github, gitlab
  cdc: null, // postgres, mysql
};

/** Data source types that can serve an operation type. */
export const compatibleTypes: Record<OperationType, string[]> = {
  http: ['http'],
  sql: ['postgres', 'mysql', 'bigquery', 'snowflake'],
  mongodb: ['mongodb'],
  ftp: ['ftp'],
  git: ['git', 'github', 'gitlab'],
  s3: ['s3'],
  workspace_file: ['google_workspace'],
  object_rows: ['salesforce', 'github', 'gitlab'],
  cdc: ['postgres', 'mysql'],
};

const RUNTIME_FIXED = new Set(['runtime.run_slug', 'runtime.incremental.lower_bound.cursor', 'input']);

function stepFindings(step: Step, i: number, spec: PipelineSpec): Finding[] {
  const out: Finding[] = [];
  const at = `steps[${i}]`;
  const err = (code: string, message: string, path = at) =>
    out.push({ code, message, path, severity: 'error' });
  const op = step.operation;
  if (step.kind === 'transform') {
    if (step.data_source_ref)
      err(
        'TRANSFORM_HAS_REF',
        'a transform step runs in the engine and takes no data_source_ref',
        `${at}.data_source_ref`,
      );
    if (op.operation_type !== 'sql' || !op.sql)
      err(
        'TRANSFORM_NEEDS_SQL',
        'a transform step needs operation_type sql with a sql query',
        `${at}.operation`,
      );
  } else if (!step.data_source_ref) {
    err('REF_REQUIRED', `a ${step.kind} step needs a data_source_ref`, `${at}.data_source_ref`);
  }
  if (op.operation_type === 'sql') {
    if (step.kind === 'sink' && !op.write)
      err('SINK_NEEDS_WRITE', 'a SQL sink needs operation.write {table, mode}', `${at}.operation.write`);
    if (step.kind === 'source' && !op.sql)
      err('SOURCE_NEEDS_SQL', 'a SQL source needs operation.sql', `${at}.operation.sql`);
    if (step.kind !== 'source' && op.cursor_column !== undefined)
      err('CURSOR_ONLY_IN_SOURCE', 'cursor_column belongs to source steps', `${at}.operation.cursor_column`);
    if (step.kind !== 'sink' && op.write)
      err('WRITE_ONLY_IN_SINK', 'operation.write belongs to sink steps', `${at}.operation.write`);
    if (op.write?.mode === 'upsert' && !op.write.key)
      err('UPSERT_NEEDS_KEY', 'mode upsert needs key columns', `${at}.operation.write.key`);
    if (op.write?.mode === 'apply' && !op.write.key)
      err(
        'APPLY_NEEDS_KEY',
        'mode apply needs key columns: the columns that identify a row of the change rows',
        `${at}.operation.write.key`,
      );
  }
  // Change data capture reads a database's log: only a source can (docs/cdc.md).
  if (op.operation_type === 'cdc' && step.kind === 'sink')
    err('CDC_ONLY_IN_SOURCE', 'operation_type cdc belongs to source steps', `${at}.operation.operation_type`);
  if (
    op.operation_type === 'http' &&
    op.batch_size !== undefined &&
    !(step.kind === 'sink' && typeof op.body === 'string' && /^\{\{\s*input\s*\}\}$/.test(op.body))
  ) {
    err(
      'BATCH_NEEDS_INPUT_BODY',
      'batch_size belongs to HTTP sink steps whose body is "{{input}}"',
      `${at}.operation.batch_size`,
    );
  }
  if (step.response && !(step.kind === 'source' && op.operation_type === 'http')) {
    err('RESPONSE_ONLY_HTTP_SOURCE', 'response settings apply to HTTP source steps', `${at}.response`);
  }
  for (const ref of templateRefs(op, ['operation'])) {
    if (RUNTIME_FIXED.has(ref.name)) {
      if (ref.name === 'input' && step.kind === 'source')
        err('INPUT_IN_SOURCE', '{{input}} is the upstream payload; a source has none', ref.path(at));
      continue;
    }
    const m = /^runtime\.(secrets|env|input)\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(ref.name);
    if (!m) {
      err('UNKNOWN_TEMPLATE', `{{${ref.name}}} is not a known template`, ref.path(at));
      continue;
    }
    if (m[1] === 'input' && !(m[2] in spec.inputs)) {
      err(
        'UNDECLARED_INPUT',
        `{{${ref.name}}} uses input ${m[2]}, which spec.inputs does not declare`,
        ref.path(at),
      );
    }
  }
  return out;
}

/** Checks the graph and the steps; returns findings and, when the graph is sound, the plan. */
export function planSpec(spec: PipelineSpec): { findings: Finding[]; plan: Plan | null } {
  const findings: Finding[] = [];
  const index = new Map<string, number>();
  spec.steps.forEach((s, i) => {
    if (index.has(s.slug))
      findings.push({
        code: 'DUPLICATE_STEP',
        message: `step slug ${s.slug} is used twice`,
        path: `steps[${i}].slug`,
        severity: 'error',
      });
    else index.set(s.slug, i);
  });
  const upstream: Record<string, string[]> = {};
  const downstream: Record<string, string[]> = {};
  for (const s of spec.steps) {
    upstream[s.slug] = [];
    downstream[s.slug] = [];
  }
  spec.edges.forEach((e, i) => {
    const path = `edges[${i}]`;
    if (!index.has(e.from))
      findings.push({
        code: 'UNKNOWN_STEP',
        message: `edge from unknown step ${e.from}`,
        path: `${path}.from`,
        severity: 'error',
      });
    if (!index.has(e.to))
      findings.push({
        code: 'UNKNOWN_STEP',
        message: `edge to unknown step ${e.to}`,
        path: `${path}.to`,
        severity: 'error',
      });
    if (!index.has(e.from) || !index.has(e.to)) return;
    if (e.from === e.to)
      findings.push({ code: 'CYCLE', message: `step ${e.from} feeds itself`, path, severity: 'error' });
    if (upstream[e.to].includes(e.from))
      findings.push({
        code: 'DUPLICATE_EDGE',
        message: `edge ${e.from} → ${e.to} is listed twice`,
        path,
        severity: 'warning',
      });
    else {
      upstream[e.to].push(e.from);
      downstream[e.from].push(e.to);
    }
  });
  spec.steps.forEach((s, i) => {
    findings.push(...stepFindings(s, i, spec));
    if (s.kind === 'source' && upstream[s.slug].length > 0)
      findings.push({
        code: 'SOURCE_HAS_UPSTREAM',
        message: `source ${s.slug} cannot have upstream steps`,
        path: `steps[${i}]`,
        severity: 'error',
      });
    if (s.kind !== 'source' && upstream[s.slug].length === 0)
      findings.push({
        code: 'NO_UPSTREAM',
        message: `${s.kind} ${s.slug} has no upstream step`,
        path: `steps[${i}]`,
        severity: 'error',
      });
    if (s.kind === 'sink' && downstream[s.slug].length > 0)
      findings.push({
        code: 'SINK_HAS_DOWNSTREAM',
        message: `sink ${s.slug} cannot feed other steps`,
        path: `steps[${i}]`,
        severity: 'error',
      });
    if (s.kind !== 'sink' && downstream[s.slug].length === 0)
      findings.push({
        code: 'UNUSED_OUTPUT',
        message: `the output of ${s.slug} reaches no sink`,
        path: `steps[${i}]`,
        severity: 'warning',
      });
  });

  // Kahn's algorithm: whatever cannot be ordered sits on a cycle.
  const remaining = new Map(spec.steps.map((s) => [s.slug, upstream[s.slug]?.length ?? 0]));
  const ready = spec.steps.filter((s) => remaining.get(s.slug) === 0).map((s) => s.slug);
  const order: string[] = [];
  while (ready.length > 0) {
    const next = ready.shift()!;
    order.push(next);
    for (const d of downstream[next]) {
      const n = remaining.get(d)! - 1;
      remaining.set(d, n);
      if (n === 0) ready.push(d);
    }
  }
  if (order.length < index.size) {
    const stuck = [...index.keys()].filter((k) => !order.includes(k));
    findings.push({
      code: 'CYCLE',
      message: `the steps ${stuck.join(', ')} form a cycle`,
      path: 'edges',
      severity: 'error',
    });
  }
  const hasErrors = findings.some((f) => f.severity === 'error');
  return { findings, plan: hasErrors ? null : { order, upstream, downstream } };
}

/** The data source refs a spec uses, with the capabilities and type each needs. */
export function deriveRefs(spec: PipelineSpec): { refs: DerivedRef[]; findings: Finding[] } {
  const refs = new Map<string, DerivedRef>();
  const findings: Finding[] = [];
  spec.steps.forEach((s, i) => {
    if (!s.data_source_ref || s.kind === 'transform') return;
    const ref = refs.get(s.data_source_ref) ?? {
      slug: s.data_source_ref,
      data_source_type: dataSourceTypeOf[s.operation.operation_type],
      required_capabilities: [],
      operation_types: [],
    };
    const cap = s.kind === 'source' ? 'pipeline_source' : 'pipeline_sink';
    if (!ref.required_capabilities.includes(cap)) ref.required_capabilities.push(cap);
    if (!ref.operation_types.includes(s.operation.operation_type))
      ref.operation_types.push(s.operation.operation_type);
    const common = ref.operation_types
      .map((t) => compatibleTypes[t])
      .reduce((a, b) => a.filter((x) => b.includes(x)));
    if (common.length === 0) {
      findings.push({
        code: 'REF_TYPE_CONFLICT',
        message: `ref ${s.data_source_ref} is used by operations no single data source type supports`,
        path: `steps[${i}].data_source_ref`,
        severity: 'error',
      });
    }
    ref.data_source_type = common.length === 1 ? common[0] : null;
    refs.set(s.data_source_ref, ref);
  });
  for (const r of refs.values()) r.required_capabilities.sort();
  return { refs: [...refs.values()], findings };
}
