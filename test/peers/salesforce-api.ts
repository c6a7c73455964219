// A stateful fake of the Salesforce REST API on loopback, driven by the connector through jsforce
// exactly as production does (its instance URL points here). No Salesforce emulator can be
// installed on this machine (PEERS.md).
//
// Endpoints (API version taken from the path, any vNN.N):
// - POST /services/oauth2/token  grant_type=client_credentials&client_id=…&client_secret=…
//   → {access_token, instance_url, id, token_type, issued_at, signature}; wrong client →
//   400 {error: "invalid_client", error_description}; other grants → 400 unsupported_grant_type.
// - Every /services/data/… call needs `Authorization: Bearer <token>`; an unknown, expired or
//   revoked token → 401 [{message, errorCode: "INVALID_SESSION_ID"}].
// - GET  /services/data/vX/limits, /sobjects (describeGlobal), /sobjects/{Object}/describe
// - GET  /services/data/vX/query?q=SOQL → {totalSize, done, records: [{attributes, …}],
//   nextRecordsUrl?} in pages of PAGE records; GET /services/data/vX/query/{locator}-{offset}.
// - PATCH /services/data/vX/composite/sobjects/{Object}/{ExternalIdField} {allOrNone, records}
//   (at most 200 records) → [{id, success, errors: [{statusCode, message, fields}], created}].
// Errors are arrays of {message, errorCode}; faults: `insufficient_access` (403
// INSUFFICIENT_ACCESS), `rate_limit` (403 REQUEST_LIMIT_EXCEEDED), `expire_tokens` (every issued
// token is rejected), `expire_once` (tokens issued so far are revoked once), `foreign_next`
// (nextRecordsUrl names another host).
//
// SOQL subset: SELECT f, … FROM Object [WHERE f = lit [AND f = lit …]] [ORDER BY f [ASC|DESC]]
// [LIMIT n]; literals are 'text' (backslash escapes), numbers, true/false and null. Object and
// field names are case-insensitive and answered with their described names.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type SfField = { name: string; type: string; externalId?: boolean };
export type SfObject = { name: string; fields: SfField[]; records: Record<string, unknown>[] };
export type SalesforceFault =
  | null
  | 'insufficient_access'
  | 'rate_limit'
  | 'expire_tokens'
  | 'expire_once'
  | 'foreign_next';

export type SalesforceApiPeer = {
  url: string;
  objects: Map<string, SfObject>;
  /** Every request: method, path with query, body (for canary and binding checks). */
  requests: { method: string; path: string; body: string }[];
  tokensIssued: number;
  setFault(f: SalesforceFault): void;
  close(): Promise<void>;
};

const PAGE = 2000;
const MAX_COLLECTION = 200;

class SoqlError extends Error {
  constructor(
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
  }
}

type Token = { kind: 'word' | 'string' | 'number' | 'punct'; text: string; value?: unknown };

function tokenize(q: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === "'") {
      let v = '';
      i++;
      while (i < q.length && q[i] !== "'") {
        if (q[i] === '\\') {
          const n = q[i + 1];
          v += ({ n: '\n', r: '\r', t: '\t', b: '\b', f: '\f' } as Record<string, string>)[n] ?? n;
          i += 2;
        } else v += q[i++];
      }
      if (q[i] !== "'") throw new SoqlError('MALFORMED_QUERY', 'unterminated string literal');
      i++;
      out.push({ kind: 'string', text: v, value: v });
    } else if (/[-0-9]/.test(c)) {
      const m = /^-?\d+(\.\d+)?/.exec(q.slice(i));
      if (!m) throw new SoqlError('MALFORMED_QUERY', `unexpected token: ${c}`);
      out.push({ kind: 'number', text: m[0], value: Number(m[0]) });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(q.slice(i))!;
      out.push({ kind: 'word', text: m[0] });
      i += m[0].length;
    } else if (/[,=()*]/.test(c)) {
      out.push({ kind: 'punct', text: c });
      i++;
    } else throw new SoqlError('MALFORMED_QUERY', `unexpected token: ${c}`);
  }
  return out;
}

