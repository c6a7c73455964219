// A stateful fake of the Google Sheets API v4 and Drive API v3 on loopback, with Google's
// token endpoint (google-oauth.ts) at `/token` of the same origin, so `@googleapis/sheets` and
// `@googleapis/drive` run their real JWT flow and requests against it (rootUrl = url + '/').
//
// Sheets (https://developers.google.com/sheets/api/reference/rest):
//   GET  /v4/spreadsheets/{id}                         spreadsheets.get (properties, sheets[].properties)
//   GET  /v4/spreadsheets/{id}/values/{range}          values.get: A1 ranges `Sheet`, `Sheet!A:C`,
//        `Sheet!A1:C10`, `Sheet!3:9`, `'My sheet'!A1`; trailing empty rows and cells are
//        omitted as Google does; valueRenderOption UNFORMATTED_VALUE keeps numbers and
//        booleans, otherwise values are formatted as text
//   POST /v4/spreadsheets/{id}/values/{range}:append   values.append after the sheet's last
//        non-empty row (valueInputOption RAW keeps values, USER_ENTERED parses numbers)
// Drive (https://developers.google.com/drive/api/reference/rest/v3):
//   GET  /drive/v3/files?q=…        files.list; q supports `'<id>' in parents` and `trashed = false`
//                                   joined by `and`; paged by pageSize/pageToken
//   GET  /drive/v3/files/{id}       files.get metadata, or the bytes with alt=media
//   POST /upload/drive/v3/files?uploadType=multipart       files.create (multipart/related:
//                                   JSON metadata part, then the media part)
//   PATCH /upload/drive/v3/files/{id}?uploadType=media|multipart   files.update of the content
// Errors use Google's body `{"error": {code, message, errors: [{reason}], status}}`: 401 for an
// unknown or revoked token, 403 PERMISSION_DENIED for a denied service account, 404, and 429
// rateLimitExceeded / 403 quotaExceeded from failNext.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOAuthFake, type OAuthFake, readBody, sendGoogleError } from './google-oauth';

export const SPREADSHEET_MIME = 'application/vnd.google-apps.spreadsheet';

export type FakeFile = {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  content: Buffer;
  modifiedTime: string;
  /** Sheets of a spreadsheet, by title, rows of cell values. */
  sheets?: Map<string, unknown[][]>;
};

export type WorkspaceFake = {
  url: string;
  tokenUri: string;
  oauth: OAuthFake;
  files: Map<string, FakeFile>;
  addFolder(name: string): FakeFile;
  addSpreadsheet(title: string, sheets: Record<string, unknown[][]>, parent?: string): FakeFile;
  addFile(name: string, mimeType: string, content: Buffer | string, parent?: string): FakeFile;
  deny(email: string): void;
  failNext(n: number, reason: 'rateLimitExceeded' | 'quotaExceeded'): void;
  requests: { method: string; path: string; query: string; rows?: number }[];
  close(): Promise<void>;
};

const colIndex = (letters: string) =>
  [...letters.toUpperCase()].reduce((n, c) => n * 26 + c.charCodeAt(0) - 64, 0) - 1;
const colLetters = (i: number) => {
  let n = i + 1;
  let s = '';
  while (n > 0) {
    const r = (n - 1) % 26;
    s = String.fromCharCode(65 + r) + s;
    n = Math.floor((n - 1) / 26);
  }
  return s;
};

type Range = { sheet: string; c1: number; r1: number; c2: number | null; r2: number | null };

function parseRange(text: string): Range | null {
  const bang = text.lastIndexOf('!');
  let sheet = bang === -1 ? text : text.slice(0, bang);
  if (/^'.*'$/.test(sheet)) sheet = sheet.slice(1, -1).replace(/''/g, "'");
  if (bang === -1) return { sheet, c1: 0, r1: 1, c2: null, r2: null };
  const rest = text.slice(bang + 1);
  const m = /^([A-Z]{1,3})?(\d+)?(?::([A-Z]{1,3})?(\d+)?)?$/i.exec(rest);
  if (!m || rest === '') return null;
  const single = !rest.includes(':');
  return {
    sheet,
    c1: m[1] ? colIndex(m[1]) : 0,
    r1: m[2] ? Number(m[2]) : 1,
    c2: single ? (m[1] ? colIndex(m[1]) : null) : m[3] ? colIndex(m[3]) : null,
    r2: single ? (m[2] ? Number(m[2]) : null) : m[4] ? Number(m[4]) : null,
  };
}

