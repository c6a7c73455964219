import fastJson from 'fast-json-stringify';
import { ResponseSerializationError } from 'fastify-type-provider-zod';
import { z } from 'zod';

/**
 * Response serialization. A route's zod response schema is converted (`z.toJSONSchema`, output
 * side) into a plain serialization schema and compiled with fast-json-stringify once, on the
 * schema's first response: the reply is written without a zod parse and without the generic
 * JSON.stringify walk. The result must be byte-for-byte what `JSON.stringify(schema.parse(data))`
 * gives, so only what converts exactly is compiled:
 *
 * - objects (undeclared keys dropped, as zod's default strip does; no `required` lists, so an
 *   absent or undefined field is left out and the order is the schema's, as zod's output has it),
 *   records and `unknown` values (written with JSON.stringify), arrays, strings, numbers
 *   (integers too: `number` writes them as JSON.stringify does), booleans, null, and `X | null`;
 * - anything else — unions of several shapes, tuples, defaults, transforms, dates, recursive
 *   schemas — keeps zod's parse and JSON.stringify for the whole response.
 *
 * With `check` on (the test harness sets SLUICE_CHECK_RESPONSES), every response is also
 * validated with zod as before and the fast bytes are compared with the reference bytes; a
 * difference answers 500 (the error wrapper) and is logged, so a serializer bug fails the suites.
 */

type Json = { [k: string]: unknown };
type Serialize = (data: unknown) => string;

/** Keywords that only constrain values: the serializer does not need them. */
const IGNORED = new Set([
  '$schema',
  'description',
  'title',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'contentEncoding',
  'contentMediaType',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'enum',
  'const',
  'required',
  'propertyNames',
]);

const SCALARS = new Set(['string', 'number', 'integer', 'boolean', 'null']);

class Unsupported extends Error {}

/** One JSON Schema node (zod's output) → a fast-json-stringify schema, or throw Unsupported. */
function serialSchema(node: unknown): Json {
  if (node === true) return {};
  if (!node || typeof node !== 'object' || Array.isArray(node)) throw new Unsupported('not a schema');
  const js = node as Json;
  for (const k of Object.keys(js)) {
    if (
      !IGNORED.has(k) &&
      k !== 'type' &&
      k !== 'properties' &&
      k !== 'additionalProperties' &&
      k !== 'items' &&
      k !== 'anyOf'
    ) {
      throw new Unsupported(`keyword ${k}`);
    }
  }
  if (js.anyOf !== undefined) {
    if (js.type !== undefined || js.properties !== undefined || js.items !== undefined) {
      throw new Unsupported('anyOf beside a type');
    }
    return nullable(js.anyOf);
  }
  // A schema without a type (z.unknown, z.any, z.json) is written as JSON.stringify writes it.
  if (js.type === undefined) {
    if (js.properties !== undefined || js.items !== undefined || js.additionalProperties !== undefined) {
      throw new Unsupported('untyped container');
    }
    return {};
  }
  if (Array.isArray(js.type)) {
    // zod writes a nullable scalar as `type: [X, "null"]`.
    const [a, b, more] = js.type as unknown[];
    const other = b === 'null' ? a : a === 'null' ? b : undefined;
    if (more !== undefined || typeof other !== 'string' || other === 'null' || !SCALARS.has(other)) {
      throw new Unsupported('type list');
    }
    return { type: [other === 'integer' ? 'number' : other, 'null'] };
  }
  if (typeof js.type !== 'string') throw new Unsupported('type');
  switch (js.type) {
    case 'object':
      return objectSchema(js);
    case 'array': {
      // An array of anything is written by JSON.stringify whole: it writes an undefined,
      // function or symbol item as null, where fast-json-stringify would write `undefined`.
      const items = js.items === undefined ? {} : serialSchema(js.items);
      return Object.keys(items).length === 0 ? {} : { type: 'array', items };
    }
    case 'integer':
      // fast-json-stringify truncates integers; a number is written exactly as JSON.stringify does.
      return { type: 'number' };
    default:
      if (!SCALARS.has(js.type)) throw new Unsupported(`type ${js.type}`);
      return { type: js.type };
  }
}

