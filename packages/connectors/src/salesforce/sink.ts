import type { Payload, SinkResult, StepContext } from '@sluice/engine';
import { rowsOf } from '@sluice/engine';
import { signalOf } from '../relational/pipeline';
import { assertWritable, type ConnectorContext, ConnectorError } from '../types';
import { openSalesforce, type SalesforceConnection, salesforceError } from './client';
import { salesforceSinkOperation } from './config';
import { BATCH, operation, type SaveResult } from './source';

export async function writeSalesforce(
  conn: SalesforceConnection,
  input: Payload,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SinkResult> {
  assertWritable(ctx);
  const op = operation(salesforceSinkOperation, step);
  if (input.kind === 'file' || input.kind === 'form') {
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `a ${input.kind} payload cannot be upserted; it takes rows, JSON records or CSV`,
    );
  }
  const rows = await rowsOf(input);
  const names = rows.columns.map((c) => c.name);
  if (names.length > 0 && !names.includes(op.external_id_field)) {
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `the input has no column ${op.external_id_field} (the external id field)`,
    );
  }
  const session = await openSalesforce(conn, { ...ctx, signal: signalOf(step, ctx) });
  const url = `${session.base}/composite/sobjects/${op.object}/${op.external_id_field}`;
  let written = 0;
  let bytes = 0;
  let created = 0;
  let pending: Record<string, unknown>[] = [];
  const flush = async () => {
    if (pending.length === 0) return;
    const body = { allOrNone: true, records: pending };
    const results = await session.call<SaveResult[]>({ method: 'PATCH', url, body });
    const failed = results.find(
      (r) => !r.success && r.errors?.some((e) => e.statusCode !== 'ALL_OR_NONE_OPERATION_ROLLED_BACK'),
    );
    if (failed || results.some((r) => !r.success)) {
      const e =
        failed?.errors?.find((x) => x.statusCode !== 'ALL_OR_NONE_OPERATION_ROLLED_BACK') ??
        failed?.errors?.[0];
      // The code and field names only: a Salesforce message may quote the record's values.
      throw new ConnectorError(
        'QUERY_FAILED',
        `Salesforce refused a batch of ${pending.length} records after ${written} were written (${e?.statusCode ?? 'UNKNOWN'}${e?.fields?.length ? ` on ${e.fields.join(', ')}` : ''}); that batch was not applied`,
      );
    }
    created += results.filter((r: any) => r.created).length;
    written += pending.length;
    bytes += Buffer.byteLength(JSON.stringify(body));
    pending = [];
  };
  try {
    for await (const batch of rows.batches) {
      for (const row of batch) {
        const record: Record<string, unknown> = { attributes: { type: op.object } };
        names.forEach((n, i) => {
          const v = row[i];
          record[n] =
            v instanceof Date ? v.toISOString() : typeof v === 'bigint' ? v.toString() : (v ?? null);
        });
        pending.push(record);
        if (pending.length >= BATCH) await flush();
      }
    }
    await flush();
  } catch (err) {
    throw salesforceError(err, conn);
  } finally {
    await session.close();
  }
  step.log(
    'info',
    `upsert: ${written} records into ${op.object} by ${op.external_id_field} (${created} created)`,
  );
  return { rows: written, bytes };
}
