import { Binary, Decimal128, Double, EJSON, Int32, Long, ObjectId } from 'bson';

// The query side of the MongoDB wire peer (mongo-wire.ts): filters, projections, sorts and the
// few aggregation stages the connector and its tests use, over documents kept as the BSON
// library deserializes them with promoteValues off (Int32, Double and Long stay typed, so a
// document is answered with exactly the types it was stored with).

export type Doc = Record<string, any>;

/** A command failure the peer answers as {ok: 0, errmsg, code, codeName}. */
export class CommandError extends Error {
  constructor(
    readonly code: number,
    readonly codeName: string,
    message: string,
  ) {
    super(message);
  }
}

const badValue = (message: string) => new CommandError(2, 'BadValue', message);

/** A JS number of any numeric BSON value (commands arrive with Int32/Double/Long). */
export function num(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Int32 || v instanceof Double) return v.value;
  if (v instanceof Long) return v.toNumber();
  if (v instanceof Decimal128) return Number.parseFloat(v.toString());
  if (typeof v === 'boolean') return v ? 1 : 0;
  return Number.NaN;
}

const isNumeric = (v: unknown) =>
  typeof v === 'number' ||
  typeof v === 'bigint' ||
  v instanceof Int32 ||
  v instanceof Double ||
  v instanceof Long ||
  v instanceof Decimal128;

/** A plain sub-document (not a BSON value, date or array). */
export const isPlain = (v: unknown): v is Doc =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

// BSON's comparison order of types: null, numbers, strings, objects, arrays, binary, ObjectId,
// booleans, dates.
function rank(v: unknown): number {
  if (v === null || v === undefined) return 1;
  if (isNumeric(v)) return 2;
  if (typeof v === 'string') return 3;
  if (Array.isArray(v)) return 5;
  if (v instanceof Binary) return 6;
  if (v instanceof ObjectId) return 7;
  if (typeof v === 'boolean') return 8;
  if (v instanceof Date) return 9;
  return 4;
}

export function compare(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 1:
      return 0;
    case 2:
      return num(a) - num(b);
    case 3:
      return a === b ? 0 : (a as string) < (b as string) ? -1 : 1;
    case 7:
      return (a as ObjectId).toHexString().localeCompare((b as ObjectId).toHexString());
    case 8:
      return Number(a) - Number(b);
    case 9:
      return (a as Date).getTime() - (b as Date).getTime();
    default: {
      const x = EJSON.stringify(a as Doc);
      const y = EJSON.stringify(b as Doc);
      return x === y ? 0 : x < y ? -1 : 1;
    }
  }
}

/** Equal values have equal keys (1, Int32(1) and 1.0 alike). */
export function keyOf(v: unknown): string {
  const r = rank(v);
  if (r === 2) return `2:${num(v)}`;
  if (r === 7) return `7:${(v as ObjectId).toHexString()}`;
  if (r === 9) return `9:${(v as Date).getTime()}`;
  if (r === 3) return `3:${v}`;
  return `${r}:${EJSON.stringify({ v } as Doc)}`;
}

/** Values at a dotted path; arrays on the way are walked, a leaf array also offers its items. */
export function valuesAt(doc: unknown, path: string): unknown[] {
  const parts = path.split('.');
  let current: unknown[] = [doc];
  for (const part of parts) {
    const next: unknown[] = [];
    for (const c of current) {
      if (Array.isArray(c)) {
        for (const item of c) if (isPlain(item) && part in item) next.push(item[part]);
      } else if (isPlain(c) && part in c) next.push(c[part]);
    }
    current = next;
  }
  const out: unknown[] = [];
  for (const v of current) {
    out.push(v);
    if (Array.isArray(v)) out.push(...v);
  }
  return out;
}

