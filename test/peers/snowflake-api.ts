// A stateful fake of the Snowflake REST protocol that `snowflake-sdk` speaks, on loopback, so the
// connector is driven through the vendor's own SDK exactly as in production (its `accessUrl`
// points here). No emulator of Snowflake can be installed on this machine (PEERS.md).
//
// Protocol covered (as the SDK sends it; request bodies arrive gzip-compressed):
// - POST /session/v1/login-request?warehouse=&databaseName=&schemaName=&roleName=
//   body {data: {ACCOUNT_NAME, LOGIN_NAME, PASSWORD | AUTHENTICATOR: SNOWFLAKE_JWT + TOKEN}}.
//   Passwords are compared; key-pair JWTs are verified for real (RS256 signature against the
//   user's registered public key, `iss` = ACCOUNT.USER.SHA256:<fingerprint of that key>,
//   `sub` = ACCOUNT.USER, not expired). Failures answer HTTP 200 with `success: false` and
//   Snowflake's codes: 390100 (wrong user or password), 390144 (JWT invalid), 390114 (token
//   expired), 390189 (role not granted), 390201 (database/warehouse not found or not authorized).
// - POST /queries/v1/query-request (Authorization: Snowflake Token="…"): JSON result format,
//   `rowtype` + `rowset` (values as text). Results above INLINE_ROWS rows are chunked: the rest
//   comes as `chunks` [{url, rowCount, …}] served by GET /chunks/… (rows joined with commas,
//   no outer brackets, as the SDK expects). Selects of more than ASYNC_ROWS rows first answer
//   333334 (query in progress) with a `getResultUrl`, which the SDK polls: GET /queries/{id}/result.
// - POST /session?delete=true (logout), /session/heartbeat, /session/token-request,
//   /queries/v1/abort-request, /telemetry/send.
// - Errors: `success: false` with `code` (Snowflake's five/six-digit codes as text), `message`
//   and `data.sqlState`; an unknown or dropped session token answers 390104 with HTTP 401.
//
// SQL subset (anything else answers 001003 "SQL compilation error: syntax error"):
//   SELECT 1 | SELECT CURRENT_VERSION()
//   SELECT <* | col, …> FROM [db.][schema.]table [WHERE col = ?|literal] [ORDER BY col] [LIMIT n]
//   INSERT INTO table (col, …) VALUES (?, …)[, (?, …)…]   (scalar binds or array binding)
//   MERGE INTO table T USING (SELECT $1 AS col, … FROM VALUES (?, …), …) S ON T.k = S.k [AND …]
//     WHEN MATCHED … WHEN NOT MATCHED …                  (upsert by the ON keys, all columns)
//   CREATE TABLE [IF NOT EXISTS] table (col TYPE, …), DELETE FROM table, DROP TABLE [IF EXISTS]
//   BEGIN | COMMIT | ROLLBACK                             (a snapshot of every table)
//   SELECT … FROM INFORMATION_SCHEMA.COLUMNS [WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?] …
//     (answers table_schema, table_name, column_name, data_type in ordinal order)
// Unquoted identifiers fold to upper case; "quoted" ones keep their case, as in Snowflake.
import { createHash, createPublicKey, randomBytes, randomUUID, verify } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

export type SnowflakeUser = {
  name: string;
  password?: string;
  /** PEM public key for key-pair (JWT) authentication. */
  publicKey?: string;
  roles: string[];
};

export type SnowflakeColumn = { name: string; type: string };
export type SnowflakeTable = { schema: string; name: string; columns: SnowflakeColumn[]; rows: unknown[][] };

export type SnowflakeFault =
  | null
  /** Every login answers 390114 (authentication token expired). */
  | 'expired'
  /** Every request answers HTTP 429. */
  | 'rate_limit'
  /** Query requests are never answered (a statement that runs forever). */
  | 'hang';

export type SnowflakeApiPeer = {
  url: string;
  account: string;
  tables: Map<string, SnowflakeTable>;
  /** Login and query request bodies as received (for canary checks). */
  requests: { path: string; body: string }[];
  logins: number;
  setFault(fault: SnowflakeFault): void;
  /** Origin named in result chunk URLs (default: this server), to test the egress guard on them. */
  setChunkOrigin(origin: string | null): void;
  close(): Promise<void>;
};

