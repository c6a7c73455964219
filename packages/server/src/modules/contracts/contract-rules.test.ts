import { describe, expect, it } from 'vitest';
import { odcsErrors } from '../../../../../test/support/odcs';
import { type RevisionContent, revisionDigest, toOdcs } from './contract-rules';

// The ODCS export checked against the standard's own JSON schema (v3.1.0), for a revision that
// uses every rule kind, unit, bound and column type family Sluice has.

const contract = {
  slug: 'orders-out',
  name: 'Orders out',
  description: 'Orders as the warehouse receives them',
  stepSlug: 'load',
  pipelineSlug: 'orders',
};

const content: RevisionContent = {
  compatibility: 'backward',
  columns: [
    { name: 'id', type: 'bigint', nullable: false, unique: true, primary_key: true },
    { name: 'email', type: 'varchar(100)', nullable: true, unique: false, primary_key: false },
    { name: 'amount', type: 'numeric(12,2)', nullable: false, unique: false, primary_key: false },
    { name: 'paid', type: 'boolean', nullable: true, unique: false, primary_key: false },
    { name: 'day', type: 'date', nullable: true, unique: false, primary_key: false },
    { name: 'at', type: 'time', nullable: true, unique: false, primary_key: false },
    { name: 'updated_at', type: 'timestamptz', nullable: false, unique: false, primary_key: false },
    { name: 'tags', type: 'text[]', nullable: true, unique: false, primary_key: false },
    { name: 'extra', type: 'json', nullable: true, unique: false, primary_key: false },
  ],
  quality: [
    { metric: 'row_count', must_be_greater_than: 0, must_be_less_than: 1_000_000 },
    { metric: 'row_count', must_be: 42 },
    { metric: 'duplicate_values', columns: ['id'], must_be: 0 },
    { metric: 'duplicate_values', columns: ['email', 'day'], unit: 'percent', must_be_less_than: 1 },
    { metric: 'duplicate_values', unit: 'rows', must_be: 0 },
    { metric: 'null_values', column: 'email', unit: 'percent', must_be_less_than: 5 },
    { metric: 'null_values', column: 'paid', must_be: 0 },
  ],
  freshness: { column: 'updated_at', max_latency_seconds: 3600 },
};

const odcs = () => toOdcs(contract, { ...content, slug: 'r1', digest: revisionDigest(content) });

describe('ODCS export', () => {
  it('is a valid ODCS v3.1.0 contract (the official JSON schema) for every rule kind', () => {
    const doc = odcs();
    expect(doc.apiVersion).toBe('v3.1.0');
    expect(odcsErrors(doc)).toEqual([]);
  });

  it('uses v3.1.0 names: metric (not rule), arguments, one operator per rule', () => {
    const [table] = odcs().schema;
    expect(table.quality).toEqual([
      { type: 'library', metric: 'rowCount', mustBeLessThan: 1_000_000 },
      { type: 'library', metric: 'rowCount', mustBeGreaterThan: 0 },
      { type: 'library', metric: 'rowCount', mustBe: 42 },
      { type: 'library', metric: 'duplicateValues', arguments: { properties: ['id'] }, mustBe: 0 },
      {
        type: 'library',
        metric: 'duplicateValues',
        arguments: { properties: ['email', 'day'] },
        unit: 'percent',
        mustBeLessThan: 1,
      },
      { type: 'library', metric: 'duplicateValues', unit: 'rows', mustBe: 0 },
    ]);
    const byName = Object.fromEntries(table.properties.map((p) => [p.name, p]));
    expect(byName.email.quality).toEqual([
      { type: 'library', metric: 'nullValues', unit: 'percent', mustBeLessThan: 5 },
    ]);
    expect(byName.paid.quality).toEqual([{ type: 'library', metric: 'nullValues', mustBe: 0 }]);
    expect(table.properties.map((p) => [p.name, p.logicalType])).toEqual([
      ['id', 'integer'],
      ['email', 'string'],
      ['amount', 'number'],
      ['paid', 'boolean'],
      ['day', 'date'],
      ['at', 'time'],
      ['updated_at', 'timestamp'],
      ['tags', 'array'],
      ['extra', 'object'],
    ]);
  });

  it('the schema refuses what the export used to mix in from v3.0.2', () => {
    // The guard can fail: v3.0.2's `rule` key, or two operators in one rule, are not v3.1.0.
    const legacy = odcs();
    const q = legacy.schema[0].quality[0] as Record<string, unknown>;
    q.rule = q.metric;
    delete q.metric;
    expect(odcsErrors(legacy)).not.toEqual([]);
    const twoBounds = odcs();
    Object.assign(twoBounds.schema[0].quality[0], { mustBe: 10 });
    expect(odcsErrors(twoBounds)).not.toEqual([]);
    expect(odcsErrors({ ...odcs(), apiVersion: 'v3.2.0' })).not.toEqual([]);
  });
});
