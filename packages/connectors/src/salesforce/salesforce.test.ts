import { randomBytes } from 'node:crypto';
import type { Payload } from '@sluice/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SalesforceApiPeer, startSalesforceApi } from '../../../../test/peers/salesforce-api';
import { batches, collect, stepContext } from '../../../../test/support/step-context';
import { egressPolicy } from '../egress';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import type { SalesforceConnection } from './client';
import { salesforceConfigSchema, salesforceConnector, salesforceStatementSchema } from './index';
import { renderSoql, soqlLiteral } from './soql';

// The Salesforce connector driven through jsforce against the REST fake in
// test/peers/salesforce-api.ts: client-credentials sign-in and its failures, SOQL with escaped
// literals, nextRecordsUrl paging (and refusal of another host), schema import, upserts.

const SECRET = `SfSecret${randomBytes(12).toString('hex')}`;
const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
let peer: SalesforceApiPeer;

const conn = (secret = SECRET, config: Record<string, unknown> = {}): SalesforceConnection => ({
  config: salesforceConfigSchema.parse({
    instance_url: peer.url,
    allow_private_hosts: true,
    ...config,
  }) as any,
  credentials: { client_id: 'sluice-app', client_secret: secret },
});

async function failure(p: Promise<unknown>, code: string): Promise<ConnectorError> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err, `expected ${code}`).toBeInstanceOf(ConnectorError);
  expect(err.code, err.message).toBe(code);
  expect(err.message).not.toContain(SECRET);
  return err as ConnectorError;
}

beforeAll(async () => {
  peer = await startSalesforceApi({
    clients: [{ id: 'sluice-app', secret: SECRET }],
    objects: [
      {
        name: 'Account',
        fields: [
          { name: 'Id', type: 'id' },
          { name: 'Name', type: 'string' },
          { name: 'Industry', type: 'picklist' },
          { name: 'AnnualRevenue', type: 'currency' },
        ],
        records: Array.from({ length: 4500 }, (_, i) => ({
          Id: `001${String(i + 1).padStart(15, '0')}`,
          Name: i === 7 ? "O'Neil \\ Sons" : `Account ${i + 1}`,
          Industry: i % 2 === 0 ? 'Energy' : 'Retail',
          AnnualRevenue: i * 10,
        })),
      },
      {
        name: 'Contact',
        fields: [
          { name: 'Id', type: 'id' },
          { name: 'LastName', type: 'string' },
          { name: 'Email', type: 'email' },
          { name: 'Ext_Id__c', type: 'string', externalId: true },
        ],
        records: [],
      },
    ],
  });
});

afterAll(async () => {
  await peer?.close();
});

describe('soql literals', () => {
  it('escapes values into single literal tokens and refuses quoted placeholders', () => {
    expect(soqlLiteral("a'b\\c\n")).toBe("'a\\'b\\\\c\\n'");
    expect(soqlLiteral(3.5)).toBe('3.5');
    expect(soqlLiteral(['x', 1, null])).toBe("('x', 1, null)");
    expect(
      renderSoql(
        'SELECT Id FROM Account WHERE Name = {{n}} AND Industry IN {{i}}',
        (k) => ({ n: "x' OR Name != '", i: ['A'] })[k],
      ).text,
    ).toBe("SELECT Id FROM Account WHERE Name = 'x\\' OR Name != \\'' AND Industry IN ('A')");
    expect(
      salesforceStatementSchema.safeParse({
        type: 'soql',
        soql: "SELECT Id FROM Account WHERE Name = '{{n}}'",
      }).success,
    ).toBe(false);
    expect(() => soqlLiteral({ a: 1 })).toThrow(ConnectorError);
  });
});

