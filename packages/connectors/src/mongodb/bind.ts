import { EJSON } from 'bson';
import { checkOperators, checkValue, invalid, PLACEHOLDER, WHOLE } from './config';

// Binding a statement's parameters needs bson's Extended JSON reader, which only the driver's
// calls use (operations.ts): apart from config.ts, so a process that never talks to MongoDB
// never loads bson (its serializer allocates a 17 MB buffer when loaded; docs/benchmarks.md, Memory).

export type Resolve = (name: string) => { found: true; value: unknown } | { found: false };

/**
 * Replaces every whole-string placeholder by its value, checked, then reads the result as
 * Extended JSON so {"$oid": …} and friends become BSON values.
 */
export function bindStatement<T>(value: T, resolve: Resolve, opts: { aggregate: boolean }): T {
  const bind = (v: unknown, at: (string | number)[]): unknown => {
    if (typeof v === 'string') {
      const whole = WHOLE.exec(v);
      if (!whole) {
        if (PLACEHOLDER.test(v))
          throw invalid(`${at.join('.')}: a {{placeholder}} must be the whole string value`);
        return v;
      }
      const r = resolve(whole[1]);
      if (!r.found) throw invalid(`parameter ${whole[1]} has no value`);
      checkValue(whole[1], r.value, opts.aggregate);
      return r.value === undefined ? null : r.value;
    }
    if (Array.isArray(v)) return v.map((x, i) => bind(x, [...at, i]));
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        if (k.includes('{{'))
          throw invalid(`${at.join('.')}: a {{placeholder}} cannot be a field name or an operator`);
        out[k] = bind(x, [...at, k]);
      }
      return out;
    }
    return v;
  };
  const bound = bind(value, []);
  checkOperators(bound, []);
  try {
    return EJSON.deserialize(bound as Record<string, unknown>, { relaxed: true, useBigInt64: true }) as T;
  } catch (err) {
    throw invalid(`the statement is not valid Extended JSON: ${(err as Error).message}`);
  }
}