const INLINE_ROWS = 1000;
const CHUNK_ROWS = 3000;
const ASYNC_ROWS = 5000;
const DEFAULT_SCHEMA = 'PUBLIC';

type Session = { user: string; role: string; schema: string; snapshot: Map<string, SnowflakeTable> | null };
type Result = { rowtype: { name: string; type: string }[]; rows: unknown[][]; statementTypeId: number };

class SqlError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly sqlState = '42000',
  ) {
    super(message);
  }
}

/** An identifier as Snowflake resolves it: unquoted folds to upper case. */
function ident(raw: string): string {
  const t = raw.trim();
  if (t.startsWith('"') && t.endsWith('"')) return t.slice(1, -1).replace(/""/g, '"');
  return t.toUpperCase();
}

/** The last part of a (possibly qualified) name, and its schema part if any. */
function qualified(raw: string): { schema: string | null; name: string } {
  const parts = raw.match(/"(?:[^"]|"")*"|[^.]+/g) ?? [raw];
  const name = ident(parts[parts.length - 1]);
  const schema = parts.length >= 2 ? ident(parts[parts.length - 2]) : null;
  return { schema, name };
}

function splitList(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let cur = '';
  for (const c of text) {
    if (quote) {
      cur += c;
      if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
      continue;
    }
    cur += c;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/** Snowflake type → the JSON-result rowtype the SDK converts from. */
function rowtypeOf(type: string): string {
  const t = type.toUpperCase();
  if (/^(NUMBER|INT|INTEGER|BIGINT|SMALLINT|TINYINT|DECIMAL|NUMERIC)/.test(t)) return 'fixed';
  if (/^(FLOAT|DOUBLE|REAL)/.test(t)) return 'real';
  if (/^BOOLEAN/.test(t)) return 'boolean';
  if (/^(VARIANT|OBJECT|ARRAY)/.test(t)) return 'variant';
  return 'text';
}

function dataTypeOf(type: string): string {
  const k = rowtypeOf(type);
  return k === 'fixed'
    ? 'NUMBER'
    : k === 'real'
      ? 'FLOAT'
      : k === 'boolean'
        ? 'BOOLEAN'
        : k === 'variant'
          ? 'VARIANT'
          : 'TEXT';
}

function coerce(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return null;
  switch (rowtypeOf(type)) {
    case 'fixed':
    case 'real': {
      const n = Number(value);
      if (Number.isNaN(n))
        throw new SqlError(
          '100038',
          `Numeric value '${String(value).slice(0, 20)}' is not recognized`,
          '22018',
        );
      return n;
    }
    case 'boolean':
      return value === true || value === 'true' || value === 'TRUE' || value === '1' || value === 1;
    default:
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

function rawText(value: unknown, type: string): string | null {
  if (value === null || value === undefined) return null;
  if (rowtypeOf(type) === 'boolean') return value ? '1' : '0';
  return String(value);
}

function bindValue(b: { type: string; value: unknown }): unknown {
  if (b.value === null || b.value === undefined) return null;
  if (b.type === 'FIXED' || b.type === 'REAL') return Number(b.value);
  if (b.type === 'BOOLEAN') return b.value === true || b.value === 'true';
  return b.value;
}

function literal(raw: string, binds: unknown[], next: { i: number }): unknown {
  const t = raw.trim();
  if (t === '?') return binds[next.i++];
  const pos = /^:(\d+)$/.exec(t);
  if (pos) return binds[Number(pos[1]) - 1];
  if (/^'.*'$/s.test(t)) return t.slice(1, -1).replace(/''/g, "'");
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (/^null$/i.test(t)) return null;
  if (/^(true|false)$/i.test(t)) return /^true$/i.test(t);
  throw new SqlError('001003', `SQL compilation error: syntax error near '${t.slice(0, 30)}'`);
}

class Engine {
  constructor(readonly tables: Map<string, SnowflakeTable>) {}

  table(raw: string): SnowflakeTable {
    const { name } = qualified(raw);
    const t = this.tables.get(name);
    if (!t)
      throw new SqlError(
        '002003',
        `SQL compilation error:\nObject '${name}' does not exist or not authorized.`,
        '42S02',
      );
    return t;
  }

  run(sql: string, binds: unknown[], arrayRows: unknown[][] | null, session: Session): Result {
    const text = sql.trim().replace(/;\s*$/, '');
    let m: RegExpExecArray | null;
    if (/^(BEGIN|START TRANSACTION)$/i.test(text)) {
      session.snapshot = new Map([...this.tables].map(([k, v]) => [k, { ...v, rows: [...v.rows] }]));
      return status('Statement executed successfully.');
    }
    if (/^COMMIT$/i.test(text)) {
      session.snapshot = null;
      return status('Statement executed successfully.');
    }
    if (/^ROLLBACK$/i.test(text)) {
      if (session.snapshot) {
        this.tables.clear();
        for (const [k, v] of session.snapshot) this.tables.set(k, v);
      }
      session.snapshot = null;
      return status('Statement executed successfully.');
    }
    if (/^SELECT\s+1$/i.test(text))
      return { rowtype: [{ name: '1', type: 'fixed' }], rows: [[1]], statementTypeId: 4096 };
    if (/^SELECT\s+CURRENT_VERSION\(\)$/i.test(text))
      return {
        rowtype: [{ name: 'CURRENT_VERSION()', type: 'text' }],
        rows: [['9.0.0']],
        statementTypeId: 4096,
      };
    m = /^CREATE\s+TABLE\s+(IF\s+NOT\s+EXISTS\s+)?(\S+)\s*\(([\s\S]*)\)$/i.exec(text);
    if (m) {
      const { schema, name } = qualified(m[2]);
      if (this.tables.has(name)) {
        if (m[1]) return status(`${name} already exists, statement succeeded.`);
        throw new SqlError('002002', `SQL compilation error:\nObject '${name}' already exists.`);
      }
      const columns = splitList(m[3]).map((def) => {
        const d = /^("(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*)\s+(.+)$/s.exec(def);
        if (!d) throw new SqlError('001003', 'SQL compilation error: syntax error in column definition');
        return {
          name: ident(d[1]),
          type: d[2]
            .replace(/\s+NOT\s+NULL.*$/i, '')
            .trim()
            .toUpperCase(),
        };
      });
      this.tables.set(name, { schema: schema ?? session.schema, name, columns, rows: [] });
      return status(`Table ${name} successfully created.`);
    }
    m = /^DROP\s+TABLE\s+(IF\s+EXISTS\s+)?(\S+)$/i.exec(text);
    if (m) {
      const { name } = qualified(m[2]);
      if (!this.tables.delete(name) && !m[1]) this.table(m[2]);
      return status(`${name} successfully dropped.`);
    }
    m = /^DELETE\s+FROM\s+(\S+)$/i.exec(text);
    if (m) {
      const t = this.table(m[1]);
      const n = t.rows.length;
      t.rows = [];
      return {
        rowtype: [{ name: 'number of rows deleted', type: 'fixed' }],
        rows: [[n]],
        statementTypeId: 0x3300,
      };
    }
    m =
      /^MERGE\s+INTO\s+(\S+)\s+T\s+USING\s+\(SELECT\s+([\s\S]+?)\s+FROM\s+VALUES\s+([\s\S]+)\)\s+S\s+ON\s+([\s\S]+?)\s+WHEN\s+(?:NOT\s+)?MATCHED[\s\S]*$/i.exec(
        text,
      );
    if (m) return this.merge(m, binds);
    m = /^INSERT\s+INTO\s+(\S+)\s*\(([^)]*)\)\s*VALUES\s*([\s\S]+)$/i.exec(text);
    if (m) {
      const t = this.table(m[1]);
      const cols = splitList(m[2]).map(ident);
      const idx = cols.map((c) => {
        const i = t.columns.findIndex((tc) => tc.name === c);
        if (i === -1)
          throw new SqlError(
            '000904',
            `SQL compilation error: error line 1 at position 0\ninvalid identifier '${c}'`,
          );
        return i;
      });
      const tuples = m[3].match(/\(([^()]*)\)/g) ?? [];
      const rows: unknown[][] = [];
      const sets = arrayRows ?? [binds];
      for (const set of sets) {
        const next = { i: 0 };
        for (const tuple of tuples) {
          const values = splitList(tuple.slice(1, -1)).map((v) => literal(v, set, next));
          if (values.length !== cols.length)
            throw new SqlError(
              '002020',
              'SQL compilation error: Insert value list does not match column list',
            );
          const row: unknown[] = t.columns.map(() => null);
          values.forEach((v, j) => {
            row[idx[j]] = coerce(v, t.columns[idx[j]].type);
          });
          rows.push(row);
        }
      }
      t.rows.push(...rows);
      return {
        rowtype: [{ name: 'number of rows inserted', type: 'fixed' }],
        rows: [[rows.length]],
        statementTypeId: 0x3100,
      };
    }
    if (/INFORMATION_SCHEMA\.COLUMNS/i.test(text)) return this.columns(text, binds, session);
    m =
      /^SELECT\s+([\s\S]+?)\s+FROM\s+(\S+)(?:\s+WHERE\s+(\S+)\s*=\s*(\?|'[^']*'|-?\d+))?(?:\s+ORDER\s+BY\s+(\S+))?(?:\s+LIMIT\s+(\d+))?$/i.exec(
        text,
      );
    if (m) {
      const t = this.table(m[2]);
      const pick =
        m[1].trim() === '*'
          ? t.columns.map((_, i) => i)
          : splitList(m[1]).map((c) => {
              const i = t.columns.findIndex((tc) => tc.name === ident(c));
              if (i === -1)
                throw new SqlError('000904', `SQL compilation error: invalid identifier '${ident(c)}'`);
              return i;
            });
      let rows = t.rows;
      if (m[3]) {
        const wi = t.columns.findIndex((tc) => tc.name === ident(m![3]));
        if (wi === -1)
          throw new SqlError('000904', `SQL compilation error: invalid identifier '${ident(m[3])}'`);
        const want = coerce(literal(m[4], binds, { i: 0 }), t.columns[wi].type);
        rows = rows.filter((r) => r[wi] === want);
      }
      if (m[5]) {
        const oi = t.columns.findIndex((tc) => tc.name === ident(m![5]));
        rows = [...rows].sort((a, b) =>
          (a[oi] as any) < (b[oi] as any) ? -1 : (a[oi] as any) > (b[oi] as any) ? 1 : 0,
        );
      }
      if (m[6]) rows = rows.slice(0, Number(m[6]));
      return {
        rowtype: pick.map((i) => t.columns[i]).map((c) => ({ name: c.name, type: rowtypeOf(c.type) })),
        rows: rows.map((r) => pick.map((i) => r[i])),
        statementTypeId: 4096,
      };
    }
    throw new SqlError(
      '001003',
      `SQL compilation error:\nsyntax error line 1 at position 0 unexpected '${text.split(/\s/)[0].slice(0, 20)}'.`,
    );
  }

  /** MERGE INTO t T USING (SELECT $1 AS c, … FROM VALUES (?, …), …) S ON T.k = S.k …: upsert by the ON keys. */
  merge(m: RegExpExecArray, binds: unknown[]): Result {
    const t = this.table(m[1]);
    const cols = splitList(m[2]).map((c) => {
      const a = /^\$\d+\s+AS\s+(.+)$/i.exec(c);
      if (!a) throw new SqlError('001003', 'SQL compilation error: syntax error in MERGE source');
      return ident(a[1]);
    });
    const idx = (c: string) => {
      const k = t.columns.findIndex((tc) => tc.name === c);
      if (k === -1) throw new SqlError('000904', `SQL compilation error: invalid identifier '${c}'`);
      return k;
    };
    const keys = [...m[4].matchAll(/T\.("(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*)\s*=\s*S\./gi)].map((k) =>
      idx(ident(k[1])),
    );
    if (keys.length === 0)
      throw new SqlError('001003', 'SQL compilation error: MERGE needs ON T.key = S.key');
    const next = { i: 0 };
    let inserted = 0;
    let updated = 0;
    for (const tuple of m[3].match(/\(([^()]*)\)/g) ?? []) {
      const values = splitList(tuple.slice(1, -1)).map((v) => literal(v, binds, next));
      const row: unknown[] = t.columns.map(() => null);
      const set: number[] = [];
      cols.forEach((c, j) => {
        const k = idx(c);
        row[k] = coerce(values[j], t.columns[k].type);
        set.push(k);
      });
      const target = t.rows.find((r) => keys.every((k) => r[k] === row[k]));
      if (target) {
        for (const k of set) target[k] = row[k];
        updated++;
      } else {
        t.rows.push(row);
        inserted++;
      }
    }
    return {
      rowtype: [
        { name: 'number of rows inserted', type: 'fixed' },
        { name: 'number of rows updated', type: 'fixed' },
      ],
      rows: [[inserted, updated]],
      statementTypeId: 0x3400,
    };
  }

  columns(text: string, binds: unknown[], session: Session): Result {
    const where: Record<string, unknown> = {};
    const next = { i: 0 };
    for (const m of text.matchAll(/\b(TABLE_SCHEMA|TABLE_NAME)\s*=\s*(\?|'[^']*'|CURRENT_SCHEMA\(\))/gi)) {
      where[m[1].toUpperCase()] = /^CURRENT_SCHEMA/i.test(m[2]) ? session.schema : literal(m[2], binds, next);
    }
    const all = ['TABLE_SCHEMA', 'TABLE_NAME', 'COLUMN_NAME', 'DATA_TYPE', 'ORDINAL_POSITION'];
    const list = /^SELECT\s+([\s\S]+?)\s+FROM\s/i.exec(text)?.[1] ?? '*';
    const pick = list.trim() === '*' ? all : splitList(list).map(ident);
    for (const p of pick)
      if (!all.includes(p)) throw new SqlError('000904', `SQL compilation error: invalid identifier '${p}'`);
    const rows: unknown[][] = [];
    for (const t of [...this.tables.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      if (where.TABLE_SCHEMA !== undefined && where.TABLE_SCHEMA !== t.schema) continue;
      if (where.TABLE_NAME !== undefined && where.TABLE_NAME !== t.name) continue;
      t.columns.forEach((c, i) => {
        const full = [t.schema, t.name, c.name, dataTypeOf(c.type), i + 1];
        rows.push(pick.map((p) => full[all.indexOf(p)]));
      });
    }
    return {
      rowtype: pick.map((name) => ({ name, type: name === 'ORDINAL_POSITION' ? 'fixed' : 'text' })),
      rows,
      statementTypeId: 4096,
    };
  }
}

function status(message: string): Result {
  return { rowtype: [{ name: 'status', type: 'text' }], rows: [[message]], statementTypeId: 0x6000 };
}

function base64url(s: string): Buffer {
  return Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** Verifies a key-pair JWT as Snowflake does; returns an error code or null. */
function checkJwt(token: string, account: string, user: SnowflakeUser): string | null {
  if (!user.publicKey) return '390144';
  const parts = token.split('.');
  if (parts.length !== 3) return '390144';
  let header: any;
  let claims: any;
  try {
    header = JSON.parse(base64url(parts[0]).toString());
    claims = JSON.parse(base64url(parts[1]).toString());
  } catch {
    return '390144';
  }
  if (header.alg !== 'RS256') return '390144';
  const key = createPublicKey(user.publicKey);
  const ok = verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), key, base64url(parts[2]));
  if (!ok) return '390144';
  const der = key.export({ format: 'der', type: 'spki' });
  const fingerprint = `SHA256:${createHash('sha256').update(der).digest('base64')}`;
  const who = `${account.toUpperCase()}.${user.name.toUpperCase()}`;
  if (claims.iss !== `${who}.${fingerprint}` || claims.sub !== who) return '390144';
  // The SDK writes iat/exp in milliseconds; seconds are accepted as well.
  const exp = Number(claims.exp);
  const expMs = exp > 1e12 ? exp : exp * 1000;
  if (!(expMs > Date.now())) return '390114';
  return null;
}

const MESSAGES: Record<string, string> = {
  '390100': 'Incorrect username or password was specified.',
  '390144': 'JWT token is invalid.',
  '390114': 'Authentication token has expired.  The user must authenticate again.',
  '390189':
    'Role specified in the connect string is not granted to this user. Contact your local system administrator, or attempt to login with another role, e.g. PUBLIC.',
  '390104': 'User must login again to access the service.',
};

export async function startSnowflakeApi(opts: {
  account?: string;
  users: SnowflakeUser[];
  tables?: SnowflakeTable[];
}): Promise<SnowflakeApiPeer> {
  const account = (opts.account ?? 'testorg-testacct').toUpperCase();
  const tables = new Map<string, SnowflakeTable>();
  for (const t of opts.tables ?? []) tables.set(t.name, t);
  const engine = new Engine(tables);
  const sessions = new Map<string, Session>();
  const results = new Map<string, { result: Result; ready: boolean }>();
  const requests: { path: string; body: string }[] = [];
  let fault: SnowflakeFault = null;
  let chunkOrigin: string | null = null;
  let url = '';
  const peer: SnowflakeApiPeer = {
    url: '',
    account,
    tables,
    requests,
    logins: 0,
    setChunkOrigin(origin) {
      chunkOrigin = origin;
    },
    setFault(f) {
      fault = f;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json' }).end(text);
  };
  const failure = (
    res: http.ServerResponse,
    code: string,
    message: string,
    sqlState?: string,
    status = 200,
  ) =>
    send(res, status, {
      success: false,
      code,
      message,
      data: { errorCode: code, sqlState: sqlState ?? null, queryId: null },
    });

  function resultBody(queryId: string, r: Result) {
    const rowtype = r.rowtype.map((c) => ({
      name: c.name,
      type: c.type,
      nullable: true,
      scale: c.type === 'fixed' ? 0 : null,
      precision: c.type === 'fixed' ? 38 : null,
      length: c.type === 'text' ? 16777216 : null,
      byteLength: c.type === 'text' ? 16777216 : null,
      database: '',
      schema: '',
      table: '',
      collation: null,
    }));
    const text = r.rows.map((row) => row.map((v, i) => rawText(v, r.rowtype[i].type)));
    const chunks: { url: string; rowCount: number; uncompressedSize: number; compressedSize: number }[] = [];
    for (let i = INLINE_ROWS; i < text.length; i += CHUNK_ROWS) {
      const n = Math.min(CHUNK_ROWS, text.length - i);
      chunks.push({
        url: `${chunkOrigin ?? url}/chunks/${queryId}/${i}/${n}`,
        rowCount: n,
        uncompressedSize: n * 50,
        compressedSize: n * 20,
      });
    }
    return {
      success: true,
      code: null,
      message: null,
      data: {
        queryId,
        rowtype,
        rowset: text.slice(0, INLINE_ROWS),
        total: text.length,
        returned: text.length,
        queryResultFormat: 'json',
        statementTypeId: r.statementTypeId,
        version: 1,
        parameters: [{ name: 'TIMEZONE', value: 'UTC' }],
        ...(chunks.length > 0 ? { chunks, chunkHeaders: {} } : {}),
      },
    };
  }

  const server = http.createServer((req, res) => {
    const buf: Buffer[] = [];
    req.on('data', (c) => buf.push(c));
    req.on('end', () => {
      let raw = Buffer.concat(buf);
      if (req.headers['content-encoding'] === 'gzip' && raw.length > 0) raw = zlib.gunzipSync(raw);
      const bodyText = raw.toString();
      const u = new URL(req.url ?? '/', 'http://peer');
      requests.push({ path: u.pathname, body: bodyText });
      if (fault === 'rate_limit')
        return send(res, 429, { success: false, code: '000429', message: 'Too many requests' });
      try {
        route(req, res, u, bodyText);
      } catch (err) {
        if (err instanceof SqlError) failure(res, err.code, err.message, err.sqlState);
        else send(res, 500, { success: false, code: '000500', message: 'internal error' });
      }
    });
  });

  function session(req: http.IncomingMessage): Session | null {
    const m = /Snowflake Token="([^"]+)"/.exec(req.headers.authorization ?? '');
    return m ? (sessions.get(m[1]) ?? null) : null;
  }

  function route(req: http.IncomingMessage, res: http.ServerResponse, u: URL, bodyText: string) {
    const body = bodyText ? JSON.parse(bodyText) : {};
    if (u.pathname === '/session/v1/login-request' && req.method === 'POST') {
      peer.logins++;
      const d = body.data ?? {};
      if (fault === 'expired') return failure(res, '390114', MESSAGES['390114']);
      const user = opts.users.find((x) => x.name.toUpperCase() === String(d.LOGIN_NAME ?? '').toUpperCase());
      if (String(d.ACCOUNT_NAME ?? '').toUpperCase() !== account.split('.')[0] || !user)
        return failure(res, '390100', MESSAGES['390100']);
      if (d.AUTHENTICATOR === 'SNOWFLAKE_JWT') {
        const code = checkJwt(String(d.TOKEN ?? ''), account, user);
        if (code) return failure(res, code, MESSAGES[code]);
      } else if (user.password === undefined || d.PASSWORD !== user.password) {
        return failure(res, '390100', MESSAGES['390100']);
      }
      const role = (u.searchParams.get('roleName') ?? user.roles[0] ?? 'PUBLIC').toUpperCase();
      if (!user.roles.map((r) => r.toUpperCase()).includes(role))
        return failure(res, '390189', MESSAGES['390189']);
      const token = randomBytes(24).toString('hex');
      const schema = (u.searchParams.get('schemaName') ?? DEFAULT_SCHEMA).toUpperCase();
      sessions.set(token, { user: user.name, role, schema, snapshot: null });
      return send(res, 200, {
        success: true,
        code: null,
        message: null,
        data: {
          token,
          masterToken: randomBytes(24).toString('hex'),
          validityInSeconds: 3600,
          masterValidityInSeconds: 14400,
          sessionId: Date.now(),
          parameters: [{ name: 'TIMEZONE', value: 'UTC' }],
          sessionInfo: {
            databaseName: u.searchParams.get('databaseName'),
            schemaName: schema,
            warehouseName: u.searchParams.get('warehouse'),
            roleName: role,
          },
        },
      });
    }
    if (u.pathname.startsWith('/chunks/')) {
      const [, , id, start, n] = u.pathname.split('/');
      const stored = results.get(id);
      if (!stored) return send(res, 404, {});
      const rows = stored.result.rows
        .slice(Number(start), Number(start) + Number(n))
        .map((row) => JSON.stringify(row.map((v, i) => rawText(v, stored.result.rowtype[i].type))));
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(rows.join(','));
      return;
    }
    if (u.pathname === '/telemetry/send') return send(res, 200, { success: true, data: null });
    const s = session(req);
    if (!s) return failure(res, '390104', MESSAGES['390104'], undefined, 401);
    if (u.pathname === '/session' && u.searchParams.get('delete') === 'true') {
      const m = /Snowflake Token="([^"]+)"/.exec(req.headers.authorization ?? '');
      if (m) sessions.delete(m[1]);
      return send(res, 200, { success: true, code: null, message: null, data: null });
    }
    if (u.pathname === '/session/heartbeat' || u.pathname === '/queries/v1/abort-request')
      return send(res, 200, { success: true, code: null, message: null, data: null });
    if (u.pathname === '/queries/v1/query-request' && req.method === 'POST') {
      if (fault === 'hang') return;
      const bindings: Record<string, { type: string; value: unknown }> = body.bindings ?? {};
      const keys = Object.keys(bindings).sort((a, b) => Number(a) - Number(b));
      const array = keys.length > 0 && Array.isArray(bindings[keys[0]].value);
      const binds = array ? [] : keys.map((k) => bindValue(bindings[k]));
      let arrayRows: unknown[][] | null = null;
      if (array) {
        const n = (bindings[keys[0]].value as unknown[]).length;
        arrayRows = Array.from({ length: n }, (_, r) =>
          keys.map((k) => bindValue({ type: bindings[k].type, value: (bindings[k].value as unknown[])[r] })),
        );
      }
      const result = engine.run(String(body.sqlText ?? ''), binds, arrayRows, s);
      const queryId = randomUUID();
      if (result.rows.length > ASYNC_ROWS) {
        results.set(queryId, { result, ready: false });
        return send(res, 200, {
          success: true,
          code: '333334',
          message:
            'Asynchronous execution in progress. Use provided query id to perform query monitoring and management.',
          data: { queryId, getResultUrl: `/queries/${queryId}/result` },
        });
      }
      results.set(queryId, { result, ready: true });
      return send(res, 200, resultBody(queryId, result));
    }
    const rm = /^\/queries\/([^/]+)\/result$/.exec(u.pathname);
    if (rm && req.method === 'GET') {
      const stored = results.get(rm[1]);
      if (!stored) return failure(res, '000709', `Statement ${rm[1]} not found`);
      return send(res, 200, resultBody(rm[1], stored.result));
    }
    return send(res, 404, { success: false, code: '000404', message: 'not found' });
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  peer.url = url;
  return peer;
}
