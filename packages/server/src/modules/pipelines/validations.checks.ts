import { connectorFor, optionalCapability } from '@sluice/connectors';
import {
  type DerivedRef,
  deriveRefs,
  type Finding,
  type PipelineSpec,
  planSpec,
  templateRefs,
} from '@sluice/engine';
import type { z } from 'zod';
import type { DbOrTx } from '../../db/client';
import { secretKeys } from '../secrets/index';
import { resolveVariables } from '../variables/index';
import { type BindingView, bindingsOfPipeline } from './bindings.repo';
import { type CdcDeps, cdcFindings } from './cdc-check';
import { typesForOperations } from './refs.service';
import { checkSql, withoutTemplates } from './sql-check';

// The checks of docs/pipeline-spec.md#validation. The engine checks the spec alone (graph, steps,
// templates, refs); these add what depends on the environment: bindings, data sources, connectors,
// secrets, variables, and the SQL parser.

const error = (code: string, message: string, path: string): Finding => ({
  code,
  message,
  path,
  severity: 'error',
});

/** A zod path as findings write it: `steps[0].operation.method`. */
export function findingPath(segments: readonly PropertyKey[]): string {
  const out = segments
    .map((s) => (typeof s === 'number' ? `[${s}]` : `.${String(s)}`))
    .join('')
    .replace(/^\./, '');
  return out || '(root)';
}

export function schemaFindings(err: z.ZodError): Finding[] {
  return err.issues.map((i) => error('SCHEMA_INVALID', i.message, findingPath(i.path)));
}

export type CheckPlace = { organizationId: string; pipelineId: string; environmentId: string };

/**
 * A check another module adds (the contracts module's "contracts still hold"), handed to the
 * validation routes by the module list: this module does not import the modules built on it.
 */
export type SpecCheck = (db: DbOrTx, place: CheckPlace, spec: PipelineSpec) => Promise<Finding[]>;

export async function checkSpec(
  db: DbOrTx,
  place: CheckPlace,
  spec: PipelineSpec,
  moreChecks: readonly SpecCheck[],
  /** What connecting to a bound data source needs (change capture checks); null: not checked. */
  deps: CdcDeps | null = null,
): Promise<Finding[]> {
  const derived = deriveRefs(spec);
  const bindings = await bindingsOfPipeline(db, place.pipelineId, place.environmentId);
  const bound = new Map(bindings.map((b) => [b.refSlug, b]));
  const more: Finding[] = [];
  for (const check of moreChecks) more.push(...(await check(db, place, spec)));
  return [
    ...planSpec(spec).findings,
    ...derived.findings,
    ...bindingFindings(spec, derived.refs, bound),
    ...(await cdcFindings(db, deps, place.organizationId, spec, bound)),
    ...(await runtimeFindings(db, place, spec)),
    ...(await sqlFindings(spec)),
    ...more,
  ];
}

