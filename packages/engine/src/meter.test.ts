import { describe, expect, it } from 'vitest';
import { meterPayload } from './meter';
import type { NativeRows, RowsPayload } from './payloads';

// Rows offered natively beside their batches: the meter counts whichever form the consumer
// takes, refuses the other, and drains or closes only that one.

function offered(log: string[]): RowsPayload {
  const native: NativeRows = {
    format: 'postgres-copy',
    types: [{ oid: 23, name: 'integer' }],
    open: () => ({
      chunks: (async function* () {
        try {
          yield new Uint8Array(3);
          yield new Uint8Array(4);
        } finally {
          log.push('native closed');
        }
      })(),
      rows: () => 2,
    }),
  };
  return {
    kind: 'rows',
    columns: [{ name: 'id', type: 'integer' }],
    batches: (async function* () {
      log.push('batches read');
      yield [[1], [2]];
    })(),
    native,
  };
}

describe('meterPayload with native rows', () => {
  it('counts the bytes as they pass and the source-reported rows at the end', async () => {
    const counted = { rows: 0, bytes: 0 };
    const log: string[] = [];
    const m = meterPayload(offered(log), {
      signal: new AbortController().signal,
      rows: (n) => (counted.rows += n),
      bytes: (n) => (counted.bytes += n),
    });
    if (m.payload.kind !== 'rows' || !m.payload.native) throw new Error('native form lost');
    const open = m.payload.native.open('binary');
    for await (const _ of open.chunks);
    await m.ended;
    expect(counted).toEqual({ rows: 2, bytes: 7 });
    expect(() => (m.payload as RowsPayload).batches[Symbol.asyncIterator]()).toThrow(/only once/);
    expect(log).toEqual(['native closed']);
  });

  it('refuses the native form once the batches were taken, and drains the batches', async () => {
    const log: string[] = [];
    const counted = { rows: 0 };
    const m = meterPayload(offered(log), {
      signal: new AbortController().signal,
      rows: (n) => (counted.rows += n),
    });
    if (m.payload.kind !== 'rows' || !m.payload.native) throw new Error('native form lost');
    const it = m.payload.batches[Symbol.asyncIterator]();
    await it.next();
    expect(() => (m.payload as RowsPayload).native!.open('binary')).toThrow(/only once/);
    await m.finish(true);
    await m.ended;
    expect(counted.rows).toBe(2);
    expect(log).toEqual(['batches read']);
  });

  it('closes the native stream when the consumer failed', async () => {
    const log: string[] = [];
    const m = meterPayload(offered(log), { signal: new AbortController().signal });
    if (m.payload.kind !== 'rows' || !m.payload.native) throw new Error('native form lost');
    const open = m.payload.native.open('text');
    const it = open.chunks[Symbol.asyncIterator]();
    await it.next();
    await m.finish(false);
    await expect(m.ended).rejects.toThrow();
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['native closed']);
  });
});

describe('meterPayload with rows offered as CSV bytes', () => {
  const payload = (): RowsPayload => ({
    kind: 'rows',
    columns: [{ name: 'id', type: 'integer' }],
    batches: (async function* () {
      yield [[1], [2], [3]];
    })(),
    csv: {
      chunks: (async function* () {
        yield new TextEncoder().encode('1\n2\n');
        yield new TextEncoder().encode('3\n');
      })(),
      count: () => 3,
    },
  });

  it('counts the bytes the consumer reads and the rows at their end', async () => {
    const counted = { rows: 0, bytes: 0 };
    const m = meterPayload(payload(), {
      signal: new AbortController().signal,
      rows: (n) => (counted.rows += n),
      bytes: (n) => (counted.bytes += n),
    });
    if (m.payload.kind !== 'rows' || !m.payload.csv) throw new Error('csv form lost');
    for await (const _ of m.payload.csv.chunks);
    await m.ended;
    expect(counted).toEqual({ rows: 3, bytes: 6 });
  });

  it('counts rows and no bytes when the consumer reads the batches', async () => {
    const counted = { rows: 0, bytes: 0 };
    const m = meterPayload(payload(), {
      signal: new AbortController().signal,
      rows: (n) => (counted.rows += n),
      bytes: (n) => (counted.bytes += n),
    });
    for await (const _ of (m.payload as RowsPayload).batches);
    await m.ended;
    expect(counted).toEqual({ rows: 3, bytes: 0 });
  });
});
