import { z } from 'zod';
import { allowPrivateHostsField, secretField } from '../fields';
import { ConnectorError } from '../types';

// Config, credentials and statements of the MongoDB connector. A statement is a find or an
// aggregate on one collection, written as
// JSON (Extended JSON for BSON values: {"$oid": …}, {"$date": …}, {"$numberDecimal": …}).
// A `{{name}}` placeholder may only be a whole JSON string value; it becomes the parameter's
// value, never text spliced into a key, an operator or a longer string. Server-side JavaScript
// ($where, $function, $accumulator) is refused everywhere, and the writing stages ($out,
// $merge) are refused on read-only data sources and in pipeline sources.

export const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}/;
export const WHOLE = /^\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}$/;
const JAVASCRIPT = new Set(['$where', '$function', '$accumulator']);
const WRITING_STAGES = new Set(['$out', '$merge']);
/** Extended JSON type wrappers a parameter value may use: they make values, never operators. */
const VALUE_WRAPPERS = new Set([
  '$oid',
  '$date',
  '$numberLong',
  '$numberDecimal',
  '$numberInt',
  '$numberDouble',
  '$binary',
  '$uuid',
]);

export const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

export const collectionName = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[^$\0]+$/, 'a collection name has no `$` and no NUL')
  .refine((n) => !n.startsWith('system.'), 'system collections cannot be used')
  .describe('Collection name.');

const doc = z.record(z.string(), z.unknown());
const queryFields = {
  collection: collectionName,
  operation: z.enum(['find', 'aggregate']).default('find').describe('find (default) or aggregate.'),
  filter: doc.optional().describe('find: query filter (Extended JSON).'),
  projection: doc.optional().describe('find: fields to return or leave out.'),
  sort: doc.optional().describe('find: sort specification, e.g. {"created_at": -1}.'),
  skip: z.int().min(0).optional().describe('find: documents to skip.'),
  limit: z.int().min(0).optional().describe('find: most documents to return (0 = no limit).'),
  pipeline: z.array(doc).max(100).optional().describe('aggregate: the stages, 1 to 100.'),
};

type Issue = { path: (string | number)[]; message: string };

/** Shape rules a zod object cannot say: which fields belong to which operation, placeholders, JS. */
function queryIssues(s: { operation: string; pipeline?: unknown[]; [k: string]: unknown }): Issue[] {
  const out: Issue[] = [];
  if (s.operation === 'aggregate') {
    if (!s.pipeline || s.pipeline.length === 0)
      out.push({ path: ['pipeline'], message: 'aggregate needs a pipeline of at least one stage' });
    for (const f of ['filter', 'projection', 'sort', 'skip', 'limit'])
      if (s[f] !== undefined)
        out.push({ path: [f], message: `${f} belongs to find; use a stage in pipeline` });
  } else if (s.pipeline !== undefined) {
    out.push({ path: ['pipeline'], message: 'pipeline belongs to aggregate' });
  }
  for (const f of ['filter', 'projection', 'sort', 'pipeline']) {
    if (s[f] === undefined) continue;
    try {
      checkTemplate(s[f], [f]);
      checkOperators(s[f], [f]);
    } catch (err) {
      out.push({ path: [f], message: (err as Error).message });
    }
  }
  return out;
}

export const mongodbStatementSchema = z
  .object({ type: z.literal('mongodb').describe('Statement kind: mongodb.'), ...queryFields })
  .strict()
  .superRefine((s, ctx) => {
    for (const i of queryIssues(s)) ctx.addIssue({ code: 'custom', path: i.path, message: i.message });
  })
  .describe('A find or aggregate on one collection; `{{name}}` only as a whole JSON string value.');

export type MongoStatement = z.infer<typeof mongodbStatementSchema>;

/** The pipeline operation (operation_type mongodb): a query in a source, `write` in a sink. */
export const mongodbOperationSchema = z
  .object({
    operation_type: z.literal('mongodb'),
    ...queryFields,
    batch_size: z.int().min(1).max(10_000).default(1000).describe('Documents per batch read or written.'),
    write: z
      .object({
        mode: z.enum(['insert', 'upsert']).default('insert'),
        key: z
          .array(
            z
              .string()
              .min(1)
              .max(255)
              .regex(/^[^$.\0][^.\0]*$/, 'a top-level field name'),
          )
          .min(1)
          .max(32)
          .optional()
          .describe('Fields that identify a document; required for upsert.'),
      })
      .strict()
      .optional()
      .describe('Sink: how documents are written.'),
  })
  .strict()
  .superRefine((s, ctx) => {
    for (const i of queryIssues(s)) ctx.addIssue({ code: 'custom', path: i.path, message: i.message });
    if (s.write?.mode === 'upsert' && !s.write.key)
      ctx.addIssue({ code: 'custom', path: ['write', 'key'], message: 'upsert needs key fields' });
  });

