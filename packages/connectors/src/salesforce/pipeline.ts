import type { Payload, SinkResult, SourceOutput, StepContext } from '@sluice/engine';
import { rowsOf } from '@sluice/engine';
import { z } from 'zod';
import { deferred, tracked } from '../payloads/streams';
import { signalOf } from '../relational/pipeline';
import { assertWritable, type ConnectorContext, ConnectorError } from '../types';
import { openSalesforce, type SalesforceConnection, salesforceError } from './client';
import { flatRecord, type QueryPage, queryPages } from './operations';
import { renderSoql } from './soql';

// Pipeline steps on Salesforce (operation type `object_rows`). A source runs one SOQL query
// and streams its pages (each nextRecordsUrl fetched only when the previous page was consumed)
// as JSON records. A sink upserts by an external-id field through the sObject Collections API,
// 200 records a request (all-or-none within each request).

const NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

export const salesforceSourceOperation = z
  .object({
    operation_type: z.literal('object_rows'),
    soql: z
      .string()
      .min(1)
      .max(100_000)
      .describe('SOQL query; `{{…}}` templates become escaped SOQL literals.'),
  })
  .strict();

export const salesforceSinkOperation = z
  .object({
    operation_type: z.literal('object_rows'),
    object: z.string().regex(NAME, 'an sObject API name such as Contact or Invoice__c').max(255),
    external_id_field: z.string().regex(NAME, 'a field API name such as External_Id__c').max(255),
    mode: z.literal('upsert').default('upsert'),
  })
  .strict();

const BATCH = 200;

function operation<T extends z.ZodType>(schema: T, step: StepContext): z.infer<T> {
  const parsed = schema.safeParse(step.step.operation);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `operation.${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
  }
  return parsed.data;
}

export async function readSalesforce(
  conn: SalesforceConnection,
  step: StepContext,
  ctx: ConnectorContext,
): Promise<SourceOutput> {
  const op = operation(salesforceSourceOperation, step);
  const { text, values } = renderSoql(op.soql, (name) => step.render(`{{${name}}}`), true);
  const session = await openSalesforce(conn, { ...ctx, signal: signalOf(step, ctx) });
  const pages = queryPages(session, text);
  let first: IteratorResult<QueryPage>;
  try {
    first = await pages.next();
  } catch (err) {
    await session.close();
    throw salesforceError(err, conn, values);
  }
  async function* batches(): AsyncGenerator<unknown[]> {
    try {
      let res = first;
      while (!res.done) {
        if (res.value.records.length > 0) yield res.value.records.map((r) => flatRecord(r));
        res = await pages.next();
      }
    } catch (err) {
      throw salesforceError(err, conn, values);
    } finally {
      await session.close();
    }
  }
  const ended = deferred<string | null>();
  return {
    payload: { kind: 'json', batches: tracked(batches(), () => ended.resolve(null), ended.reject) },
    nextCursor: () => ended.promise,
  };
}

type SaveResult = { id?: string; success: boolean; errors?: { statusCode?: string; fields?: string[] }[] };

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
