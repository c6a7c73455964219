import { ResponseSerializationError } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventListSchema } from '../modules/events/events.schemas';
import { fastSerializer, ResponseMismatchError, responseSerializerCompiler } from './serializer';

const slug = z
  .string()
  .min(1)
  .regex(/^[a-z0-9-]+$/);

describe('fastSerializer', () => {
  const exact: [string, z.ZodType, unknown][] = [
    [
      'nullable scalars, optional and undefined fields, undeclared keys dropped, schema order',
      z.object({
        b: z.number().int(),
        a: z.string().optional(),
        c: slug.nullable(),
        d: z.string().nullable(),
        e: z.boolean(),
      }),
      { e: false, a: undefined, d: null, c: 'x-1', b: 7, secret: 'never-written' },
    ],
    [
      'records and unknown values as JSON.stringify writes them',
      z.object({ meta: z.record(z.string(), z.unknown()), any: z.unknown(), list: z.array(z.unknown()) }),
      {
        meta: { '10': 1, '2': [undefined, 'é'], x: undefined, y: { z: null } },
        any: { n: 1e21, d: new Date(0) },
        list: [undefined, () => 1, 3],
      },
    ],
    [
      'nested and nullable objects, arrays of them, enums and literals',
      z.array(
        z.object({
          kind: z.literal('run'),
          state: z.enum(['ok', 'failed']),
          parent: z.object({ id: z.string() }).nullable(),
          tags: z.array(z.string().nullable()),
        }),
      ),
      [
        { kind: 'run', state: 'ok', parent: null, tags: [] },
        { tags: ['a', null], parent: { id: 'p', extra: 1 }, state: 'failed', kind: 'run' },
      ],
    ],
    [
      'strings that need escaping, lone surrogates, line separators, numbers',
      z.object({ s: z.string(), n: z.number(), i: z.int() }),
      { s: 'quote " backslash \\ \u0000 \u2028 \ud800 é 🙂 </script>', n: -0, i: 9007199254740991 },
    ],
  ];

  for (const [name, schema, data] of exact) {
    it(`writes the same bytes as zod + JSON.stringify: ${name}`, () => {
      const fast = fastSerializer(schema);
      expect(fast).not.toBeNull();
      expect(fast?.(data)).toBe(JSON.stringify(schema.parse(data)));
    });
  }

  it('compiles the event list of the API benchmark', () => {
    expect(fastSerializer(eventListSchema)).not.toBeNull();
  });

  it('keeps zod for what does not convert exactly', () => {
    const kept = [
      z.object({ at: z.date() }),
      z.object({ n: z.string().transform((s) => s.length) }),
      z.object({ n: z.string().default('x') }),
      z.object({ u: z.union([z.object({ a: z.string() }), z.object({ b: z.string() })]) }),
      z.discriminatedUnion('k', [z.object({ k: z.literal('a') }), z.object({ k: z.literal('b') })]),
      z.object({ a: z.string() }).loose(),
      z.object({ t: z.tuple([z.string(), z.number()]) }),
      z.object({ j: z.json() }),
      z.null(),
    ];
    for (const schema of kept) expect(fastSerializer(schema)).toBeNull();
  });
});

describe('responseSerializerCompiler', () => {
  const route = { method: 'GET', url: '/things' };
  const schema = z.object({ name: z.string(), data: z.unknown() });

  it('answers with the fast bytes, unchecked in production', () => {
    const serialize = responseSerializerCompiler({ check: false })({ schema, ...route });
    expect(serialize({ name: 'a', data: [1], extra: true })).toBe('{"name":"a","data":[1]}');
    // No zod parse: a value zod would refuse is written as fast-json-stringify coerces it.
    expect(serialize({ name: 5, data: null })).toBe('{"name":"5","data":null}');
  });

  it('in check mode refuses what zod refuses', () => {
    const serialize = responseSerializerCompiler({ check: true })({ schema, ...route });
    expect(() => serialize({ name: 5, data: null })).toThrow(ResponseSerializationError);
  });

  it('in check mode fails when the fast bytes differ from JSON.stringify', () => {
    const serialize = responseSerializerCompiler({ check: true })({ schema, ...route });
    // A function where JSON is expected: JSON.stringify leaves the field out, the fast path not.
    const canary = 'canary-7f3a';
    const err = (() => {
      try {
        serialize({ name: canary, data: () => canary });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(ResponseMismatchError);
    expect(err?.message).toContain('GET /things');
    expect(err?.message).not.toContain(canary);
  });
});
