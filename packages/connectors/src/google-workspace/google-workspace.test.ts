import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServiceAccount, testServiceAccount } from '../../../../test/peers/google-oauth';
import {
  type FakeFile,
  startWorkspaceFake,
  type WorkspaceFake,
} from '../../../../test/peers/google-workspace-api';
import { egressPolicy } from '../egress';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import { googleWorkspaceConnector as gw } from './index';
import { parseA1, rowsRange } from './sheets';

// The connector against the Sheets/Drive fake through @googleapis/sheets and @googleapis/drive
// and Google's JWT flow. Pipelines through the API are in test/connectors/.

let fake: WorkspaceFake;
let sa: TestServiceAccount;
let ctx: ConnectorContext;
let folder: FakeFile;
let book: FakeFile;
let csv: FakeFile;
const conn = () => ({
  config: { spreadsheet_id: book.id, drive_folder_id: folder.id },
  credentials: { service_account_json: sa.json },
});
const stmt = (s: Record<string, unknown>) =>
  gw.query.statementSchema.parse({ type: 'google_workspace', ...s });

beforeAll(async () => {
  fake = await startWorkspaceFake();
  sa = testServiceAccount(fake.tokenUri);
  fake.oauth.trust(sa.email, sa.publicKey);
  folder = fake.addFolder('exports');
  book = fake.addSpreadsheet(
    'Orders',
    {
      Orders: [
        ['id', 'name', 'qty'],
        [1, 'apple', 3],
        [2, 'pear'],
        [3, 'fig', 9],
      ],
      Empty: [],
      Gaps: [['n'], [1], [], ['', ''], [4]],
    },
    folder.id,
  );
  csv = fake.addFile('prices.csv', 'text/csv', 'sku,price\na,1.5\n', folder.id);
  ctx = {
    policy: egressPolicy('self_hosted', false, ['127.0.0.1/32']),
    limits: defaultLimits,
    endpoints: { googleApiRoot: fake.url },
  };
});
afterAll(() => fake?.close());