export type MongoOperation = z.infer<typeof mongodbOperationSchema>;

/** Placeholders only as whole string values; never inside keys or longer strings. */
export function checkTemplate(v: unknown, at: (string | number)[]): void {
  const where = () => at.join('.');
  if (typeof v === 'string') {
    if (PLACEHOLDER.test(v) && !WHOLE.test(v))
      throw invalid(
        `${where()}: a {{placeholder}} must be the whole string value ("{{name}}"), not part of a text`,
      );
    return;
  }
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) checkTemplate(x, [...at, i]);
    return;
  }
  if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k.includes('{{'))
        throw invalid(`${where()}: a {{placeholder}} cannot be a field name or an operator`);
      checkTemplate(x, [...at, k]);
    }
  }
}

/** Refuses server-side JavaScript anywhere in a statement. */
export function checkOperators(v: unknown, at: (string | number)[]): void {
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) checkOperators(x, [...at, i]);
    return;
  }
  if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (JAVASCRIPT.has(k)) throw invalid(`${at.join('.')}: ${k} (server-side JavaScript) is not allowed`);
      checkOperators(x, [...at, k]);
    }
  }
}

/** A pipeline that writes ($out, $merge) at the top level or nested in a sub-pipeline. */
export function writingStage(v: unknown): string | null {
  if (Array.isArray(v)) {
    for (const x of v) {
      const found = writingStage(x);
      if (found) return found;
    }
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (WRITING_STAGES.has(k)) return k;
      const found = writingStage(x);
      if (found) return found;
    }
  }
  return null;
}

/** A parameter value may hold Extended JSON values but no operator ($gt, $where, $regex…). */
export function checkValue(name: string, v: unknown, aggregate: boolean): void {
  if (typeof v === 'string') {
    // In aggregation expressions "$field" is a field path: a value must not become one.
    if (aggregate && v.startsWith('$'))
      throw invalid(
        `parameter ${name}: a text starting with $ would be read as a field path in an aggregate`,
      );
    return;
  }
  if (Array.isArray(v)) {
    for (const x of v) checkValue(name, x, aggregate);
    return;
  }
  if (v && typeof v === 'object') {
    const keys = Object.keys(v);
    if (keys.some((k) => k.startsWith('$'))) {
      if (keys.length >= 1 && keys.every((k) => VALUE_WRAPPERS.has(k))) return;
      throw invalid(`parameter ${name}: an object with $ keys (an operator) cannot be bound as a value`);
    }
    for (const x of Object.values(v)) checkValue(name, x, aggregate);
  }
}

/** Placeholder names of a statement, in order of first use. */
export function placeholderNames(value: unknown): string[] {
  const names = new Set<string>();
  const walk = (v: unknown) => {
    if (typeof v === 'string') {
      const m = WHOLE.exec(v);
      if (m) names.add(m[1]);
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(value);
  return [...names];
}

export const mongodbConfigSchema = z
  .object({
    hosts: z
      .array(
        z
          .string()
          .min(1)
          .max(261)
          .regex(/^(\[[0-9a-fA-F:.]+\]|[^\s/@:[\]]+)(:\d{1,5})?$/, '`host` or `host:port`'),
      )
      .min(1)
      .max(50)
      .describe('Replica-set members or mongos routers, each `host` or `host:port` (port 27017 by default).'),
    database: z.string().min(1).max(64).describe('Database the connector reads and writes.'),
    username: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe('User name; omit for a server without authentication.'),
    auth_source: z
      .string()
      .min(1)
      .max(64)
      .default('admin')
      .describe('Database holding the user (default admin).'),
    replica_set: z.string().min(1).max(255).optional().describe('Replica-set name.'),
    tls: z.boolean().default(true).describe('Connect with TLS (default true).'),
    allow_private_hosts: allowPrivateHostsField,
  })
  .strict()
  .describe('MongoDB connector configuration.');

export const mongodbCredentialsSchema = z
  .object({ password: secretField('Password of the user.').optional() })
  .strict()
  .describe('MongoDB credentials; `{}` when the server needs no authentication. Write-only.');

export type MongoConfig = z.infer<typeof mongodbConfigSchema>;
export type MongoCredentials = z.infer<typeof mongodbCredentialsSchema>;