function fieldMatches(values: unknown[], cond: unknown): boolean {
  const isOps =
    isPlain(cond) && Object.keys(cond).length > 0 && Object.keys(cond).every((k) => k.startsWith('$'));
  if (!isOps) {
    if (values.length === 0) return cond === null;
    return values.some((v) => compare(v, cond) === 0);
  }
  return Object.entries(cond as Doc).every(([op, arg]) => {
    const sameKind = (v: unknown) => rank(v) === rank(arg);
    switch (op) {
      case '$eq':
        return fieldMatches(values, { $in: [arg] });
      case '$ne':
        return !fieldMatches(values, { $in: [arg] });
      case '$gt':
        return values.some((v) => sameKind(v) && compare(v, arg) > 0);
      case '$gte':
        return values.some((v) => sameKind(v) && compare(v, arg) >= 0);
      case '$lt':
        return values.some((v) => sameKind(v) && compare(v, arg) < 0);
      case '$lte':
        return values.some((v) => sameKind(v) && compare(v, arg) <= 0);
      case '$in':
        if (!Array.isArray(arg)) throw badValue('$in needs an array');
        return arg.some((a) => (values.length === 0 ? a === null : values.some((v) => compare(v, a) === 0)));
      case '$nin':
        return !fieldMatches(values, { $in: arg });
      case '$exists':
        return values.length > 0 === Boolean(num(arg) || arg === true);
      default:
        throw badValue(`unknown operator: ${op}`);
    }
  });
}

export function matches(doc: Doc, filter: Doc | undefined): boolean {
  if (!filter) return true;
  for (const [key, cond] of Object.entries(filter)) {
    if (key === '$and' || key === '$or' || key === '$nor') {
      if (!Array.isArray(cond) || cond.length === 0) throw badValue(`${key} must be a nonempty array`);
      const results = cond.map((c) => matches(doc, c));
      if (key === '$and' && !results.every(Boolean)) return false;
      if (key === '$or' && !results.some(Boolean)) return false;
      if (key === '$nor' && results.some(Boolean)) return false;
    } else if (key.startsWith('$')) {
      throw badValue(`unknown top level operator: ${key}`);
    } else if (!fieldMatches(valuesAt(doc, key), cond)) return false;
  }
  return true;
}

/** Top-level equality fields of a filter (what an upsert copies into the new document). */
export function equalities(filter: Doc): Doc | null {
  const out: Doc = {};
  for (const [k, v] of Object.entries(filter ?? {})) {
    if (k.startsWith('$') || k.includes('.')) return null;
    if (isPlain(v)) {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === '$eq') out[k] = v.$eq;
      else if (keys.some((x) => x.startsWith('$'))) return null;
      else out[k] = v;
    } else out[k] = v;
  }
  return out;
}

function evaluate(doc: Doc, expr: unknown): unknown {
  if (typeof expr === 'string' && expr.startsWith('$')) return valuesAt(doc, expr.slice(1))[0] ?? null;
  if (isPlain(expr)) {
    if ('$literal' in expr) return expr.$literal;
    return Object.fromEntries(Object.entries(expr).map(([k, v]) => [k, evaluate(doc, v)]));
  }
  return expr;
}

function setPath(target: Doc, path: string, value: unknown) {
  const parts = path.split('.');
  let cur = target;
  for (const p of parts.slice(0, -1)) {
    if (!isPlain(cur[p])) cur[p] = {};
    cur = cur[p];
  }
  cur[parts[parts.length - 1]] = value;
}

const flag = (v: unknown) => v === true || (isNumeric(v) && num(v) !== 0);
const isFlag = (v: unknown) => typeof v === 'boolean' || isNumeric(v);

export function project(doc: Doc, projection: Doc | undefined): Doc {
  if (!projection || Object.keys(projection).length === 0) return doc;
  const entries = Object.entries(projection);
  const inclusion = entries.some(([k, v]) => k !== '_id' && (!isFlag(v) || flag(v)));
  if (!inclusion) {
    const out: Doc = { ...doc };
    for (const [k] of entries) delete out[k];
    return out;
  }
  const out: Doc = {};
  if (!('_id' in projection) || flag(projection._id) || !isFlag(projection._id)) {
    if ('_id' in doc)
      out._id = '_id' in projection && !isFlag(projection._id) ? evaluate(doc, projection._id) : doc._id;
  }
  for (const [k, v] of entries) {
    if (k === '_id') continue;
    if (isFlag(v)) {
      const found = valuesAt(doc, k);
      if (found.length > 0) setPath(out, k, found[0]);
    } else setPath(out, k, evaluate(doc, v));
  }
  return out;
}

export function sortDocs(docs: Doc[], sort: Doc | undefined): Doc[] {
  const keys = Object.entries(sort ?? {}).map(([k, d]) => [k, num(d) < 0 ? -1 : 1] as const);
  if (keys.length === 0) return docs;
  return [...docs].sort((a, b) => {
    for (const [k, d] of keys) {
      const c = compare(valuesAt(a, k)[0] ?? null, valuesAt(b, k)[0] ?? null);
      if (c !== 0) return c * d;
    }
    return 0;
  });
}