describe('google_workspace connector', () => {
  it('parses A1 ranges', () => {
    expect(parseA1('Sheet1')).toEqual({ sheet: 'Sheet1' });
    expect(rowsRange(parseA1('Sheet1!A:C'), 1, 5000)).toBe('Sheet1!A1:C5000');
    expect(rowsRange(parseA1("'My sheet'!B2:D"), 2, 10)).toBe("'My sheet'!B2:D10");
    expect(rowsRange(parseA1('S'), 5001, 10000)).toBe('S!5001:10000');
    expect(() => parseA1('S!?')).toThrow(ConnectorError);
  });

  it('tests the connection and maps failures', async () => {
    await gw.test(conn(), ctx);
    const wrong = testServiceAccount(fake.tokenUri, sa.email);
    const err = await gw
      .test({ ...conn(), credentials: { service_account_json: wrong.json } }, ctx)
      .catch((e) => e);
    expect(err.code).toBe('AUTHENTICATION_FAILED');
    // The generated clients retry a 429 a few times; a lasting one is reported.
    fake.failNext(20, 'rateLimitExceeded');
    expect((await gw.test(conn(), ctx).catch((e) => e)).code).toBe('REMOTE_ERROR');
    fake.failNext(0, 'rateLimitExceeded');
    const denied = testServiceAccount(fake.tokenUri, 'other@test-project.iam.gserviceaccount.com');
    fake.oauth.trust(denied.email, denied.publicKey);
    fake.deny(denied.email);
    const d = await gw
      .test({ ...conn(), credentials: { service_account_json: denied.json } }, ctx)
      .catch((e) => e);
    expect(d.code).toBe('PERMISSION_DENIED');
  });

  it('imports spreadsheets and files with their header fields', async () => {
    const schema = await gw.discover.importSchema(conn(), ctx);
    expect(schema).toMatchObject({ schema_type: 'file', type: 'google_workspace' });
    expect((schema as any).files).toEqual([
      {
        name: 'Orders/Orders',
        fields: [
          { name: 'id', type: 'number' },
          { name: 'name', type: 'string' },
          { name: 'qty', type: 'number' },
        ],
        mime_type: 'application/vnd.google-apps.spreadsheet',
        resource_id: `${book.id}!'Orders'`,
      },
      {
        name: 'Orders/Empty',
        fields: [],
        mime_type: 'application/vnd.google-apps.spreadsheet',
        resource_id: `${book.id}!'Empty'`,
      },
      {
        name: 'Orders/Gaps',
        fields: [{ name: 'n', type: 'number' }],
        mime_type: 'application/vnd.google-apps.spreadsheet',
        resource_id: `${book.id}!'Gaps'`,
      },
      { name: 'prices.csv', fields: [], mime_type: 'text/csv', resource_id: csv.id },
    ]);
  });

  it('reads and appends ranges', async () => {
    const read = await gw.query.execute(
      conn(),
      stmt({ operation: 'read_range', range: 'Orders!A:C' }),
      {},
      ctx,
    );
    expect(read).toMatchObject({ result_type: 'workspace_file', row_count: 3, truncated: false });
    expect(read.payload).toMatchObject({
      column_names: ['id', 'name', 'qty'],
      rows: [
        [1, 'apple', 3],
        [2, 'pear', null],
        [3, 'fig', 9],
      ],
    });
    const gaps = await gw.query.execute(conn(), stmt({ operation: 'read_range', range: 'Gaps' }), {}, ctx);
    expect(gaps.payload.rows).toEqual([[1], [4]]);
    const appended = await gw.query.execute(
      conn(),
      stmt({ operation: 'append_rows', range: 'Orders', rows: '{{rows}}' }),
      { rows: [{ name: 'kiwi', id: 4 }] },
      ctx,
    );
    expect(appended.payload).toMatchObject({ written_rows: 1, updated_range: 'Orders!A5:C5' });
    expect(book.sheets?.get('Orders')?.[4]).toEqual([4, 'kiwi', '']);
    await gw.query.execute(
      conn(),
      stmt({ operation: 'append_rows', range: 'Empty', rows: [{ a: 1, b: 'x' }] }),
      {},
      ctx,
    );
    expect(book.sheets?.get('Empty')).toEqual([
      ['a', 'b'],
      [1, 'x'],
    ]);
    const bad = await gw.query
      .execute(conn(), stmt({ operation: 'append_rows', range: 'Orders', rows: [{ nope: 1 }] }), {}, ctx)
      .catch((e) => e);
    expect(bad.code).toBe('INVALID_STATEMENT');
  });

  it('lists, reads and writes Drive files', async () => {
    const list = await gw.query.execute(conn(), stmt({ operation: 'list_files' }), {}, ctx);
    expect((list.payload.files as any[]).map((f) => f.name)).toEqual(['Orders', 'prices.csv']);
    const read = await gw.query.execute(conn(), stmt({ operation: 'read_file', file_id: csv.id }), {}, ctx);
    expect(read.payload).toMatchObject({
      text: 'sku,price\na,1.5\n',
      file: { mime_type: 'text/csv', size_bytes: 16, digest_algorithm: 'sha256', filename: 'prices.csv' },
    });
    const created = await gw.query.execute(
      conn(),
      stmt({ operation: 'write_file', name: 'note-{{n}}.txt', content: 'hello' }),
      { n: 1 },
      ctx,
    );
    const id = created.payload.file_id as string;
    expect(fake.files.get(id)).toMatchObject({
      name: 'note-1.txt',
      mimeType: 'text/plain',
      parents: [folder.id],
    });
    expect(fake.files.get(id)?.content.toString()).toBe('hello');
    await gw.query.execute(
      conn(),
      stmt({ operation: 'write_file', file_id: id, content: { a: 1 } }),
      {},
      ctx,
    );
    expect(fake.files.get(id)?.content.toString()).toBe('{"a":1}');
    const native = await gw.query
      .execute(conn(), stmt({ operation: 'read_file', file_id: book.id }), {}, ctx)
      .catch((e) => e);
    expect(native.code).toBe('UNSUPPORTED_OPERATION');
  });
});
