import type { RowsPayload } from '@sluice/engine';
import { describe, expect, it } from 'vitest';
import { batches } from '../../../../test/support/step-context';
import { ConnectorError } from '../types';
import { appliedNames, type ChangeSet, compactChanges, dataColumns, inKeyOrder } from './changes';

// The compaction behind the apply sink mode (docs/pipeline-spec.md, "apply: change rows"),
// on its own: what each key's final state is, which columns stay the target's, and what is
// refused. The sinks that write the result are tested on the real servers (apply.test.ts).

const COLS = ['_op', '_table', '_position', '_committed_at', '_unchanged', 'id', 'a', 'b'];
const NAMES = ['id', 'a', 'b'];
const rows = (data: unknown[][], columns = COLS): RowsPayload => ({
  kind: 'rows',
  columns: columns.map((name) => ({ name, type: 'text' })),
  batches: batches<unknown[]>(...data.map((r) => [r])),
});
const c = (op: unknown, id: unknown, a: unknown, b: unknown, unchanged: unknown = null) => [
  op,
  't',
  '0/1',
  null,
  unchanged,
  id,
  a,
  b,
];
/** The set as { key: row or 'deleted', with kept columns }. */
function view(set: ChangeSet) {
  const out: Record<string, unknown> = {};
  set.deletes.forEach((r) => {
    out[String(r[0])] = 'deleted';
  });
  set.upserts.forEach((r, i) => {
    out[String(r[0])] = set.unchanged[i] ? { row: r, keeps: set.unchanged[i] } : r;
  });
  return out;
}
async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err).toBeInstanceOf(ConnectorError);
  expect(err.code).toBe('INVALID_STATEMENT');
  return err.message;
}

describe('change compaction', () => {
  it("keeps each key's final state; unchanged columns merge with earlier changes or stay the target's", async () => {
    const set = await compactChanges(
      rows([
        c('insert', 1, 'a1', 'b1'),
        c('update', 1, 'a2', null, '["b"]'),
        c('update', 2, 'x', null, ['b']), // an array, as a JSON source sends it
        c('update', 2, null, 'y', '["a"]'),
        c('update', 3, 'p', null, '["b"]'),
        c('update', 3, 'q', null, '["b"]'),
        c('delete', 4, null, null),
        c('update', 4, 'late', null, '["b"]'), // after a delete there is nothing to keep
        c('insert', 5, 'a', 'b'),
        c('delete', 5, null, null),
        c('update', 6, 'k', null, '["id", "nope", "b"]'), // key and unknown columns ignored
        c('update', 7, 'r', 's', '[]'),
      ]),
      ['id'],
      NAMES,
    );
    expect(set.changes).toBe(12);
    expect(view(set)).toEqual({
      1: [1, 'a2', 'b1'],
      2: [2, 'x', 'y'],
      3: { row: [3, 'q', null], keeps: ['b'] },
      4: [4, 'late', null],
      5: 'deleted',
      6: { row: [6, 'k', null], keeps: ['b'] },
      7: [7, 'r', 's'],
    });
  });

  it('tells keys apart by value: 64-bit integers as numbers, bytes by content, composite keys', async () => {
    const set = await compactChanges(
      rows([
        c('insert', 5n, 'big', null),
        c('update', 5, 'number', null),
        c('insert', '5', 'text', null),
        c('insert', Buffer.from([1, 2]), 'bytes', null),
        c('delete', Buffer.from([1, 2]), null, null),
      ]),
      ['id'],
      NAMES,
    );
    expect(set.upserts.map((r) => r[1])).toEqual(['number', 'text']);
    expect(set.deletes).toHaveLength(1);
    const pairs = await compactChanges(
      rows([c('insert', 1, 'x', 'v1'), c('insert', 1, 'y', 'v2'), c('delete', 1, 'x', null)]),
      ['id', 'a'],
      NAMES,
    );
    expect(view(pairs)).toEqual({ 1: [1, 'y', 'v2'] });
    expect(pairs.deletes).toEqual([[1, 'x', null]]);
  });

  it('refuses what is not a change row of one table, naming the row and the fix', async () => {
    expect(await refusal(compactChanges(rows([[1, 'a', 'b']], NAMES), ['id'], NAMES))).toBe(
      'mode apply takes change rows with an _op column (insert, update, delete or truncate), as a cdc source hands them on; the input has id, a, b',
    );
    expect(
      await refusal(compactChanges(rows([c('insert', 1, 'a', 'b'), c('merge', 2, 'a', 'b')]), ['id'], NAMES)),
    ).toBe('change row 2: _op is "merge"; apply takes insert, update, delete or truncate');
    expect(await refusal(compactChanges(rows([c('delete', null, null, null)]), ['id'], NAMES))).toBe(
      'change row 1: key column id is null',
    );
    expect(
      await refusal(compactChanges(rows([c('update', 1, 'a', 'b', '{"b":1}')]), ['id'], NAMES)),
    ).toContain('_unchanged must be null or a JSON array of column names');
    const two = [c('insert', 1, 'a', 'b'), ['insert', 'u', '0/2', null, null, 2, 'a', 'b']];
    expect(await refusal(compactChanges(rows(two), ['id'], NAMES))).toContain(
      'the changes come from "t" and "u"',
    );
    // An empty payload (no columns at all) applies nothing.
    expect((await compactChanges(rows([], []), ['id'], [])).changes).toBe(0);
  });

  it('names the columns written and sorts by key where the key values allow', () => {
    const cols = COLS.map((name) => ({ name, type: 'text' }));
    expect(dataColumns(cols).map((x) => x.name)).toEqual(NAMES);
    expect(appliedNames([...COLS], (n) => n === '_committed_at' || n === '_op')).toEqual([
      '_committed_at',
      'id',
      'a',
      'b',
    ]);
    const numbers = [[3], [1], [2]];
    inKeyOrder(numbers, [0]);
    expect(numbers).toEqual([[1], [2], [3]]);
    const mixed = [[3], ['1'], [2]];
    inKeyOrder(mixed, [0]);
    expect(mixed).toEqual([[3], ['1'], [2]]);
  });
});
