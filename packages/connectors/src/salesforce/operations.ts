import { type ConnectorContext, ConnectorError, type QueryResult, type SchemaDocument } from '../types';
import { openSalesforce, type SalesforceConnection, type SalesforceSession, salesforceError } from './client';
import { renderSoql } from './soql';

// Connection test, object schema import (describeGlobal + describe of each queryable object) and
// SOQL execution with values written as escaped literals, paged by nextRecordsUrl.

export type SoqlStatement = { type: 'soql'; soql: string };

export async function withSalesforce<T>(
  conn: SalesforceConnection,
  ctx: ConnectorContext,
  work: (s: SalesforceSession) => Promise<T>,
  values: readonly unknown[] = [],
  opts: { answerTimeoutMs?: number } = {},
): Promise<T> {
  const s = await openSalesforce(conn, ctx, opts);
  try {
    return await work(s);
  } catch (err) {
    throw salesforceError(err, conn, values);
  } finally {
    await s.close();
  }
}

/** A connection test gives up sooner than a query: nothing it asks for takes long to answer. */
export const TEST_TIMEOUT_MS = 30_000;

export async function testSalesforce(conn: SalesforceConnection, ctx: ConnectorContext): Promise<void> {
  await withSalesforce(conn, ctx, (s) => s.call({ url: `${s.base}/limits` }), [], {
    answerTimeoutMs: ctx.limits.answerTimeoutMs ?? TEST_TIMEOUT_MS,
  });
}

/** Objects described per import: an org has hundreds; the rest are listed without fields. */
const MAX_DESCRIBED = 300;

export async function importSalesforceSchema(
  conn: SalesforceConnection,
  ctx: ConnectorContext,
): Promise<SchemaDocument> {
  return withSalesforce(conn, ctx, async (s) => {
    const global = await s.call<{ sobjects: { name: string; queryable: boolean }[] }>({
      url: `${s.base}/sobjects`,
    });
    const names = global.sobjects.filter((o) => o.queryable).map((o) => o.name);
    const collections: { name: string; fields: { name: string; type: string }[] }[] = [];
    for (const [i, name] of names.entries()) {
      if (i >= MAX_DESCRIBED) {
        collections.push({ name, fields: [] });
        continue;
      }
      const d = await s.call<{ fields: { name: string; type: string }[] }>({
        url: `${s.base}/sobjects/${encodeURIComponent(name)}/describe`,
      });
      collections.push({ name, fields: d.fields.map((f) => ({ name: f.name, type: f.type })) });
    }
    return { schema_type: 'document', type: 'salesforce', collections };
  });
}

/** A record without its `attributes`, relationship objects flattened to `Parent.Field` keys. */
export function flatRecord(record: Record<string, unknown>, prefix = '', into: Record<string, unknown> = {}) {
  for (const [k, v] of Object.entries(record)) {
    if (k === 'attributes') continue;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && 'attributes' in (v as object)) {
      flatRecord(v as Record<string, unknown>, `${prefix}${k}.`, into);
    } else into[`${prefix}${k}`] = v;
  }
  return into;
}

export type QueryPage = {
  totalSize: number;
  done: boolean;
  nextRecordsUrl?: string;
  records: Record<string, unknown>[];
};

/** Pages of a SOQL query; each next page is the nextRecordsUrl Salesforce named. */
export async function* queryPages(s: SalesforceSession, soql: string): AsyncGenerator<QueryPage> {
  let page = await s.call<QueryPage>({ url: `${s.base}/query?q=${encodeURIComponent(soql)}` });
  for (;;) {
    yield page;
    if (page.done || !page.nextRecordsUrl) return;
    page = await s.call<QueryPage>({ url: page.nextRecordsUrl });
  }
}

export async function executeSalesforce(
  conn: SalesforceConnection,
  statement: SoqlStatement,
  parameters: Record<string, unknown>,
  ctx: ConnectorContext,
): Promise<QueryResult> {
  const { text, values } = renderSoql(statement.soql, (name) => {
    if (!Object.hasOwn(parameters, name)) {
      throw new ConnectorError('INVALID_STATEMENT', `parameter ${name} has no value; pass it in parameters`);
    }
    return parameters[name];
  });
  return withSalesforce(
    conn,
    ctx,
    async (s) => {
      const records: Record<string, unknown>[] = [];
      let bytes = 2;
      let truncated = false;
      let total = 0;
      outer: for await (const page of queryPages(s, text)) {
        total = page.totalSize;
        for (const r of page.records) {
          const flat = flatRecord(r);
          const size = Buffer.byteLength(JSON.stringify(flat)) + 1;
          if (records.length >= ctx.limits.maxRows || bytes + size > ctx.limits.maxResultBytes) {
            truncated = true;
            break outer;
          }
          bytes += size;
          records.push(flat);
        }
      }
      return {
        result_type: 'object_rows',
        payload: { records, total_size: total },
        row_count: records.length,
        truncated,
      };
    },
    values,
  );
}
