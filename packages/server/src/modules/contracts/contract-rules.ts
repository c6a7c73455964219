import { createHash } from 'node:crypto';
import { canonicalJson } from '@sluice/engine';
import type { ContractColumnRecord, QualityRule } from '../../db/schema/index';
import { type Change, classifyPromiseChange, nameKey, normalizeType } from '../drift/index';

// Revisions of a data contract (docs/drift-and-contracts.md#contracts): immutable, addressed by a
// digest, diffed against the revision they are based on with datacontract-cli's rules (ERROR →
// breaking, WARNING → warning, INFO → safe): a removed column, a changed type, a column that became
// required or unique, and a quality rule added or tightened are breaking (existing data or readers
// may not satisfy them); an added column and a loosened rule are safe.

export type RevisionContent = {
  compatibility: 'backward' | 'none';
  columns: ContractColumnRecord[];
  quality: QualityRule[];
  freshness: { column: string; max_latency_seconds: number } | null;
};

/** sha256 of the canonical JSON of what the revision promises. */
export const revisionDigest = (r: RevisionContent) =>
  `sha256:${createHash('sha256')
    .update(canonicalJson({ columns: r.columns, quality: r.quality, freshness: r.freshness }))
    .digest('hex')}`;

const REASONS: Record<string, Change['severity']> = {
  contract_column_removed: 'breaking',
  contract_column_added: 'safe',
  contract_type_changed: 'breaking',
  contract_type_widened: 'safe',
  contract_became_required: 'breaking',
  contract_became_nullable: 'safe',
  contract_became_unique: 'breaking',
  contract_unique_dropped: 'safe',
  contract_primary_key_changed: 'breaking',
  contract_quality_added: 'breaking',
  contract_quality_tightened: 'breaking',
  contract_quality_loosened: 'safe',
  contract_quality_removed: 'safe',
  contract_freshness_tightened: 'breaking',
  contract_freshness_changed: 'safe',
};

const change = (
  kind: string,
  path: string,
  before: unknown,
  after: unknown,
  reason_code: string,
): Change => ({
  kind,
  path,
  before: before === null || before === undefined ? null : String(before),
  after: after === null || after === undefined ? null : String(after),
  reason_code,
  severity: REASONS[reason_code],
});

const ruleKey = (q: QualityRule) => `${q.metric}:${q.column ?? ''}:${(q.columns ?? []).join(',')}`;
const bound = (q: QualityRule) =>
  JSON.stringify({ b: q.must_be, lt: q.must_be_less_than, gt: q.must_be_greater_than, u: q.unit });

/** A rule is looser when every value the old one accepted is still accepted. */
function looser(a: QualityRule, b: QualityRule): boolean {
  if (a.unit !== b.unit) return false;
  if (b.must_be !== undefined) return a.must_be === b.must_be;
  const lt =
    b.must_be_less_than === undefined ||
    (a.must_be_less_than ?? a.must_be ?? Infinity) <= b.must_be_less_than;
  const gt =
    b.must_be_greater_than === undefined ||
    (a.must_be_greater_than ?? a.must_be ?? -Infinity) >= b.must_be_greater_than;
  return lt && gt;
}

export function diffRevisions(prev: RevisionContent, next: RevisionContent): Change[] {
  const out: Change[] = [];
  const before = new Map(prev.columns.map((c) => [nameKey(c.name), c]));
  const after = new Map(next.columns.map((c) => [nameKey(c.name), c]));
  for (const [k, c] of before) {
    const d = after.get(k);
    if (!d) {
      out.push(change('column_removed', c.name, c.type, null, 'contract_column_removed'));
      continue;
    }
    const t = classifyPromiseChange(c.type, d.type);
    if (t !== 'same')
      out.push(
        change(
          'type_changed',
          c.name,
          c.type,
          d.type,
          t === 'type_widened' ? 'contract_type_widened' : 'contract_type_changed',
        ),
      );
    if (c.nullable !== d.nullable)
      out.push(
        change(
          'nullability_changed',
          c.name,
          c.nullable ? 'nullable' : 'required',
          d.nullable ? 'nullable' : 'required',
          d.nullable ? 'contract_became_nullable' : 'contract_became_required',
        ),
      );
    if (c.unique !== d.unique)
      out.push(
        change(
          'unique_changed',
          c.name,
          c.unique,
          d.unique,
          d.unique ? 'contract_became_unique' : 'contract_unique_dropped',
        ),
      );
  }
  for (const [k, d] of after)
    if (!before.has(k)) out.push(change('column_added', d.name, null, d.type, 'contract_column_added'));
  const keyOf = (r: RevisionContent) =>
    r.columns
      .filter((c) => c.primary_key)
      .map((c) => nameKey(c.name))
      .sort()
      .join(',');
  if (keyOf(prev) !== keyOf(next))
    out.push(
      change(
        'key_changed',
        '(primary key)',
        keyOf(prev) || null,
        keyOf(next) || null,
        'contract_primary_key_changed',
      ),
    );

  const rulesBefore = new Map(prev.quality.map((q) => [ruleKey(q), q]));
  const rulesAfter = new Map(next.quality.map((q) => [ruleKey(q), q]));
  for (const [k, q] of rulesAfter) {
    const p = rulesBefore.get(k);
    if (!p) out.push(change('quality_changed', `quality.${k}`, null, bound(q), 'contract_quality_added'));
    else if (bound(p) !== bound(q))
      out.push(
        change(
          'quality_changed',
          `quality.${k}`,
          bound(p),
          bound(q),
          looser(p, q) ? 'contract_quality_loosened' : 'contract_quality_tightened',
        ),
      );
  }
  for (const [k, p] of rulesBefore)
    if (!rulesAfter.has(k))
      out.push(change('quality_changed', `quality.${k}`, bound(p), null, 'contract_quality_removed'));

  const fa = prev.freshness;
  const fb = next.freshness;
  if (JSON.stringify(fa) !== JSON.stringify(fb)) {
    const tighter = !!fb && (!fa || fb.max_latency_seconds < fa.max_latency_seconds);
    out.push(
      change(
        'freshness_changed',
        'freshness',
        fa ? `${fa.column}<=${fa.max_latency_seconds}s` : null,
        fb ? `${fb.column}<=${fb.max_latency_seconds}s` : null,
        tighter ? 'contract_freshness_tightened' : 'contract_freshness_changed',
      ),
    );
  }
  return out;
}

