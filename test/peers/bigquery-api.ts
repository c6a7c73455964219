// A stateful fake of the BigQuery REST API v2 (https://cloud.google.com/bigquery/docs/reference/rest)
// on loopback, with Google's token endpoint (google-oauth.ts) at `/token` of the same origin, so
// `@google-cloud/bigquery` runs its real JWT flow and requests against it (apiEndpoint = url).
//
// Endpoints (under /bigquery/v2/projects/{project}):
//   POST jobs                        jobs.insert (query jobs only; status RUNNING, or DONE with
//                                    errorResult when the query fails or exceeds maximumBytesBilled)
//   GET  jobs/{id}                   jobs.get
//   GET  queries/{id}                jobs.getQueryResults: jobComplete false for the first
//                                    `pollsBeforeDone` calls, then rows in f/v form paged by
//                                    maxResults and pageToken
//   POST jobs/{id}/cancel            jobs.cancel
//   GET  datasets, datasets/{d}      datasets.list (paged by maxResults/pageToken) and get
//   GET  datasets/{d}/tables[/{t}]   tables.list and get (schema.fields)
//   POST datasets/{d}/tables/{t}/insertAll
//                                    tabledata.insertAll: rows [{insertId, json}]; a repeated
//                                    insertId is ignored (best-effort de-duplication); an
//                                    unknown field or a non-integer INT64 value rejects the
//                                    request's rows in `insertErrors` (reason invalid/stopped)
// Errors use Google's body `{"error": {code, message, errors: [{reason}], status}}`: 401
// authError (unknown or revoked token), 403 accessDenied (a denied service account), 403
// quotaExceeded / 429 rateLimitExceeded (failNext), 404 notFound, 400 invalidQuery.
//
// SQL subset (anything else is 400 invalidQuery):
//   SELECT * | col[, col…] FROM [`][project.]dataset.table[`] | FROM table (default dataset)
//   [WHERE col op @param|literal [AND …]]   op: = != < <= > >=; literals: numbers, 'text'
//   [ORDER BY col [ASC|DESC]] [LIMIT n]
//   and `SELECT 1`. Bytes processed = JSON size of the scanned table's rows (no 10 MB minimum).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOAuthFake, type OAuthFake, readBody, sendGoogleError } from './google-oauth';

export type BqField = { name: string; type: string; mode?: string };
export type BqTable = { fields: BqField[]; rows: Record<string, unknown>[]; insertIds: Set<string> };

export type BigQueryFake = {
  url: string;
  tokenUri: string;
  project: string;
  oauth: OAuthFake;
  /** Creates (or replaces) a table with rows. */
  createTable(dataset: string, table: string, fields: BqField[], rows?: Record<string, unknown>[]): BqTable;
  table(dataset: string, table: string): BqTable | undefined;
  /** Service accounts answered with 403 accessDenied. */
  deny(email: string): void;
  /** Answers the next n API calls with 429 rateLimitExceeded or 403 quotaExceeded. */
  failNext(n: number, reason: 'rateLimitExceeded' | 'quotaExceeded'): void;
  /** getQueryResults calls that answer jobComplete: false before the job is done. */
  pollsBeforeDone: number;
  /** Every job inserted, with its configuration as sent. */
  jobs: { id: string; configuration: any }[];
  /** Request log: method and path, plus insertAll batch sizes. */
  requests: { method: string; path: string; rows?: number }[];
  close(): Promise<void>;
};

type Job = {
  id: string;
  location: string;
  configuration: any;
  error: { reason: string; message: string } | null;
  fields: BqField[];
  rows: Record<string, unknown>[];
  bytes: number;
  polls: number;
};

class QueryError extends Error {}

