import Ajv2020 from 'ajv/dist/2020';
import type { Response as InjectResponse } from 'light-my-request';

// Checks one answer against the OpenAPI document the server serves: the status must be listed
// for the operation, every header beyond HTTP framing must be declared for that status, and the
// body must validate against that status's schema (a 204 has none). Used by the generated-traffic
// suites (test/conformance.api.test.ts, test/fuzz.api.test.ts).

// Framing headers every HTTP/1.1 answer may carry; everything else is the API's and documented.
const FRAMING = new Set([
  'content-type',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);

export type Conformance = {
  /** Failures (empty when the answer is what the document says) for `METHOD /path/{template}`. */
  check(method: string, path: string, res: InjectResponse): string[];
  /** Statuses seen per operation, for coverage assertions. */
  seen: Map<string, Set<number>>;
};

export function conformance(doc: any): Conformance {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  const seen = new Map<string, Set<number>>();
  const resolve = (x: any) =>
    typeof x?.$ref === 'string'
      ? x.$ref
          .split('/')
          .slice(1)
          .reduce((at: any, k: string) => at?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc)
      : x;

  return {
    seen,
    check(method, path, res) {
      const key = `${method.toUpperCase()} ${path}`;
      const op = doc.paths?.[path]?.[method.toLowerCase()];
      if (!op) return [`${key}: not an operation of the document`];
      const status = res.statusCode;
      if (!seen.has(key)) seen.set(key, new Set());
      seen.get(key)!.add(status);
      const where = `${key} → ${status}`;
      const response = resolve(
        op.responses?.[String(status)] ?? op.responses?.[`${String(status)[0]}XX`] ?? op.responses?.default,
      );
      if (!response) return [`${where}: status not in the document (${res.body.slice(0, 200)})`];
      const failures: string[] = [];
      const declared = new Set(Object.keys(response.headers ?? {}).map((h) => h.toLowerCase()));
      for (const h of Object.keys(res.headers)) {
        if (!FRAMING.has(h) && !declared.has(h)) failures.push(`${where}: header ${h} not in the document`);
      }
      const content = response.content ?? {};
      const schema = content['application/json']?.schema;
      if (status === 204 || !response.content) {
        if (res.body !== '') failures.push(`${where}: a body where the document has none`);
        return failures;
      }
      const type = String(res.headers['content-type'] ?? '')
        .split(';')[0]
        .trim();
      if (!(type in content)) {
        failures.push(`${where}: content-type ${type || '(none)'} not in the document`);
        return failures;
      }
      if (type !== 'application/json' || !schema) return failures;
      let body: unknown;
      try {
        body = res.json();
      } catch {
        failures.push(`${where}: body is not JSON`);
        return failures;
      }
      // Keyed by the schema itself: the error wrapper is one schema under ~1,800 responses.
      const id = JSON.stringify(schema);
      let validate = compiled.get(id);
      if (!validate) {
        validate = ajv.compile(schema);
        compiled.set(id, validate);
      }
      if (!validate(body)) {
        failures.push(
          `${where}: body does not match the schema: ${ajv.errorsText(validate.errors)} (${res.body.slice(0, 200)})`,
        );
      }
      return failures;
    },
  };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

export type DocParam = { name: string; in: string; required?: boolean; schema?: any };
/** One operation of the OpenAPI document, as the generated-traffic suites drive it. */
export type DocOperation = {
  method: string;
  path: string;
  params: DocParam[];
  body: any | null;
  bodyRequired: boolean;
  security: unknown[];
};

/** Every operation of the document, in document order. */
export function documentOperations(doc: any): DocOperation[] {
  const ops: DocOperation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      ops.push({
        method: method.toUpperCase(),
        path,
        params: [...(item.parameters ?? []), ...(op.parameters ?? [])],
        body: op.requestBody?.content?.['application/json']?.schema ?? null,
        bodyRequired: op.requestBody?.required === true,
        security: op.security ?? doc.security ?? [],
      });
    }
  }
  return ops;
}

// Generated requests (the fuzz and conformance suites) stay valid but small: strings up to LONGEST
// characters (json-schema-faker builds them a character at a time; the fuzz's hostile values
// bring 70,000) and arrays up to MOST_ITEMS items (a list that takes 10,000 nested objects cost
// seconds of CPU a value).
const LONGEST = 2048;
const MOST_ITEMS = 8;
const capped = new WeakMap<object, unknown>();
/**
 * `schema` with its lengths capped for json-schema-faker: the same values are valid, the generated
 * ones stay small (a copy, made once per schema object).
 */
export function generatable(schema: any): any {
  if (Array.isArray(schema)) return schema.map(generatable);
  if (schema === null || typeof schema !== 'object') return schema;
  const known = capped.get(schema);
  if (known) return known;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) out[k] = generatable(v);
  if (typeof out.maxLength === 'number' && out.maxLength > LONGEST) out.maxLength = LONGEST;
  if (typeof out.maxItems === 'number' && out.maxItems > MOST_ITEMS)
    out.maxItems = Math.max(MOST_ITEMS, typeof out.minItems === 'number' ? out.minItems : 0);
  capped.set(schema, out);
  return out;
}
