import { describe, expect, it } from 'vitest';
import { contractProblems } from '../drift/impact';
import { diffRevisions, type RevisionContent } from './contract-rules';

// A contract's types are compared the way drift compares schemas: normalized (case, aliases,
// lengths), with precision and scale taken into account (docs/drift-and-contracts.md).

const col = (name: string, type: string) => ({
  name,
  type,
  nullable: true,
  unique: false,
  primary_key: false,
});
const revision = (columns: ReturnType<typeof col>[]): RevisionContent => ({
  compatibility: 'backward',
  columns,
  quality: [],
  freshness: null,
});

describe('contract types against an output', () => {
  it('accepts the same type in another spelling', () => {
    expect(
      contractProblems(
        [
          col('id', 'int4'),
          col('email', 'varchar'),
          col('at', 'timestamp with time zone'),
          col('n', 'NUMERIC(10,2)'),
        ],
        [
          { name: 'ID', type: 'INTEGER' },
          { name: 'email', type: 'VARCHAR' },
          { name: 'at', type: 'TIMESTAMP WITH TIME ZONE' },
          { name: 'n', type: 'DECIMAL(10,2)' },
        ],
      ),
    ).toEqual([]);
  });

  it('lets a decimal without precision or scale accept any decimal', () => {
    expect(contractProblems([col('amount', 'decimal')], [{ name: 'amount', type: 'DECIMAL(10,2)' }])).toEqual(
      [],
    );
    expect(contractProblems([col('amount', 'NUMERIC')], [{ name: 'amount', type: 'DECIMAL(18,4)' }])).toEqual(
      [],
    );
  });

  it('still reports a different type or a different precision and scale', () => {
    expect(contractProblems([col('amount', 'decimal')], [{ name: 'amount', type: 'DOUBLE' }])).toEqual([
      'promised column amount is decimal, the output is DOUBLE',
    ]);
    expect(
      contractProblems([col('amount', 'DECIMAL(10,2)')], [{ name: 'amount', type: 'DECIMAL(12,2)' }]),
    ).toEqual(['promised column amount is DECIMAL(10,2), the output is DECIMAL(12,2)']);
    expect(contractProblems([col('id', 'integer')], [{ name: 'id', type: 'VARCHAR' }])).toHaveLength(1);
  });
});

describe('contract revisions', () => {
  const change = (before: string, after: string) =>
    diffRevisions(revision([col('amount', before)]), revision([col('amount', after)])).map(
      (c) => `${c.reason_code} ${c.severity}`,
    );

  it('finds no change in case or aliases', () => {
    expect(change('decimal', 'NUMERIC')).toEqual([]);
    expect(change('numeric(10, 2)', 'DECIMAL(10,2)')).toEqual([]);
    expect(change('int4', 'INTEGER')).toEqual([]);
    expect(change('varchar(20)', 'text')).toEqual([]);
  });

  it('calls a wider decimal or integer a widening, a narrower one a breaking change', () => {
    expect(change('DECIMAL(10,2)', 'DECIMAL(12,2)')).toEqual(['contract_type_widened safe']);
    expect(change('DECIMAL(10,2)', 'decimal')).toEqual(['contract_type_widened safe']);
    expect(change('integer', 'bigint')).toEqual(['contract_type_widened safe']);
    expect(change('DECIMAL(12,2)', 'DECIMAL(10,2)')).toEqual(['contract_type_changed breaking']);
    expect(change('decimal', 'DECIMAL(10,2)')).toEqual(['contract_type_changed breaking']);
    expect(change('integer', 'text')).toEqual(['contract_type_changed breaking']);
  });
});
