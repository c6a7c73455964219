import type { Operation, SourceOutput, StepContext } from '@sluice/engine';
import { googleError } from '../google/auth';
import { type CursorTracker, cursorTracker, rowsOutput } from '../relational/cursor';
import { signalOf } from '../relational/pipeline';
import { type ConnectorContext, ConnectorError } from '../types';
import { type BigQueryConnection, type OpenBigQuery, openBigQuery } from './client';
import { runQuery } from './query';

// Pipeline steps on BigQuery (operation_type `sql`). A source runs its query as a job and
// streams the result a page (pageToken) at a time, its greatest `cursor_column` value the next
// cursor; a sink appends with tabledata.insertAll in
// batches of 500 rows, each row with an insert id `<run>-<step>-<n>`, so a retried batch of
// the same run is de-duplicated by BigQuery instead of doubled.

const PAGE = 5000;
export const invalid = (message: string) => new ConnectorError('INVALID_STATEMENT', message);

export function sqlOp(step: StepContext): Extract<Operation, { operation_type: 'sql' }> {
  const op = step.step.operation;
  if (op.operation_type !== 'sql')
    throw invalid(`a BigQuery data source runs sql operations, not ${op.operation_type}`);
  return op;
}

export async function readBigQuery(
  conn: BigQueryConnection,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SourceOutput> {
  const op = sqlOp(step);
  if (!op.sql) throw invalid('a BigQuery source step needs operation.sql');
  const keyword = /^\s*\(?\s*([A-Za-z]+)/.exec(op.sql)?.[1]?.toUpperCase();
  if (keyword !== 'SELECT' && keyword !== 'WITH')
    throw invalid('a BigQuery source runs a query (SELECT or WITH)');
  const signal = signalOf(step, ctx);
  let client: OpenBigQuery | null = null;
  let pages: AsyncGenerator<unknown[][]>;
  let columns: { name: string; type: string }[];
  let cursor: CursorTracker | null;
  try {
    client = await openBigQuery(conn, ctx, conn.config.timeout_seconds);
    const result = await runQuery(
      client,
      conn,
      {
        sql: op.sql,
        values: (name) => step.render(`{{${name}}}`),
        timeoutSeconds: conn.config.timeout_seconds,
        pageSize: PAGE,
      },
      signal,
    );
    pages = result.pages;
    columns = result.columns;
    cursor = cursorTracker(step, columns);
  } catch (err) {
    client?.close();
    if (err instanceof ConnectorError) throw err;
    throw googleError(err, 'source query', true);
  }
  const open = client;
  async function* batches(): AsyncGenerator<unknown[][]> {
    try {
      for await (const page of pages) if (page.length > 0) yield page;
    } catch (err) {
      throw googleError(err, 'source query', true);
    } finally {
      open.close();
    }
  }
  return rowsOutput(columns, batches(), cursor);
}
