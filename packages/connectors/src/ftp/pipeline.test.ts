import fs from 'node:fs';
import path from 'node:path';
import { rowsOf } from '@sluice/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FTP_PASSWORD, FTP_USER, startVsftpd, type VsftpdPeer } from '../../../../test/peers/vsftpd';
import { batches, bytesOf, chunksOf, collect, stepContext } from '../../../../test/support/step-context';
import { egressPolicy } from '../egress';
import { type ConnectorContext, ConnectorError, defaultLimits } from '../types';
import { type FtpConn, ftpConfigSchema } from './config';
import { ftpConnector } from './index';

// FTP pipeline steps against a real vsftpd: a source streams a file into its payload, a sink
// streams its upstream payload into a file that appears only once complete.

const ctx: ConnectorContext = { policy: egressPolicy('self_hosted', true), limits: defaultLimits };
let peer: VsftpdPeer;
let c: FtpConn;

const source = (operation: Record<string, unknown>, scope: Record<string, unknown> = {}) =>
  stepContext(
    { kind: 'source', data_source_ref: 'files', operation: { operation_type: 'ftp', ...operation } },
    { scope },
  );
const sink = (operation: Record<string, unknown>, scope: Record<string, unknown> = {}) =>
  stepContext(
    { kind: 'sink', data_source_ref: 'files', operation: { operation_type: 'ftp', ...operation } },
    { scope },
  );

async function failure(p: Promise<unknown>): Promise<ConnectorError> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err).toBeInstanceOf(ConnectorError);
  expect((err as Error).message).not.toContain(FTP_PASSWORD);
  return err as ConnectorError;
}