export async function startBigQueryFake(opts: { project?: string } = {}): Promise<BigQueryFake> {
  const project = opts.project ?? 'test-project';
  const oauth = createOAuthFake();
  const datasets = new Map<string, Map<string, BqTable>>();
  const jobs = new Map<string, Job>();
  const denied = new Set<string>();
  let failures: { n: number; reason: string } = { n: 0, reason: '' };
  const jobLog: { id: string; configuration: any }[] = [];
  const requests: BigQueryFake['requests'] = [];

  const send = (res: http.ServerResponse, body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(body));
  };

  const cell = (f: BqField, v: unknown): unknown => {
    if (v === null || v === undefined) return null;
    if (f.mode === 'REPEATED' && Array.isArray(v))
      return v.map((x) => ({ v: cell({ ...f, mode: 'NULLABLE' }, x) }));
    if (f.type === 'TIMESTAMP') {
      const ms = typeof v === 'number' ? v : Date.parse(String(v));
      return String(BigInt(ms) * 1000n);
    }
    if (f.type === 'JSON' || typeof v === 'object') return JSON.stringify(v);
    return String(v);
  };

  function runQuery(
    sql: string,
    config: any,
  ): { fields: BqField[]; rows: Record<string, unknown>[]; bytes: number } {
    const q = sql.trim().replace(/;$/, '');
    if (/^SELECT\s+1$/i.test(q))
      return { fields: [{ name: 'f0_', type: 'INTEGER' }], rows: [{ f0_: 1 }], bytes: 0 };
    const m =
      /^SELECT\s+(.+?)\s+FROM\s+`?([A-Za-z0-9_.-]+)`?(?:\s+WHERE\s+(.+?))?(?:\s+ORDER\s+BY\s+([A-Za-z_][A-Za-z0-9_]*)(?:\s+(ASC|DESC))?)?(?:\s+LIMIT\s+(\d+))?$/is.exec(
        q,
      );
    if (!m)
      throw new QueryError(
        `Syntax error: the fake supports SELECT … FROM dataset.table [WHERE] [ORDER BY] [LIMIT]`,
      );
    const [, list, name, where, orderBy, dir, limit] = m;
    const parts = name.split('.');
    const ds = parts.length >= 2 ? parts[parts.length - 2] : config.defaultDataset?.datasetId;
    const tableName = parts[parts.length - 1];
    const t = ds ? datasets.get(ds)?.get(tableName) : undefined;
    if (!t)
      throw new QueryError(
        `Not found: Table ${project}:${ds ?? '?'}.${tableName} was not found in location US`,
      );
    const params = new Map<string, unknown>();
    for (const p of config.queryParameters ?? []) {
      const type = p.parameterType?.type;
      const raw = p.parameterValue?.value;
      params.set(
        p.name,
        raw === undefined || raw === null
          ? null
          : ['INT64', 'FLOAT64', 'NUMERIC'].includes(type)
            ? Number(raw)
            : type === 'BOOL'
              ? raw === 'true'
              : raw,
      );
    }
    const conds = (where ? where.split(/\s+AND\s+/i) : []).map((c) => {
      const cm =
        /^([A-Za-z_][A-Za-z0-9_]*)\s*(=|!=|<>|<=|>=|<|>)\s*(@[A-Za-z_][A-Za-z0-9_]*|-?\d+(?:\.\d+)?|'[^']*')$/.exec(
          c.trim(),
        );
      if (!cm) throw new QueryError(`Syntax error: unsupported condition in the fake`);
      const [, col, op, rhs] = cm;
      if (!t.fields.some((f) => f.name === col)) throw new QueryError(`Unrecognized name: ${col}`);
      let value: unknown;
      if (rhs.startsWith('@')) {
        if (!params.has(rhs.slice(1))) throw new QueryError(`Query parameter '${rhs.slice(1)}' not found`);
        value = params.get(rhs.slice(1));
      } else value = rhs.startsWith("'") ? rhs.slice(1, -1) : Number(rhs);
      return { col, op, value };
    });
    const cmp = (a: unknown, b: unknown) =>
      typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b));
    let rows = t.rows.filter((r) =>
      conds.every(({ col, op, value }) => {
        if (r[col] === null || r[col] === undefined || value === null) return false;
        const c = cmp(typeof value === 'number' ? Number(r[col]) : r[col], value);
        return op === '='
          ? c === 0
          : op === '!=' || op === '<>'
            ? c !== 0
            : op === '<'
              ? c < 0
              : op === '<='
                ? c <= 0
                : op === '>'
                  ? c > 0
                  : c >= 0;
      }),
    );
    if (orderBy) {
      rows = [...rows].sort((a, b) => cmp(a[orderBy], b[orderBy]) * (dir?.toUpperCase() === 'DESC' ? -1 : 1));
    }
    if (limit) rows = rows.slice(0, Number(limit));
    const cols =
      list.trim() === '*'
        ? t.fields
        : list.split(',').map((c) => {
            const f = t.fields.find((x) => x.name === c.trim());
            if (!f) throw new QueryError(`Unrecognized name: ${c.trim()}`);
            return f;
          });
    const bytes = t.rows.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r)), 0);
    return {
      fields: cols,
      rows: rows.map((r) => Object.fromEntries(cols.map((f) => [f.name, r[f.name]]))),
      bytes,
    };
  }

  const jobResource = (j: Job) => ({
    kind: 'bigquery#job',
    id: `${project}:${j.location}.${j.id}`,
    jobReference: { projectId: project, jobId: j.id, location: j.location },
    configuration: j.configuration,
    status: j.error
      ? { state: 'DONE', errorResult: j.error, errors: [j.error] }
      : { state: j.polls > 0 ? 'RUNNING' : 'DONE' },
    statistics: { query: { totalBytesProcessed: String(j.bytes), totalBytesBilled: String(j.bytes) } },
  });

  function insertAll(res: http.ServerResponse, t: BqTable, body: any) {
    const rows: { insertId?: string; json: Record<string, unknown> }[] = body.rows ?? [];
    requests[requests.length - 1].rows = rows.length;
    const errors: { index: number; errors: { reason: string; location: string; message: string }[] }[] = [];
    rows.forEach((r, index) => {
      for (const [k, v] of Object.entries(r.json ?? {})) {
        const f = t.fields.find((x) => x.name === k);
        if (!f) {
          if (!body.ignoreUnknownValues)
            errors.push({ index, errors: [{ reason: 'invalid', location: k, message: 'no such field.' }] });
          return;
        }
        if (v !== null && (f.type === 'INTEGER' || f.type === 'INT64') && !/^-?\d+$/.test(String(v))) {
          errors.push({
            index,
            errors: [{ reason: 'invalid', location: k, message: 'Cannot convert value to integer.' }],
          });
          return;
        }
      }
    });
    if (errors.length > 0) {
      const bad = new Set(errors.map((e) => e.index));
      rows.forEach((_, index) => {
        if (!bad.has(index))
          errors.push({ index, errors: [{ reason: 'stopped', location: '', message: '' }] });
      });
      send(res, { kind: 'bigquery#tableDataInsertAllResponse', insertErrors: errors });
      return;
    }
    for (const r of rows) {
      if (r.insertId && t.insertIds.has(r.insertId)) continue;
      if (r.insertId) t.insertIds.add(r.insertId);
      t.rows.push(Object.fromEntries(t.fields.map((f) => [f.name, r.json[f.name] ?? null])));
    }
    send(res, { kind: 'bigquery#tableDataInsertAllResponse' });
  }

  function page<T>(items: T[], url: URL, def: number) {
    const max = Number(url.searchParams.get('maxResults') ?? def) || def;
    const start = Number(url.searchParams.get('pageToken') ?? 0) || 0;
    const next = start + max < items.length ? String(start + max) : undefined;
    return { slice: items.slice(start, start + max), next };
  }

  async function api(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    const url = new URL(req.url ?? '/', 'http://fake');
    requests.push({ method: req.method ?? 'GET', path: url.pathname });
    const who = oauth.bearer(req.headers.authorization);
    if (!who)
      return sendGoogleError(
        res,
        401,
        'authError',
        'Request had invalid authentication credentials. Expected OAuth 2 access token.',
      );
    if (failures.n > 0) {
      failures.n--;
      return failures.reason === 'rateLimitExceeded'
        ? sendGoogleError(
            res,
            429,
            'rateLimitExceeded',
            'Exceeded rate limits: too many api requests per user per method.',
          )
        : sendGoogleError(
            res,
            403,
            'quotaExceeded',
            'Quota exceeded: Your project exceeded quota for free query bytes scanned.',
          );
    }
    if (denied.has(who.email))
      return sendGoogleError(
        res,
        403,
        'accessDenied',
        `Access Denied: Project ${project}: User does not have bigquery.jobs.create permission in project ${project}.`,
      );
    const m = /^\/bigquery\/v2\/projects\/([^/]+)\/(.*)$/.exec(url.pathname);
    if (!m) return sendGoogleError(res, 404, 'notFound', 'Not found: URL');
    if (m[1] !== project) return sendGoogleError(res, 404, 'notFound', `Not found: Project ${m[1]}`);
    const rest = m[2].split('/').map(decodeURIComponent);
    const json = body ? JSON.parse(body) : {};
    const method = req.method;

    if (method === 'POST' && rest.length === 1 && rest[0] === 'jobs') {
      const config = json.configuration?.query;
      if (!config?.query) return sendGoogleError(res, 400, 'invalid', 'The fake runs query jobs only');
      const id = json.jobReference?.jobId ?? randomBytes(8).toString('hex');
      jobLog.push({ id, configuration: json.configuration });
      const job: Job = {
        id,
        location: json.jobReference?.location ?? 'US',
        configuration: json.configuration,
        error: null,
        fields: [],
        rows: [],
        bytes: 0,
        polls: fake.pollsBeforeDone,
      };
      try {
        const out = runQuery(config.query, config);
        job.fields = out.fields;
        job.rows = out.rows;
        job.bytes = out.bytes;
        const cap = config.maximumBytesBilled === undefined ? null : Number(config.maximumBytesBilled);
        if (cap !== null && out.bytes > cap) {
          job.error = {
            reason: 'bytesBilledLimitExceeded',
            message: `Query exceeded limit for bytes billed: ${cap}. ${out.bytes} or higher required.`,
          };
        }
      } catch (err) {
        if (!(err instanceof QueryError)) throw err;
        job.error = {
          reason: /^Not found/.test(err.message) ? 'notFound' : 'invalidQuery',
          message: err.message,
        };
      }
      jobs.set(id, job);
      return send(res, jobResource(job));
    }
    if (rest[0] === 'jobs' && rest[1]) {
      const job = jobs.get(rest[1]);
      if (!job) return sendGoogleError(res, 404, 'notFound', `Not found: Job ${project}:${rest[1]}`);
      if (rest[2] === 'cancel')
        return send(res, { kind: 'bigquery#jobCancelResponse', job: jobResource(job) });
      return send(res, jobResource(job));
    }
    if (method === 'GET' && rest[0] === 'queries' && rest[1]) {
      const job = jobs.get(rest[1]);
      if (!job) return sendGoogleError(res, 404, 'notFound', `Not found: Job ${project}:${rest[1]}`);
      if (job.error) return sendGoogleError(res, 400, job.error.reason, job.error.message);
      const jobReference = { projectId: project, jobId: job.id, location: job.location };
      if (job.polls > 0) {
        job.polls--;
        return send(res, { kind: 'bigquery#getQueryResultsResponse', jobReference, jobComplete: false });
      }
      const { slice, next } = page(job.rows, url, 100_000);
      return send(res, {
        kind: 'bigquery#getQueryResultsResponse',
        jobReference,
        jobComplete: true,
        schema: { fields: job.fields },
        rows: slice.map((r) => ({ f: job.fields.map((f) => ({ v: cell(f, r[f.name]) })) })),
        totalRows: String(job.rows.length),
        totalBytesProcessed: String(job.bytes),
        cacheHit: false,
        ...(next ? { pageToken: next } : {}),
      });
    }
    if (method === 'GET' && rest[0] === 'datasets' && rest.length === 1) {
      const { slice, next } = page([...datasets.keys()], url, 50);
      return send(res, {
        kind: 'bigquery#datasetList',
        datasets: slice.map((d) => ({
          kind: 'bigquery#dataset',
          id: `${project}:${d}`,
          datasetReference: { projectId: project, datasetId: d },
          location: 'US',
        })),
        ...(next ? { nextPageToken: next } : {}),
      });
    }
    if (rest[0] === 'datasets' && rest[1]) {
      const ds = datasets.get(rest[1]);
      if (!ds) return sendGoogleError(res, 404, 'notFound', `Not found: Dataset ${project}:${rest[1]}`);
      if (rest.length === 2)
        return send(res, {
          kind: 'bigquery#dataset',
          id: `${project}:${rest[1]}`,
          datasetReference: { projectId: project, datasetId: rest[1] },
          location: 'US',
        });
      if (rest[2] === 'tables' && rest.length === 3) {
        const { slice, next } = page([...ds.keys()], url, 50);
        return send(res, {
          kind: 'bigquery#tableList',
          tables: slice.map((t) => ({
            kind: 'bigquery#table',
            id: `${project}:${rest[1]}.${t}`,
            tableReference: { projectId: project, datasetId: rest[1], tableId: t },
            type: 'TABLE',
          })),
          totalItems: ds.size,
          ...(next ? { nextPageToken: next } : {}),
        });
      }
      const t = rest[2] === 'tables' ? ds.get(rest[3]) : undefined;
      if (!t)
        return sendGoogleError(res, 404, 'notFound', `Not found: Table ${project}:${rest[1]}.${rest[3]}`);
      if (rest.length === 4 && method === 'GET') {
        return send(res, {
          kind: 'bigquery#table',
          id: `${project}:${rest[1]}.${rest[3]}`,
          tableReference: { projectId: project, datasetId: rest[1], tableId: rest[3] },
          schema: { fields: t.fields },
          numRows: String(t.rows.length),
          type: 'TABLE',
          location: 'US',
        });
      }
      if (rest[4] === 'insertAll' && method === 'POST') return insertAll(res, t, json);
    }
    return sendGoogleError(res, 404, 'notFound', `Not found: ${method} ${url.pathname}`);
  }

  const server = http.createServer(async (req, res) => {
    try {
      const body = (await readBody(req)).toString('utf8');
      if (oauth.handle(req, body, res)) return;
      await api(req, res, body);
    } catch {
      if (!res.headersSent) sendGoogleError(res, 500, 'backendError', 'Backend error');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: BigQueryFake = {
    url,
    tokenUri: `${url}/token`,
    project,
    oauth,
    createTable(dataset, table, fields, rows = []) {
      if (!datasets.has(dataset)) datasets.set(dataset, new Map());
      const t: BqTable = { fields, rows: [...rows], insertIds: new Set() };
      datasets.get(dataset)?.set(table, t);
      return t;
    },
    table: (dataset, table) => datasets.get(dataset)?.get(table),
    deny: (email) => denied.add(email),
    failNext(n, reason) {
      failures = { n, reason };
    },
    pollsBeforeDone: 1,
    jobs: jobLog,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return fake;
}