type Query = {
  fields: string[];
  object: string;
  where: [string, unknown][];
  order: [string, 'ASC' | 'DESC'] | null;
  limit: number | null;
};

function parseSoql(q: string): Query {
  const t = tokenize(q);
  let i = 0;
  const word = (w: string) => t[i]?.kind === 'word' && t[i].text.toUpperCase() === w;
  const expect = (w: string) => {
    if (!word(w)) throw new SoqlError('MALFORMED_QUERY', `expected ${w} at position ${i}`);
    i++;
  };
  expect('SELECT');
  const fields: string[] = [];
  for (;;) {
    if (t[i]?.kind !== 'word') throw new SoqlError('MALFORMED_QUERY', 'expected a field name');
    fields.push(t[i++].text);
    if (t[i]?.text === ',') i++;
    else break;
  }
  expect('FROM');
  if (t[i]?.kind !== 'word') throw new SoqlError('MALFORMED_QUERY', 'expected an object name');
  const object = t[i++].text;
  const where: [string, unknown][] = [];
  if (word('WHERE')) {
    i++;
    for (;;) {
      const f = t[i++];
      if (f?.kind !== 'word' || t[i++]?.text !== '=')
        throw new SoqlError('MALFORMED_QUERY', 'expected field = value');
      const v = t[i++];
      if (!v) throw new SoqlError('MALFORMED_QUERY', 'expected a value');
      let value: unknown;
      if (v.kind === 'string' || v.kind === 'number') value = v.value;
      else if (v.kind === 'word' && /^(true|false)$/i.test(v.text)) value = /^true$/i.test(v.text);
      else if (v.kind === 'word' && /^null$/i.test(v.text)) value = null;
      else throw new SoqlError('MALFORMED_QUERY', `unexpected token: ${v.text}`);
      where.push([f.text, value]);
      if (word('AND')) i++;
      else break;
    }
  }
  let order: Query['order'] = null;
  if (word('ORDER')) {
    i++;
    expect('BY');
    const f = t[i++].text;
    let dir: 'ASC' | 'DESC' = 'ASC';
    if (word('ASC') || word('DESC')) dir = t[i++].text.toUpperCase() as 'ASC' | 'DESC';
    order = [f, dir];
  }
  let limit: number | null = null;
  if (word('LIMIT')) {
    i++;
    limit = Number(t[i++]?.value);
  }
  if (i < t.length) throw new SoqlError('MALFORMED_QUERY', `unexpected token: ${t[i].text}`);
  return { fields, object, where, order, limit };
}

