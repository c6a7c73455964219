import { type Payload, rowsOf, type SinkResult, type StepContext } from '@sluice/engine';
import { calculateObjectSize } from 'bson';
import type { AnyBulkWriteOperation, Document } from 'mongodb';
import { signalOf } from '../relational/pipeline';
import { assertWritable, type ConnectorContext, ConnectorError } from '../types';
import { connectMongo, failure, type MongoConnection } from './connect';
import { operationOf } from './source';
import { convertersOf } from './values';

// A pipeline sink on MongoDB: the upstream payload becomes documents (rows by their column
// types, JSON records as they are, CSV cells as text), written with ordered bulkWrite calls of
// batch_size documents. insert adds documents; upsert replaces the document whose key fields
// equal the record's (inserting it when there is none), so a re-run writes the same state.
// MongoDB commits each document on its own: a failure leaves the batches before it written.

const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  !(v instanceof Uint8Array) &&
  !(v instanceof Date);

/** The payload as batches of documents. */
async function* documentsOf(input: Payload): AsyncGenerator<Document[]> {
  if (input.kind === 'file' || input.kind === 'form')
    throw invalid(
      `a ${input.kind} payload cannot be written to a collection; it takes rows, JSON records or CSV`,
    );
  if (input.kind === 'json') {
    for await (const batch of input.batches) yield batch.map((r) => (isRecord(r) ? r : { value: r ?? null }));
    return;
  }
  const rows = await rowsOf(input);
  const names = rows.columns.map((c) => c.name);
  const convert = convertersOf(rows.columns);
  for await (const batch of rows.batches) {
    yield batch.map((row) => {
      const doc: Document = {};
      for (let i = 0; i < names.length; i++) {
        const v = row[i];
        doc[names[i]] = v === null || v === undefined ? null : convert[i](v);
      }
      return doc;
    });
  }
}

export async function writeMongo(
  conn: MongoConnection,
  input: Payload,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SinkResult> {
  assertWritable(ctx);
  const op = operationOf(step);
  const write = op.write;
  if (!write) throw invalid('a MongoDB sink step needs operation.write {mode, key}');
  for (const f of ['filter', 'projection', 'sort', 'skip', 'limit', 'pipeline'] as const)
    if (op[f] !== undefined) throw invalid(`operation.${f} belongs to a source step`);
  const key = write.key ?? [];
  const runCtx = { ...ctx, signal: signalOf(step, ctx) };
  const handle = await connectMongo(conn, runCtx);
  const coll = handle.client.db(conn.config.database).collection(op.collection);
  let rows = 0;
  let bytes = 0;
  let inserted = 0;
  let updated = 0;
  try {
    for await (const batch of documentsOf(input)) {
      for (let i = 0; i < batch.length; i += op.batch_size) {
        const slice = batch.slice(i, i + op.batch_size);
        let sliceBytes = 0;
        const ops: AnyBulkWriteOperation<Document>[] = slice.map((doc, j) => {
          const dollar = Object.keys(doc).find((k) => k.startsWith('$'));
          if (dollar !== undefined)
            throw invalid(`field ${JSON.stringify(dollar)}: field names starting with $ cannot be written`);
          sliceBytes += calculateObjectSize(doc);
          if (write.mode === 'insert') return { insertOne: { document: doc } };
          const filter: Document = {};
          for (const k of key) {
            const v = doc[k];
            if (v === null || v === undefined)
              throw new ConnectorError(
                'QUERY_FAILED',
                `record ${rows + i + j + 1} has no value for key field ${k}`,
              );
            // $eq keeps the value a value, even an object that looks like an operator.
            filter[k] = { $eq: v };
          }
          return { replaceOne: { filter, replacement: doc, upsert: true } };
        });
        // A closed client would reconnect for the next write: the signal is checked first.
        if (runCtx.signal.aborted) throw new ConnectorError('TIMEOUT', 'the run was canceled');
        const r = await coll.bulkWrite(ops, { ordered: true });
        inserted += r.insertedCount + r.upsertedCount;
        updated += r.matchedCount;
        rows += slice.length;
        bytes += sliceBytes;
        step.count({ rows_out: slice.length, bytes_out: sliceBytes });
      }
    }
    const blocked = handle.blocked();
    if (blocked) throw blocked;
  } catch (err) {
    throw failure(err, conn, runCtx, handle);
  } finally {
    await handle.close();
  }
  step.log(
    'info',
    write.mode === 'insert'
      ? `insert: ${rows} documents into ${op.collection}`
      : `upsert: ${rows} documents into ${op.collection} (${inserted} inserted, ${updated} replaced)`,
  );
  return { rows, bytes };
}
