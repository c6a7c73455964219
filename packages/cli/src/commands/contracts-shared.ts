import fs from 'node:fs';
import { parse } from 'yaml';
import { CliError, ExitCode } from '../exit';

// Contract and drift files: JSON or YAML (JSON is YAML too), a revision in Sluice's shape or an
// Open Data Contract Standard v3 document (v3.1.0, as Sluice exports it, or v3.0.x with `rule`
// in place of `metric`), which is mapped onto a revision.

export function readDocument(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(ExitCode.failed, `cannot read ${file}: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = parse(text);
  } catch (err) {
    throw new CliError(ExitCode.failed, `${file} is neither JSON nor YAML: ${(err as Error).message}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new CliError(ExitCode.failed, `${file} must hold an object`);
  return value as Record<string, unknown>;
}

const METRICS: Record<string, string> = {
  rowCount: 'row_count',
  nullValues: 'null_values',
  duplicateValues: 'duplicate_values',
};

type OdcsQuality = {
  metric?: string;
  rule?: string;
  unit?: string;
  mustBe?: number;
  mustBeLessThan?: number;
  mustBeGreaterThan?: number;
  arguments?: { properties?: string[] };
};

function rule(q: OdcsQuality, column?: string): Record<string, unknown> {
  const name = q.metric ?? q.rule;
  const metric = name ? METRICS[name] : undefined;
  if (!metric)
    throw new CliError(ExitCode.failed, `ODCS quality metric ${name ?? '(none)'} is not supported`);
  return {
    metric,
    ...(column && metric === 'null_values' ? { column } : {}),
    ...(metric === 'duplicate_values'
      ? { columns: q.arguments?.properties ?? (column ? [column] : undefined) }
      : {}),
    ...(q.unit ? { unit: q.unit } : {}),
    ...(q.mustBe !== undefined ? { must_be: q.mustBe } : {}),
    ...(q.mustBeLessThan !== undefined ? { must_be_less_than: q.mustBeLessThan } : {}),
    ...(q.mustBeGreaterThan !== undefined ? { must_be_greater_than: q.mustBeGreaterThan } : {}),
  };
}

const BOUNDS = ['must_be', 'must_be_less_than', 'must_be_greater_than'];

/**
 * ODCS allows one operator per rule, so Sluice exports a rule with several bounds as several
 * ODCS rules; they are one rule again here (same metric, columns and unit; no bound twice).
 */
function mergeBounds(rules: Record<string, unknown>[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const keyOf = (r: Record<string, unknown>) =>
    JSON.stringify([r.metric, r.column ?? null, r.columns ?? null, r.unit ?? null]);
  for (const r of rules) {
    const same = out.find((o) => keyOf(o) === keyOf(r) && BOUNDS.every((b) => !(b in o && b in r)));
    if (same) Object.assign(same, r);
    else out.push({ ...r });
  }
  return out;
}

/** A revision body from a file: Sluice's shape as it is, an ODCS v3 contract mapped. */
export function revisionBody(doc: Record<string, any>): Record<string, unknown> {
  if (doc.kind !== 'DataContract') return doc;
  const table = (doc.schema ?? [])[0];
  if (!table) throw new CliError(ExitCode.failed, 'the ODCS contract has no schema');
  const latency = (doc.slaProperties ?? []).find((s: any) => s.property === 'latency');
  return {
    columns: (table.properties ?? []).map((p: any) => ({
      name: p.name,
      type: p.physicalType ?? p.logicalType ?? 'text',
      nullable: p.required !== true,
      unique: p.unique === true,
      primary_key: p.primaryKey === true,
    })),
    quality: mergeBounds([
      ...(table.quality ?? []).map((q: OdcsQuality) => rule(q)),
      ...(table.properties ?? []).flatMap((p: any) =>
        (p.quality ?? []).map((q: OdcsQuality) => rule(q, p.name)),
      ),
    ]),
    freshness: latency
      ? {
          column: String(latency.element ?? '')
            .split('.')
            .pop(),
          max_latency_seconds: Number(latency.value),
        }
      : null,
  };
}
