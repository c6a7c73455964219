import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenRoutes, openApiPath } from '../packages/server/src/http/openapi-transform';
import { startTestApp, type TestApp } from './support/app';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

describe('OpenAPI document', () => {
  let t: TestApp;
  let doc: any;
  beforeAll(async () => {
    t = await startTestApp({ env: { SLUICE_LOG_LEVEL: 'warn' } });
    const res = await t.call('GET', '/openapi.json');
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(() => t?.close());

  const operations = () =>
    Object.entries<Record<string, any>>(doc.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([m]) => METHODS.includes(m))
        .map(([m, op]) => ({ key: `${m.toUpperCase()} ${path}`, op })),
    );

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes exactly the routes the server serves', () => {
    const served = t.app.routeTable
      .filter((r) => !r.hidden && !hiddenRoutes.includes(r.url))
      .map((r) => `${r.method} ${openApiPath(r.url)}`);
    expect(served.length).toBeGreaterThan(0);
    expect(new Set(served).size).toBe(served.length);
    const documented = operations().map((o) => o.key);
    expect(documented.sort()).toEqual([...served].sort());
    // Colon actions keep their literal verb: `/api-keys/{api_key_slug}:rotate`.
    expect(documented).toContain('POST /organizations/{organization}/api-keys/{api_key_slug}:rotate');
    for (const hidden of hiddenRoutes) expect(doc.paths[hidden]).toBeUndefined();
  });

  it('gives every operation a unique operationId and its security', () => {
    const ops = operations();
    const ids = ops.map((o) => o.op.operationId);
    for (const [i, id] of ids.entries()) expect(id, ops[i].key).toMatch(/^[a-z][A-Za-z0-9]+$/);
    expect(new Set(ids).size).toBe(ids.length);
    const byKey = new Map(ops.map((o) => [o.key, o.op]));
    expect(byKey.get('GET /organizations/{organization}/events')?.operationId).toBe('listEvents');
    expect(byKey.get('POST /organizations/{organization}/api-keys/{api_key_slug}:rotate')?.operationId).toBe(
      'rotateApiKeys',
    );

    expect(doc.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer' });
    const accessOf = new Map(
      t.app.routeTable.map((r) => [`${r.method} ${openApiPath(r.url)}`, r.access?.kind ?? 'none']),
    );
    for (const { key, op } of ops) {
      const kind = accessOf.get(key);
      // Every route declares its access; a public one says so with an empty requirement.
      expect(kind, key).not.toBe('none');
      expect(op.security, key).toEqual(kind === 'public' ? [] : [{ bearer: [] }]);
    }
  });

  it('documents every operation with a summary, tags and the error wrapper', () => {
    for (const { key, op } of operations()) {
      expect(op.summary, key).toBeTruthy();
      expect(op.tags?.length, key).toBeGreaterThan(0);
      const codes = Object.keys(op.responses ?? {});
      expect(
        codes.some((c) => c.startsWith('2')),
        key,
      ).toBe(true);
      const errors = codes.filter((c) => /^[45]/.test(c));
      expect(errors.length, key).toBeGreaterThan(0);
      for (const c of errors) {
        expect(
          op.responses[c].content['application/json'].schema.properties.error,
          `${key} ${c}`,
        ).toBeTruthy();
      }
    }
  });

  it('lists on every operation the statuses and headers the plumbing answers', () => {
    for (const { key, op } of operations()) {
      const codes = Object.keys(op.responses);
      const isPublic = op.security.length === 0;
      const hasBody = /^(POST|PUT|PATCH|DELETE) /.test(key);
      const expected = ['400', '408', '429', '431', '503'];
      if (!isPublic) expected.push('401', '403');
      if (key.includes('{')) expected.push('404');
      if (hasBody) expected.push('413', '415');
      expect(codes, key).toEqual(expect.arrayContaining(expected));
      for (const [status, response] of Object.entries<any>(op.responses)) {
        expect(Object.keys(response.headers ?? {}), `${key} ${status}`).toEqual(
          expect.arrayContaining(['X-Request-Id', 'RateLimit-Limit', 'Cache-Control']),
        );
        if (status === '429') expect(response.headers['Retry-After'], key).toBeTruthy();
      }
    }
    expect(Object.keys(doc.components.headers).sort()).toEqual([
      'Cache-Control',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'Retry-After',
      'X-Request-Id',
    ]);
  });

  it('marks a request body required only where the server needs one', () => {
    const optional = operations()
      .filter(({ op }) => op.requestBody && op.requestBody.required === false)
      .map(({ key }) => key.replace(/^(\w+) \/organizations\/\{organization\}/, '$1 …'));
    expect(optional.sort()).toEqual(
      [
        'DELETE …/environments/{environment}',
        'POST …/data-sources/{data_source}/oauth:authorize',
        'POST …/environments/{environment}:purge',
        'POST …/projects/{project}/environments/{environment}/pipelines/{pipeline}/triggers/{pipeline_trigger_slug}:rotate-secret',
        'POST …/projects/{project}/environments/{environment}/pipelines/{pipeline}:execute',
        'PUT …/projects/{project}/environments/{environment}',
      ].sort(),
    );
  });

  it('gives every list the shape of docs/api-conventions.md: has_more and both cursors beside it', () => {
    const resolve = (schema: any): any =>
      schema?.$ref ? resolve(doc.components.schemas[schema.$ref.split('/').pop()]) : schema;
    const lists: string[] = [];
    for (const { key, op } of operations()) {
      // A collection: a GET whose path ends in a name, answering an array of objects.
      if (!key.startsWith('GET ') || key.endsWith('}')) continue;
      const schema = resolve(op.responses?.['200']?.content?.['application/json']?.schema);
      const props = schema?.properties ?? {};
      const arrays = Object.keys(props).filter(
        (k) => resolve(props[k]).type === 'array' && resolve(resolve(props[k]).items)?.type === 'object',
      );
      // A list answers one array, and either pages (takes `limit`) or names it after its path
      // (`GET …/roles` → `roles`). A document that merely holds arrays is not one: proof settings'
      // `targets`, alert-policy source metadata's `sources` and `source_refs` (docs/alerting.md).
      if (arrays.length !== 1) continue;
      const pages = (op.parameters ?? []).some((p: any) => p.in === 'query' && p.name === 'limit');
      const named = key.split('/').pop()!.replaceAll('-', '_') === arrays[0];
      if (!pages && !named) continue;
      lists.push(key);
      expect(Object.keys(props), key).toEqual(
        expect.arrayContaining(['has_more', 'next_cursor', 'prev_cursor']),
      );
      expect(schema.required, key).toEqual(
        expect.arrayContaining(['has_more', 'next_cursor', 'prev_cursor']),
      );
    }
    expect(lists).toEqual(
      expect.arrayContaining(['GET /permissions', 'GET /organizations/{organization}/roles']),
    );
    // Every paged list is checked: the rule above must not quietly skip them.
    expect(lists.length).toBeGreaterThanOrEqual(40);
  });
});
