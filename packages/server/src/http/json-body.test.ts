import { describe, expect, it } from 'vitest';
import { BODY_LIMITS, parseJsonBody } from './json-body';

const parse = (text: string | Buffer) => parseJsonBody(typeof text === 'string' ? Buffer.from(text) : text);
const issueOf = (text: string | Buffer) => {
  const r = parse(text);
  if (r.ok) throw new Error(`accepted: ${String(text).slice(0, 80)}`);
  expect(r.error.code).toBe('VALIDATION_FAILED');
  return r.error.extra.validationErrors![0]!;
};
const nest = (depth: number, inner = '1') => `${'{"a":'.repeat(depth)}${inner}${'}'.repeat(depth)}`;

describe('parseJsonBody', () => {
  it('parses ordinary JSON exactly as JSON.parse does', () => {
    const texts = [
      '{"a":1,"b":[true,false,null,"x\\"y",-1.5e3],"c":{"d":"é✓🙂","e":"\\ud83d\\ude80"}}',
      '[]',
      '"just a string"',
      '{"a":{"a":{"a":[]}},"b":"\\\\","c":"\\u0041"}',
      ' \n{ "spaced" : [ 1 , 2 ] }\n',
    ];
    for (const t of texts) expect(parse(t)).toEqual({ ok: true, value: JSON.parse(t) });
    expect(parse('')).toEqual({ ok: true, value: undefined });
    expect(parse('  \n')).toEqual({ ok: true, value: undefined });
  });

  it('accepts every limit exactly and refuses one past it, with the path', () => {
    expect(parse(nest(BODY_LIMITS.depth - 1, '[]')).ok).toBe(true);
    expect(issueOf(nest(BODY_LIMITS.depth, '[]'))).toMatchObject({
      code: 'too_deep',
      path: Array(BODY_LIMITS.depth).fill('a').join('.'),
    });
    const keys = (n: number) => `{"o":{${Array.from({ length: n }, (_, i) => `"k${i}":0`).join(',')}}}`;
    expect(parse(keys(BODY_LIMITS.keys)).ok).toBe(true);
    expect(issueOf(keys(BODY_LIMITS.keys + 1))).toMatchObject({ code: 'too_many_keys', path: 'o' });
    const items = (n: number) => `{"l":[{"m":[${Array(n).fill(0).join(',')}]}]}`;
    expect(parse(items(BODY_LIMITS.items)).ok).toBe(true);
    expect(issueOf(items(BODY_LIMITS.items + 1))).toMatchObject({ code: 'too_many_items', path: 'l.0.m' });
    const str = (n: number) => `{"s":["a","${'x'.repeat(n)}"]}`;
    expect(parse(str(BODY_LIMITS.stringLength)).ok).toBe(true);
    expect(issueOf(str(BODY_LIMITS.stringLength + 1))).toMatchObject({
      code: 'string_too_long',
      path: 's.1',
    });
    // Escapes count as the one character they stand for.
    expect(parse(`"${'\\n'.repeat(BODY_LIMITS.stringLength)}"`).ok).toBe(true);
    expect(issueOf(`{"${'k'.repeat(BODY_LIMITS.stringLength + 1)}":1}`)).toMatchObject({
      code: 'string_too_long',
      path: '(body)',
    });
  });

  it('refuses a repeated key, also when spelled with escapes, and names it', () => {
    expect(issueOf('{"a":{"b":1,"c":2,"b":3}}')).toMatchObject({ code: 'duplicate_key', path: 'a.b' });
    expect(issueOf('{"x":[{"ab":1,"a\\u0062":2}]}')).toMatchObject({ code: 'duplicate_key', path: 'x.0.ab' });
    // The same key in sibling or nested objects is not a repeat.
    expect(parse('{"a":{"a":1},"b":{"a":2},"c":[{"a":1},{"a":2}]}').ok).toBe(true);
  });

  it('refuses lone surrogate escapes with the path and keeps pairs', () => {
    expect(issueOf('{"a":[1,{"b":"x\\ud800"}]}')).toMatchObject({ code: 'invalid_unicode', path: 'a.1.b' });
    expect(issueOf('{"a":"\\udc00\\ud800"}')).toMatchObject({ code: 'invalid_unicode', path: 'a' });
    expect(issueOf('{"o":{"\\ud800":1}}')).toMatchObject({ code: 'invalid_unicode', path: 'o.\uFFFD' });
    expect(issueOf('"\\udbff"')).toMatchObject({ code: 'invalid_unicode', path: '(body)' });
    expect(parse('{"a":"\\uD83D\\uDE80\\u00e9"}')).toEqual({ ok: true, value: { a: '🚀é' } });
  });

  it('refuses bytes that are not UTF-8 instead of replacing them, with the field they are in', () => {
    const bad = Buffer.concat([
      Buffer.from('{"name":"ok","list":["a","b'),
      Buffer.from([0xff]),
      Buffer.from('"]}'),
    ]);
    expect(issueOf(bad)).toMatchObject({ code: 'invalid_utf8', path: 'list.1' });
    // An encoded surrogate (CESU) and a truncated sequence are not UTF-8 either.
    expect(issueOf(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]))).toMatchObject({ code: 'invalid_utf8' });
    expect(issueOf(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x22, 0x7d]))).toMatchObject({
      code: 'invalid_utf8',
      path: 'a',
    });
    // U+FFFD sent as proper UTF-8 is text like any other.
    expect(parse('{"a":"\uFFFD"}')).toEqual({ ok: true, value: { a: '\uFFFD' } });
  });

  it('refuses text that is not JSON and prototype keys', () => {
    for (const t of [
      '{',
      '{"a":1,}',
      '[1 2]',
      '{"a" 1}',
      '"\\x"',
      '{"\\q":1}',
      'nul',
      '{"a":"\\u12","a":1}',
    ]) {
      expect(issueOf(t), t).toMatchObject({ code: 'invalid_json', path: '(body)' });
    }
    expect(parse('{"__proto__":{"x":1}}').ok).toBe(false);
    expect(parse('{"constructor":{"prototype":{"x":1}}}').ok).toBe(false);
  });

  it('ends the hostile bodies at the first limit, whatever their size', () => {
    // Depth 100,000 in ~600 KB, then 100k keys, 100k elements: each refused, never walked whole.
    expect(issueOf(nest(100_000)).code).toBe('too_deep');
    expect(issueOf(`[${'['.repeat(500_000)}`).code).toBe('too_deep');
    const manyKeys = `{${Array.from({ length: 100_000 }, (_, i) => `"k${i}":0`).join(',')}}`;
    expect(issueOf(manyKeys).code).toBe('too_many_keys');
    expect(issueOf(`[${Array(100_000).fill(0).join(',')}]`).code).toBe('too_many_items');
    expect(issueOf(`{"s":"${'x'.repeat(1_000_000)}"}`).code).toBe('string_too_long');
  });
});
