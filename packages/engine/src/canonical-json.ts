import { createHash } from 'node:crypto';

/**
 * RFC 8785 (JSON Canonicalization Scheme): object members sorted by UTF-16 code units, no
 * whitespace, numbers and strings serialized as ECMAScript's JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('non-finite numbers have no JSON form');
      return JSON.stringify(value);
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
      const keys = Object.keys(value as object)
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .sort();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
    }
    default:
      throw new TypeError(`${typeof value} has no JSON form`);
  }
}

/** spec_hash: SHA-256 of the canonical JSON, lowercase hex (docs/pipeline-spec.md#versions). */
export function specHash(spec: unknown): string {
  return createHash('sha256').update(canonicalJson(spec)).digest('hex');
}
