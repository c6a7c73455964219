import { describe, expect, it } from 'vitest';
import type { Payload } from './payloads';
import { csvRecords, rowsOf } from './rows-of';

const chunks = (...parts: string[]) =>
  (async function* () {
    for (const p of parts) yield new TextEncoder().encode(p);
  })();

async function all(payload: Payload) {
  const rows = await rowsOf(payload);
  const out: unknown[][] = [];
  for await (const b of rows.batches) out.push(...b);
  return { columns: rows.columns, rows: out };
}

describe('rowsOf', () => {
  it('takes JSON columns from the first batch with inferred types', async () => {
    const got = await all({
      kind: 'json',
      batches: (async function* () {
        yield [];
        yield [
          { id: 1, price: 2.5, ok: true, name: 'a', tags: ['x'] },
          { id: 2, price: 3, name: null, extra: 'e' },
        ];
        yield [{ id: 3, late: 'dropped' }];
      })(),
    });
    expect(got.columns).toEqual([
      { name: 'id', type: 'BIGINT' },
      { name: 'price', type: 'DOUBLE' },
      { name: 'ok', type: 'BOOLEAN' },
      { name: 'name', type: 'VARCHAR' },
      { name: 'tags', type: 'JSON' },
      { name: 'extra', type: 'VARCHAR' },
    ]);
    expect(got.rows).toEqual([
      [1, 2.5, true, 'a', ['x'], null],
      [2, 3, null, null, null, 'e'],
      [3, null, null, null, null, null],
    ]);
  });

  it('puts JSON values that are not objects in one value column, and has no rows for files', async () => {
    const got = await all({
      kind: 'json',
      batches: (async function* () {
        yield [1, 'two', [3]];
      })(),
    });
    expect(got).toEqual({ columns: [{ name: 'value', type: 'VARCHAR' }], rows: [[1], ['two'], [[3]]] });
    expect((await all({ kind: 'json', batches: (async function* () {})() })).columns).toEqual([]);
    await expect(rowsOf({ kind: 'file', mimeType: 'text/plain', chunks: chunks('x') })).rejects.toThrow(
      'a file payload has no rows',
    );
  });

  it('parses CSV as it streams: quotes, doubled quotes, newlines in fields, CRLF, split chunks', async () => {
    const got = await all({
      kind: 'csv',
      delimiter: ',',
      header: true,
      chunks: chunks('id,na', 'me,note\r\n1,"Smith, J",""\r', '\n2,"say ""hi""","multi\nline"\n3,,x\n\n4'),
    });
    expect(got.columns.map((c) => c.name)).toEqual(['id', 'name', 'note']);
    expect(got.rows).toEqual([
      ['1', 'Smith, J', ''],
      ['2', 'say "hi"', 'multi\nline'],
      ['3', null, 'x'],
      ['4', null, null],
    ]);
  });

  it('names CSV columns column0… without a header and handles other delimiters', async () => {
    const batches: (string | null)[][][] = [];
    for await (const b of csvRecords(chunks('a;b\nc;d;e\n'), ';')) batches.push(b);
    expect(batches).toEqual([
      [
        ['a', 'b'],
        ['c', 'd', 'e'],
      ],
    ]);
    const got = await all({ kind: 'csv', delimiter: '\t', header: false, chunks: chunks('x\ty\nz\tw\n') });
    expect(got).toEqual({
      columns: [
        { name: 'column0', type: 'VARCHAR' },
        { name: 'column1', type: 'VARCHAR' },
      ],
      rows: [
        ['x', 'y'],
        ['z', 'w'],
      ],
    });
  });
});
