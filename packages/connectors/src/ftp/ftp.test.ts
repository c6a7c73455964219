import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SilentTcpServer, startSilentTcpServer } from '../../../../test/peers/silent-tcp';
import { FTP_PASSWORD, FTP_USER, startVsftpd, type VsftpdPeer } from '../../../../test/peers/vsftpd';
import { egressPolicy } from '../egress';
import { type ConnectorContext, ConnectorError, defaultLimits, type QueryResult } from '../types';
import { passiveTarget, trustFtpsCertificates } from './client';
import { type FtpConn, ftpConfigSchema, ftpStatementSchema } from './config';
import { spreadsheetBytes } from './formats';
import { ftpConnector } from './index';

// The FTP connector against a real vsftpd (plain FTP, and explicit FTPS that refuses plain
// logins), a real system user with a password, on random loopback ports.

const open: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
const closed: ConnectorContext = { policy: egressPolicy('self_hosted', false), limits: defaultLimits };

let plain: VsftpdPeer;
let secure: VsftpdPeer;
let silent: SilentTcpServer;
/** Every error message the suite saw: none may hold the password. */
const messages: string[] = [];

function conn(peer: VsftpdPeer, config: Record<string, unknown> = {}, password = FTP_PASSWORD): FtpConn {
  return {
    config: ftpConfigSchema.parse({
      host: peer.host,
      port: peer.port,
      base_path: 'data',
      allow_private_hosts: true,
      ...config,
    }),
    credentials: { username: FTP_USER, password },
  };
}

async function failure(p: Promise<unknown>): Promise<ConnectorError> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err).toBeInstanceOf(ConnectorError);
  messages.push((err as Error).message);
  return err as ConnectorError;
}

const exec = (
  c: FtpConn,
  st: Record<string, unknown>,
  parameters: Record<string, unknown> = {},
  ctx = open,
) =>
  ftpConnector.query.execute(c, ftpStatementSchema.parse({ type: 'ftp', ...st }), parameters, ctx) as Promise<
    QueryResult & { payload: Record<string, any> }
  >;

beforeAll(async () => {
  [plain, secure, silent] = await Promise.all([
    startVsftpd(),
    startVsftpd({ tls: true }),
    startSilentTcpServer(),
  ]);
  for (const peer of [plain, secure]) {
    peer.put('data/orders.csv', 'id,name,amount\n1,Ada,12.5\n2,"Grace, H",7\n3,Linus,\n');
    peer.put('data/headless.csv', '1;a\n2;b\n');
    peer.put(
      'data/items.json',
      JSON.stringify([
        { id: 1, tags: ['x'], ok: true },
        { id: 2, note: 'n' },
      ]),
    );
    peer.put('data/logs/2026-01-01.ndjson', '{"level":"info","n":1}\n{"level":"warn","n":2}\n');
    peer.put('data/readme.txt', 'hello ftp\n');
    peer.put('outside.csv', 'secret\n1\n');
  }
  const sheet = await spreadsheetBytes(
    {
      columns: ['sku', 'qty', 'price'],
      rows: [
        ['A-1', 3, 1.5],
        ['B-2', 5, 2],
        ['C-3', 7, 9.25],
      ],
    },
    { sheet: 'Stock', range: 'B2', hasHeader: true },
  );
  plain.put('data/stock.xlsx', sheet);
}, 120_000);

afterAll(async () => {
  await Promise.all([plain?.close(), secure?.close(), silent?.close()]);
  for (const m of messages) expect(m).not.toContain(FTP_PASSWORD);
});

describe('test connection', () => {
  it('succeeds on plain FTP', async () => {
    await expect(ftpConnector.test(conn(plain), open)).resolves.toBeUndefined();
  });

  it('refuses an FTPS server whose certificate is not trusted', async () => {
    const err = await failure(ftpConnector.test(conn(secure), open));
    expect(err.code).toBe('CONNECTION_FAILED');
    expect(err.message).toMatch(/certificate/);
  });

  it('upgrades to explicit FTPS (the server refuses plain logins) once the certificate is trusted', async () => {
    trustFtpsCertificates([secure.certificate!]);
    await expect(ftpConnector.test(conn(secure), open)).resolves.toBeUndefined();
  });

  it('missing base_path: QUERY_FAILED naming the path', async () => {
    const err = await failure(ftpConnector.test(conn(plain, { base_path: 'nowhere' }), open));
    expect(err.code).toBe('QUERY_FAILED');
    expect(err.message).toContain('nowhere');
  });
});