describe('salesforce connector', () => {
  it('signs in with client credentials and maps failures', async () => {
    await salesforceConnector.test(conn(), ctx);
    const bad = await failure(salesforceConnector.test(conn('wrong-secret'), ctx), 'AUTHENTICATION_FAILED');
    expect(bad.message).toContain('invalid_client');
    peer.setFault('expire_tokens');
    const expired = await failure(salesforceConnector.test(conn(), ctx), 'AUTHENTICATION_FAILED');
    expect(expired.message).toContain('INVALID_SESSION_ID');
    peer.setFault('insufficient_access');
    await failure(salesforceConnector.test(conn(), ctx), 'PERMISSION_DENIED');
    peer.setFault('rate_limit');
    const limited = await failure(salesforceConnector.test(conn(), ctx), 'RATE_LIMITED');
    expect(limited.message).toContain('REQUEST_LIMIT_EXCEEDED');
    peer.setFault(null);
    expect(salesforceConfigSchema.safeParse({ instance_url: 'http://example.com' }).success).toBe(false);
  });

  it('gets a fresh token once when the current one has expired', async () => {
    const before = peer.tokensIssued;
    const s = await import('./client').then((m) => m.openSalesforce(conn(), ctx));
    try {
      peer.setFault('expire_once');
      expect(await s.call({ url: `${s.base}/limits` })).toMatchObject({ DailyApiRequests: { Max: 15000 } });
    } finally {
      await s.close();
    }
    expect(peer.tokensIssued).toBe(before + 2);
  });

  it('runs SOQL with escaped values, pages with nextRecordsUrl and truncates at the row limit', async () => {
    const r = await salesforceConnector.query.execute(
      conn(),
      { type: 'soql', soql: 'SELECT Id, Name FROM Account WHERE Name = {{name}}' },
      { name: "O'Neil \\ Sons" },
      ctx,
    );
    expect(r).toEqual({
      result_type: 'object_rows',
      payload: { records: [{ Id: '001000000000000008', Name: "O'Neil \\ Sons" }], total_size: 1 },
      row_count: 1,
      truncated: false,
    });
    const last = peer.requests.filter((q) => q.path.includes('/query?q=')).at(-1)!;
    expect(new URLSearchParams(last.path.split('?')[1]).get('q')).toBe(
      "SELECT Id, Name FROM Account WHERE Name = 'O\\'Neil \\\\ Sons'",
    );
    const many = await salesforceConnector.query.execute(
      conn(),
      { type: 'soql', soql: 'SELECT Id FROM Account' },
      {},
      {
        ...ctx,
        limits: { ...defaultLimits, maxRows: 2500 },
      },
    );
    expect(many).toMatchObject({ row_count: 2500, truncated: true, payload: { total_size: 4500 } });
    await failure(
      salesforceConnector.query.execute(conn(), { type: 'soql', soql: 'SELECT Nope FROM Account' }, {}, ctx),
      'QUERY_FAILED',
    );
    peer.setFault('foreign_next');
    try {
      const foreign = await failure(
        salesforceConnector.query.execute(
          conn(),
          { type: 'soql', soql: 'SELECT Id FROM Account' },
          {},
          {
            ...ctx,
            limits: { ...defaultLimits, maxRows: 10_000, maxResultBytes: 10_000_000 },
          },
        ),
        'REMOTE_ERROR',
      );
      expect(foreign.message).toContain('another host');
    } finally {
      peer.setFault(null);
    }
  });

  it('imports objects and fields', async () => {
    const schema = await salesforceConnector.discover.importSchema(conn(), ctx);
    expect(schema).toMatchObject({ schema_type: 'document', type: 'salesforce' });
    expect((schema as any).collections).toContainEqual({
      name: 'Contact',
      fields: [
        { name: 'Id', type: 'id' },
        { name: 'LastName', type: 'string' },
        { name: 'Email', type: 'email' },
        { name: 'Ext_Id__c', type: 'string' },
      ],
    });
  });

  it('streams a source page by page and upserts in batches of 200 by external id', async () => {
    const src = stepContext(
      {
        kind: 'source',
        data_source_ref: 'crm',
        operation: {
          operation_type: 'object_rows',
          soql: 'SELECT Id, Name, Industry FROM Account WHERE Industry = {{runtime.input.industry}}',
        },
      },
      { scope: { runtime: { input: { industry: 'Energy' } } } },
    );
    const out = await salesforceConnector.source.read(conn(), src, ctx);
    const { items, sizes } = await collect(out.payload);
    expect(items.length).toBe(2250);
    expect(sizes).toEqual([2000, 250]);
    expect(items[0]).toEqual({ Id: '001000000000000001', Name: 'Account 1', Industry: 'Energy' });

    const rows = (from: number, n: number): Payload => ({
      kind: 'rows',
      columns: [
        { name: 'Ext_Id__c', type: 'text' },
        { name: 'LastName', type: 'text' },
        { name: 'Email', type: 'text' },
      ],
      batches: batches<unknown[]>(
        Array.from({ length: n }, (_, i) => [
          `ext-${from + i}`,
          `Last ${from + i}`,
          `p${from + i}@example.com`,
        ]),
      ),
    });
    const sink = stepContext({
      kind: 'sink',
      data_source_ref: 'crm',
      operation: { operation_type: 'object_rows', object: 'Contact', external_id_field: 'Ext_Id__c' },
    });
    expect(await salesforceConnector.sink.write(conn(), rows(0, 450), sink, ctx)).toMatchObject({
      rows: 450,
    });
    expect(await salesforceConnector.sink.write(conn(), rows(400, 100), sink, ctx)).toMatchObject({
      rows: 100,
    });
    const contacts = peer.objects.get('contact')!.records;
    expect(contacts.length).toBe(500);
    const patches = peer.requests.filter((q) => q.method === 'PATCH');
    expect(patches.map((p) => JSON.parse(p.body).records.length)).toEqual([200, 200, 50, 100]);

    await failure(
      salesforceConnector.sink.write(conn(), rows(0, 1), sink, { ...ctx, readOnly: true }),
      'PERMISSION_DENIED',
    );
    const badField: Payload = {
      kind: 'json',
      batches: batches<unknown>([{ Ext_Id__c: 'x', Secret__c: 'value-never-in-errors' }]),
    };
    const err = await failure(salesforceConnector.sink.write(conn(), badField, sink, ctx), 'QUERY_FAILED');
    expect(err.message).toContain('INVALID_FIELD');
    expect(err.message).not.toContain('value-never-in-errors');
    const noKey = stepContext({
      kind: 'sink',
      data_source_ref: 'crm',
      operation: { operation_type: 'object_rows', object: 'Contact', external_id_field: 'Other__c' },
    });
    await failure(salesforceConnector.sink.write(conn(), rows(0, 1), noKey, ctx), 'INVALID_STATEMENT');
  });
});