/** The ODCS version Sluice exports: the latest the standard publishes (docs/drift-and-contracts.md). */
export const ODCS_API_VERSION = 'v3.1.0';

/** ODCS library metrics by Sluice metric. */
const ODCS_METRICS: Record<QualityRule['metric'], string> = {
  row_count: 'rowCount',
  null_values: 'nullValues',
  duplicate_values: 'duplicateValues',
};

/**
 * One Sluice rule as ODCS v3.1.0 library rules. ODCS allows exactly one operator per rule, so a
 * Sluice rule with several bounds (all of which must hold) becomes one ODCS rule per bound.
 */
function odcsQuality(q: QualityRule): Record<string, unknown>[] {
  const base = {
    type: 'library',
    metric: ODCS_METRICS[q.metric],
    ...(q.columns ? { arguments: { properties: q.columns } } : {}),
    ...(q.unit ? { unit: q.unit } : {}),
  };
  const operators: Record<string, number>[] = [];
  if (q.must_be !== undefined) operators.push({ mustBe: q.must_be });
  if (q.must_be_less_than !== undefined) operators.push({ mustBeLessThan: q.must_be_less_than });
  if (q.must_be_greater_than !== undefined) operators.push({ mustBeGreaterThan: q.must_be_greater_than });
  return operators.map((op) => ({ ...base, ...op }));
}

/** The Open Data Contract Standard v3.1.0 form of a revision. */
export function toOdcs(
  contract: {
    slug: string;
    name: string;
    description: string | null;
    stepSlug: string;
    pipelineSlug: string;
  },
  revision: RevisionContent & { slug: string; digest: string },
) {
  return {
    apiVersion: ODCS_API_VERSION,
    kind: 'DataContract',
    id: contract.slug,
    name: contract.name,
    version: revision.slug,
    status: 'active',
    ...(contract.description ? { description: { purpose: contract.description } } : {}),
    schema: [
      {
        name: contract.stepSlug,
        physicalName: `${contract.pipelineSlug}.${contract.stepSlug}`,
        logicalType: 'object',
        properties: revision.columns.map((c) => ({
          name: c.name,
          physicalType: c.type,
          logicalType: logicalType(c.type),
          required: !c.nullable,
          unique: c.unique,
          primaryKey: c.primary_key,
          quality: revision.quality
            .filter((q) => q.column && nameKey(q.column) === nameKey(c.name))
            .flatMap(odcsQuality),
        })),
        quality: revision.quality.filter((q) => !q.column).flatMap(odcsQuality),
      },
    ],
    ...(revision.freshness
      ? {
          slaProperties: [
            {
              property: 'latency',
              value: revision.freshness.max_latency_seconds,
              unit: 's',
              element: `${contract.stepSlug}.${revision.freshness.column}`,
            },
          ],
        }
      : {}),
    customProperties: [{ property: 'sluiceDigest', value: revision.digest }],
  };
}

function logicalType(type: string): string {
  const t = normalizeType(type);
  if (/^(tinyint|smallint|integer|bigint|hugeint)/.test(t)) return 'integer';
  if (/^(real|double|decimal)/.test(t)) return 'number';
  if (t === 'boolean') return 'boolean';
  if (t.startsWith('timestamp')) return 'timestamp';
  if (t.startsWith('time')) return 'time';
  if (t === 'date') return 'date';
  if (t.endsWith('[]')) return 'array';
  if (t === 'json') return 'object';
  return 'string';
}