describe('passive data connections', () => {
  it('keeps EPSV on the control host and refuses a PASV reply naming another host', () => {
    expect(passiveTarget({ kind: 'epsv', message: '229 Entering (|||40123|)' }, '127.0.0.1', open)).toEqual({
      host: '127.0.0.1',
      port: 40123,
    });
    expect(
      passiveTarget({ kind: 'pasv', message: '227 Entering (127,0,0,1,156,200)' }, '127.0.0.1', open),
    ).toEqual({
      host: '127.0.0.1',
      port: 156 * 256 + 200,
    });
    expect(() =>
      passiveTarget({ kind: 'pasv', message: '227 Entering (93,184,216,34,4,1)' }, '127.0.0.1', open),
    ).toThrow(/another host/);
  });

  it('takes a private PASV address from a public server as the control host, and guards it', () => {
    expect(passiveTarget({ kind: 'pasv', message: '227 (10,0,0,5,4,1)' }, '93.184.216.34', closed)).toEqual({
      host: '93.184.216.34',
      port: 1025,
    });
    // The data address passes the egress guard as the control address did.
    expect(() => passiveTarget({ kind: 'epsv', message: '229 (|||2000|)' }, '127.0.0.1', closed)).toThrow(
      /blocked/,
    );
  });
});

/**
 * A server that knows no EPSV and names another host in its PASV reply (what a hostile server
 * does to turn the client against an internal address). Records the commands it saw.
 */
