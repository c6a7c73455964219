import type { SourceOutput, StepContext } from '@sluice/engine';
import { cursorTracker, rowsOutput } from '../relational/cursor';
import { signalOf, sourceQuery } from '../relational/pipeline';
import type { ConnectorContext } from '../types';
import { openSnowflake, payloadType, plain, type SnowflakeConnection, snowflakeError } from './connect';

// A pipeline source on Snowflake: the query runs with `streamResult`, and rows are pulled from
// statement.streamRows() as the payload is read — the SDK fetches result chunks on demand, so a
// large result is never held whole. Templates are bound as `?` values.

const BATCH = 5000;

export async function readSnowflake(
  conn: SnowflakeConnection,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SourceOutput> {
  const query = sourceQuery(step, 'mysql');
  const session = await openSnowflake(conn, { ...ctx, signal: signalOf(step, ctx) });
  let statement: Awaited<ReturnType<typeof session.stream>>;
  try {
    statement = await session.stream(query.text, query.values);
  } catch (err) {
    await session.close();
    throw snowflakeError(err, conn, query.values);
  }
  const columns = (statement.getColumns() ?? []).map((c) => ({
    name: c.getName(),
    type: payloadType(c.getType(), c.getScale()),
  }));
  let cursor: ReturnType<typeof cursorTracker>;
  try {
    cursor = cursorTracker(step, columns);
  } catch (err) {
    await session.close();
    throw err;
  }

  async function* batches(): AsyncGenerator<unknown[][]> {
    const rows = statement.streamRows();
    try {
      let batch: unknown[][] = [];
      for await (const row of rows as AsyncIterable<unknown[]>) {
        batch.push(row.map(plain));
        if (batch.length >= BATCH) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    } catch (err) {
      throw snowflakeError(err, conn, query.values);
    } finally {
      (rows as any).destroy?.();
      await session.close();
    }
  }
  return rowsOutput(columns, batches(), cursor);
}
