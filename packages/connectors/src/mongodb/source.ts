import type { SourceOutput, StepContext } from '@sluice/engine';
import type { AbstractCursor, Document } from 'mongodb';
import { deferred, tracked } from '../payloads/streams';
import { signalOf } from '../relational/pipeline';
import { type ConnectorContext, ConnectorError } from '../types';
import { type MongoOperation, mongodbOperationSchema } from './config';
import { connectMongo, failure, type MongoConnection } from './connect';
import { boundQuery, openCursor } from './operations';
import { toJson } from './values';

// A pipeline source on MongoDB: the find or aggregate runs behind a server cursor read one
// batch (batch_size documents, one getMore) at a time as the payload is consumed, so a large
// collection is never held. Documents become JSON records (values converted as in values.ts).

/** The step's operation, checked against the mongodb operation shape. */
export function operationOf(step: StepContext): MongoOperation {
  const op = step.step.operation;
  if (op.operation_type !== 'mongodb')
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `a MongoDB data source runs mongodb operations, not ${op.operation_type}`,
    );
  const parsed = mongodbOperationSchema.safeParse(op);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue.path.length > 0 ? `operation.${issue.path.join('.')}: ` : '';
    throw new ConnectorError('INVALID_STATEMENT', `${at}${issue.message}`);
  }
  return parsed.data;
}

export async function readMongo(
  conn: MongoConnection,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SourceOutput> {
  const op = operationOf(step);
  if (op.write) throw new ConnectorError('INVALID_STATEMENT', 'operation.write belongs to a sink step');
  // Rendering happens here, at the outbound call; a missing template throws TemplateError.
  const values: unknown[] = [];
  const query = boundQuery(
    op,
    (name) => {
      const value = step.render(`{{${name}}}`);
      values.push(value);
      return { found: true, value };
    },
    {
      writesAllowed: false,
      why: 'a source step does not do (write with a sink step)',
      code: 'INVALID_STATEMENT',
    },
  );
  const runCtx = { ...ctx, signal: signalOf(step, ctx) };
  const handle = await connectMongo(conn, runCtx);
  let cursor: AbstractCursor<Document>;
  try {
    cursor = openCursor(handle.client.db(conn.config.database), query, { batchSize: op.batch_size });
    // The first batch now: a bad query or bad credentials fail the step before it streams.
    await cursor.hasNext();
    const blocked = handle.blocked();
    if (blocked) throw blocked;
  } catch (err) {
    const mapped = failure(err, conn, runCtx, handle, values);
    await handle.close();
    throw mapped;
  }
  async function* batches(): AsyncGenerator<unknown[]> {
    try {
      // A closed client would reconnect for the next getMore: the signal is checked first.
      while (!runCtx.signal.aborted && (await cursor.hasNext())) {
        const docs = cursor.readBufferedDocuments();
        if (docs.length > 0) yield docs.map(toJson);
      }
      if (runCtx.signal.aborted) throw new ConnectorError('TIMEOUT', 'the run was canceled');
    } catch (err) {
      throw failure(err, conn, runCtx, handle, values);
    } finally {
      await cursor.close().catch(() => {});
      await handle.close();
    }
  }
  const ended = deferred<string | null>();
  return {
    payload: { kind: 'json', batches: tracked(batches(), () => ended.resolve(null), ended.reject) },
    nextCursor: () => ended.promise,
  };
}
