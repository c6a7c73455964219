import { describe, expect, it } from 'vitest';
import type { TableColumn } from './tables';
import { snapshotValue, valueReader } from './values';

// The stream converts values with the reader chosen once per column (change-rows.ts); the
// snapshot path with snapshotValue. Both must give a change row the snapshot's shape.
const column = (dataType: string, octets: number | null = null): TableColumn => ({
  name: 'c',
  type: dataType,
  dataType,
  octets,
});

const cases: [TableColumn, unknown[]][] = [
  [column('bigint'), [1, 9007199254740991, '18446744073709551615', -5]],
  [column('float'), [0.10000000149011612, 3.4028234663852886e38, -1.5]],
  [column('binary', 4), [Buffer.from([7]), Buffer.from([1, 2, 3, 4])]],
  [column('binary'), [Buffer.from([7])]],
  [column('set'), [['a', 'c'], 'a,c', []]],
  [column('json'), ['{"a": 1}', { a: [1, 'x'] }, [1, 2]]],
  [column('decimal'), ['-12.50']],
  [column('datetime'), ['2024-01-02 03:04:05.123456']],
  [column('varchar'), ['héllo']],
  [column('int'), [-3]],
];

describe('mysql change values', () => {
  it.each(cases)('a %o value reads as the snapshot shows it', (c, values) => {
    const read = valueReader(c);
    for (const v of values) {
      expect(read === null ? v : read(v)).toEqual(snapshotValue(v, c));
    }
  });

  it('leaves the values the library already gives in the snapshot shape untouched', () => {
    for (const t of ['decimal', 'datetime', 'timestamp', 'varchar', 'int', 'blob', 'bit']) {
      expect(valueReader(column(t))).toBeNull();
    }
    expect(valueReader(column('binary', 4))).not.toBeNull();
  });
});
