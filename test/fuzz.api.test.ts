import { createGenerator } from 'json-schema-faker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorStatus } from '../packages/server/src/http/errors';
import { startTestApp, type TestApp } from './support/app';
import { conformance, type DocOperation, documentOperations, generatable } from './support/conformance';

// Every operation of the served OpenAPI document, fed requests built from its own schemas
// (json-schema-faker, seeded) and then spoiled with hostile values: lone surrogates, NUL, huge
// strings, percent junk, deep nesting, wrong types. Whatever comes in, the answer is never a
// 5xx, every response has X-Request-Id, every error is the wrapper repeating it, and every answer
// is one the document describes for the operation (test/support/conformance.ts). Routes join
// from the document, so a new route is fuzzed without touching this file.

const SEED = Number(process.env.SLUICE_FUZZ_SEED ?? 20261125);

const HOSTILE_STRINGS = [
  '\ud800',
  'a\udfffb',
  '\u0000',
  'x\u0000y',
  'A'.repeat(70_000),
  '%',
  '%zz',
  '%E0%A4%A',
  '%00',
  '../../../etc/passwd',
  "' OR 1=1 --",
  '{{name}}',
  '<script>alert(1)</script>',
  '',
  ' ',
  '\u202eevil',
  '🚀',
  '-1',
  '1e309',
  '__proto__',
  'constructor',
  'null',
  'http://',
  'http://[::1',
  'not a url',
];

const deep = (depth: number, open: string, close: string, leaf = '1') =>
  open.repeat(depth) + leaf + close.repeat(depth);

const HOSTILE_BODIES = [
  deep(5000, '[', ']'),
  deep(2000, '{"a":', '}'),
  '42',
  '"text"',
  'null',
  '[]',
  'true',
  '{"__proto__":{"x":1}}',
  '{"name":"\\ud800"}',
  `{"name":"${'x'.repeat(200_000)}"}`,
  '{',
  '\u0000',
];

const HOSTILE_VALUES: unknown[] = [
  1e308,
  -1,
  2 ** 63,
  1.5,
  true,
  null,
  [],
  {},
  [[[[[[]]]]]],
  { $gt: '' },
  'A'.repeat(5000),
];