beforeAll(async () => {
  peer = await startVsftpd();
  peer.put('in/orders.csv', 'id,name\n1,Ada\n2,"Grace\nHopper"\n');
  peer.put('in/events.json', JSON.stringify({ id: 7 }));
  peer.put('in/events-list.json', JSON.stringify(Array.from({ length: 2500 }, (_, i) => ({ i }))));
  peer.put('in/photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
  c = {
    config: ftpConfigSchema.parse({
      host: peer.host,
      port: peer.port,
      base_path: 'in',
      allow_private_hosts: true,
    }),
    credentials: { username: FTP_USER, password: FTP_PASSWORD },
  };
}, 60_000);

afterAll(async () => {
  await peer?.close();
});

describe('FTP source', () => {
  it('streams a CSV file as CSV bytes, path from a run input', async () => {
    const step = source({ path: '{{runtime.input.file}}.csv' }, { runtime: { input: { file: 'orders' } } });
    const out = await ftpConnector.source.read(c, step, ctx);
    expect(out.payload).toMatchObject({ kind: 'csv', delimiter: ',', header: true });
    const rows = await collect(await rowsOf(out.payload));
    expect(rows.items).toEqual([
      ['1', 'Ada'],
      ['2', 'Grace\nHopper'],
    ]);
    expect(await out.nextCursor()).toBeNull();
    expect(step.counters.bytes_in).toBe(fs.statSync(path.join(peer.root, 'in/orders.csv')).size);
  });

  it('streams JSON records in batches, and a lone JSON object as one record', async () => {
    const list = await ftpConnector.source.read(c, source({ path: 'events-list.json' }), ctx);
    const got = await collect(list.payload);
    expect(got.items).toHaveLength(2500);
    expect(got.sizes).toEqual([1000, 1000, 500]);
    const one = await ftpConnector.source.read(c, source({ path: 'events.json' }), ctx);
    expect((await collect(one.payload)).items).toEqual([{ id: 7 }]);
  });

  it('streams any other file as a file payload', async () => {
    const out = await ftpConnector.source.read(c, source({ path: 'photo.png' }), ctx);
    expect(out.payload).toMatchObject({ kind: 'file', mimeType: 'image/png', filename: 'photo.png' });
    expect([...(await bytesOf(out.payload))]).toEqual([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);
  });

  it('refuses a missing file, a path outside base_path and a write operation', async () => {
    expect((await failure(ftpConnector.source.read(c, source({ path: 'nope.csv' }), ctx))).code).toBe(
      'QUERY_FAILED',
    );
    expect((await failure(ftpConnector.source.read(c, source({ path: '../x.csv' }), ctx))).code).toBe(
      'PERMISSION_DENIED',
    );
    expect(
      (await failure(ftpConnector.source.read(c, source({ path: 'a.csv', operation: 'write' }), ctx))).code,
    ).toBe('INVALID_STATEMENT');
    expect((await failure(ftpConnector.source.read(c, source({ path: 'a.csv', bogus: 1 }), ctx))).code).toBe(
      'INVALID_STATEMENT',
    );
  });
});

describe('FTP sink', () => {
  it('writes rows of JSON records as CSV, named by the run', async () => {
    const step = sink({ path: 'out/{{runtime.run_slug}}.csv' });
    const input = {
      kind: 'json' as const,
      batches: batches([{ id: 1, city: 'Oslo' }], [{ id: 2, city: 'Köln, DE' }]),
    };
    const result = await ftpConnector.sink.write(c, input, step, ctx);
    const text = fs.readFileSync(path.join(peer.root, 'in/out/run-1.csv'), 'utf8');
    expect(text).toBe('"id","city"\n"1","Oslo"\n"2","Köln, DE"\n');
    expect(result).toEqual({ rows: 2, bytes: Buffer.byteLength(text) });
    // No temporary file is left next to it.
    expect(fs.readdirSync(path.join(peer.root, 'in/out'))).toEqual(['run-1.csv']);
  });

  it('passes CSV bytes through unchanged and counts the records', async () => {
    const csv = 'a,b\n1,"x\ny"\n2,z\n';
    const input = {
      kind: 'csv' as const,
      delimiter: ',',
      header: true,
      chunks: chunksOf('a,b\n1,"x', '\ny"\n2,z\n'),
    };
    const result = await ftpConnector.sink.write(c, input, sink({ path: 'copy.csv' }), ctx);
    expect(result).toEqual({ rows: 2, bytes: csv.length });
    expect(fs.readFileSync(path.join(peer.root, 'in/copy.csv'), 'utf8')).toBe(csv);
  });

  it('writes JSON lines, a spreadsheet and raw files', async () => {
    const records = () => ({ kind: 'json' as const, batches: batches([{ n: 1 }, { n: 2 }]) });
    await ftpConnector.sink.write(c, records(), sink({ path: 'n.ndjson' }), ctx);
    expect(fs.readFileSync(path.join(peer.root, 'in/n.ndjson'), 'utf8')).toBe('{"n":1}\n{"n":2}\n');
    const sheet = await ftpConnector.sink.write(c, records(), sink({ path: 'n.xlsx', sheet: 'N' }), ctx);
    expect(sheet.rows).toBe(2);
    const back = await ftpConnector.query.execute(
      c,
      { type: 'ftp', path: 'n.xlsx', operation: 'read', format: 'auto', overwrite: true },
      {},
      ctx,
    );
    expect(back.payload).toMatchObject({ sheet: 'N', column_names: ['n'], rows: [[1], [2]] });
    const file = { kind: 'file' as const, mimeType: 'image/png', chunks: chunksOf(Buffer.from([1, 2, 3])) };
    expect(await ftpConnector.sink.write(c, file, sink({ path: 'copy.png' }), ctx)).toEqual({
      rows: 0,
      bytes: 3,
    });
  });

  it('keeps the old file when the upstream fails, and refuses overwrite false or a read-only source', async () => {
    peer.put('in/keep.csv', 'old\n');
    async function* broken() {
      yield Buffer.from('new,partial\n');
      throw new Error('upstream broke');
    }
    const input = { kind: 'csv' as const, delimiter: ',', header: true, chunks: broken() };
    await expect(ftpConnector.sink.write(c, input, sink({ path: 'keep.csv' }), ctx)).rejects.toThrow(
      'upstream broke',
    );
    expect(fs.readFileSync(path.join(peer.root, 'in/keep.csv'), 'utf8')).toBe('old\n');
    expect(fs.readdirSync(path.join(peer.root, 'in')).filter((n) => n.startsWith('.'))).toEqual([]);

    const again = { kind: 'json' as const, batches: batches([{ a: 1 }]) };
    expect(
      (await failure(ftpConnector.sink.write(c, again, sink({ path: 'keep.csv', overwrite: false }), ctx)))
        .code,
    ).toBe('QUERY_FAILED');
    expect(
      (await failure(ftpConnector.sink.write(c, again, sink({ path: 'x.csv' }), { ...ctx, readOnly: true })))
        .code,
    ).toBe('PERMISSION_DENIED');
  });
});