function objectSchema(js: Json): Json {
  const out: Json = { type: 'object' };
  const props = (js.properties ?? {}) as Json;
  const properties: Json = {};
  for (const [name, sub] of Object.entries(props)) properties[name] = serialSchema(sub);
  out.properties = properties;
  const extra = js.additionalProperties;
  if (extra === undefined || extra === true) {
    // A loose object or a record of anything: extra keys are written after the declared ones.
    if (Object.keys(properties).length > 0) throw new Unsupported('declared and open properties');
    out.additionalProperties = {};
  } else if (extra === false) {
    out.additionalProperties = false;
  } else {
    if (Object.keys(properties).length > 0) throw new Unsupported('declared and record properties');
    out.additionalProperties = serialSchema(extra);
  }
  return out;
}

/** `X | null` (zod's nullable); any other union keeps zod. */
function nullable(branches: unknown): Json {
  if (!Array.isArray(branches) || branches.length !== 2) throw new Unsupported('union');
  const isNull = (b: unknown) => {
    if (!b || typeof b !== 'object') return false;
    const keys = Object.keys(b);
    return (b as Json).type === 'null' && keys.every((k) => k === 'type' || IGNORED.has(k));
  };
  const other = isNull(branches[1]) ? branches[0] : isNull(branches[0]) ? branches[1] : undefined;
  if (other === undefined) throw new Unsupported('union');
  const inner = serialSchema(other);
  if (typeof inner.type !== 'string' || inner.type === 'null') throw new Unsupported('nullable untyped');
  return { ...inner, type: [inner.type, 'null'] };
}

const compiled = new WeakMap<z.ZodType, Serialize | null>();

/** The compiled serializer of a zod schema, or null when it does not convert exactly. */
export function fastSerializer(schema: z.ZodType): Serialize | null {
  const known = compiled.get(schema);
  if (known !== undefined) return known;
  let fn: Serialize | null = null;
  try {
    const root = serialSchema(z.toJSONSchema(schema, { io: 'output' }));
    // Only documents: a bare scalar or null body (204) keeps the reference path.
    if (root.type === 'object' || root.type === 'array') fn = fastJson(root as any) as Serialize;
  } catch {
    fn = null; // Unsupported, or a schema zod cannot express as JSON Schema (a transform, a date)
  }
  compiled.set(schema, fn);
  return fn;
}

/** The fast bytes differ from the reference bytes: a serializer bug, answered as a 500. */
export class ResponseMismatchError extends Error {}

function firstDifference(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return i;
  return n;
}

function resolve(schema: unknown): z.ZodType {
  if (schema instanceof z.ZodType) return schema;
  const props = (schema as { properties?: unknown } | null)?.properties;
  if (props instanceof z.ZodType) return props;
  throw new Error('response schema is not a zod schema');
}

/** Fastify's serializer compiler for the API host. */
export function responseSerializerCompiler(opts: { check: boolean }) {
  return ({ schema: given, method, url }: { schema: unknown; method: string; url: string }) => {
    const schema = resolve(given);
    const reference = (data: unknown) => {
      const r = schema.safeParse(data);
      if (!r.success) throw new ResponseSerializationError(method, url, { cause: r.error });
      return JSON.stringify(r.data);
    };
    return (data: unknown): string => {
      const fast = fastSerializer(schema);
      if (!opts.check) return fast ? fast(data) : reference(data);
      const expected = reference(data);
      if (!fast) return expected;
      // The response's bytes are not put in the message: they may hold anything the route returns.
      let actual: string;
      try {
        actual = fast(data);
      } catch (err) {
        // Its message may quote a value: only the error's type goes into the log.
        throw new ResponseMismatchError(
          `fast serializer threw ${(err as Error)?.constructor?.name ?? 'an error'} on ${method} ${url} where JSON.stringify did not`,
        );
      }
      if (actual !== expected) {
        throw new ResponseMismatchError(
          `fast serializer differs from JSON.stringify on ${method} ${url} at character ${firstDifference(actual, expected)} (${actual.length} vs ${expected.length} characters)`,
        );
      }
      return actual;
    };
  };
}