/** mulberry32: a seeded PRNG so a failure reproduces with the same SLUICE_FUZZ_SEED. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Percent-encodes UTF-8 bytes (a lone surrogate becomes U+FFFD, as any client would send it). */
const encode = (s: string) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).padStart(2, '0').toUpperCase()}`,
    )
    .join('');

type Operation = DocOperation;

function operationsOf(doc: any): Operation[] {
  const ops = documentOperations(doc);
  // Deletions last, so a lucky one (the caller's own account) cannot end the run early.
  return ops.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
}

/** Replaces string leaves (and sometimes other leaves) of a generated value with hostile ones. */
function spoil(value: unknown, rnd: () => number): unknown {
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  if (typeof value === 'string') return rnd() < 0.7 ? pick(HOSTILE_STRINGS) : value;
  if (Array.isArray(value)) return value.map((v) => spoil(v, rnd));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = rnd() < 0.2 ? pick(HOSTILE_VALUES) : spoil(v, rnd);
    if (rnd() < 0.2) out[pick(HOSTILE_STRINGS).slice(0, 50) || 'extra'] = pick(HOSTILE_VALUES);
    return out;
  }
  return rnd() < 0.5 ? pick(HOSTILE_VALUES) : value;
}

/** Paths of the string leaves of a generated value (the fields a single mutation targets). */
function stringLeaves(value: unknown, path: string[] = [], out: string[][] = []): string[][] {
  if (typeof value === 'string') out.push(path);
  else if (Array.isArray(value))
    for (const [i, v] of value.entries()) stringLeaves(v, [...path, String(i)], out);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) stringLeaves(v, [...path, k], out);
  return out;
}

function withLeaf(value: unknown, path: string[], leaf: unknown): unknown {
  const copy = structuredClone(value) as any;
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key];
  at[path[path.length - 1]] = leaf;
  return copy;
}

// One field at a time keeps the rest valid, so the request gets as deep as it can: every
// string field gets a lone surrogate and one rotating hostile value; URL-like fields get
// malformed URLs instead.
const URL_JUNK = ['http://', 'http://[::1', 'not a url', 'https://exa mple.com'];
const ROTATING = HOSTILE_STRINGS.filter((v) => v !== '\ud800');
const LEAVES_PER_BODY = 5;

describe('fuzzing every operation of the OpenAPI document', () => {
  let t: TestApp;
  let token: string;
  let doc: any;
  beforeAll(async () => {
    t = await startTestApp({
      env: {
        SLUICE_LOG_LEVEL: 'fatal',
        SLUICE_RATE_LIMIT_PER_TOKEN: '1000000',
        SLUICE_RATE_LIMIT_PUBLIC: '1000000',
      },
    });
    token = (await t.bootstrap('acme')).personal_access_token;
    doc = (await t.call('GET', '/openapi.json')).json();
  });
  afterAll(() => t?.close());

  // The vitest projects do not inherit a longer timeout; on a busy machine this takes minutes.
  it('answers every generated and hostile request without a 5xx, in the wrapper', {
    timeout: 300_000,
  }, async () => {
    const ops = operationsOf(doc);
    expect(ops.length).toBeGreaterThan(50);
    const rnd = prng(SEED);
    const gen = createGenerator({ seed: SEED, maxDepth: 4, maxDefaultItems: 2, optionalsProbability: 0.5 });
    const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
    const failures: string[] = [];
    let sent = 0;
    let rotation = 0;
    const statuses = new Map<number, number>();
    const check = conformance(doc);

    async function value(schema: any): Promise<unknown> {
      try {
        return await gen.generate(schema ? generatable(schema) : { type: 'string' });
      } catch {
        return 'x';
      }
    }

    async function send(op: Operation, variant: number, body: string | undefined, auth = true) {
      // Variant 0 keeps generated path values; later ones mix in the real organization and junk.
      let url = op.path;
      const query: string[] = [];
      for (const p of op.params) {
        let v: unknown;
        if (p.in === 'path' && p.name === 'organization' && variant % 3 !== 2) v = 'acme';
        else if (variant >= 2 && rnd() < 0.5) v = pick(HOSTILE_STRINGS);
        else v = await value(p.schema);
        if (p.in === 'path') {
          let text = typeof v === 'string' ? v : JSON.stringify(v);
          if (text === '') text = 'x';
          // Percent junk goes in raw half the time: the router has to cope with it.
          const raw = variant >= 3 && /%/.test(text) && rnd() < 0.5;
          url = url.replace(`{${p.name}}`, raw ? text : encode(text.slice(0, 600)));
        } else if (p.in === 'query' && (p.required || rnd() < 0.6)) {
          const text = typeof v === 'string' ? v : JSON.stringify(v);
          query.push(
            `${encode(p.name)}=${variant >= 3 && rnd() < 0.3 ? '%zz' : encode(String(text).slice(0, 3000))}`,
          );
        }
      }
      if (query.length > 0) url += `?${query.join('&')}`;
      const headers: Record<string, string> = {};
      if (auth) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      sent++;
      await new Promise((r) => setImmediate(r));
      const res = await t.app.inject({ method: op.method as any, url, headers, payload: body });
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      const where = `${op.method} ${url.slice(0, 200)} body=${(body ?? '').slice(0, 200)}`;
      const id = res.headers['x-request-id'];
      if (res.statusCode >= 500) failures.push(`${res.statusCode} ${where}: ${res.body.slice(0, 300)}`);
      failures.push(...check.check(op.method, op.path, res).map((f) => `${f} [${where}]`));
      if (typeof id !== 'string' || id === '') failures.push(`no X-Request-Id: ${where}`);
      if (res.statusCode >= 400) {
        let parsed: any;
        try {
          parsed = res.json();
        } catch {
          parsed = null;
        }
        const e = parsed?.error;
        const wrapped =
          parsed &&
          Object.keys(parsed).length === 1 &&
          typeof e?.code === 'string' &&
          e.code in errorStatus &&
          typeof e.message === 'string' &&
          e.request_id === id;
        if (!wrapped) failures.push(`not wrapped (${res.statusCode}) ${where}: ${res.body.slice(0, 300)}`);
      }
    }

    for (const op of ops) {
      await send(op, 0, op.body ? JSON.stringify(await value(op.body)) : undefined, false);
      if (!op.body) {
        for (let v = 0; v < 3; v++) await send(op, v, undefined);
        continue;
      }
      const generated = await value(op.body);
      await send(op, 0, JSON.stringify(generated));
      for (const [j, path] of stringLeaves(generated).slice(0, LEAVES_PER_BODY).entries()) {
        const urlish = /url|endpoint|uri/i.test(path[path.length - 1] ?? '');
        const first = urlish ? URL_JUNK[0] : '\ud800';
        const second = urlish ? URL_JUNK[1 + ((j + rotation) % 3)] : ROTATING[rotation % ROTATING.length];
        rotation++;
        for (const leaf of [first, second])
          await send(op, 1, JSON.stringify(withLeaf(generated, path, leaf)));
      }
      await send(op, 2, JSON.stringify(spoil(await value(op.body), rnd)));
      await send(op, 3, HOSTILE_BODIES[rotation % HOSTILE_BODIES.length]);
    }
    // The generated requests must get past validation too, or the fuzz only tests the validator.
    const succeeded = [...statuses].filter(([code]) => code < 300).reduce((n, [, c]) => n + c, 0);
    expect(succeeded).toBeGreaterThan(10);
    expect(failures, failures.slice(0, 20).join('\n')).toEqual([]);
    expect(sent).toBeGreaterThan(ops.length * 3);
  });
});
