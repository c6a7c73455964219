import { createHash } from 'node:crypto';
import type { Payload, Ports } from '@sluice/engine';
import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client';
import { pipelineRuns, type QualityRule } from '../../db/schema/index';
import { latestContracts, ofPipeline } from './contracts.repo';

// Quality metrics of contracted sinks (docs/drift-and-contracts.md#contracts), measured as rows
// stream into the sink. The verdict is taken when the stream ends, before the connector commits: a
// broken rule throws from the stream, so the sink's transaction rolls back and nothing is written,
// and the step fails with CONTRACT_VIOLATED. Every measurement is recorded on the run.

export type MetricResult = {
  metric: QualityRule['metric'];
  column?: string;
  columns?: string[];
  unit: 'rows' | 'percent';
  value: number;
  passed: boolean;
  rule: Omit<QualityRule, 'metric' | 'column' | 'columns' | 'unit'>;
};
export type ContractCheck = {
  step_slug: string;
  contract_slug: string;
  revision_slug: string;
  passed: boolean;
  rows: number;
  metrics: MetricResult[];
};

export class ContractViolation extends Error {
  readonly code = 'CONTRACT_VIOLATED';
}

const key = (name: string) => name.toLowerCase();

function passes(rule: QualityRule, value: number) {
  if (rule.must_be !== undefined && value !== rule.must_be) return false;
  if (rule.must_be_less_than !== undefined && !(value < rule.must_be_less_than)) return false;
  if (rule.must_be_greater_than !== undefined && !(value > rule.must_be_greater_than)) return false;
  return true;
}

/** Counts what the rules need, one row at a time; duplicates are kept as 16-byte digests. */
export function qualityMeter(rules: QualityRule[]) {
  let rows = 0;
  const nulls = new Map<string, number>();
  const seen = new Map<string, Set<string>>();
  const duplicates = new Map<string, number>();
  const dupKey = (r: QualityRule) => (r.columns ?? []).map(key).join(',');
  for (const r of rules) {
    if (r.metric === 'null_values' && r.column) nulls.set(key(r.column), 0);
    if (r.metric === 'duplicate_values') {
      seen.set(dupKey(r), new Set());
      duplicates.set(dupKey(r), 0);
    }
  }
  const observe = (get: (column: string) => unknown, all: () => unknown[]) => {
    rows++;
    for (const c of nulls.keys()) {
      const v = get(c);
      if (v === null || v === undefined) nulls.set(c, (nulls.get(c) ?? 0) + 1);
    }
    for (const [k, set] of seen) {
      const values = k === '' ? all() : k.split(',').map(get);
      const digest = createHash('sha256')
        .update(JSON.stringify(values, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)))
        .digest('base64')
        .slice(0, 22);
      if (set.has(digest)) duplicates.set(k, (duplicates.get(k) ?? 0) + 1);
      else set.add(digest);
    }
  };
  const result = (): Omit<ContractCheck, 'step_slug' | 'contract_slug' | 'revision_slug'> => {
    const metrics = rules.map((r): MetricResult => {
      const unit = r.unit ?? 'rows';
      const count =
        r.metric === 'row_count'
          ? rows
          : r.metric === 'null_values'
            ? (nulls.get(key(r.column ?? '')) ?? 0)
            : (duplicates.get(dupKey(r)) ?? 0);
      const value =
        r.metric !== 'row_count' && unit === 'percent' ? (rows === 0 ? 0 : (count * 100) / rows) : count;
      const { metric, column, columns, unit: _u, ...rule } = r;
      return {
        metric,
        ...(column ? { column } : {}),
        ...(columns ? { columns } : {}),
        unit,
        value,
        passed: passes(r, value),
        rule,
      };
    });
    return { passed: metrics.every((m) => m.passed), rows, metrics };
  };
  return { observe, result };
}

/**
 * The payload as the sink sees it, measured; `end` runs once the last row went through. The
 * byte forms a producer may offer beside the batches (a source's native COPY output, DuckDB's
 * CSV, an HTTP body's records array) are withheld: the rules need every row, so the sink reads
 * the batches.
 */
function measured(
  payload: Payload,
  meter: ReturnType<typeof qualityMeter>,
  end: () => Promise<void>,
): Payload {
  if (payload.kind === 'rows') {
    const index = new Map(payload.columns.map((c, i) => [key(c.name), i]));
    const { native: _native, csv: _csv, ...rows } = payload;
    return {
      ...rows,
      batches: (async function* () {
        for await (const batch of payload.batches) {
          for (const row of batch)
            meter.observe(
              (c) => (index.has(c) ? row[index.get(c)!] : undefined),
              () => row,
            );
          yield batch;
        }
        await end();
      })(),
    };
  }
  if (payload.kind === 'json') {
    const { array: _array, ...json } = payload;
    return {
      ...json,
      batches: (async function* () {
        for await (const batch of payload.batches) {
          for (const rec of batch) {
            const obj = (rec ?? {}) as Record<string, unknown>;
            const lower = new Map(Object.entries(obj).map(([k, v]) => [key(k), v]));
            meter.observe(
              (c) => lower.get(c),
              () => Object.values(obj),
            );
          }
          yield batch;
        }
        await end();
      })(),
    };
  }
  return payload;
}

/** Ports whose contracted sinks are measured, the results appended to the run's contract_checks. */
export async function withContractChecks(
  db: DbOrTx,
  run: { id: string; pipelineId: string; hasContracts?: boolean },
  ports: Ports,
): Promise<Ports> {
  // The claim already found none: nothing to read.
  if (run.hasContracts === false) return ports;
  const contracts = new Map(
    (await latestContracts(db, ofPipeline(run.pipelineId))).map((c) => [c.contract.stepSlug, c]),
  );
  if (contracts.size === 0) return ports;
  const record = (check: ContractCheck) =>
    db
      .update(pipelineRuns)
      .set({ contractChecks: sql`${pipelineRuns.contractChecks} || ${JSON.stringify([check])}::jsonb` })
      .where(eq(pipelineRuns.id, run.id));
  return {
    readSource: (ctx) => ports.readSource(ctx),
    async writeSink(payload, ctx) {
      const c = contracts.get(ctx.step.slug);
      if (!c || c.revision.quality.length === 0) return ports.writeSink(payload, ctx);
      const meter = qualityMeter(c.revision.quality);
      let violation: ContractViolation | null = null;
      let checked = false;
      const end = async () => {
        checked = true;
        const r = meter.result();
        await record({
          step_slug: ctx.step.slug,
          contract_slug: c.contract.slug,
          revision_slug: c.revision.slug,
          ...r,
        });
        if (!r.passed) {
          const failed = r.metrics.filter((m) => !m.passed);
          violation = new ContractViolation(
            `contract ${c.contract.slug} (revision ${c.revision.slug}) is violated: ${failed
              .map(
                (m) =>
                  `${m.metric}${m.column ? `(${m.column})` : m.columns ? `(${m.columns.join(', ')})` : ''} = ${m.value}${m.unit === 'percent' ? '%' : ''}`,
              )
              .join('; ')}; nothing was written`,
          );
          ctx.log('error', violation.message);
          throw violation;
        }
      };
      try {
        const result = await ports.writeSink(measured(payload, meter, end), ctx);
        if (!checked) await end();
        return result;
      } catch (err) {
        // The connector may rewrap the stream's error; the violation is what happened.
        throw violation ?? err;
      }
    },
  };
}