function group(docs: Doc[], spec: Doc): Doc[] {
  const groups = new Map<string, Doc>();
  const fields = Object.entries(spec).filter(([k]) => k !== '_id');
  for (const doc of docs) {
    const id = evaluate(doc, spec._id);
    const key = keyOf(id);
    let g = groups.get(key);
    if (!g) {
      g = { _id: id };
      for (const [name] of fields) g[name] = undefined;
      groups.set(key, g);
    }
    for (const [name, acc] of fields) {
      if (!isPlain(acc) || Object.keys(acc).length !== 1)
        throw badValue(`group field ${name} needs one accumulator`);
      const [op, arg] = Object.entries(acc)[0];
      if (op === '$sum' || op === '$count') {
        const v = op === '$count' ? 1 : evaluate(doc, arg);
        g[name] = (g[name] ?? 0) + (isNumeric(v) ? num(v) : 0);
      } else if (op === '$first') {
        if (g[name] === undefined) g[name] = evaluate(doc, arg) ?? null;
      } else if (op === '$max' || op === '$min') {
        const v = evaluate(doc, arg);
        if (g[name] === undefined || (op === '$max' ? compare(v, g[name]) > 0 : compare(v, g[name]) < 0))
          g[name] = v;
      } else throw new CommandError(15952, 'Location15952', `unknown group operator '${op}'`);
    }
  }
  return [...groups.values()];
}

/** Runs an aggregation pipeline over documents (the stages the connector's tests use). */
export function aggregate(input: Doc[], pipeline: Doc[]): Doc[] {
  let docs = input;
  for (const stage of pipeline) {
    const keys = Object.keys(stage ?? {});
    if (keys.length !== 1)
      throw new CommandError(
        40323,
        'Location40323',
        'A pipeline stage specification object must contain exactly one field.',
      );
    const [name] = keys;
    const arg = stage[name];
    switch (name) {
      case '$match':
        docs = docs.filter((d) => matches(d, arg));
        break;
      case '$project':
        docs = docs.map((d) => project(d, arg));
        break;
      case '$sort':
        docs = sortDocs(docs, arg);
        break;
      case '$limit':
        docs = docs.slice(0, num(arg));
        break;
      case '$skip':
        docs = docs.slice(num(arg));
        break;
      case '$sample': {
        const copy = [...docs];
        for (let i = copy.length - 1; i > 0; i--) {
          const j = Math.floor(Math.random() * (i + 1));
          [copy[i], copy[j]] = [copy[j], copy[i]];
        }
        docs = copy.slice(0, num(arg.size));
        break;
      }
      case '$count':
        docs = docs.length === 0 ? [] : [{ [arg]: new Int32(docs.length) }];
        break;
      case '$group':
        docs = group(docs, arg);
        break;
      default:
        throw new CommandError(40324, 'Location40324', `Unrecognized pipeline stage name: '${name}'`);
    }
  }
  return docs;
}

/** A deep copy of plain objects and arrays; BSON values are immutable and shared. */
export function copyDoc<T>(v: T): T {
  if (Array.isArray(v)) return v.map(copyDoc) as T;
  if (isPlain(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copyDoc(x)])) as T;
  return v;
}

/** Applies an update document ($set, $unset, $inc, $setOnInsert) or a replacement. */
export function applyUpdate(doc: Doc, update: Doc, inserting: boolean): Doc {
  const ops = Object.keys(update);
  if (!ops.some((k) => k.startsWith('$'))) return { _id: doc._id, ...update };
  const out = copyDoc(doc);
  for (const [op, fields] of Object.entries(update)) {
    for (const [path, value] of Object.entries(fields as Doc)) {
      if (op === '$set' || (op === '$setOnInsert' && inserting)) setPath(out, path, value);
      else if (op === '$setOnInsert') continue;
      else if (op === '$unset') delete out[path];
      else if (op === '$inc') setPath(out, path, num(valuesAt(out, path)[0] ?? 0) + num(value));
      else throw new CommandError(9, 'FailedToParse', `Unknown modifier: ${op}`);
    }
  }
  return out;
}