const empty = (v: unknown) => v === undefined || v === null || v === '';

export async function startWorkspaceFake(): Promise<WorkspaceFake> {
  const oauth = createOAuthFake();
  const files = new Map<string, FakeFile>();
  const denied = new Set<string>();
  let failures = { n: 0, reason: '' };
  const requests: WorkspaceFake['requests'] = [];
  const newId = () => randomBytes(12).toString('base64url');
  const now = () => new Date().toISOString();

  const send = (res: http.ServerResponse, body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(body));
  };
  const meta = (f: FakeFile) => ({
    kind: 'drive#file',
    id: f.id,
    name: f.name,
    mimeType: f.mimeType,
    parents: f.parents,
    modifiedTime: f.modifiedTime,
    ...(f.sheets ? {} : { size: String(f.content.length) }),
  });

  function sheetsApi(res: http.ServerResponse, method: string, rawPath: string, url: URL, body: Buffer) {
    const m = /^\/v4\/spreadsheets\/([^/]+)(?:\/values\/([^/]+?)(:append)?)?$/.exec(rawPath);
    if (!m) return sendGoogleError(res, 404, 'notFound', 'Requested entity was not found.');
    const file = files.get(decodeURIComponent(m[1]));
    if (!file?.sheets) return sendGoogleError(res, 404, 'notFound', 'Requested entity was not found.');
    if (!m[2] && method === 'GET') {
      return send(res, {
        spreadsheetId: file.id,
        properties: { title: file.name },
        sheets: [...file.sheets.entries()].map(([title, rows], index) => ({
          properties: {
            sheetId: index,
            title,
            index,
            sheetType: 'GRID',
            gridProperties: { rowCount: Math.max(1000, rows.length), columnCount: 26 },
          },
        })),
      });
    }
    const rangeText = decodeURIComponent(m[2] ?? '');
    const range = parseRange(rangeText);
    const rows = range ? file.sheets.get(range.sheet) : undefined;
    if (!range || !rows)
      return sendGoogleError(res, 400, 'badRequest', `Unable to parse range: ${rangeText}`);
    if (m[3] && method === 'POST') {
      const json = JSON.parse(body.toString('utf8') || '{}');
      const values: unknown[][] = json.values ?? [];
      requests[requests.length - 1].rows = values.length;
      const userEntered = url.searchParams.get('valueInputOption') === 'USER_ENTERED';
      if (!url.searchParams.get('valueInputOption'))
        return sendGoogleError(res, 400, 'badRequest', "'valueInputOption' is required but not specified");
      let last = rows.length;
      while (last > 0 && (rows[last - 1] ?? []).every(empty)) last--;
      const start = last + 1;
      values.forEach((r, i) => {
        const row = rows[last + i] ?? [];
        r.forEach((v, j) => {
          row[range.c1 + j] =
            userEntered && typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
        });
        rows[last + i] = row;
      });
      file.modifiedTime = now();
      const width = Math.max(0, ...values.map((r) => r.length));
      const updatedRange = `${range.sheet}!${colLetters(range.c1)}${start}:${colLetters(range.c1 + Math.max(width, 1) - 1)}${start + values.length - 1}`;
      return send(res, {
        spreadsheetId: file.id,
        tableRange: last > 0 ? `${range.sheet}!A1:${colLetters(Math.max(width, 1) - 1)}${last}` : undefined,
        updates: {
          spreadsheetId: file.id,
          updatedRange,
          updatedRows: values.length,
          updatedColumns: width,
          updatedCells: values.reduce((n, r) => n + r.length, 0),
        },
      });
    }
    if (method !== 'GET') return sendGoogleError(res, 404, 'notFound', 'Requested entity was not found.');
    const unformatted = url.searchParams.get('valueRenderOption') === 'UNFORMATTED_VALUE';
    const r2 = Math.min(range.r2 ?? rows.length, rows.length);
    const out: unknown[][] = [];
    for (let r = range.r1; r <= r2; r++) {
      const row = rows[r - 1] ?? [];
      const c2 = range.c2 ?? row.length - 1;
      const cells = row
        .slice(range.c1, c2 + 1)
        .map((v) =>
          empty(v) ? '' : unformatted ? v : typeof v === 'boolean' ? (v ? 'TRUE' : 'FALSE') : String(v),
        );
      while (cells.length > 0 && empty(cells[cells.length - 1])) cells.pop();
      out.push(cells);
    }
    while (out.length > 0 && out[out.length - 1].length === 0) out.pop();
    return send(res, {
      range: rangeText,
      majorDimension: 'ROWS',
      ...(out.length > 0 ? { values: out } : {}),
    });
  }

  function parseMultipart(
    contentType: string,
    body: Buffer,
  ): { metadata: any; media: Buffer; mediaType: string } | null {
    const boundary = /boundary=([^;]+)/.exec(contentType)?.[1]?.replace(/^"|"$/g, '');
    if (!boundary) return null;
    const text = body.toString('latin1');
    const parts = text.split(`--${boundary}`).slice(1, -1);
    if (parts.length !== 2) return null;
    const split = (p: string) => {
      const i = p.indexOf('\r\n\r\n');
      const head = p.slice(0, i);
      let content = p.slice(i + 4);
      if (content.endsWith('\r\n')) content = content.slice(0, -2);
      return { type: /content-type:\s*([^\r\n]+)/i.exec(head)?.[1] ?? 'application/octet-stream', content };
    };
    const [a, b] = parts.map((p) => split(p.replace(/^\r\n/, '')));
    return {
      metadata: JSON.parse(Buffer.from(a.content, 'latin1').toString('utf8')),
      media: Buffer.from(b.content, 'latin1'),
      mediaType: b.type,
    };
  }

  function driveApi(req: http.IncomingMessage, res: http.ServerResponse, url: URL, body: Buffer) {
    const method = req.method ?? 'GET';
    const path = url.pathname;
    if (path === '/drive/v3/files' && method === 'GET') {
      const q = url.searchParams.get('q') ?? '';
      const conds = q === '' ? [] : q.split(/\s+and\s+/i);
      const tests = conds.map((c) => {
        const parent = /^'([A-Za-z0-9_-]+)' in parents$/.exec(c.trim());
        if (parent) return (f: FakeFile) => f.parents.includes(parent[1]);
        if (/^trashed\s*=\s*false$/.test(c.trim())) return () => true;
        return null;
      });
      if (tests.some((t) => t === null)) return sendGoogleError(res, 400, 'invalid', 'Invalid Value');
      const all = [...files.values()].filter((f) => tests.every((t) => (t as (f: FakeFile) => boolean)(f)));
      const size = Number(url.searchParams.get('pageSize') ?? 100);
      const start = Number(url.searchParams.get('pageToken') ?? 0);
      const next = start + size < all.length ? String(start + size) : undefined;
      return send(res, {
        kind: 'drive#fileList',
        files: all.slice(start, start + size).map(meta),
        ...(next ? { nextPageToken: next } : {}),
      });
    }
    const get = /^\/drive\/v3\/files\/([^/]+)$/.exec(path);
    if (get && method === 'GET') {
      const f = files.get(decodeURIComponent(get[1]));
      if (!f) return sendGoogleError(res, 404, 'notFound', `File not found: ${get[1]}.`);
      if (url.searchParams.get('alt') === 'media') {
        if (f.sheets)
          return sendGoogleError(
            res,
            403,
            'fileNotDownloadable',
            'Only files with binary content can be downloaded.',
          );
        res.writeHead(200, { 'content-type': f.mimeType, 'content-length': String(f.content.length) });
        res.end(f.content);
        return;
      }
      return send(res, meta(f));
    }
    const upload = /^\/upload\/drive\/v3\/files(?:\/([^/]+))?$/.exec(path);
    if (upload) {
      const type = url.searchParams.get('uploadType');
      let metadata: any = {};
      let media = body;
      let mediaType = String(req.headers['content-type'] ?? 'application/octet-stream');
      if (type === 'multipart') {
        const parsed = parseMultipart(mediaType, body);
        if (!parsed) return sendGoogleError(res, 400, 'badContent', 'Malformed multipart body.');
        ({ metadata, media, mediaType } = parsed);
      } else if (type !== 'media') return sendGoogleError(res, 400, 'invalid', 'Invalid uploadType');
      if (upload[1] && method === 'PATCH') {
        const f = files.get(decodeURIComponent(upload[1]));
        if (!f) return sendGoogleError(res, 404, 'notFound', `File not found: ${upload[1]}.`);
        f.content = media;
        f.mimeType = metadata.mimeType ?? mediaType ?? f.mimeType;
        if (metadata.name) f.name = metadata.name;
        f.modifiedTime = now();
        return send(res, meta(f));
      }
      if (!upload[1] && method === 'POST') {
        for (const p of metadata.parents ?? [])
          if (!files.has(p)) return sendGoogleError(res, 404, 'notFound', `File not found: ${p}.`);
        const f: FakeFile = {
          id: newId(),
          name: metadata.name ?? 'Untitled',
          mimeType: metadata.mimeType ?? mediaType,
          parents: metadata.parents ?? [],
          content: media,
          modifiedTime: now(),
        };
        files.set(f.id, f);
        return send(res, meta(f));
      }
    }
    return sendGoogleError(res, 404, 'notFound', 'Not Found');
  }

  const server = http.createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      if (oauth.handle(req, body.toString('utf8'), res)) return;
      const url = new URL(req.url ?? '/', 'http://fake');
      const rawPath = (req.url ?? '/').split('?')[0];
      requests.push({ method: req.method ?? 'GET', path: url.pathname, query: url.search });
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
              'Quota exceeded for quota metric Read requests per minute per user.',
            )
          : sendGoogleError(res, 403, 'quotaExceeded', 'The quota has been exceeded.');
      }
      if (denied.has(who.email))
        return sendGoogleError(res, 403, 'forbidden', 'The caller does not have permission');
      if (rawPath.startsWith('/v4/spreadsheets/'))
        return sheetsApi(res, req.method ?? 'GET', rawPath, url, body);
      return driveApi(req, res, url, body);
    } catch {
      if (!res.headersSent) sendGoogleError(res, 500, 'backendError', 'Internal error encountered.');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    tokenUri: `${url}/token`,
    oauth,
    files,
    addFolder(name) {
      const f: FakeFile = {
        id: newId(),
        name,
        mimeType: 'application/vnd.google-apps.folder',
        parents: [],
        content: Buffer.alloc(0),
        modifiedTime: now(),
      };
      files.set(f.id, f);
      return f;
    },
    addSpreadsheet(title, sheets, parent) {
      const f: FakeFile = {
        id: newId(),
        name: title,
        mimeType: SPREADSHEET_MIME,
        parents: parent ? [parent] : [],
        content: Buffer.alloc(0),
        modifiedTime: now(),
        sheets: new Map(Object.entries(sheets).map(([k, v]) => [k, v.map((r) => [...r])])),
      };
      files.set(f.id, f);
      return f;
    },
    addFile(name, mimeType, content, parent) {
      const f: FakeFile = {
        id: newId(),
        name,
        mimeType,
        parents: parent ? [parent] : [],
        content: Buffer.from(content),
        modifiedTime: now(),
      };
      files.set(f.id, f);
      return f;
    },
    deny: (email) => denied.add(email),
    failNext(n, reason) {
      failures = { n, reason };
    },
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
