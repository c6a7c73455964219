import type { Job } from '@google-cloud/bigquery';
import type { Column } from '../types';
import { ConnectorError } from '../types';
import { type BigQueryConnection, capped, type OpenBigQuery } from './client';
import { compileBigQuery, parameterTypes, parameterValue } from './params';

// A query job and its result pages. The job carries maximum_bytes_billed, so BigQuery itself
// refuses a query that would bill more; results are read a page (pageToken) at a time.

export type QueryOptions = {
  sql: string;
  /** Template name → value. */
  values: (name: string) => unknown;
  dataset?: string;
  maximumBytesBilled?: number;
  timeoutSeconds: number;
  pageSize: number;
};

export type QueryPages = {
  columns: Column[];
  /** Pages of rows in column order; the first one is already fetched. */
  pages: AsyncGenerator<unknown[][]>;
  totalRows: number | null;
};

export async function runQuery(
  client: OpenBigQuery,
  conn: BigQueryConnection,
  o: QueryOptions,
  signal?: AbortSignal,
): Promise<QueryPages> {
  const compiled = compileBigQuery(o.sql);
  const params: Record<string, unknown> = {};
  for (const [template, param] of compiled.names) params[param] = parameterValue(o.values(template));
  const dataset = o.dataset ?? conn.config.default_dataset;
  const bytes = capped(o.maximumBytesBilled, conn.config.maximum_bytes_billed);
  const deadline = Date.now() + o.timeoutSeconds * 1000;
  const [job] = (await client.checked(() =>
    client.bq.createQueryJob({
      query: compiled.text,
      params,
      types: parameterTypes(params) as any,
      useLegacySql: false,
      location: conn.config.location,
      jobTimeoutMs: o.timeoutSeconds * 1000,
      ...(bytes !== undefined ? { maximumBytesBilled: String(bytes) } : {}),
      ...(dataset ? { defaultDataset: { projectId: conn.config.project_id, datasetId: dataset } } : {}),
    }),
  )) as [Job, unknown];

  type Page = { rows: Record<string, unknown>[]; next: Record<string, unknown> | null; resp: any };
  const fetchPage = async (query: Record<string, unknown>): Promise<Page> => {
    for (;;) {
      if (signal?.aborted) throw new ConnectorError('TIMEOUT', 'the query was canceled');
      const [rows, next, resp] = (await client.checked(() =>
        job.getQueryResults(query as any),
      )) as unknown as [Record<string, unknown>[], Record<string, unknown> | null, any];
      if (resp?.jobComplete !== false) return { rows, next, resp };
      // Still running: poll again until the operation's deadline.
      if (Date.now() > deadline) {
        await job.cancel().catch(() => {});
        throw new ConnectorError('TIMEOUT', `the query did not finish within ${o.timeoutSeconds} s`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const first = await fetchPage({ maxResults: o.pageSize, autoPaginate: false, wrapIntegers: true });
  const fields: { name: string; type: string; mode?: string }[] = first.resp?.schema?.fields ?? [];
  const columns = fields.map((f) => ({ name: f.name, type: columnType(f.type, f.mode) }));
  const toRow = (r: Record<string, unknown>) => fields.map((f) => jsonValue(r[f.name]));
  async function* pages(): AsyncGenerator<unknown[][]> {
    let page = first;
    for (;;) {
      yield page.rows.map(toRow);
      if (!page.next?.pageToken) return;
      page = await fetchPage(page.next);
    }
  }
  const total = Number(first.resp?.totalRows);
  return { columns, pages: pages(), totalRows: Number.isFinite(total) ? total : null };
}

/** BigQuery types as the type names our sinks and transforms know. */
export function columnType(type: string, mode?: string): string {
  if (mode === 'REPEATED') return 'json';
  switch (type) {
    case 'INTEGER':
    case 'INT64':
      return 'bigint';
    case 'FLOAT':
    case 'FLOAT64':
      return 'double precision';
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return 'numeric';
    case 'BOOLEAN':
    case 'BOOL':
      return 'boolean';
    case 'BYTES':
      return 'bytea';
    case 'DATE':
      return 'date';
    case 'DATETIME':
      return 'timestamp';
    case 'TIMESTAMP':
      return 'timestamptz';
    case 'TIME':
      return 'time';
    case 'RECORD':
    case 'STRUCT':
    case 'JSON':
      return 'json';
    default:
      return 'text';
  }
}

/** An SDK value as JSON: wrapped integers and dates as their text, NUMERIC as text. */
export function jsonValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'object') return typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (Array.isArray(v)) return v.map(jsonValue);
  const name = (v as object).constructor?.name ?? '';
  if (name === 'BigQueryInt') {
    const text = String((v as { value: string }).value);
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : text;
  }
  if (name.startsWith('BigQuery') && 'value' in (v as object)) return String((v as { value: unknown }).value);
  if (name === 'Big') return String(v);
  if (v instanceof Date) return v.toISOString();
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = jsonValue(x);
  return out;
}