function bindingFindings(spec: PipelineSpec, refs: DerivedRef[], bound: Map<string, BindingView>): Finding[] {
  const out: Finding[] = [];
  const usable = new Set<string>();
  for (const ref of refs) {
    const i = spec.steps.findIndex((s) => s.kind !== 'transform' && s.data_source_ref === ref.slug);
    const at = `steps[${i}].data_source_ref`;
    const b = bound.get(ref.slug);
    if (!b) {
      out.push(error('REF_UNBOUND', `data source ref ${ref.slug} is not bound in this environment`, at));
      continue;
    }
    if (!b.dataSourceActive)
      out.push(
        error('DATA_SOURCE_INACTIVE', `data source ${b.dataSourceSlug} (ref ${ref.slug}) is inactive`, at),
      );
    const types = typesForOperations(ref.operation_types);
    if (!types.includes(b.dataSourceType)) {
      // Without a common type, deriveRefs already reported REF_TYPE_CONFLICT.
      if (types.length > 0)
        out.push(
          error(
            'DATA_SOURCE_TYPE_MISMATCH',
            `ref ${ref.slug} needs a data source of type ${types.join(' or ')}; ${b.dataSourceSlug} is ${b.dataSourceType}`,
            at,
          ),
        );
      continue;
    }
    usable.add(ref.slug);
  }
  spec.steps.forEach((s, i) => {
    if (s.kind === 'transform' || !s.data_source_ref || !usable.has(s.data_source_ref)) return;
    const b = bound.get(s.data_source_ref) as BindingView;
    if (s.kind === 'sink' && b.dataSourceReadOnly)
      out.push(
        error(
          'SINK_READ_ONLY',
          `sink ${s.slug} writes through ${b.dataSourceSlug}, which is read-only`,
          `steps[${i}].data_source_ref`,
        ),
      );
    // A missing capability is a finding here; the run would refuse it the same way.
    const capability = optionalCapability(connectorFor(b.dataSourceType), s.kind);
    if (!capability) {
      out.push(
        error(
          'CONNECTOR_CAPABILITY_MISSING',
          `the ${b.dataSourceType} connector cannot be a pipeline ${s.kind} (${s.slug})`,
          `steps[${i}]`,
        ),
      );
      return;
    }
    out.push(...operationFindings(capability.operation, s.operation, i));
  });
  return out;
}

/** The step's operation against its connector's field schema (OPERATION_INVALID findings). */
function operationFindings(schema: z.ZodType | null, operation: unknown, i: number): Finding[] {
  if (!schema) return [];
  const r = schema.safeParse(operation);
  if (r.success) return [];
  return r.error.issues.map((issue) =>
    error('OPERATION_INVALID', issue.message, findingPath([`steps[${i}]`, 'operation', ...issue.path])),
  );
}

const RUNTIME_KEY = /^runtime\.(secrets|env)\.([A-Za-z_][A-Za-z0-9_]*)$/;

async function runtimeFindings(db: DbOrTx, place: CheckPlace, spec: PipelineSpec): Promise<Finding[]> {
  const uses = spec.steps.flatMap((s, i) =>
    templateRefs(s.operation).flatMap((ref) => {
      const m = RUNTIME_KEY.exec(ref.name);
      return m ? [{ kind: m[1], key: m[2], path: ref.path(`steps[${i}].operation`) }] : [];
    }),
  );
  if (uses.length === 0) return [];
  const secrets = new Set(await secretKeys(db, place.organizationId, place.environmentId));
  const variables = new Set(
    Object.keys(await resolveVariables(db, place.organizationId, place.environmentId)),
  );
  return uses.flatMap((u) => {
    if (u.kind === 'secrets' && !secrets.has(u.key))
      return [error('SECRET_MISSING', `secret ${u.key} does not exist in this environment`, u.path)];
    if (u.kind === 'env' && !variables.has(u.key))
      return [
        error('VARIABLE_MISSING', `runtime variable ${u.key} does not exist in this environment`, u.path),
      ];
    return [];
  });
}

async function sqlFindings(spec: PipelineSpec): Promise<Finding[]> {
  const transforms = spec.steps
    .map((s, i) => ({ s, i }))
    .filter(({ s }) => s.kind === 'transform' && s.operation.operation_type === 'sql' && s.operation.sql);
  if (transforms.length === 0) return [];
  const out: Finding[] = [];
  for (const { s, i } of transforms) {
    const sql = s.operation.operation_type === 'sql' ? (s.operation.sql ?? '') : '';
    const result = await checkSql(withoutTemplates(sql));
    if (result.ok === null && result.unavailable)
      return [
        {
          code: 'SQL_NOT_CHECKED',
          message: 'the SQL parser is not available on this server; transform SQL was not checked',
          path: 'steps',
          severity: 'warning',
        },
      ];
    if (result.ok === null)
      out.push({
        code: 'SQL_NOT_CHECKED',
        message: `the SQL parser stopped while it checked this SQL; it was not checked`,
        path: `steps[${i}].operation.sql`,
        severity: 'warning',
      });
    else if (!result.ok) out.push(error('SQL_INVALID', result.message, `steps[${i}].operation.sql`));
  }
  return out;
}
