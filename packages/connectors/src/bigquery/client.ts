import type { BigQuery } from '@google-cloud/bigquery';
import { apiRoot, type GoogleClient, googleClient, parseServiceAccount } from '../google/auth';
import { type ConnectorContext, ConnectorError } from '../types';

// One BigQuery SDK client per call, authenticated by Google's JWT flow through our guarded
// transport (google/auth.ts). The SDK's own HTTP layer (teeny-request) takes no agent, so its
// API host is checked by the egress guard before every call instead; that host is Google's or
// the operator's, never one a data source names.

export type BigQueryConfig = {
  project_id: string;
  default_dataset?: string;
  location?: string;
  maximum_bytes_billed?: number;
  timeout_seconds: number;
};
export type BigQueryCredentials = { service_account_json: string };
export type BigQueryConnection = { config: BigQueryConfig; credentials: BigQueryCredentials | null };

export const BIGQUERY_ROOT = 'https://bigquery.googleapis.com';
const SCOPES = ['https://www.googleapis.com/auth/bigquery'];

export type OpenBigQuery = {
  bq: BigQuery;
  google: GoogleClient;
  root: string;
  /** Runs `fn` after the egress check of the API host; closes nothing. */
  checked<T>(fn: () => Promise<T>): Promise<T>;
  close(): void;
};

/** The SDK `openBigQuery` loads on its first call (a worker's warm start loads it ahead). */
export const bigqueryModule = () => import('@google-cloud/bigquery');

export async function openBigQuery(
  conn: BigQueryConnection,
  ctx: ConnectorContext,
  timeoutSeconds: number,
): Promise<OpenBigQuery> {
  if (!conn.credentials?.service_account_json)
    throw new ConnectorError('AUTHENTICATION_FAILED', 'the data source has no service_account_json');
  const sa = parseServiceAccount(conn.credentials.service_account_json);
  const root = apiRoot(ctx, BIGQUERY_ROOT);
  const timeoutMs = timeoutSeconds * 1000;
  const google = await googleClient(sa, ctx, { scopes: SCOPES, roots: [root], timeoutMs });
  const { BigQuery } = await bigqueryModule();
  const bq = new BigQuery({
    projectId: conn.config.project_id,
    apiEndpoint: root,
    location: conn.config.location,
    authClient: google.jwt as any,
    // A 429 or quota answer is reported, not retried with back-off inside one call.
    autoRetry: false,
    maxRetries: 0,
    timeout: timeoutMs,
  } as any);
  return {
    bq,
    google,
    root,
    async checked(fn) {
      await google.checkHost(root);
      return fn();
    },
    close: () => google.close(),
  };
}

/** The effective cap: the statement's, never above the connector's. */
export function capped(statement: number | undefined, connector: number | undefined): number | undefined {
  if (statement === undefined) return connector;
  if (connector === undefined) return statement;
  return Math.min(statement, connector);
}

/** `dataset.table` or `table` (in `dataset` or the default dataset), checked. */
export function tableRef(name: string, dataset: string | undefined, conn: BigQueryConnection) {
  const parts = name.split('.');
  const ident = /^[A-Za-z0-9_-]{1,1024}$/;
  if (parts.length > 3 || parts.some((p) => !ident.test(p)))
    throw new ConnectorError(
      'INVALID_STATEMENT',
      'table must be `table`, `dataset.table` or `project.dataset.table`',
    );
  const table = parts[parts.length - 1];
  const ds = parts.length >= 2 ? parts[parts.length - 2] : (dataset ?? conn.config.default_dataset);
  const project = parts.length === 3 ? parts[0] : conn.config.project_id;
  if (!ds)
    throw new ConnectorError(
      'INVALID_STATEMENT',
      `table ${name} names no dataset and the data source has no default_dataset`,
    );
  return { project, dataset: ds, table };
}
