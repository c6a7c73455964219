import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app';

// Every name a request can set (`name`, `billing_name`, any other `*_name` of a request body,
// found in the served document so a new route joins by itself) refuses control characters and
// line breaks with 400 VALIDATION_FAILED naming the field: names reach mail text and logs.

type Json = Record<string, any>;
const BAD = [
  'Bad\r\nBcc: victim@example.com',
  'tab\there',
  'nul\u0000',
  'c1\u0085next',
  'line\u2028sep',
  'para\u2029sep',
  'del\u007f',
];

type Target = { method: string; path: string; field: string; base: Json };

/**
 * Top-level fields named `name` or `*_name` of each operation's JSON body, variants included; a
 * variant's single-valued fields (a union's discriminator, such as a data source's `type`) go
 * into `base`, so the body reaches the variant that has the field.
 */
function nameFields(doc: Json): Target[] {
  const resolve = (s: any): any => {
    if (!s?.$ref) return s;
    let node: any = doc;
    for (const p of String(s.$ref).replace(/^#\//, '').split('/')) node = node[p];
    return resolve(node);
  };
  const fieldsOf = (s: any, base: Json): { field: string; base: Json }[] => {
    const o = resolve(s);
    if (!o || typeof o !== 'object') return [];
    const fixed: Json = { ...base };
    for (const [k, v] of Object.entries<any>(o.properties ?? {})) {
      const p = resolve(v);
      if (p?.const !== undefined) fixed[k] = p.const;
      else if (Array.isArray(p?.enum) && p.enum.length === 1) fixed[k] = p.enum[0];
    }
    const own = Object.keys(o.properties ?? {})
      .filter((k) => /(^|_)name$/.test(k))
      .map((field) => ({ field, base: fixed }));
    const variants = ['oneOf', 'anyOf', 'allOf'].flatMap((k) =>
      (o[k] ?? []).flatMap((v: unknown) => fieldsOf(v, fixed)),
    );
    // One target per field: the first variant that has it.
    const seen = new Set<string>();
    return [...own, ...variants].filter((f) => !seen.has(f.field) && seen.add(f.field));
  };
  const out: Target[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      const body = op.requestBody?.content?.['application/json']?.schema;
      for (const f of fieldsOf(body, {})) out.push({ method: method.toUpperCase(), path, ...f });
    }
  }
  return out;
}

describe('names refuse control characters', { timeout: 120_000 }, () => {
  let t: TestApp;
  let key: string;
  let pat: string;
  beforeAll(async () => {
    t = await startTestApp({
      env: { SLUICE_RATE_LIMIT_PER_TOKEN: '100000', SLUICE_RATE_LIMIT_PUBLIC: '100000' },
    });
    const b = await t.bootstrap('acme');
    key = b.api_key;
    pat = b.personal_access_token;
  }, 120_000);
  afterAll(() => t?.close());

  it('on every request field that names something, with the field as the path', async () => {
    const doc = (await t.call('GET', '/openapi.json')).json();
    const fields = nameFields(doc);
    // The document's own families are all here: accounts, billing, organizations and below.
    expect(fields.map((f) => f.field)).toEqual(expect.arrayContaining(['name', 'billing_name']));
    expect(fields.length).toBeGreaterThan(25);
    for (const { method, path, field, base } of fields) {
      const url = path.replace('{organization}', 'acme').replace(/\{[a-z_]+\}/g, 'zz-nothing');
      // The owner's personal access token: it may call account routes and every acme route.
      const token = pat;
      for (const bad of BAD) {
        const res = await t.call(method, url, { token, body: { ...base, [field]: bad } });
        const where = `${method} ${path} ${field} ${JSON.stringify(bad)}`;
        expect(res.statusCode, `${where}: ${res.body}`).toBe(400);
        expect(res.json().error.code, where).toBe('VALIDATION_FAILED');
        expect(
          res.json().error.validation_errors.map((v: any) => v.path),
          where,
        ).toContain(field);
      }
    }
  });

  it('keeps every other character, and stores nothing refused', async () => {
    const ok = await t.call('POST', '/organizations/acme/projects', {
      token: key,
      body: { name: 'Zoë — Ünïcode 🚀 "quoted" <tag>' },
    });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().name).toBe('Zoë — Ünïcode 🚀 "quoted" <tag>');
    const bad = await t.call('PATCH', `/organizations/acme/projects/${ok.json().slug}`, {
      token: key,
      body: { name: 'Two\nlines' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.validation_errors).toEqual([
      { path: 'name', code: expect.any(String), message: expect.stringContaining('control characters') },
    ]);
    const again = await t.call('GET', `/organizations/acme/projects/${ok.json().slug}`, { token: key });
    expect(again.json().name).toBe('Zoë — Ünïcode 🚀 "quoted" <tag>');
  });
});
