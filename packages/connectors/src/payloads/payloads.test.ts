import { describe, expect, it } from 'vitest';
import { csvLine } from './csv';
import { dottedPath, JsonRecordScanner, JsonScanError } from './json-records';

/** Feeds the text in pieces of `size` characters, as a network would split it. */
function scan(text: string, records?: string, cursor?: string, size = 1) {
  const s = new JsonRecordScanner(dottedPath(records), cursor ? dottedPath(cursor) : null);
  const out: unknown[] = [];
  for (let i = 0; i < text.length; i += size) out.push(...s.push(text.slice(i, i + size)));
  out.push(...s.end());
  return { records: out, cursor: s.cursor, found: s.found };
}

describe('JsonRecordScanner', () => {
  const doc = {
    meta: { page: { next: 'c:2' } },
    data: {
      items: [
        { id: 1, s: 'quote " brace } bracket ] comma , back \\ slash', u: 'ünï 😀 \u0001' },
        { id: 2, nested: { a: [1, 2, { b: null }] }, e: -1.5e3 },
        'scalar',
        null,
        [1, 'two'],
        true,
      ],
    },
  };
  const text = JSON.stringify(doc, null, 1);

  it.each([1, 3, 7, 4096])('streams records and the cursor whatever the chunking (%i)', (size) => {
    const r = scan(text, 'data.items', 'meta.page.next', size);
    expect(r.records).toEqual(doc.data.items);
    expect(r.cursor).toBe('c:2');
    expect(r.found).toBe(true);
  });

  it('takes the root array, else the root value as one record', () => {
    expect(scan('[{"a":1},{"a":2}]').records).toEqual([{ a: 1 }, { a: 2 }]);
    expect(scan('{"a":1,"next":5}', undefined, 'next').records).toEqual([{ a: 1, next: 5 }]);
    expect(scan('{"a":1,"next":5}', undefined, 'next').cursor).toBe(5);
    expect(scan(' 42 ').records).toEqual([42]);
  });

  it('indexes arrays with numeric segments and reports a missing path', () => {
    expect(scan('{"pages":[{"rows":[1]},{"rows":[2,3]}]}', 'pages.1.rows').records).toEqual([2, 3]);
    const missing = scan('{"other":[1]}', 'data');
    expect(missing.records).toEqual([]);
    expect(missing.found).toBe(false);
    expect(scan('{"data":{"id":7}}', 'data').records).toEqual([{ id: 7 }]);
    expect(scan('{"data":null}', 'data').records).toEqual([]);
  });

  it.each(['{"a":1', '{"a" 1}', '[1,]x', '{"a":tru}', '[1] [2]', '{"a":1}}'])('rejects %s', (bad) => {
    expect(() => scan(bad, undefined, undefined, 2)).toThrow(JsonScanError);
  });
});

describe('csvLine', () => {
  it('quotes every value, doubles quotes and leaves null empty', () => {
    expect(csvLine(['a"b', null, '', 'x,\ny'])).toBe('"a""b",,"","x,\ny"\n');
  });
});
