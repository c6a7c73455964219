import type { Payload, SinkResult, StepContext } from '@sluice/engine';
import { googleError } from '../google/auth';
import { signalOf, tableRows } from '../relational/pipeline';
import { assertWritable, type ConnectorContext, ConnectorError } from '../types';
import { type BigQueryConnection, type OpenBigQuery, openBigQuery, tableRef } from './client';
import { INSERT_BATCH, insertRows } from './operations';
import { invalid, sqlOp } from './source';

export async function writeBigQuery(
  conn: BigQueryConnection,
  input: Payload,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SinkResult> {
  assertWritable(ctx);
  const write = sqlOp(step).write;
  if (!write) throw invalid('a BigQuery sink step needs operation.write');
  if (write.mode !== 'insert')
    throw new ConnectorError(
      'UNSUPPORTED_OPERATION',
      `BigQuery sinks append (mode insert); ${write.mode} is not supported`,
    );
  if (write.create_table)
    throw new ConnectorError(
      'UNSUPPORTED_OPERATION',
      'BigQuery sinks write to an existing table; create it first',
    );
  const ref = tableRef(write.table, undefined, conn);
  const rows = await tableRows(input);
  const names = rows.columns.map((c) => c.name);
  const prefix = `${step.runSlug}-${step.step.slug}-`;
  let client: OpenBigQuery | null = null;
  let written = 0;
  let bytes = 0;
  try {
    client = await openBigQuery(conn, ctx, conn.config.timeout_seconds);
    let pending: Record<string, unknown>[] = [];
    const flush = async () => {
      if (pending.length === 0) return;
      await insertRows(client as OpenBigQuery, ref, pending, prefix, written);
      written += pending.length;
      step.count({ rows_out: pending.length });
      pending = [];
    };
    for await (const batch of rows.batches) {
      if (signalOf(step, ctx).aborted) throw new ConnectorError('TIMEOUT', 'the run was canceled');
      for (const row of batch) {
        const obj: Record<string, unknown> = {};
        names.forEach((n, i) => {
          obj[n] = row[i];
        });
        bytes += Buffer.byteLength(
          JSON.stringify(obj, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
        );
        pending.push(obj);
        if (pending.length >= INSERT_BATCH) await flush();
      }
    }
    await flush();
  } catch (err) {
    throw googleError(err, `insert into ${ref.dataset}.${ref.table}`, true);
  } finally {
    client?.close();
  }
  return { rows: written, bytes };
}
