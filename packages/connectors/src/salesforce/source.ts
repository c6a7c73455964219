import type { SourceOutput, StepContext } from '@sluice/engine';
import type { z } from 'zod';
import { deferred, tracked } from '../payloads/streams';
import { signalOf } from '../relational/pipeline';
import { type ConnectorContext, ConnectorError } from '../types';
import { openSalesforce, type SalesforceConnection, salesforceError } from './client';
import { salesforceSourceOperation } from './config';
import { flatRecord, type QueryPage, queryPages } from './operations';
import { renderSoql } from './soql';

// Pipeline steps on Salesforce (operation type `object_rows`). A source runs one SOQL query
// and streams its pages (each nextRecordsUrl fetched only when the previous page was consumed)
// as JSON records. A sink upserts by an external-id field through the sObject Collections API,
// 200 records a request (all-or-none within each request).

export const BATCH = 200;

export function operation<T extends z.ZodType>(schema: T, step: StepContext): z.infer<T> {
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

export type SaveResult = {
  id?: string;
  success: boolean;
  errors?: { statusCode?: string; fields?: string[] }[];
};
