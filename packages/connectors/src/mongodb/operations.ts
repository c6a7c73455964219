import type { AbstractCursor, Db, Document, Sort } from 'mongodb';
import { type ConnectorContext, ConnectorError, type QueryResult, type SchemaDocument } from '../types';
import { bindStatement } from './bind';
import { type MongoOperation, type MongoStatement, placeholderNames, writingStage } from './config';
import { type MongoConnection, withMongo } from './connect';
import { FieldTypes } from './schema';
import { toJson } from './values';

// Connection test, schema import and saved-query execution.

/** Documents sampled per collection by schema import. */
export const SAMPLE_SIZE = 100;
const MAX_COLLECTIONS = 1000;
/** Server-side time limit of one saved-query execution. */
export const EXECUTE_MAX_TIME_MS = 30_000;

export async function testMongo(conn: MongoConnection, ctx: ConnectorContext): Promise<void> {
  await withMongo(conn, ctx, async (client) => {
    // ping on the configured database authenticates (the connection does) and reaches a server.
    await client.db(conn.config.database).command({ ping: 1 });
  });
}

export async function importMongoSchema(
  conn: MongoConnection,
  ctx: ConnectorContext,
): Promise<SchemaDocument> {
  return withMongo(conn, ctx, async (client) => {
    const db = client.db(conn.config.database);
    const listed = await db.listCollections({}, { nameOnly: true, authorizedCollections: true }).toArray();
    const names = listed
      .filter((c) => (c.type ?? 'collection') !== 'timeseries-buckets' && !c.name.startsWith('system.'))
      .map((c) => c.name)
      .sort()
      .slice(0, MAX_COLLECTIONS);
    const collections: { name: string; fields: { name: string; type: string }[] }[] = [];
    for (const name of names) {
      const types = new FieldTypes();
      // Typed values (Int32 vs Double, Long) so the field types are the stored ones.
      const cursor = db.collection(name).aggregate([{ $sample: { size: SAMPLE_SIZE } }], {
        promoteValues: false,
        promoteLongs: false,
        useBigInt64: false,
        maxTimeMS: EXECUTE_MAX_TIME_MS,
      });
      for await (const doc of cursor) types.add(doc);
      collections.push({ name, fields: types.fields() });
    }
    return { schema_type: 'document', type: 'mongodb', collections };
  });
}

type Query = Pick<
  MongoStatement,
  'collection' | 'operation' | 'filter' | 'projection' | 'sort' | 'skip' | 'limit' | 'pipeline'
>;

/** The cursor of a bound find or aggregate. */
export function openCursor(
  db: Db,
  q: Query,
  opts: { batchSize: number; maxTimeMS?: number },
): AbstractCursor<Document> {
  const coll = db.collection(q.collection);
  const common = { batchSize: opts.batchSize, ...(opts.maxTimeMS ? { maxTimeMS: opts.maxTimeMS } : {}) };
  if (q.operation === 'aggregate') return coll.aggregate(q.pipeline ?? [], common);
  return coll.find(q.filter ?? {}, {
    ...common,
    ...(q.projection ? { projection: q.projection } : {}),
    ...(q.sort ? { sort: q.sort as Sort } : {}),
    ...(q.skip ? { skip: q.skip } : {}),
    ...(q.limit ? { limit: q.limit } : {}),
  });
}

/** A statement with its placeholders bound; refuses writing stages where writing is not allowed. */
export function boundQuery(
  q: Query,
  resolve: (name: string) => { found: true; value: unknown } | { found: false },
  opts: { writesAllowed: boolean; why: string; code?: 'PERMISSION_DENIED' | 'INVALID_STATEMENT' },
): Query {
  const parts = bindStatement(
    { filter: q.filter, projection: q.projection, sort: q.sort, pipeline: q.pipeline },
    resolve,
    { aggregate: q.operation === 'aggregate' },
  );
  const out: Query = { ...q, ...parts };
  const stage = q.operation === 'aggregate' ? writingStage(out.pipeline) : null;
  if (stage && !opts.writesAllowed)
    throw new ConnectorError(
      opts.code ?? 'PERMISSION_DENIED',
      `${stage} writes to a collection, which ${opts.why}`,
    );
  return out;
}

export type MongoPayload = {
  operation: 'find' | 'aggregate';
  collection: string;
  documents: unknown[];
};

export async function executeMongo(
  conn: MongoConnection,
  statement: MongoStatement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
): Promise<QueryResult> {
  const names = placeholderNames(statement);
  const missing = names.find((n) => !Object.hasOwn(parameters, n));
  if (missing) throw new ConnectorError('INVALID_STATEMENT', `parameter ${missing} has no value`);
  const query = boundQuery(
    statement,
    (name) => (Object.hasOwn(parameters, name) ? { found: true, value: parameters[name] } : { found: false }),
    { writesAllowed: ctx.readOnly !== true, why: 'a read-only data source does not allow' },
  );
  const values = names.map((n) => parameters[n]);
  return withMongo(
    conn,
    ctx,
    async (client) => {
      const { maxRows, maxResultBytes } = ctx.limits;
      const cursor = openCursor(client.db(conn.config.database), query, {
        batchSize: Math.min(maxRows + 1, 1000),
        maxTimeMS: EXECUTE_MAX_TIME_MS,
      });
      const documents: unknown[] = [];
      let bytes = 2;
      let truncated = false;
      try {
        for await (const doc of cursor) {
          if (ctx.signal?.aborted) throw new ConnectorError('TIMEOUT', 'the execution was canceled');
          if (documents.length >= maxRows) {
            truncated = true;
            break;
          }
          const json = toJson(doc);
          const size = Buffer.byteLength(JSON.stringify(json)) + 1;
          if (bytes + size > maxResultBytes) {
            truncated = true;
            break;
          }
          bytes += size;
          documents.push(json);
        }
      } finally {
        await cursor.close().catch(() => {});
      }
      const payload: MongoPayload = { operation: query.operation, collection: query.collection, documents };
      return { result_type: 'mongodb', payload, row_count: documents.length, truncated };
    },
    values,
  );
}

export type { MongoOperation };
