import { describe, expect, it } from 'vitest';
import { dottedPath, JsonRecordScanner, JsonScanError } from './json-records';
import { JsonArraySlicer } from './json-slice';

// The slicer must find what the record scanner finds: the same records (as one JSON array),
// the same cursor, whatever the chunk boundaries.

function slice(doc: string, records: string, cursor: string | null, size: number) {
  const s = new JsonArraySlicer(dottedPath(records), cursor === null ? null : dottedPath(cursor));
  const bytes = Buffer.from(doc);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...s.push(bytes.subarray(i, i + size)));
  out.push(...s.end());
  const text = Buffer.concat(out).toString('utf8');
  return {
    records: text === '' ? [] : (JSON.parse(text) as unknown[]),
    count: s.records,
    cursor: s.cursor,
    found: s.found,
  };
}

function scan(doc: string, records: string, cursor: string | null) {
  const s = new JsonRecordScanner(dottedPath(records), cursor === null ? null : dottedPath(cursor));
  const out = [...s.push(doc), ...s.end()];
  return { records: out, count: out.length, cursor: s.cursor, found: s.found };
}

const docs: [string, string, string | null][] = [
  ['[{"a":1},{"a":2,"b":"x,]}"}]', '', null],
  [
    '{"data":{"items":[{"id":1,"s":"a \\"q\\"\\nline \\\\"},null,{"id":3,"n":[1,[2,{"x":"]"}]]}]},"next":{"c":"p2"}}',
    'data.items',
    'next.c',
  ],
  ['{"next":"c9","data":[]}', 'data', 'next'],
  ['{"pages":[{"rows":[1]},{"rows":[2,3]}]}', 'pages.1.rows', null],
  ['{"one":{"id":7,"u":"ünï😀"}}', 'one', null],
  ['{"one":null,"c":12.5e3}', 'one', 'c'],
  ['{"other":[1,2]}', 'data', 'cursor'],
  ['{"k\\u0065y":[true,false,-1.5E+2]}', 'key', null],
  ['  [ 1 , "two" , {"3": [3]} ]  ', '', null],
  ['"just a string"', '', null],
];

describe('JsonArraySlicer', () => {
  for (const [doc, records, cursor] of docs) {
    it(`finds what the scanner finds in ${doc.slice(0, 40)} (records ${records || 'root'})`, () => {
      const expected = scan(doc, records, cursor);
      for (const size of [1, 2, 3, 7, 1000]) expect(slice(doc, records, cursor, size)).toEqual(expected);
    });
  }

  it('has no records in an empty body', () => {
    expect(slice('  ', 'data', null, 1)).toEqual({ records: [], count: 0, cursor: undefined, found: false });
  });

  it('refuses a document that ends early or has two roots', () => {
    expect(() => slice('{"data":[1,2', 'data', null, 3)).toThrow(JsonScanError);
    expect(() => slice('[1] [2]', '', null, 3)).toThrow(JsonScanError);
    expect(() => slice('{"data":[1]}}', 'data', null, 3)).toThrow(JsonScanError);
  });
});

// In lines mode the same records come out one per line (NDJSON), each line exactly one record.
function sliceLines(doc: string, records: string, cursor: string | null, size: number) {
  const s = new JsonArraySlicer(dottedPath(records), cursor === null ? null : dottedPath(cursor), true);
  const bytes = Buffer.from(doc);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...s.push(Buffer.from(bytes.subarray(i, i + size))));
  out.push(...s.end());
  const lines = Buffer.concat(out)
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  return { records: lines.map((l) => JSON.parse(l)), count: s.records, cursor: s.cursor, found: s.found };
}

describe('JsonArraySlicer, lines mode', () => {
  const more: [string, string, string | null][] = [
    ...docs,
    ['{"data":[\n  {"a": 1,\r\n "b": "x\\ny"},\n  {"a": [1,\n2]}\n]}', 'data', null],
    ['{"one":{\n"id": 7\n}}', 'one', null],
  ];
  for (const [doc, records, cursor] of more) {
    it(`gives one record a line in ${JSON.stringify(doc.slice(0, 40))} (records ${records || 'root'})`, () => {
      const expected = scan(doc, records, cursor);
      // A null element is a record of its own line too; the scanner hands it out as null.
      for (const size of [1, 2, 3, 7, 1000]) expect(sliceLines(doc, records, cursor, size)).toEqual(expected);
    });
  }

  it('refuses an element missing between commas or after the last one', () => {
    for (const size of [1, 4, 100]) {
      expect(() => sliceLines('{"data":[1,,2]}', 'data', null, size)).toThrow(JsonScanError);
      expect(() => sliceLines('{"data":[{"a":1},]}', 'data', null, size)).toThrow(JsonScanError);
      expect(() => sliceLines('[,1]', '', null, size)).toThrow(JsonScanError);
    }
    expect(sliceLines('{"data":[]}', 'data', null, 2).records).toEqual([]);
  });
});
