import { createHash } from 'node:crypto';
import { canonicalJson } from '@sluice/engine';
import { analyzePipeline, type Impact, openSides, type PipelineTarget } from './impact';
import {
  type Change,
  DEFAULT_SEVERITY,
  diffSchemas,
  maxSeverity,
  publicChange,
  type Severity,
} from './schema-diff';
import { nameKey, normalizeSchema } from './schema-normalize';

// One computation for the persisted report and the preview
// (docs/drift-and-contracts.md#how-a-report-is-made): the normalized diff, consumer knowledge from
// every bound pipeline applied to the reason codes, the impacts, and the severity (the highest
// change or impact).

export type ReportBody = {
  severity: Severity;
  summary: string;
  changes: Omit<Change, 'entity' | 'field'>[];
  impacts: Impact[];
};

export async function computeReport(
  beforeDoc: unknown,
  afterDoc: unknown,
  targets: PipelineTarget[],
): Promise<ReportBody> {
  const before = normalizeSchema(beforeDoc);
  const after = normalizeSchema(afterDoc);
  const changes = diffSchemas(before, after);
  if (changes.length === 0) return { severity: 'safe', summary: 'no changes', changes: [], impacts: [] };

  const impacts: Impact[] = [];
  const referenced = new Set<string>();
  const reachingSinks = new Set<string>();
  const retypedAtSinks = new Set<string>();
  let allBind = true;
  let readers = 0;
  const sides = await openSides(before, after);
  try {
    for (const t of targets) {
      const f = await analyzePipeline(sides, t, changes);
      impacts.push(...f.impacts);
      for (const k of f.referenced) referenced.add(k);
      for (const k of f.reachingSinks) reachingSinks.add(k);
      for (const k of f.retypedAtSinks) retypedAtSinks.add(k);
      allBind &&= f.allBind;
      readers++;
    }
  } finally {
    sides.close();
  }
  const upgraded = changes.map((c) =>
    applyConsumers(c, { referenced, reachingSinks, retypedAtSinks, allBind, readers }),
  );
  const severity = maxSeverity(...upgraded.map((c) => c.severity), ...impacts.map((i) => i.severity));
  return {
    severity,
    summary: summarize(upgraded, impacts, targets.length),
    changes: upgraded.map(publicChange),
    impacts,
  };
}

type Consumers = {
  referenced: Set<string>;
  reachingSinks: Set<string>;
  retypedAtSinks: Set<string>;
  allBind: boolean;
  readers: number;
};

function applyConsumers(c: Change, k: Consumers): Change {
  const field = c.field ? nameKey(c.field) : null;
  const set = (reason_code: string): Change => ({
    ...c,
    reason_code,
    severity: DEFAULT_SEVERITY[reason_code],
  });
  if (c.reason_code === 'column_removed_unreferenced' && field && k.referenced.has(field))
    return set('column_removed_referenced');
  if (c.reason_code === 'column_added' && field && k.reachingSinks.has(field)) return set('star_widened');
  if (
    c.reason_code === 'type_incompatible' &&
    field &&
    k.readers > 0 &&
    k.allBind &&
    !k.retypedAtSinks.has(field)
  )
    return set('type_incompatible_binds');
  if (c.reason_code === 'primary_key_changed' && c.kind === 'key_changed') {
    const keys = [...(c.before ?? '').split(','), ...(c.after ?? '').split(',')].filter(Boolean);
    if (keys.some((x) => k.referenced.has(x))) return { ...c, severity: 'breaking' };
  }
  return c;
}

function summarize(changes: Change[], impacts: Impact[], pipelines: number): string {
  const count = (s: Severity) => changes.filter((c) => c.severity === s).length;
  const parts = (['breaking', 'warning', 'safe'] as Severity[]).filter(count).map((s) => `${count(s)} ${s}`);
  const steps = impacts.filter((i) => i.kind === 'step' && i.severity === 'breaking').map((i) => i.step_slug);
  return (
    `${changes.length} change${changes.length === 1 ? '' : 's'} (${parts.join(', ')}); ` +
    `${pipelines} bound pipeline${pipelines === 1 ? '' : 's'} checked` +
    (steps.length > 0 ? `; breaks step ${[...new Set(steps)].join(', ')}` : '')
  );
}

/** Identical changes are never reported twice: the fingerprint of the normalized changes. */
export const fingerprint = (changes: ReportBody['changes']) =>
  createHash('sha256').update(canonicalJson(changes)).digest('hex');
