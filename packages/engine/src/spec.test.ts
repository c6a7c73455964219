import { describe, expect, it } from 'vitest';
import { canonicalJson, specHash } from './canonical-json';
import { deriveRefs, planSpec } from './plan';
import { type PipelineSpec, pipelineSpecSchema } from './spec';
import { renderValue, scopeResolver, TemplateError } from './templates';

const example = {
  steps: [
    {
      slug: 'orders',
      kind: 'source',
      data_source_ref: 'shop-api',
      operation: {
        operation_type: 'http',
        method: 'GET',
        path: '/orders',
        query_params: { after: '{{runtime.incremental.lower_bound.cursor}}' },
      },
      response: { records_path: 'data', cursor_path: 'next_cursor' },
    },
    {
      slug: 'clean',
      kind: 'transform',
      operation: { operation_type: 'sql', sql: 'SELECT id, lower(email) AS email FROM orders' },
    },
    {
      slug: 'load',
      kind: 'sink',
      data_source_ref: 'warehouse',
      operation: { operation_type: 'sql', write: { table: 'orders', mode: 'upsert', key: ['id'] } },
    },
  ],
  edges: [
    { from: 'orders', to: 'clean' },
    { from: 'clean', to: 'load' },
  ],
  inputs: { region: { required: false } },
};

const parse = (v: unknown): PipelineSpec => pipelineSpecSchema.parse(v);

describe('canonical JSON (RFC 8785)', () => {
  it('sorts keys, drops whitespace and formats numbers like ECMAScript', () => {
    expect(canonicalJson({ b: [1, 2e21, 1e-7, -0], a: 'é\u2028', c: { z: null, y: true } })).toBe(
      '{"a":"é\u2028","b":[1,2e+21,1e-7,0],"c":{"y":true,"z":null}}',
    );
  });
  it('hashes equal documents equally whatever their key order', () => {
    const reverse = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reverse)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reverse(x)]),
            )
          : v;
    const reordered = reverse(example);
    expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(example));
    expect(specHash(parse(reordered))).toBe(specHash(parse(example)));
    expect(specHash(parse(example))).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('planning', () => {
  it('orders the example spec and derives its refs', () => {
    const spec = parse(example);
    const { findings, plan } = planSpec(spec);
    expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(plan!.order).toEqual(['orders', 'clean', 'load']);
    const { refs } = deriveRefs(spec);
    expect(refs).toEqual([
      {
        slug: 'shop-api',
        data_source_type: 'http',
        required_capabilities: ['pipeline_source'],
        operation_types: ['http'],
      },
      {
        slug: 'warehouse',
        data_source_type: null,
        required_capabilities: ['pipeline_sink'],
        operation_types: ['sql'],
      },
    ]);
  });

  it('finds cycles, unknown steps, misplaced refs and undeclared inputs', () => {
    const bad = parse({
      steps: [
        {
          slug: 'a',
          kind: 'source',
          operation: { operation_type: 'http', path: '/x?r={{runtime.input.nope}}', batch_size: 2 },
        },
        {
          slug: 'b',
          kind: 'transform',
          data_source_ref: 'db',
          operation: { operation_type: 'sql', sql: 'select 1' },
        },
        {
          slug: 'c',
          kind: 'transform',
          operation: { operation_type: 'sql', sql: 'select 1', cursor_column: 'x' },
        },
        {
          slug: 'd',
          kind: 'sink',
          data_source_ref: 'db',
          operation: { operation_type: 'sql', write: { table: 't', mode: 'upsert' } },
        },
        {
          slug: 'e',
          kind: 'sink',
          data_source_ref: 'db',
          operation: { operation_type: 'sql', write: { table: 't', mode: 'apply' } },
        },
      ],
      edges: [
        { from: 'b', to: 'c' },
        { from: 'c', to: 'b' },
        { from: 'c', to: 'zz' },
        { from: 'a', to: 'd' },
        { from: 'a', to: 'e' },
      ],
    });
    const codes = planSpec(bad).findings.map((f) => f.code);
    for (const c of [
      'REF_REQUIRED',
      'UNDECLARED_INPUT',
      'TRANSFORM_HAS_REF',
      'UNKNOWN_STEP',
      'CYCLE',
      'UPSERT_NEEDS_KEY',
      'APPLY_NEEDS_KEY',
      'CURSOR_ONLY_IN_SOURCE',
      'BATCH_NEEDS_INPUT_BODY',
    ]) {
      expect(codes).toContain(c);
    }
    expect(planSpec(bad).plan).toBeNull();
  });

  it('flags a ref used by incompatible operation types', () => {
    const spec = parse({
      steps: [
        { slug: 'a', kind: 'source', data_source_ref: 'x', operation: { operation_type: 'http', path: '/' } },
        {
          slug: 'b',
          kind: 'sink',
          data_source_ref: 'x',
          operation: { operation_type: 'sql', write: { table: 't' } },
        },
      ],
      edges: [{ from: 'a', to: 'b' }],
    });
    expect(deriveRefs(spec).findings.map((f) => f.code)).toEqual(['REF_TYPE_CONFLICT']);
  });
});

describe('templates', () => {
  const resolve = scopeResolver({ runtime: { env: { REGION: 'eu' }, input: { n: 5, obj: { a: 1 } } } });
  it('keeps the type of a whole-string template and inlines text otherwise', () => {
    expect(
      renderValue(
        { n: '{{runtime.input.n}}', o: '{{ runtime.input.obj }}', s: 'r={{runtime.env.REGION}}' },
        resolve,
      ),
    ).toEqual({
      n: 5,
      o: { a: 1 },
      s: 'r=eu',
    });
  });
  it('fails on a missing value instead of sending an empty one', () => {
    expect(() => renderValue('{{runtime.env.MISSING}}', resolve)).toThrow(TemplateError);
  });
});
