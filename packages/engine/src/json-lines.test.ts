import { describe, expect, it } from 'vitest';
import { JsonArrayLines } from './json-lines';

// Every split of the array into chunks must give the same lines, and each line must be exactly
// one element of the array, whatever the strings inside hold.
const lines = (text: string, cuts: number[]) => {
  const l = new JsonArrayLines();
  const bytes = Buffer.from(text);
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    out.push(l.push(bytes.subarray(from, cut)));
    from = cut;
  }
  return Buffer.concat(out).toString();
};

const elements = (ndjson: string) =>
  ndjson
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));

const cases: Record<string, string> = {
  objects: '[{"a":1,"b":"x"},{"a":2,"b":null}]',
  pretty: '[\n  {\n    "a": 1,\r\n    "b": [1, 2, {"c": "d"}]\n  },\n  {"a": 2}\n]',
  strings: '["a,b", "[x]", "{y}", "quote \\" inside", "back\\\\", "\\\\\\"", "line\\nbreak"]',
  scalars: '[1, -2.5e3, true, false, null, "s"]',
  nested: '[[1,[2,[3]]],{"k":{"l":[{"m":","}]}}]',
  unicode: '[{"name":"Zoë, ☃"},{"name":"日本"}]',
  empty: '[]',
  blank: '[ \n ]',
};

describe('JsonArrayLines', () => {
  for (const [name, text] of Object.entries(cases)) {
    it(`turns ${name} into one line per element, at every chunk boundary`, () => {
      const want = JSON.parse(text) as unknown[];
      const bytes = Buffer.byteLength(text);
      const whole = lines(text, []);
      expect(elements(whole)).toEqual(want);
      expect(whole.split('\n').filter((l) => l.trim() !== '')).toHaveLength(want.length);
      for (let cut = 0; cut <= bytes; cut++) expect(lines(text, [cut])).toBe(whole);
      for (let cut = 0; cut + 2 <= bytes; cut++) expect(lines(text, [cut, cut + 1, cut + 2])).toBe(whole);
    });
  }

  it('keeps the byte count and leaves the input chunks unchanged', () => {
    const input = Buffer.from(cases.pretty);
    const copy = Buffer.from(input);
    const out = new JsonArrayLines().push(input);
    expect(out.length).toBe(input.length);
    expect(input.equals(copy)).toBe(true);
  });
});

describe('JsonArrayLines refuses what DuckDB would skip', () => {
  for (const [text, why] of [
    ['[{"a":1},,{"a":2}]', 'an element missing before a comma'],
    ['[,1]', 'an element missing before a comma'],
    ['[{"a":1},]', 'a comma after the last element'],
    ['[1, 2 ,\n ]', 'a comma after the last element'],
  ]) {
    it(`${JSON.stringify(text)}: ${why}`, () => {
      expect(() => new JsonArrayLines('the records array of people').push(Buffer.from(text))).toThrow(
        `the records array of people is not valid JSON (${why})`,
      );
    });
  }

  it('still takes an empty array and commas inside elements', () => {
    expect(() => new JsonArrayLines().push(Buffer.from('[ ]'))).not.toThrow();
    expect(() => new JsonArrayLines().push(Buffer.from('[[1,2],{"a":[3,4]},"x,y"]'))).not.toThrow();
  });
});