export async function startSalesforceApi(opts: {
  clients: { id: string; secret: string }[];
  objects: SfObject[];
}): Promise<SalesforceApiPeer> {
  const objects = new Map<string, SfObject>();
  for (const o of opts.objects) objects.set(o.name.toLowerCase(), o);
  const tokens = new Set<string>();
  const cursors = new Map<string, { object: SfObject; fields: SfField[]; rows: Record<string, unknown>[] }>();
  const requests: SalesforceApiPeer['requests'] = [];
  let fault: SalesforceFault = null;
  let url = '';
  let nextId = 1;
  const peer: SalesforceApiPeer = {
    url: '',
    objects,
    requests,
    tokensIssued: 0,
    setFault(f) {
      fault = f;
      if (f === 'expire_once') {
        tokens.clear();
        fault = null;
      }
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json;charset=UTF-8' }).end(JSON.stringify(body));
  const apiError = (res: http.ServerResponse, status: number, errorCode: string, message: string) =>
    json(res, status, [{ message, errorCode }]);

  const objectOf = (name: string) => {
    const o = objects.get(name.toLowerCase());
    if (!o) throw new SoqlError('INVALID_TYPE', `sObject type '${name}' is not supported.`);
    return o;
  };
  const fieldOf = (o: SfObject, name: string) => {
    const f = o.fields.find((x) => x.name.toLowerCase() === name.toLowerCase());
    if (!f) throw new SoqlError('INVALID_FIELD', `No such column '${name}' on entity '${o.name}'.`);
    return f;
  };
  const record = (o: SfObject, fields: SfField[], r: Record<string, unknown>, version: string) => ({
    attributes: { type: o.name, url: `/services/data/v${version}/sobjects/${o.name}/${r.Id}` },
    ...Object.fromEntries(fields.map((f) => [f.name, r[f.name] ?? null])),
  });

  function page(id: string, offset: number, version: string) {
    const c = cursors.get(id)!;
    const slice = c.rows.slice(offset, offset + PAGE);
    const done = offset + PAGE >= c.rows.length;
    const next = `/services/data/v${version}/query/${id}-${offset + PAGE}`;
    return {
      totalSize: c.rows.length,
      done,
      ...(done
        ? {}
        : { nextRecordsUrl: fault === 'foreign_next' ? `http://sf-elsewhere.invalid${next}` : next }),
      records: slice.map((r) => record(c.object, c.fields, r, version)),
    };
  }

  function route(req: http.IncomingMessage, res: http.ServerResponse, u: URL, body: string) {
    if (u.pathname === '/services/oauth2/token' && req.method === 'POST') {
      const p = new URLSearchParams(body);
      if (p.get('grant_type') !== 'client_credentials')
        return json(res, 400, {
          error: 'unsupported_grant_type',
          error_description: 'grant type not supported',
        });
      const client = opts.clients.find((c) => c.id === p.get('client_id'));
      if (!client || client.secret !== p.get('client_secret'))
        return json(res, 400, { error: 'invalid_client', error_description: 'invalid client credentials' });
      const token = `00D${randomBytes(20).toString('hex')}`;
      if (fault !== 'expire_tokens') tokens.add(token);
      peer.tokensIssued++;
      return json(res, 200, {
        access_token: token,
        instance_url: url,
        id: `${url}/id/00Dxx0000001gEREAY/005xx000001Sv6AAAS`,
        token_type: 'Bearer',
        issued_at: String(Date.now()),
        signature: randomBytes(32).toString('base64'),
      });
    }
    const m = /^\/services\/data\/v(\d+\.\d)(\/.*)?$/.exec(u.pathname);
    if (!m) return apiError(res, 404, 'NOT_FOUND', 'The requested resource does not exist');
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer || !tokens.has(bearer))
      return apiError(res, 401, 'INVALID_SESSION_ID', 'Session expired or invalid');
    if (fault === 'rate_limit')
      return apiError(res, 403, 'REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.');
    if (fault === 'insufficient_access')
      return apiError(res, 403, 'INSUFFICIENT_ACCESS', 'insufficient access rights on cross-reference id');
    const version = m[1];
    const rest = m[2] ?? '/';
    if (rest === '/limits' && req.method === 'GET')
      return json(res, 200, { DailyApiRequests: { Max: 15000, Remaining: 14990 } });
    if (rest === '/sobjects' && req.method === 'GET') {
      return json(res, 200, {
        encoding: 'UTF-8',
        maxBatchSize: 200,
        sobjects: [...objects.values()].map((o) => ({
          name: o.name,
          label: o.name,
          queryable: true,
          createable: true,
          updateable: true,
          custom: o.name.endsWith('__c'),
          urls: { describe: `/services/data/v${version}/sobjects/${o.name}/describe` },
        })),
      });
    }
    let d = /^\/sobjects\/([^/]+)\/describe$/.exec(rest);
    if (d && req.method === 'GET') {
      const o = objectOf(d[1]);
      return json(res, 200, {
        name: o.name,
        label: o.name,
        queryable: true,
        fields: o.fields.map((f) => ({
          name: f.name,
          label: f.name,
          type: f.type,
          externalId: f.externalId === true,
          idLookup: f.name === 'Id' || f.externalId === true,
          nillable: f.name !== 'Id',
        })),
      });
    }
    if (rest === '/query' && req.method === 'GET') {
      const q = parseSoql(u.searchParams.get('q') ?? '');
      const o = objectOf(q.object);
      const fields = q.fields.map((f) => fieldOf(o, f));
      let rows = o.records.filter((r) => q.where.every(([f, v]) => r[fieldOf(o, f).name] === v));
      if (q.order) {
        const f = fieldOf(o, q.order[0]).name;
        const s = q.order[1] === 'ASC' ? 1 : -1;
        rows = [...rows].sort((a, b) =>
          (a[f] as any) < (b[f] as any) ? -s : (a[f] as any) > (b[f] as any) ? s : 0,
        );
      }
      if (q.limit !== null) rows = rows.slice(0, q.limit);
      const id = `01g${randomBytes(6).toString('hex')}`;
      cursors.set(id, { object: o, fields, rows });
      return json(res, 200, page(id, 0, version));
    }
    d = /^\/query\/([^/]+)-(\d+)$/.exec(rest);
    if (d && req.method === 'GET') {
      if (!cursors.has(d[1])) return apiError(res, 400, 'INVALID_QUERY_LOCATOR', 'invalid query locator');
      return json(res, 200, page(d[1], Number(d[2]), version));
    }
    d = /^\/composite\/sobjects\/([^/]+)\/([^/]+)$/.exec(rest);
    if (d && req.method === 'PATCH') {
      const o = objectOf(d[1]);
      const ext = fieldOf(o, d[2]);
      if (!ext.externalId && ext.name !== 'Id')
        return apiError(res, 400, 'INVALID_FIELD', `Field ${ext.name} is not an external id field`);
      const payload = JSON.parse(body || '{}');
      const records: Record<string, unknown>[] = payload.records ?? [];
      if (records.length > MAX_COLLECTION)
        return apiError(
          res,
          400,
          'EXCEEDED_ID_LIMIT',
          `record limit reached. cannot submit more than ${MAX_COLLECTION} records into this call`,
        );
      const staged: { target: Record<string, unknown> | null; values: Record<string, unknown> }[] = [];
      const results = records.map((r) => {
        const errors: { statusCode: string; message: string; fields: string[] }[] = [];
        const values: Record<string, unknown> = {};
        if (r.attributes && (r.attributes as any).type?.toLowerCase() !== o.name.toLowerCase())
          errors.push({ statusCode: 'INVALID_TYPE', message: 'record type does not match', fields: [] });
        for (const [k, v] of Object.entries(r)) {
          if (k === 'attributes') continue;
          const f = o.fields.find((x) => x.name.toLowerCase() === k.toLowerCase());
          if (!f || f.name === 'Id') {
            errors.push({
              statusCode: 'INVALID_FIELD',
              message: `No such column '${k}' on sobject of type ${o.name}`,
              fields: [k],
            });
            continue;
          }
          values[f.name] = v;
        }
        const key = values[ext.name];
        if (key === undefined || key === null)
          errors.push({
            statusCode: 'REQUIRED_FIELD_MISSING',
            message: `Required fields are missing: [${ext.name}]`,
            fields: [ext.name],
          });
        const target = o.records.find((x) => x[ext.name] === key) ?? null;
        staged.push({ target, values });
        return { errors, created: target === null };
      });
      const failed = results.some((r) => r.errors.length > 0);
      if (failed && payload.allOrNone) {
        return json(
          res,
          200,
          results.map((r) => ({
            success: false,
            errors:
              r.errors.length > 0
                ? r.errors
                : [
                    {
                      statusCode: 'ALL_OR_NONE_OPERATION_ROLLED_BACK',
                      message:
                        'Record rolled back because not all records were valid and the request was using AllOrNone header',
                      fields: [],
                    },
                  ],
          })),
        );
      }
      return json(
        res,
        200,
        results.map((r, i) => {
          if (r.errors.length > 0) return { success: false, errors: r.errors };
          const s = staged[i];
          let target = s.target;
          if (!target) {
            target = { Id: `003${String(nextId++).padStart(15, '0')}` };
            o.records.push(target);
          }
          Object.assign(target, s.values);
          return { id: target.Id, success: true, errors: [], created: r.created };
        }),
      );
    }
    return apiError(res, 404, 'NOT_FOUND', 'The requested resource does not exist');
  }

  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://peer');
      requests.push({ method: req.method ?? '', path: `${u.pathname}${u.search}`, body });
      try {
        route(req, res, u, body);
      } catch (err) {
        if (err instanceof SoqlError) apiError(res, 400, err.errorCode, err.message);
        else apiError(res, 500, 'UNKNOWN_EXCEPTION', 'An unexpected error occurred.');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  peer.url = url;
  return peer;
}