async function startBouncingServer(pasvHost: string) {
  const seen: string[] = [];
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    socket.write('220 bouncer ready\r\n');
    let buffer = '';
    socket.on('data', (d) => {
      buffer += d.toString();
      for (let i = buffer.indexOf('\r\n'); i >= 0; i = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        const verb = line.split(' ')[0].toUpperCase();
        seen.push(verb);
        const answers: Record<string, string> = {
          USER: '331 password please',
          PASS: '230 logged in',
          FEAT: '211 no features',
          TYPE: '200 ok',
          PWD: '257 "/" is the directory',
          PASV: `227 Entering Passive Mode (${pasvHost.replace(/\./g, ',')},19,137)`,
          QUIT: '221 bye',
        };
        socket.write(`${answers[verb] ?? '502 not implemented'}\r\n`);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('a server naming another host for data', () => {
  it('falls back from EPSV to PASV and refuses the other host before connecting to it', async () => {
    const bouncer = await startBouncingServer('10.9.8.7');
    try {
      const c: FtpConn = {
        config: ftpConfigSchema.parse({ host: '127.0.0.1', port: bouncer.port, allow_private_hosts: true }),
        credentials: { username: 'u', password: FTP_PASSWORD },
      };
      const err = await failure(ftpConnector.test(c, open));
      expect(err.code).toBe('PERMISSION_DENIED');
      expect(err.message).toMatch(/another host/);
      expect(bouncer.seen).toEqual(expect.arrayContaining(['AUTH', 'USER', 'PASS', 'EPSV', 'PASV']));
      expect(bouncer.seen).not.toContain('LIST');
    } finally {
      await bouncer.close();
    }
  });
});

describe('schema import', () => {
  it('lists files below base_path with fields from CSV and JSON headers', async () => {
    const schema = await ftpConnector.discover.importSchema(conn(plain), open);
    expect(schema.schema_type).toBe('file');
    if (schema.schema_type !== 'file') return;
    const byName = Object.fromEntries(schema.files.map((f) => [f.name, f]));
    expect(Object.keys(byName).sort()).toEqual([
      'headless.csv',
      'items.json',
      'logs/2026-01-01.ndjson',
      'orders.csv',
      'readme.txt',
      'stock.xlsx',
    ]);
    expect(byName['orders.csv']).toEqual({
      name: 'orders.csv',
      mime_type: 'text/csv',
      fields: [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string' },
        { name: 'amount', type: 'number' },
      ],
    });
    expect(byName['items.json'].fields).toEqual([
      { name: 'id', type: 'integer' },
      { name: 'tags', type: 'array' },
      { name: 'ok', type: 'boolean' },
      { name: 'note', type: 'string' },
    ]);
    expect(byName['logs/2026-01-01.ndjson'].fields.map((f) => f.name)).toEqual(['level', 'n']);
    expect(byName['stock.xlsx'].mime_type).toMatch(/spreadsheetml/);
    expect(byName['readme.txt']).toEqual({ name: 'readme.txt', fields: [], mime_type: 'text/plain' });
  });

  it('samples only the head of a large CSV', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => `${i},label-${i}`).join('\n');
    plain.put('data/big/large.csv', `n,label\n${rows}\n`);
    try {
      const schema = await ftpConnector.discover.importSchema(conn(plain, { base_path: 'data/big' }), open);
      expect(schema).toMatchObject({
        files: [
          {
            name: 'large.csv',
            fields: [
              { name: 'n', type: 'integer' },
              { name: 'label', type: 'string' },
            ],
          },
        ],
      });
    } finally {
      fs.rmSync(path.join(plain.root, 'data/big'), { recursive: true });
    }
  });
});

describe('query execution', () => {
  it('reads a CSV file named by a placeholder', async () => {
    const r = await exec(conn(plain), { path: '{{name}}.csv' }, { name: 'orders' });
    expect(r).toMatchObject({ result_type: 'ftp', row_count: 3, truncated: false });
    expect(r.payload).toMatchObject({
      operation: 'read',
      format: 'csv',
      column_names: ['id', 'name', 'amount'],
      rows: [
        ['1', 'Ada', '12.5'],
        ['2', 'Grace, H', '7'],
        ['3', 'Linus', null],
      ],
      row_count: 3,
      is_headless_csv: false,
      target_path: 'orders.csv',
      file: { mime_type: 'text/csv', digest_algorithm: 'sha256', filename: 'orders.csv' },
    });
  });

  it('reads over FTPS too, and a headless CSV with its delimiter', async () => {
    const r = await exec(conn(secure), { path: 'headless.csv', delimiter: ';', has_header: false });
    expect(r.payload).toMatchObject({
      column_names: ['column0', 'column1'],
      rows: [
        ['1', 'a'],
        ['2', 'b'],
      ],
      is_headless_csv: true,
    });
  });

  it('reads JSON, JSON lines and a file (metadata only, never bytes)', async () => {
    const json = await exec(conn(plain), { path: 'items.json' });
    expect(json.payload).toMatchObject({
      format: 'json',
      column_names: ['id', 'tags', 'ok', 'note'],
      rows: [
        [1, ['x'], true, null],
        [2, null, null, 'n'],
      ],
    });
    const lines = await exec(conn(plain), { path: 'logs/2026-01-01.ndjson' });
    expect(lines.payload.rows).toEqual([
      ['info', 1],
      ['warn', 2],
    ]);
    const file = await exec(conn(plain), { path: 'readme.txt' });
    expect(file.payload).toEqual({
      operation: 'read',
      format: 'file',
      target_path: 'readme.txt',
      file: {
        mime_type: 'text/plain',
        size_bytes: 10,
        digest_algorithm: 'sha256',
        digest: expect.stringMatching(/^[0-9a-f]{64}$/),
        filename: 'readme.txt',
      },
    });
    expect(JSON.stringify(file)).not.toContain('hello');
  });

  it('reads a spreadsheet by sheet and A1 range', async () => {
    const r = await exec(conn(plain), { path: 'stock.xlsx', sheet: 'Stock', range: 'B2:D4' });
    expect(r.payload).toMatchObject({
      format: 'spreadsheet',
      sheet: 'Stock',
      range: 'B2:D4',
      column_names: ['sku', 'qty', 'price'],
      rows: [
        ['A-1', 3, 1.5],
        ['B-2', 5, 2],
      ],
      is_headless_spreadsheet: false,
    });
    const missing = await failure(exec(conn(plain), { path: 'stock.xlsx', sheet: 'Nope' }));
    expect(missing.code).toBe('QUERY_FAILED');
  });

  it('writes CSV, JSON and a spreadsheet, and reads them back', async () => {
    const c = conn(plain);
    const content = [
      { id: 1, city: 'Oslo' },
      { id: 2, city: '{{city}}' },
    ];
    const w = await exec(
      c,
      { operation: 'write', path: 'out/{{day}}.csv', content },
      { day: 'd1', city: 'Köln' },
    );
    expect(w.payload).toMatchObject({
      operation: 'write',
      format: 'csv',
      target_path: 'out/d1.csv',
      written_rows: 2,
    });
    expect(fs.readFileSync(path.join(plain.root, 'data/out/d1.csv'), 'utf8')).toBe(
      '"id","city"\n"1","Oslo"\n"2","Köln"\n',
    );
    expect(w.payload.written_bytes).toBe(Buffer.byteLength('"id","city"\n"1","Oslo"\n"2","Köln"\n'));

    await exec(c, { operation: 'write', path: 'out/d1.json', content }, { city: 'Bergen' });
    const back = await exec(c, { path: 'out/d1.json' });
    expect(back.payload.rows).toEqual([
      [1, 'Oslo'],
      [2, 'Bergen'],
    ]);

    await exec(c, {
      operation: 'write',
      path: 'out/d1.xlsx',
      sheet: 'Cities',
      content: [{ id: 1, city: 'Oslo' }],
    });
    const sheet = await exec(c, { path: 'out/d1.xlsx' });
    expect(sheet.payload).toMatchObject({
      sheet: 'Cities',
      column_names: ['id', 'city'],
      rows: [[1, 'Oslo']],
    });

    const text = await exec(c, { operation: 'write', path: 'out/note.txt', content: 'plain text' });
    expect(text.payload).toMatchObject({ format: 'file', written_bytes: 10 });
  });

  it('refuses to replace a file with overwrite false', async () => {
    const c = conn(plain);
    await exec(c, { operation: 'write', path: 'once.txt', content: 'first' });
    const err = await failure(
      exec(c, { operation: 'write', path: 'once.txt', content: 'second', overwrite: false }),
    );
    expect(err.code).toBe('QUERY_FAILED');
    expect(fs.readFileSync(path.join(plain.root, 'data/once.txt'), 'utf8')).toBe('first');
  });

  it('refuses paths outside base_path, from the statement or from a parameter', async () => {
    const c = conn(plain);
    for (const [p, params] of [
      ['../outside.csv', {}],
      ['{{f}}', { f: '../outside.csv' }],
      ['sub/../../outside.csv', {}],
    ] as const) {
      const err = await failure(exec(c, { path: p }, params));
      expect(err.code).toBe('PERMISSION_DENIED');
    }
    const write = await failure(
      exec(c, { operation: 'write', path: '{{f}}', content: 'x' }, { f: '../../x.txt' }),
    );
    expect(write.code).toBe('PERMISSION_DENIED');
    const injected = await failure(exec(c, { path: '{{f}}' }, { f: 'a.csv\r\nDELE orders.csv' }));
    expect(injected.code).toBe('INVALID_STATEMENT');
  });

  it('a missing file, a missing parameter and a read-only data source', async () => {
    const c = conn(plain);
    expect((await failure(exec(c, { path: 'nope.csv' }))).code).toBe('QUERY_FAILED');
    expect((await failure(exec(c, { path: '{{x}}.csv' }))).code).toBe('INVALID_STATEMENT');
    const ro = await failure(
      exec(c, { operation: 'write', path: 'ro.txt', content: 'x' }, {}, { ...open, readOnly: true }),
    );
    expect(ro.code).toBe('PERMISSION_DENIED');
  });

  it('bounds the stored rows', async () => {
    const r = await exec(
      conn(plain),
      { path: 'orders.csv' },
      {},
      { ...open, limits: { ...defaultLimits, maxRows: 2 } },
    );
    expect(r).toMatchObject({ row_count: 3, truncated: true });
    expect(r.payload.rows).toHaveLength(2);
  });
});
